// The shared pieces of the C ABI (runtime/capi/capi_support.h).
#include "runtime/capi/capi_support.h"

#include <new>

#include "db/database_error.h"
#include "harness/device_errors.h"
#include "harness/error.h"

namespace ocltune::capi {
namespace {
thread_local std::string last_error_message;
}  // namespace

ocltune_status fail(ocltune_status status, const std::string& message) {
  last_error_message = message;
  return status;
}

void clear_last_error() { last_error_message.clear(); }
const char* last_error() { return last_error_message.c_str(); }

ocltune_status fail_from_current_exception() {
  try {
    throw;
  } catch (const NoPlatformError& e) {
    return fail(OCLTUNE_DEVICE_NOT_FOUND, e.what());
  } catch (const DeviceIndexError& e) {
    return fail(OCLTUNE_DEVICE_NOT_FOUND, e.what());
  } catch (const DatabaseError& e) {
    return fail(OCLTUNE_DATABASE_ERROR, e.what());
  } catch (const BuildError& e) {
    return fail(OCLTUNE_BUILD_ERROR, std::string(e.what()) + "\n" + e.log());
  } catch (const ClError& e) {
    return fail(OCLTUNE_OPENCL_ERROR, e.what());
  } catch (const cl::Error& e) {
    return fail(OCLTUNE_OPENCL_ERROR, ClError(e).what());
  } catch (const std::bad_alloc&) {
    return fail(OCLTUNE_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return fail(OCLTUNE_INTERNAL_ERROR, e.what());
  } catch (...) {
    return fail(OCLTUNE_INTERNAL_ERROR, "unknown exception");
  }
}

DType dtype_of(int code, const char* op) {
  switch (code) {
    case OCLTUNE_DTYPE_FP32: return DType::kFp32;
    case OCLTUNE_DTYPE_FP16: return DType::kFp16;
    case OCLTUNE_DTYPE_BF16: return DType::kBf16;
  }
  throw Error(std::string(op) + ": dtype " + std::to_string(code) +
              " is not an ocltune_dtype (0 fp32, 1 fp16, 2 bf16)");
}

std::vector<std::int64_t> dims_of(int ndims, const int64_t* dims, int min_rank) {
  if (ndims < min_rank || ndims > OCLTUNE_MAX_DIMS) {
    throw Error("ndims must be in " + std::to_string(min_rank) + ".." + std::to_string(OCLTUNE_MAX_DIMS));
  }
  return std::vector<std::int64_t>(dims, dims + ndims);
}

void copy_dims(int ndims, const int64_t* dims, int64_t* out) {
  for (int i = 0; dims && i < ndims && i < OCLTUNE_MAX_DIMS; ++i) out[i] = dims[i];
}

PrologueArgs prologue_of(const ocltune_prologue& p, const char* op) {
  if (p.num_steps < 0 || p.num_steps > OCLTUNE_MAX_PROLOGUE_STEPS) {
    throw Error(std::string(op) + ": prologue num_steps must be in 0.." + std::to_string(OCLTUNE_MAX_PROLOGUE_STEPS));
  }
  PrologueArgs out;
  for (int k = 0; k < p.num_steps; ++k) {
    const ocltune_prologue_step& s = p.steps[k];
    if (!s.op) throw Error(std::string(op) + ": prologue step " + std::to_string(k) + " has a NULL op");
    const std::optional<ElementwiseOp> parsed = parse_elementwise_op(s.op);
    if (!parsed) throw Error(std::string(op) + ": unknown prologue op '" + std::string(s.op).substr(0, 32) + "'");
    out.prologue.steps.push_back(
        {.op = *parsed, .tensor = s.has_tensor != 0, .scalar = s.scalar, .reversed = s.reversed != 0});
    if (s.has_tensor) {
      out.buffers.tensors.push_back(s.tensor.buffer);
      out.buffers.offsets.push_back(s.tensor.offset);
    }
  }
  return out;
}

}  // namespace ocltune::capi
