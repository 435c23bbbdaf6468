// Indexing ops on plain kernels (plain/kernels/plain_index.cl), callable from other files of the backend
// (nll_loss gathers its targets' log-probabilities with gather): each raises for an index out of range.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace ocltune_torch {

// PyTorch's index_select, gather and scatter_add_ (any plain dtype, int64 or int32 indices for
// index_select, int64 for gather and scatter). They synchronise the queue to check the indices.
at::Tensor ocl_index_select(const at::Tensor& self, std::int64_t dim, const at::Tensor& index);
at::Tensor ocl_gather(const at::Tensor& self, std::int64_t dim, const at::Tensor& index);
at::Tensor& ocl_scatter_add_(at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src);

}  // namespace ocltune_torch
