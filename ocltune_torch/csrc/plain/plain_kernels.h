// Plain OpenCL kernels of the backend (data movement, casts, integer and bool ops, random numbers):
// programs built from ocltune_torch/csrc/plain/kernels/*.cl per device and per set of element types, cached.
//
// These ops have nothing to tune (they move bytes or compute on integers), so they are not ocltune
// families: see docs/decisions/0034-torch-plain-kernels.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ocltune/ocltune.hpp"

namespace ocltune_torch {

// The element types the plain kernels take on every device, else false (float64, complex, unsigned > 8 bits).
bool plain_dtype(at::ScalarType type);
// True where the device computes in double (cl_khr_fp64): its plain kernels take float64 too.
bool plain_float64(int device);
// plain_dtype, and float64 where plain_float64(device). Only the callers that say so take float64: the
// element-wise generator's plain route and the casts (device/copy.cpp); other plain kernels assume 32-bit
// floating values (sort keys, random draws) and keep the fallback for float64.
bool plain_dtype(at::ScalarType type, int device);
// Raises unless plain_dtype(type), naming the op.
void check_plain_dtype(at::ScalarType type, const char* op);

// A type slot of a program: the kernels see X_S (storage), X_V (value), X_LOAD(p, i), X_STORE(p, i, v),
// TO_X(v), X_FLOAT and X_BOOL for slot name X (see plain/kernels/plain_common.cl).
using TypeSlots = std::vector<std::pair<std::string, at::ScalarType>>;

// The program of kernels/`file` with `types` (and `defines`, extra #define lines) on `device`:
// built on first use, then cached for the process (thread-safe). A build failure raises with the
// build log.
cl_program plain_program(int device, const std::string& file, const TypeSlots& types, const std::string& defines = "");
// The same for several files, concatenated in order after plain_common.cl: the helpers a file
// needs before it (plain_philox.cl for the kernels that draw random numbers), then the file.
using PlainFiles = std::vector<std::string>;
cl_program plain_program(int device, const PlainFiles& files, const TypeSlots& types, const std::string& defines = "");

// The program of plain_elementwise.cl with `types` holding the one kernel `kernel` (and, for a
// binary op, its NAME_scalar form): NVIDIA's compiler takes seconds for all of that file's kernels.
cl_program plain_elementwise_program(int device, const TypeSlots& types, const std::string& kernel);

// True for a CPU device: its plain kernels walk one contiguous block of elements per work item
// (PLAIN_CPU in plain/kernels/plain_common.cl; plain_program defines it).
bool plain_cpu_device(int device);

// Up to this many dims after merging; more raise.
constexpr int kPlainMaxDims = 8;

// The shape a kernel walks (row-major element order) and each operand's strides against it, as the
// structs Shape and Strides of plain/kernels/plain_common.cl.
struct KernelShape {
  cl_long ndim = 0;
  cl_long numel = 0;
  cl_long sizes[kPlainMaxDims] = {};
};
struct KernelStrides {
  cl_long offset = 0;  // elements from the start of the buffer
  cl_long strides[kPlainMaxDims] = {};
};

// Element-wise layouts of several tensors of one shape: dims ordered by the strides of the first
// (the output, so it is written in memory order), size-1 dims dropped, mergeable dims merged.
// `keep_order` keeps row-major order (kernels whose results depend on the order of elements).
struct PlainLayout {
  KernelShape shape;
  std::vector<KernelStrides> operands;
};
PlainLayout plain_layout(at::IntArrayRef sizes, const std::vector<const at::Tensor*>& tensors, bool keep_order = false);
// The same for raw strides (element units, may be negative or 0) and element offsets.
PlainLayout plain_layout_of(std::vector<std::int64_t> sizes, std::vector<std::vector<std::int64_t>> strides,
                            const std::vector<std::int64_t>& offsets, bool keep_order = false);

// The buffer of a tensor for a kernel argument (a tensor without elements gives a buffer of its
// device that the kernel never reads) and its element offset.
cl_mem kernel_buffer(const at::Tensor& t);
std::int64_t element_offset(const at::Tensor& t);

// One launch of a kernel: arguments in order, then run(work items). A kernel object per launch, so
// threads never share one (clSetKernelArg is not thread-safe on one kernel).
class PlainLaunch {
 public:
  PlainLaunch(int device, cl_program program, const char* kernel);
  ~PlainLaunch();
  PlainLaunch(const PlainLaunch&) = delete;
  PlainLaunch& operator=(const PlainLaunch&) = delete;

