// Host side of kernels/storage.cl: storage types (fp32, fp16, bf16) of memory-bound ops, their
// encoding on the device, tolerance floors, and 16-bit canaries that survive a round trip.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "harness/cl.h"

namespace ocltune {

enum class DType { kFp32 = 0, kFp16 = 1, kBf16 = 2 };

const char* dtype_name(DType dtype);         // "fp32", "fp16", "bf16": the database's dtype column
DType parse_dtype(const std::string& name);  // throws ocltune::Error
std::size_t dtype_bytes(DType dtype);
// The DTYPE define kernels/storage.cl takes.
std::pair<std::string, std::string> dtype_define(DType dtype);

// Unit roundoff of the storage type (2^-24, 2^-11, 2^-8).
double dtype_roundoff(DType dtype);
// Largest finite value; references beyond it (after rounding) become +-Inf as the store would.
double dtype_max(DType dtype);
// Absolute error every result may carry: fp16 subnormal rounding, fp32 subnormals flushed by
// devices without denormal support (OpenCL allows it for single precision).
double dtype_abs_floor(DType dtype);

// Rounds each value to what a buffer of the type holds (round to nearest even).
void round_to_storage(std::span<float> data, DType dtype);
// A double reference rounded to the storage range: beyond the largest finite value it is +-Inf.
double saturate_to_storage(double value, DType dtype);

// Device bytes of `data` in the storage type. canary_value() is encoded as a 16-bit NaN with a
// payload no kernel produces, and decodes back to canary_value(): canary checks stay bit-exact.
std::vector<std::uint8_t> encode(std::span<const float> data, DType dtype);
std::vector<float> decode(std::span<const std::uint8_t> bytes, DType dtype);

// A device buffer initialised with `data` in the storage type.
cl::Buffer make_buffer(const cl::Context& context, std::span<const float> data, DType dtype,
                       cl_mem_flags flags = CL_MEM_READ_WRITE);
void write_buffer(cl::CommandQueue& queue, const cl::Buffer& buffer, std::span<const float> data, DType dtype);
std::vector<float> read_buffer(cl::CommandQueue& queue, const cl::Buffer& buffer, std::size_t count, DType dtype);

// Special values injected into test data at `count` spread positions: NaN, +Inf, -Inf, 0, -0.
void inject_specials(std::span<float> data, std::size_t count, std::uint64_t seed);

}  // namespace ocltune
