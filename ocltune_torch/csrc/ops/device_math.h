// Small compositions on the device for the neural-network ops (backward formulas, losses, eval-mode
// batch norm, attention): one elementwise C ABI call per op with broadcasting, and sums and maxima
// over dims through the reduce family. No CPU fallback here: callers check dtypes and shapes before
// they compose.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include <ATen/core/Tensor.h>

namespace ocltune_torch::device_math {

// The C ABI's elementwise ops by name: unary ("exp", "sigmoid", "neg", "abs", "log", "rsqrt", ...)
// and binary ("add", "sub", "mul", "div", "maximum", "minimum", "pow"). Every tensor is an ocl
// tensor of one kernel dtype (fp32, fp16, bf16); results are new contiguous tensors of that dtype.
// After broadcasting and merging dims at most 4 dims may remain (NCHW-like shapes always fit).
at::Tensor unary(const char* op, const at::Tensor& a);
// op(a, b), a and b broadcast against each other.
at::Tensor binary(const char* op, const at::Tensor& a, const at::Tensor& b);
// op(a, scalar), or op(scalar, a) when reversed; the scalar must be finite.
at::Tensor with_scalar(const char* op, const at::Tensor& a, double scalar, bool reversed = false);
void unary_into(const at::Tensor& out, const char* op, const at::Tensor& a);
// The same into an existing dense `out` of the broadcast sizes (out may be one of the inputs).
void binary_into(const at::Tensor& out, const char* op, const at::Tensor& a, const at::Tensor& b);
void with_scalar_into(const at::Tensor& out, const char* op, const at::Tensor& a, double scalar, bool reversed = false);

// The sum of x over `dims` (ascending or not; no dims: x itself), kept as size-1 dims when keepdim.
// In x's dtype, accumulated in fp32. An empty reduced extent gives zeros.
at::Tensor sum(const at::Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim);
// The mean likewise (an empty reduced extent gives NaN, as PyTorch).
at::Tensor mean(const at::Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim);
// The maximum likewise (the reduced extent must not be empty); NaN as the reduce family has it.
at::Tensor amax(const at::Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim);

// True when every tensor given has this kernel dtype (and is defined).
bool same_kernel_dtype(at::ScalarType dtype, std::initializer_list<const at::Tensor*> tensors);

}  // namespace ocltune_torch::device_math
