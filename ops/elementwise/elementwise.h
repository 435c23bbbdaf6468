// Elementwise ops: a chain of up to four unary/binary steps over tensors of up to 4 dimensions
// with NumPy/PyTorch broadcasting and scalar operands, fused into one kernel; no steps is a strided
// copy to contiguous. Shape description, parameter space, launch plan and byte model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/space.h"
#include "core/storage.h"
#include "harness/cl.h"
#include "harness/device.h"
#include "harness/launch.h"

namespace ocltune {

enum class ElementwiseOp {
  kRelu,
  kRelu6,
  kGelu,
  kGeluTanh,
  kSilu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kNeg,
  kAbs,  // unary
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMaximum,
  kMinimum,  // binary
  kHardswish,
  kHardsigmoid,  // unary
  kLeakyRelu,    // binary: the operand is the negative slope
  // Backward of an activation, for autograd: a is the output gradient, b the forward input (relu,
  // relu6, gelu, gelu_tanh, silu, hardswish, hardsigmoid) or output (sigmoid, tanh), as PyTorch's
  // threshold_backward, hardtanh_backward(0, 6), gelu_backward, ... take them.
  kReluGrad,
  kRelu6Grad,
  kGeluGrad,
  kGeluTanhGrad,
  kSiluGrad,
  kSigmoidGrad,
  kTanhGrad,
  kHardswishGrad,
  kHardsigmoidGrad,  // binary
  kSign,             // unary
  // binary, the operand a scalar: elu with alpha (PyTorch's scale and input_scale 1), softplus with
  // beta (threshold 20, PyTorch's default: above it the input itself).
  kElu,
  kSoftplus,
};

inline constexpr int kElementwiseMaxRank = 4;
inline constexpr int kElementwiseMaxSteps = 4;

// Every op, in enum order; "relu", ..., "gelu_tanh", ..., "minimum".
const std::vector<ElementwiseOp>& elementwise_ops();
const char* elementwise_op_name(ElementwiseOp op);
// The op's name in kernels/elementwise_ops.cl: "RELU" (OP_RELU), "GELU_TANH", ...
std::string elementwise_op_define(ElementwiseOp op);
std::optional<ElementwiseOp> parse_elementwise_op(std::string_view name);
bool is_binary(ElementwiseOp op);

// A tensor operand: its dims (right-aligned against the output, as NumPy broadcasts) and strides in
// elements (empty: contiguous). A stride of 0 repeats an element (an expanded view).
struct TensorOperand {
  std::vector<std::int64_t> dims{};
  std::vector<std::int64_t> strides{};

  std::vector<std::int64_t> effective_strides() const;
  std::int64_t elements() const;  // product of dims
  std::int64_t extent() const;    // largest element offset + 1: the buffer length it needs (0 when empty)
  std::int64_t distinct() const;  // distinct elements read (dims of stride 0 count once)
  bool contiguous() const;
  std::string key() const;  // "4096x768", or "8x12x512x64/s=393216x64x768x1"
};

struct ElementwiseStep {
  ElementwiseOp op = ElementwiseOp::kRelu;
  std::optional<TensorOperand> tensor{};  // binary with a tensor operand
  float scalar = 0;                       // binary with a scalar operand (when there is no tensor)
  bool reversed = false;                  // v = op(operand, v) rather than op(v, operand)
};

struct ElementwiseShape {
  TensorOperand input{};                 // the chain's first value
  std::vector<ElementwiseStep> steps{};  // none: a strided copy of `input` to contiguous
  DType dtype = DType::kFp32;

  // The broadcast of every tensor operand (up to 4 dims); throws ocltune::Error when incompatible.
  std::vector<std::int64_t> out_dims() const;
  std::int64_t elements() const;
  // Tensor operands in kernel order: the input, then the tensor of each step that has one.
  std::vector<const TensorOperand*> tensors() const;
  // Throws ocltune::Error naming the problem: ranks, sizes, strides, step count, operand kinds.
  void validate() const;

  // "x=4096x768,add(768),gelu" or "x=8x12x512x64/s=...,copy": what the database keys results by.
  // Scalar values are per call, like GEMM's alpha, and not part of it.
  std::string key() const;
  nlohmann::json to_json() const;
  static ElementwiseShape from_json(const nlohmann::json& j);  // throws ocltune::Error
  double flops() const;
  double bytes() const;  // output + distinct elements of every tensor operand, at the storage size
};

// Where the tensors live: the contiguous output and one buffer + element offset per tensor operand,
// in the order of ElementwiseShape::tensors().
struct ElementwiseOperands {
  cl::Buffer out{};
  std::int64_t out_offset = 0;
  std::vector<cl::Buffer> inputs{};
  std::vector<std::int64_t> input_offsets{};
};

// ceil(2^64 / d) for 2 <= d < 2^31: the kernel's e / d is mul_hi(e, m), exact for 0 <= e < 2^31;
// 0 for d < 2 (a dimension the kernel does not divide by).
std::uint64_t division_magic(std::int64_t d);

// Tunables of kernels/elementwise.cl.
SearchSpace elementwise_space(const ElementwiseShape& shape, const DeviceInfo& device);
// Valid on every OpenCL 1.2 device: 64 work-items, 4-wide vectors, 4 per work-item, one pass.
Config elementwise_default_config();
// The built-in of `shape` on `device` (docs/decisions/0036): a point of elementwise_space.
Config elementwise_default_config(const ElementwiseShape& shape, const DeviceInfo& device);

// The launch of kernels/elementwise.cl; no kernel at all when the output is empty. Throws
// ocltune::Error when the operands do not match the shape or an index would exceed the kernel's
// 32-bit range (2^30 elements per tensor).
LaunchPlan elementwise_plan(const ElementwiseShape& shape, const ElementwiseOperands& operands, const Config& config);

}  // namespace ocltune
