// The activations the conv2d and GEMM families fuse after their bias (ocltune_activation), by the
// names torch.compile's epilogue passes give them (compiler.py).
#pragma once

#include <c10/util/string_view.h>

namespace ocltune_torch {

// OCLTUNE_ACTIVATION_* of "none", "relu", "relu6", "gelu" or "sigmoid"; any other name raises an
// error that names `op`.
int fused_activation_code(c10::string_view name, const char* op);

}  // namespace ocltune_torch
