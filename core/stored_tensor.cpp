// Host data of the memory-bound families: typed tensors with canaries, storage-aware tolerances.
#include "core/stored_tensor.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "harness/error.h"
#include "harness/half.h"

namespace ocltune {
namespace {

// Canary bit patterns: quiet NaNs with payloads no arithmetic produces.
constexpr std::uint16_t kHalfCanary = 0x7e5a;
constexpr std::uint16_t kBf16Canary = 0x7fca;
constexpr std::int64_t kIndexCanary = -0x5eed;

bool is_16bit(DType dtype) { return dtype != DType::kFp32; }

std::uint16_t to_bits16(float x, DType dtype) { return dtype == DType::kFp16 ? float_to_half(x) : float_to_bf16(x); }
float from_bits16(std::uint16_t b, DType dtype) { return dtype == DType::kFp16 ? half_to_float(b) : bf16_to_float(b); }
float round_to_dtype(float x, DType dtype) { return is_16bit(dtype) ? from_bits16(to_bits16(x, dtype), dtype) : x; }

}  // namespace

StoredTensor::StoredTensor(DType dtype, std::int64_t count, std::int64_t offset)
    : dtype_(dtype), count_(count), offset_(offset) {
  if (count < 0 || offset < 0) throw Error("negative tensor size or offset");
  if (is_16bit(dtype_)) {
    values_.assign(total(), from_bits16(dtype_ == DType::kFp16 ? kHalfCanary : kBf16Canary, dtype_));
  } else {
    values_.assign(total(), canary_value());
  }
}

StoredTensor StoredTensor::indices(std::int64_t count, std::int64_t offset) {
  StoredTensor t;
  if (count < 0 || offset < 0) throw Error("negative tensor size or offset");
  t.index_ = true;
  t.count_ = count;
  t.offset_ = offset;
  t.indices_.assign(t.total(), kIndexCanary);
  return t;
}

std::size_t StoredTensor::element_bytes() const { return index_ ? sizeof(std::int64_t) : dtype_bytes(dtype_); }

void StoredTensor::fill_uniform(std::uint64_t seed, float lo, float hi) {
  std::vector<float> data(static_cast<std::size_t>(count_));
  ocltune::fill_uniform(data, seed, lo, hi);
  for (std::int64_t i = 0; i < count_; ++i) set(i, data[static_cast<std::size_t>(i)]);
}

void StoredTensor::fill(float value) {
  for (std::int64_t i = 0; i < count_; ++i) set(i, value);
}

void StoredTensor::set(std::int64_t i, float value) {
  const auto at = static_cast<std::size_t>(offset_ + i);
  if (index_) {
    indices_[at] = static_cast<std::int64_t>(value);
  } else {
    values_[at] = round_to_dtype(value, dtype_);
  }
}

std::vector<std::uint8_t> StoredTensor::encode() const {
  std::vector<std::uint8_t> bytes(total() * element_bytes());
  if (index_) {
    std::memcpy(bytes.data(), indices_.data(), bytes.size());
  } else if (is_16bit(dtype_)) {
    // Widening is exact and injective, so narrowing the widened image restores every bit pattern
    // (the canary NaN payloads included: they survive the round trip through float).
    for (std::size_t i = 0; i < values_.size(); ++i) {
      const std::uint32_t x = std::bit_cast<std::uint32_t>(values_[i]);
      std::uint16_t b;
      if (dtype_ == DType::kBf16) {
        b = static_cast<std::uint16_t>(x >> 16);
      } else if (std::isnan(values_[i])) {
        b = static_cast<std::uint16_t>(((x >> 16) & 0x8000u) | 0x7c00u | ((x >> 13) & 0x3ffu));
      } else {
        b = float_to_half(values_[i]);
      }
      std::memcpy(bytes.data() + 2 * i, &b, 2);
    }
  } else {
    std::memcpy(bytes.data(), values_.data(), bytes.size());
  }
  return bytes;
}

cl::Buffer StoredTensor::buffer(const cl::Context& context) {
  if (!buffer_()) {
    try {
      buffer_ = cl::Buffer(context, CL_MEM_READ_WRITE, std::max<std::size_t>(total() * element_bytes(), 4));
    } catch (const cl::Error& e) {
      throw ClError(e);
    }
  }
  return buffer_;
}

void StoredTensor::upload(cl::CommandQueue& queue) {
  const std::vector<std::uint8_t> bytes = encode();
  try {
    queue.enqueueWriteBuffer(buffer_, CL_TRUE, 0, bytes.size(), bytes.data());
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
}

std::vector<float> StoredTensor::read_values(cl::CommandQueue& queue) const {
  std::vector<std::uint8_t> bytes(total() * element_bytes());
  try {
    queue.enqueueReadBuffer(buffer_, CL_TRUE, 0, bytes.size(), bytes.data());
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  std::vector<float> out(total());
  if (!index_ && is_16bit(dtype_)) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::uint16_t b;
      std::memcpy(&b, bytes.data() + 2 * i, 2);
      out[i] = from_bits16(b, dtype_);
    }
  } else {
    std::memcpy(out.data(), bytes.data(), bytes.size());
  }
  return out;
}

std::vector<std::int64_t> StoredTensor::read_indices(cl::CommandQueue& queue) const {
  std::vector<std::int64_t> out(total());
  try {
    queue.enqueueReadBuffer(buffer_, CL_TRUE, 0, out.size() * sizeof(std::int64_t), out.data());
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  return out;
}

Expected expect_stored(std::size_t index, double value, double magnitude, double tolerance, DType dtype) {
  double scale = magnitude;
  if (dtype != DType::kFp32 && std::isfinite(value)) {
    const double u = dtype_roundoff(dtype);
    const double half_subnormal = dtype == DType::kFp16 ? 0x1.0p-25 : 0x1.0p-134;
    scale += (u * std::abs(value) + half_subnormal) / tolerance;
  }
  return {index, value, scale};
}

VerifyResult verify_indices(std::span<const std::int64_t> after, std::span<const std::int64_t> before,
                            std::span<const std::pair<std::size_t, std::int64_t>> expected) {
  VerifyResult r;
  auto fail = [&](std::string message) {
    if (r.ok) r.message = std::move(message);
    r.ok = false;
    ++r.mismatches;
  };
  if (after.size() != before.size()) {
    fail("index buffer size changed");
    return r;
  }
  std::vector<std::uint8_t> compared(after.size(), 0);
  for (const auto& [i, want] : expected) {
    compared[i] = 1;
    if (after[i] != want) fail(fmt::format("index element {}: got {}, expected {}", i, after[i], want));
  }
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (!compared[i] && after[i] != before[i]) {
      const bool canary = i + kCanaryWords >= after.size();
      fail(fmt::format("index element {} ({}) was overwritten: {}", i, canary ? "canary" : "outside the output",
                       after[i]));
    }
  }
  return r;
}

void merge_result(VerifyResult& total, const VerifyResult& part, const std::string& name) {
  total.max_error = std::max(total.max_error, part.max_error);
  total.mismatches += part.mismatches;
  if (!part.ok && total.ok) total.message = name + ": " + part.message;
  total.ok = total.ok && part.ok;
}

void inject_specials(StoredTensor& t, std::uint64_t seed, std::int64_t every) {
  if (t.count() == 0) return;
  std::mt19937_64 rng(seed);
  const std::int64_t n = std::max<std::int64_t>(3, t.count() / std::max<std::int64_t>(1, every));
  const float specials[] = {std::nanf(""), INFINITY, -INFINITY};
  for (std::int64_t k = 0; k < n; ++k) {
    const auto i = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(t.count()));
    t.set(i, specials[k % 3]);
  }
}

}  // namespace ocltune
