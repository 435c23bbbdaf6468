// Names and float64 reference of the fused activations (core/activation.h).
#include "core/activation.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/error.h"

namespace ocltune {
namespace {

constexpr const char* kActivationNames[kActivationCount] = {"none", "relu", "relu6", "gelu", "sigmoid"};

}  // namespace

std::string activation_name(Activation act) {
  const int i = static_cast<int>(act);
  return i >= 0 && i < kActivationCount ? kActivationNames[i] : fmt::format("act{}", i);
}

Activation parse_activation(const std::string& name) {
  for (int i = 0; i < kActivationCount; ++i) {
    if (name == kActivationNames[i]) return static_cast<Activation>(i);
  }
  throw Error(fmt::format("activation '{}' is not one of none, relu, relu6, gelu, sigmoid", name.substr(0, 32)));
}

ActivatedValue activate_reference(Activation act, double x, double scale) {
  switch (act) {
    case Activation::kRelu: return {std::max(x, 0.0), scale};
    case Activation::kRelu6: return {std::clamp(x, 0.0, 6.0), scale};
    case Activation::kGelu: {
      // |gelu'| <= 1.13; erf's absolute error near -1 adds up to ~8 ulp of |x| (hence 2x).
      const double y = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
      return {y, 2.0 * scale + 4.0 * std::abs(y)};
    }
    case Activation::kSigmoid: {
      const double y = 1.0 / (1.0 + std::exp(-x));
      return {y, 0.25 * scale + 4.0 * std::abs(y)};
    }
    default: return {x, scale};
  }
}

}  // namespace ocltune
