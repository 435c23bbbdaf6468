// Float64 reference of elementwise ops with a first-order bound of the fp32 kernel's error: each
// step adds its own rounding (OpenCL's ulp limits for the builtins it uses) to the errors of its
// operands, scaled by the op's derivatives.
#pragma once

#include "ops/elementwise/elementwise.h"

namespace ocltune {

// A value and a bound of the absolute error an fp32 computation of it may carry, in units of the
// fp32 unit roundoff (2^-24). Inputs read from memory are exact (error 0).
struct BoundedValue {
  double value = 0;
  double error = 0;
};

// op(a, b) in double precision with PyTorch semantics (b is ignored by unary ops).
double elementwise_apply(ElementwiseOp op, double a, double b);

// op(a, b) with the propagated error bound; the value is rounded to the fp32 range (an fp32
// intermediate beyond it is +-Inf). The bound is +Inf where first-order analysis says nothing.
BoundedValue elementwise_step(ElementwiseOp op, BoundedValue a, BoundedValue b);

}  // namespace ocltune
