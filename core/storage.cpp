// Host side of kernels/storage.cl: storage types, encoding, tolerance floors, 16-bit canaries.
#include "core/storage.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "harness/error.h"
#include "harness/half.h"
#include "harness/verify.h"

namespace ocltune {
namespace {

// Quiet NaNs with payloads vstore_half / bf16_round never produce (they keep no payload bits).
constexpr std::uint16_t kHalfCanary = 0x7e5bu;
constexpr std::uint16_t kBf16Canary = 0x7fcbu;

bool is_canary(float f) { return std::bit_cast<std::uint32_t>(f) == std::bit_cast<std::uint32_t>(canary_value()); }

}  // namespace

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFp16: return "fp16";
    case DType::kBf16: return "bf16";
    default: return "fp32";
  }
}

DType parse_dtype(const std::string& name) {
  if (name == "fp32") return DType::kFp32;
  if (name == "fp16") return DType::kFp16;
  if (name == "bf16") return DType::kBf16;
  throw Error(fmt::format("unknown dtype '{}' (known: fp32, fp16, bf16)", name.substr(0, 32)));
}

std::size_t dtype_bytes(DType dtype) { return dtype == DType::kFp32 ? 4 : 2; }

std::pair<std::string, std::string> dtype_define(DType dtype) {
  return {"DTYPE", std::to_string(static_cast<int>(dtype))};
}

double dtype_roundoff(DType dtype) { return unit_roundoff(dtype_name(dtype)); }

double dtype_max(DType dtype) {
  switch (dtype) {
    case DType::kFp16: return 65504.0;
    case DType::kBf16: return 0x1.fep127;
    default: return static_cast<double>(std::numeric_limits<float>::max());
  }
}

double dtype_abs_floor(DType dtype) { return dtype == DType::kFp16 ? 0x1.0p-24 : 0x1.0p-126; }

void round_to_storage(std::span<float> data, DType dtype) {
  for (float& x : data) {
    if (dtype == DType::kFp16) x = half_to_float(float_to_half(x));
    if (dtype == DType::kBf16) x = bf16_to_float(float_to_bf16(x));
  }
}

double saturate_to_storage(double value, DType dtype) {
  if (!std::isfinite(value)) return value;
  // Values at least half an ulp above the largest finite one round to Inf.
  const double limit = dtype_max(dtype) * (1.0 + dtype_roundoff(dtype));
  if (std::abs(value) >= limit) return std::copysign(std::numeric_limits<double>::infinity(), value);
  return value;
}

std::vector<std::uint8_t> encode(std::span<const float> data, DType dtype) {
  std::vector<std::uint8_t> bytes(data.size() * dtype_bytes(dtype));
  if (dtype == DType::kFp32) {
    // An empty tensor's span and vector may hold null pointers, which memcpy must not get even
    // for 0 bytes (UBSan's nonnull-attribute report, scripts/sanitize.sh).
    if (!bytes.empty()) std::memcpy(bytes.data(), data.data(), bytes.size());
    return bytes;
  }
  for (std::size_t i = 0; i < data.size(); ++i) {
    std::uint16_t h;
    if (is_canary(data[i])) {
      h = dtype == DType::kFp16 ? kHalfCanary : kBf16Canary;
    } else {
      h = dtype == DType::kFp16 ? float_to_half(data[i]) : float_to_bf16(data[i]);
    }
    std::memcpy(bytes.data() + 2 * i, &h, 2);
  }
  return bytes;
}

std::vector<float> decode(std::span<const std::uint8_t> bytes, DType dtype) {
  std::vector<float> out(bytes.size() / dtype_bytes(dtype));
  if (dtype == DType::kFp32) {
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * 4);  // as in encode
    return out;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    if (h == (dtype == DType::kFp16 ? kHalfCanary : kBf16Canary)) {
      out[i] = canary_value();
    } else {
      out[i] = dtype == DType::kFp16 ? half_to_float(h) : bf16_to_float(h);
    }
  }
  return out;
}

cl::Buffer make_buffer(const cl::Context& context, std::span<const float> data, DType dtype, cl_mem_flags flags) {
  std::vector<std::uint8_t> bytes = encode(data, dtype);
  if (bytes.empty()) bytes.resize(dtype_bytes(dtype));  // OpenCL refuses zero-sized buffers
  try {
    return cl::Buffer(context, flags | CL_MEM_COPY_HOST_PTR, bytes.size(), bytes.data());
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
}

void write_buffer(cl::CommandQueue& queue, const cl::Buffer& buffer, std::span<const float> data, DType dtype) {
  if (data.empty()) return;
  const std::vector<std::uint8_t> bytes = encode(data, dtype);
  try {
    queue.enqueueWriteBuffer(buffer, CL_TRUE, 0, bytes.size(), bytes.data());
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
}

std::vector<float> read_buffer(cl::CommandQueue& queue, const cl::Buffer& buffer, std::size_t count, DType dtype) {
  std::vector<std::uint8_t> bytes(count * dtype_bytes(dtype));
  if (count == 0) return {};
  try {
    queue.enqueueReadBuffer(buffer, CL_TRUE, 0, bytes.size(), bytes.data());
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  return decode(bytes, dtype);
}

void inject_specials(std::span<float> data, std::size_t count, std::uint64_t seed) {
  if (data.empty()) return;
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 0.0f, -0.0f};
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < count; ++i) {
    data[static_cast<std::size_t>(rng() % data.size())] = specials[i % 5];
  }
}

}  // namespace ocltune