  template <class T>
  PlainLaunch& arg(const T& value) {
    return raw_arg(sizeof(T), &value);
  }
  PlainLaunch& raw_arg(std::size_t size, const void* value);
  PlainLaunch& buffer(cl_mem mem) { return raw_arg(sizeof(cl_mem), &mem); }
  PlainLaunch& tensor(const at::Tensor& t) { return buffer(kernel_buffer(t)); }
  // The buffer and then the element offset (cl_long) of t, for a kernel's `p_base, p_at` pair.
  PlainLaunch& tensor_at(const at::Tensor& t) { return tensor(t).arg<cl_long>(element_offset(t)); }
  // Enqueues `items` work items (at least 1; the kernels loop over what the grid does not cover).
  void run(std::int64_t items);
  // Arguments from the first again, for another launch of the same kernel: an enqueued launch keeps
  // the values it was enqueued with, so a loop over tensors creates one kernel object, not one each.
  PlainLaunch& rewind() {
    next_ = 0;
    return *this;
  }

 private:
  int device_;
  cl_kernel kernel_ = nullptr;
  cl_uint next_ = 0;
  const char* name_;
};

// One kernel object reused over the tensors of a call while their program and kernel are the same
// (`kernel`: a string literal, compared by address), for the ops that launch once per tensor.
class PlainLaunchCache {
 public:
  PlainLaunch& get(int device, cl_program program, const char* kernel) {
    if (!launch_ || device != device_ || program != program_ || kernel != kernel_) {
      launch_.reset();
      launch_.emplace(device, program, kernel);
      device_ = device;
      program_ = program;
      kernel_ = kernel;
    }
    return launch_->rewind();
  }

 private:
  std::optional<PlainLaunch> launch_;
  int device_ = -1;
  cl_program program_ = nullptr;
  const char* kernel_ = nullptr;
};

// A scalar as the value type of `type` (float for the float types, the integer itself otherwise),
// for a kernel argument of type K_V.
struct ScalarArg {
  std::uint8_t bytes[8] = {};
  std::size_t size = 0;
};
ScalarArg scalar_arg(const c10::Scalar& value, at::ScalarType type);
inline PlainLaunch& operator<<(PlainLaunch& launch, const ScalarArg& s) { return launch.raw_arg(s.size, s.bytes); }

// Plain kernel launches since the start or the last reset_plain_launches(), over every device (for
// dispatch_stats(): tests count the launches of an op, e.g. that a multi-tensor op batches).
std::int64_t plain_launches();
void reset_plain_launches();
// The plain programs built since the start, over every device, and the seconds their builds took (for
// ocltune_torch.startup_stats(): a model's first step builds each program it touches).
struct PlainBuilds {
  std::int64_t programs = 0;
  double seconds = 0;
};
PlainBuilds plain_builds();

// True when a and b may share memory (the same storage, and PyTorch cannot rule an overlap out; it
// answers TooHard for any strided view, so storages are compared first).
bool may_overlap(const at::Tensor& a, const at::Tensor& b);

// A flag (one int32 on the device of `like`, zero) that kernels set on bad input such as an index
// out of range, and its value (this waits for the queue: the op's error is raised where it is called).
at::Tensor new_flag(const at::Tensor& like);
int read_flag(const at::Tensor& flag);

// out = kernel(inputs...) of plain_elementwise.cl: out and every input have out's sizes (expand
// them), `slots` name the inputs' type slots in order ("A", "B", "C"), K is the compute type, and
// `scalars` follow the tensors (in K's value type). The elementwise ops reach it through the
// elementwise generator (ops/elementwise.h); casts (device/copy.cpp) and a few ternary kernels directly.
void run_plain_elementwise(const char* kernel, const at::Tensor& out, const std::vector<at::Tensor>& inputs,
                           const std::vector<const char*>& slots, at::ScalarType compute,
                           const std::vector<c10::Scalar>& scalars);

}  // namespace ocltune_torch
