// Turns OpenCL and ocltune failures into PyTorch errors (out of memory as torch.OutOfMemoryError).
#include "ocltune_torch/csrc/device/errors.h"

#include <c10/util/Exception.h>

namespace ocltune_torch {

const char* cl_error_name(cl_int err) {
  switch (err) {
    case CL_SUCCESS: return "CL_SUCCESS";
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_MEM_COPY_OVERLAP: return "CL_MEM_COPY_OVERLAP";
    case CL_MISALIGNED_SUB_BUFFER_OFFSET: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_EVENT: return "CL_INVALID_EVENT";
    case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_EVENT_WAIT_LIST: return "CL_INVALID_EVENT_WAIT_LIST";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "an OpenCL error";
  }
}

void check_cl(cl_int err, const char* call) {
  TORCH_CHECK(err == CL_SUCCESS, "ocltune_torch: ", call, " failed: ", cl_error_name(err), " (", err, ")");
}

void raise_ocltune_error(const char* op, const ocltune::api::Error& e) {
  if (e.status() == OCLTUNE_OUT_OF_MEMORY) {
    C10_THROW_ERROR(OutOfMemoryError, c10::str("ocltune_torch: ", op, ": the device is out of memory: ", e.what()));
  }
  C10_THROW_ERROR(Error, c10::str("ocltune_torch: ", op, " failed: ", e.what()));
}

}  // namespace ocltune_torch
