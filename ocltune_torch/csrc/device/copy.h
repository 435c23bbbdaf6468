// Copies: ocl to ocl on the device, host to ocl and ocl to host with any strides, and _copy_from.
#pragma once

#include <ATen/core/Tensor.h>

namespace ocltune_torch {

// dst = src, both on one ocl device, with the same dtype and sizes (src may be expanded; dst must not
// overlap itself). Enqueued; stays on the device where the layouts allow it.
void copy_on_device(const at::Tensor& dst, const at::Tensor& src);

// The values of an ocl tensor in a CPU tensor of the same sizes and dtype (a blocking read).
at::Tensor read_to_host(const at::Tensor& src);

// dst (ocl) = cpu_src (a CPU tensor of the same sizes and dtype). Returns when the host memory may be
// reused (a blocking write).
void write_from_host(const at::Tensor& dst, const at::Tensor& cpu_src);

}  // namespace ocltune_torch
