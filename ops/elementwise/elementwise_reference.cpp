// Float64 reference of elementwise ops with a first-order bound of the fp32 kernel's error.
#include "ops/elementwise/elementwise_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace ocltune {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kGeluTanhBeta = 0.79788456080286535588;  // sqrt(2/pi)
constexpr double kGeluTanhKappa = 0.044715;

bool either_nan(double a, double b) { return std::isnan(a) || std::isnan(b); }

double sigmoid(double a) { return 1.0 / (1.0 + std::exp(-a)); }

double relu6(double a) { return std::min(std::max(a, 0.0), 6.0); }

// d gelu / dx and its parts: Phi(x) + x phi(x).
double normal_pdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi); }
double normal_cdf(double x) { return 0.5 * (1 + std::erf(x * std::numbers::sqrt2 / 2)); }

// d gelu_tanh / dx as PyTorch's gelu_backward(approximate="tanh") computes it.
double gelu_tanh_slope(double x) {
  const double th = std::tanh(kGeluTanhBeta * (x + kGeluTanhKappa * x * x * x));
  return 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * kGeluTanhBeta * (1 + 3 * kGeluTanhKappa * x * x);
}

double silu_slope(double x) {
  const double s = sigmoid(x);
  return s * (1 + x * (1 - s));
}

// d (a * slope(b)) / db by central differences: for the error that b carries into a backward op,
// where a first-order estimate is all the bound needs.
template <class Slope>
double slope_derivative(double a, double b, Slope slope) {
  const double h = 1e-5 * std::max(1.0, std::abs(b));
  return a * (slope(b + h) - slope(b - h)) / (2 * h);
}

// An fp32 result at least half an ulp above FLT_MAX is Inf.
double to_fp32_range(double v) {
  const double limit = static_cast<double>(std::numeric_limits<float>::max()) * (1.0 + 0x1.0p-24);
  return std::isfinite(v) && std::abs(v) >= limit ? std::copysign(kInf, v) : v;
}

// |d| * e without 0 * Inf = NaN: an exact operand contributes nothing whatever the derivative.
double carried(double derivative, double error) { return error == 0 ? 0 : std::abs(derivative) * error; }

// The error the op itself adds (units of 2^-24), given an exact operand a and result y. An
// OpenCL builtin within n ulp errs by at most 2n u |y|; composite ops sum their steps' roundings.
double own_error(ElementwiseOp op, double a, double y) {
  const double ay = std::abs(y);
  switch (op) {
    case ElementwiseOp::kRelu:
    case ElementwiseOp::kRelu6:
    case ElementwiseOp::kNeg:
    case ElementwiseOp::kAbs:
    case ElementwiseOp::kMaximum:
    case ElementwiseOp::kMinimum: return 0;
    case ElementwiseOp::kAdd:
    case ElementwiseOp::kSub:
    case ElementwiseOp::kMul: return ay;
    case ElementwiseOp::kDiv: return 5 * ay;
    case ElementwiseOp::kExp:
    case ElementwiseOp::kLog:
    case ElementwiseOp::kSqrt: return 6 * ay;
    case ElementwiseOp::kRsqrt: return 4 * ay;
    case ElementwiseOp::kTanh: return 10 * ay;
    case ElementwiseOp::kPow: return 32 * ay;
    case ElementwiseOp::kSilu:
    case ElementwiseOp::kSigmoid: return 12 * ay;  // exp (3 ulp), 1 + e, a division (2.5 ulp)
    case ElementwiseOp::kGelu: {
      const double t = a * std::numbers::sqrt2 / 2;
      const double e = std::erf(t);
      const double erf_slope = 2 / std::sqrt(std::numbers::pi) * std::exp(-t * t);
      return 0.5 * std::abs(a) * (32 * std::abs(e) + erf_slope * std::abs(t) + std::abs(1 + e)) + ay;
    }
    case ElementwiseOp::kGeluTanh: {
      // The kernel computes a / (1 + exp(-2w)), w = beta (a + kappa a^3): the argument's rounding
      // becomes a relative error of exp, then exp (3 ulp), 1 + e and the division (2.5 ulp).
      const double w = kGeluTanhBeta * (a + kGeluTanhKappa * a * a * a);
      const double w_error = 3 * std::abs(w) + 3 * kGeluTanhBeta * kGeluTanhKappa * std::abs(a * a * a);
      return ay * (2 * w_error + 13);
    }
    // x + 3 rounds, then a product and a division (2.5 ulp); clamped, only the latter two.
    case ElementwiseOp::kHardswish: return 8 * ay + std::abs(a * (a + 3)) / 6;
    case ElementwiseOp::kHardsigmoid: return 5 * ay + std::abs(a + 3) / 6;
    case ElementwiseOp::kLeakyRelu: return ay;
    case ElementwiseOp::kReluGrad:
    case ElementwiseOp::kRelu6Grad: return 0;
    default: return kInf;  // the backward ops, whose error depends on both operands: grad_error
  }
  return kInf;
}

