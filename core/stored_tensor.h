// Host data of the memory-bound families (reduce, softmax, norm): tensors in their storage type
// (fp32, fp16, bf16 or int64 indices) with canaries, and tolerances that include storage rounding.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/storage.h"
#include "harness/cl.h"
#include "harness/verify.h"

namespace ocltune {

// A finite value no kernel of these families computes for random inputs: outputs start with it,
// so an output element that is never written fails even where the reference is NaN.
inline constexpr float kUnwrittenSentinel = -12288.0f;  // exact in fp16 and bf16

// One buffer of a test or tuning instance: `offset` elements of padding, `count` elements, then
// kCanaryWords canary elements, in a storage type or (indices()) as int64 indices.
class StoredTensor {
 public:
  StoredTensor() = default;
  StoredTensor(DType dtype, std::int64_t count, std::int64_t offset = 0);
  // An int64 index tensor (argmax/argmin outputs).
  static StoredTensor indices(std::int64_t count, std::int64_t offset = 0);

  DType dtype() const { return dtype_; }
  bool is_index() const { return index_; }
  std::int64_t count() const { return count_; }
  std::int64_t offset() const { return offset_; }
  std::size_t total() const { return static_cast<std::size_t>(offset_ + count_) + kCanaryWords; }

  // Uniform values in [lo, hi) rounded to the storage type; padding and canaries keep their pattern.
  void fill_uniform(std::uint64_t seed, float lo = -1.0f, float hi = 1.0f);
  // Every element set to `value` (rounded): what outputs start as.
  void fill(float value);
  void set(std::int64_t i, float value);  // element i of the data (after the offset), rounded
  float at(std::int64_t i) const { return values_[static_cast<std::size_t>(offset_ + i)]; }
  std::int64_t index_at(std::int64_t i) const { return indices_[static_cast<std::size_t>(offset_ + i)]; }

  // The device buffer (created on first use) and the upload of the whole host image into it.
  cl::Buffer buffer(const cl::Context& context);
  void upload(cl::CommandQueue& queue);
  // The whole buffer read back, widened exactly to float (index buffers: as int64).
  std::vector<float> read_values(cl::CommandQueue& queue) const;
  std::vector<std::int64_t> read_indices(cl::CommandQueue& queue) const;
  // The host image widened the same way: what verify_output compares untouched elements with.
  const std::vector<float>& values() const { return values_; }
  const std::vector<std::int64_t>& indices() const { return indices_; }

 private:
  std::size_t element_bytes() const;
  std::vector<std::uint8_t> encode() const;

  DType dtype_ = DType::kFp32;
  bool index_ = false;
  std::int64_t count_ = 0, offset_ = 0;
  std::vector<float> values_;          // float dtypes: exact widened values, padding and canaries included
  std::vector<std::int64_t> indices_;  // index tensors
  cl::Buffer buffer_;
};

// The reference of one output element. The fp32 computation may err by `tolerance * magnitude`
// (magnitude: the sum of the absolute terms that produced it); storing into `dtype` rounds by up
// to u(dtype) * |value| more (and half a subnormal step near zero). Both fold into the scale of
// an Expected compared at `tolerance`.
Expected expect_stored(std::size_t index, double value, double magnitude, double tolerance, DType dtype);

// Checks an int64 index output: every element in `expected` (index, value) matches exactly, every
// other element (padding, canaries, unsampled outputs excepted by `written`) is untouched.
VerifyResult verify_indices(std::span<const std::int64_t> after, std::span<const std::int64_t> before,
                            std::span<const std::pair<std::size_t, std::int64_t>> expected);

// Folds the verification of one of several outputs into `total`: ok only if all are; the first
// failure's message, prefixed with the output's name; the largest error.
void merge_result(VerifyResult& total, const VerifyResult& part, const std::string& name);

// NaN, +Inf, -Inf at a few deterministic positions of `t` (about one element in `every`), to
// check that non-finite values propagate as in PyTorch.
void inject_specials(StoredTensor& t, std::uint64_t seed, std::int64_t every);

}  // namespace ocltune
