// Names of the fused activations (fused_activation.h).
#include "ocltune_torch/csrc/ops/fused_activation.h"

#include <string>

#include <c10/util/Exception.h>

#include "ocltune/ocltune.h"

namespace ocltune_torch {

int fused_activation_code(c10::string_view name, const char* op) {
  if (name == "none") return OCLTUNE_ACTIVATION_NONE;
  if (name == "relu") return OCLTUNE_ACTIVATION_RELU;
  if (name == "relu6") return OCLTUNE_ACTIVATION_RELU6;
  if (name == "gelu") return OCLTUNE_ACTIVATION_GELU;
  if (name == "sigmoid") return OCLTUNE_ACTIVATION_SIGMOID;
  TORCH_CHECK(false, op, ": unknown activation '", std::string(name).substr(0, 32),
              "' (none, relu, relu6, gelu or sigmoid)");
}

}  // namespace ocltune_torch
