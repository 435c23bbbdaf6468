// The activations the conv2d and GEMM families fuse after their bias (kernels/activation.cl), their
// names in shape keys and JSON, and their float64 reference.
#pragma once

#include <string>

namespace ocltune {

// The ACT define of kernels/activation.cl: the enum's value.
enum class Activation { kNone, kRelu, kRelu6, kGelu, kSigmoid };
inline constexpr int kActivationCount = 5;

std::string activation_name(Activation act);           // "none", "relu", "relu6", "gelu", "sigmoid"
Activation parse_activation(const std::string& name);  // throws ocltune::Error naming the known ones

// A reference value and the magnitude its fp32 rounding is proportional to (sum of |terms|).
struct ActivatedValue {
  double value = 0;
  double scale = 0;
};
// act(value) in float64, with the scale widened by the activation's slope and by what the kernels'
// fp32 erf and exp add (|gelu'| <= 1.13, |sigmoid'| <= 0.25, a few ulp of the result).
ActivatedValue activate_reference(Activation act, double value, double scale);

}  // namespace ocltune
