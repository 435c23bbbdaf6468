// Turns OpenCL and ocltune failures into PyTorch errors (out of memory as torch.OutOfMemoryError).
#pragma once

#include <utility>

#include "ocltune/ocltune.hpp"

namespace ocltune_torch {

// The name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or its number.
const char* cl_error_name(cl_int err);

// Raises a c10::Error naming the failed call and the CL error, unless err is CL_SUCCESS.
void check_cl(cl_int err, const char* call);

// Raises the c10::Error for a failed ocltune call of `op`: OutOfMemoryError for OCLTUNE_OUT_OF_MEMORY.
[[noreturn]] void raise_ocltune_error(const char* op, const ocltune::api::Error& e);

// Runs f (calls of the ocltune C++ API) and turns an ocltune::api::Error into a PyTorch error.
template <typename F>
decltype(auto) call_ocltune(const char* op, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const ocltune::api::Error& e) {
    raise_ocltune_error(op, e);
  }
}

}  // namespace ocltune_torch