// The error a backward op adds, given exact operands dy (a) and x or y (b) and its result y.
double grad_error(ElementwiseOp op, double a, double b, double y) {
  const double ay = std::abs(y), aa = std::abs(a);
  switch (op) {
    case ElementwiseOp::kGeluGrad: {
      // Phi: erf (16 ulp) and the half-sum; x phi: exp (3 ulp) of an argument that carries x^2 u.
      const double t = b * std::numbers::sqrt2 / 2;
      const double cdf_error = 0.5 * (32 * std::abs(std::erf(t)) + 2 * std::abs(1 + std::erf(t))) +
                               2 / std::sqrt(std::numbers::pi) * std::exp(-t * t) * std::abs(t);
      const double pdf_term = std::abs(b * normal_pdf(b));
      return aa * (cdf_error + pdf_term * (b * b + 10) + 2 * std::abs(normal_cdf(b) + b * normal_pdf(b))) + ay;
    }
    case ElementwiseOp::kGeluTanhGrad: {
      // tanh (10 ulp) of w, w carrying the roundings of its polynomial; then the two terms and sums.
      const double w = kGeluTanhBeta * (b + kGeluTanhKappa * b * b * b);
      const double th = std::tanh(w);
      const double w_error = 3 * std::abs(w) + 3 * kGeluTanhBeta * kGeluTanhKappa * std::abs(b * b * b);
      const double th_error = (1 - th * th) * w_error + 20 * std::abs(th);
      const double left = 0.5 * (1 + th);
      const double right = 0.5 * b * (1 - th * th) * kGeluTanhBeta * (1 + 3 * kGeluTanhKappa * b * b);
      const double th_slope = 0.5 + std::abs(b * th) * kGeluTanhBeta * (1 + 3 * kGeluTanhKappa * b * b);
      return aa * (th_slope * th_error + 10 * (std::abs(left) + std::abs(right))) + ay;
    }
    case ElementwiseOp::kSiluGrad: {
      // sigmoid as in the forward op (12 u relative), then 1 - s, x (1 - s), 1 + ... and two products.
      const double s = sigmoid(b);
      const double ds = std::abs(1 + b - 2 * s * b);  // d slope / d s
      return aa * (ds * 12 * s + 6 * (std::abs(silu_slope(b)) + std::abs(s * b * (1 - s)) + s)) + ay;
    }
    case ElementwiseOp::kSigmoidGrad: return 3 * ay;
    case ElementwiseOp::kTanhGrad: return aa * (b * b + std::abs(1 - b * b)) + ay;
    case ElementwiseOp::kHardswishGrad:
      return b <= -3 || b >= 3 ? 0 : aa * (5 * std::abs(b / 3) + std::abs(b / 3 + 0.5)) + ay;
    case ElementwiseOp::kHardsigmoidGrad:
      return 2 * ay;  // a rounded 1/6, then a product
    // expm1 (3 ulp) and the product with alpha.
    case ElementwiseOp::kElu: return a > 0 ? 0 : 8 * ay;
    // The rounded product a b moves log1p(exp(a b)) / b by |a| sigmoid(a b) u; exp and log1p (3 ulp
    // each) and the division add 15 u |y|; above the threshold the result is a itself.
    case ElementwiseOp::kSoftplus: return a * b > 20 ? 0 : std::abs(a) * sigmoid(a * b) + 15 * ay;
    default: return own_error(op, a, y);
  }
}

}  // namespace

double elementwise_apply(ElementwiseOp op, double a, double b) {
  switch (op) {
    case ElementwiseOp::kRelu: return std::isnan(a) ? a : (a < 0 ? 0.0 : a);
    case ElementwiseOp::kRelu6: return std::isnan(a) ? a : std::min(std::max(a, 0.0), 6.0);
    case ElementwiseOp::kGelu: return 0.5 * a * (1 + std::erf(a * std::numbers::sqrt2 / 2));
    case ElementwiseOp::kGeluTanh: return 0.5 * a * (1 + std::tanh(kGeluTanhBeta * (a + kGeluTanhKappa * a * a * a)));
    case ElementwiseOp::kSilu: return a / (1 + std::exp(-a));
    case ElementwiseOp::kSigmoid: return sigmoid(a);
    case ElementwiseOp::kTanh: return std::tanh(a);
    case ElementwiseOp::kExp: return std::exp(a);
    case ElementwiseOp::kLog: return std::log(a);
    case ElementwiseOp::kSqrt: return std::sqrt(a);
    case ElementwiseOp::kRsqrt: return 1 / std::sqrt(a);
    case ElementwiseOp::kNeg: return -a;
    case ElementwiseOp::kAbs: return std::abs(a);
    case ElementwiseOp::kAdd: return a + b;
    case ElementwiseOp::kSub: return a - b;
    case ElementwiseOp::kMul: return a * b;
    case ElementwiseOp::kDiv: return a / b;
    case ElementwiseOp::kPow: return std::pow(a, b);
    case ElementwiseOp::kMaximum: return either_nan(a, b) ? a + b : std::max(a, b);
    case ElementwiseOp::kMinimum: return either_nan(a, b) ? a + b : std::min(a, b);
    case ElementwiseOp::kHardswish: return a * relu6(a + 3) / 6;
    case ElementwiseOp::kHardsigmoid: return std::isnan(a) ? a : relu6(a + 3) / 6;
    case ElementwiseOp::kLeakyRelu: return a < 0 ? a * b : a;
    case ElementwiseOp::kReluGrad: return b <= 0 ? 0.0 : a;
    case ElementwiseOp::kRelu6Grad: return b <= 0 || b >= 6 ? 0.0 : a;
    case ElementwiseOp::kGeluGrad: return a * (normal_cdf(b) + b * normal_pdf(b));
    case ElementwiseOp::kGeluTanhGrad: return a * gelu_tanh_slope(b);
    case ElementwiseOp::kSiluGrad: return a * silu_slope(b);
    case ElementwiseOp::kSigmoidGrad: return a * (1 - b) * b;
    case ElementwiseOp::kTanhGrad: return a * (1 - b * b);
    case ElementwiseOp::kHardswishGrad: return b <= -3 ? 0.0 : b < 3 ? a * (b / 3 + 0.5) : a;
    case ElementwiseOp::kHardsigmoidGrad: return b > -3 && b < 3 ? a / 6 : 0.0;
    case ElementwiseOp::kSign: return a > 0 ? 1.0 : a < 0 ? -1.0 : 0.0;
    case ElementwiseOp::kElu: return std::isnan(a) || a > 0 ? a : b * std::expm1(a);
    case ElementwiseOp::kSoftplus: return a * b > 20 ? a : std::log1p(std::exp(a * b)) / b;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

BoundedValue elementwise_step(ElementwiseOp op, BoundedValue a, BoundedValue b) {
  const double x = a.value, z = b.value;
  const double y = to_fp32_range(elementwise_apply(op, x, z));
  double da = 0, db = 0;  // partial derivatives
  switch (op) {
    case ElementwiseOp::kRelu: da = x > 0; break;
    case ElementwiseOp::kRelu6: da = x > 0 && x < 6; break;
    case ElementwiseOp::kGelu:
      da = 0.5 * (1 + std::erf(x * std::numbers::sqrt2 / 2)) +
           x * std::exp(-x * x / 2) / std::sqrt(2 * std::numbers::pi);
      break;
    case ElementwiseOp::kGeluTanh: {
      const double th = std::tanh(kGeluTanhBeta * (x + kGeluTanhKappa * x * x * x));
      da = 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * kGeluTanhBeta * (1 + 3 * kGeluTanhKappa * x * x);
      break;
    }
    case ElementwiseOp::kSilu: {
      const double s = sigmoid(x);
      da = s * (1 + x * (1 - s));
      break;
    }
    case ElementwiseOp::kSigmoid: da = sigmoid(x) * (1 - sigmoid(x)); break;
    case ElementwiseOp::kTanh: da = 1 - y * y; break;
    case ElementwiseOp::kExp: da = y; break;
    case ElementwiseOp::kLog: da = 1 / x; break;
    case ElementwiseOp::kSqrt: da = 0.5 / std::sqrt(x); break;
    case ElementwiseOp::kRsqrt: da = 0.5 / (x * std::sqrt(x)); break;
    case ElementwiseOp::kNeg:
    case ElementwiseOp::kAbs: da = 1; break;
    case ElementwiseOp::kAdd:
    case ElementwiseOp::kSub: da = db = 1; break;
    case ElementwiseOp::kMul: da = z, db = x; break;
    case ElementwiseOp::kDiv: da = 1 / z, db = x / (z * z); break;
    case ElementwiseOp::kPow: da = z * std::pow(x, z - 1), db = y * std::log(std::abs(x)); break;
    case ElementwiseOp::kMaximum:
    case ElementwiseOp::kMinimum: return {y, std::max(a.error, b.error)};
    case ElementwiseOp::kHardswish: da = x < -3 ? 0 : x > 3 ? 1 : (2 * x + 3) / 6; break;
    case ElementwiseOp::kHardsigmoid: da = x > -3 && x < 3 ? 1.0 / 6 : 0; break;
    case ElementwiseOp::kLeakyRelu: da = x < 0 ? z : 1, db = x < 0 ? x : 0; break;
    // A backward op is linear in the gradient a; b's error moves the slope.
    case ElementwiseOp::kReluGrad: da = !(z <= 0); break;
    case ElementwiseOp::kRelu6Grad: da = !(z <= 0 || z >= 6); break;
    case ElementwiseOp::kGeluGrad: da = normal_cdf(z) + z * normal_pdf(z), db = x * normal_pdf(z) * (2 - z * z); break;
    case ElementwiseOp::kGeluTanhGrad: da = gelu_tanh_slope(z), db = slope_derivative(x, z, gelu_tanh_slope); break;
    case ElementwiseOp::kSiluGrad: da = silu_slope(z), db = slope_derivative(x, z, silu_slope); break;
    case ElementwiseOp::kSigmoidGrad: da = (1 - z) * z, db = x * (1 - 2 * z); break;
    case ElementwiseOp::kTanhGrad: da = 1 - z * z, db = -2 * x * z; break;
    case ElementwiseOp::kHardswishGrad:
      da = z <= -3 ? 0 : z < 3 ? z / 3 + 0.5 : 1, db = z <= -3 || z >= 3 ? 0 : x / 3;
      break;
    case ElementwiseOp::kHardsigmoidGrad: da = z > -3 && z < 3 ? 1.0 / 6 : 0; break;
    case ElementwiseOp::kSign: return {y, 0};  // exact, and flat wherever it is defined
    case ElementwiseOp::kElu: da = x > 0 ? 1 : z * std::exp(x), db = x > 0 ? 0 : std::expm1(x); break;
    case ElementwiseOp::kSoftplus:
      da = x * z > 20 ? 1 : sigmoid(x * z);
      db = x * z > 20 ? 0 : (x * sigmoid(x * z) - y) / z;
      break;
  }
  const double error = carried(da, a.error) + carried(db, b.error) + grad_error(op, x, z, y);
  return {y, std::isnan(error) ? kInf : error};
}

}  // namespace ocltune
