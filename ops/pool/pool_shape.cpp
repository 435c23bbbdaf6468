// Pooling shapes: PyTorch's output size rule, validation, keys, JSON and the byte model.
#include <fmt/format.h>

#include "core/shape_fields.h"
#include "harness/error.h"
#include "ops/pool/pool.h"

namespace ocltune {
namespace {

// The kernels index planes with 32-bit ints and add tile sizes to them.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 30;

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, bool ceil_mode) {
  std::int64_t out = floor_div(in + 2 * p - k + (ceil_mode ? s - 1 : 0), s) + 1;
  // The last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

// Input rows (or columns) of `in` under at least one of `out` windows.
std::int64_t covered(std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t s, std::int64_t p) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < in; ++i) {
    const std::int64_t first = i + p < k ? 0 : (i + p - k) / s + 1;
    const std::int64_t last = std::min((i + p) / s, out - 1);
    n += first <= last;
  }
  return n;
}

PoolKind parse_kind(const std::string& name) {
  if (name == "max") return PoolKind::kMax;
  if (name == "avg") return PoolKind::kAvg;
  if (name == "adaptive_avg") return PoolKind::kAdaptiveAvg;
  throw Error(fmt::format("unknown pool kind '{}' (known: max, avg, adaptive_avg)", name.substr(0, 32)));
}

}  // namespace

const char* pool_kind_name(PoolKind kind) {
  switch (kind) {
    case PoolKind::kAvg: return "avg";
    case PoolKind::kAdaptiveAvg: return "adaptive_avg";
    default: return "max";
  }
}

std::int64_t PoolShape::out_h() const {
  return kind == PoolKind::kAdaptiveAvg ? 1 : out_size(h, kh, sh, ph, ceil_mode);
}
std::int64_t PoolShape::out_w() const {
  return kind == PoolKind::kAdaptiveAvg ? 1 : out_size(w, kw, sw, pw, ceil_mode);
}

void PoolShape::validate() const {
  if (n < 0 || c < 0 || h < 1 || w < 1) throw Error(fmt::format("pool: bad input dims {}x{}x{}x{}", n, c, h, w));
  if (static_cast<double>(n) * static_cast<double>(c) * static_cast<double>(h) * static_cast<double>(w) >
      static_cast<double>(kMaxElements)) {
    throw Error("pool: more than 2^30 input elements");
  }
  if (kind == PoolKind::kAdaptiveAvg) return;
  if (kh < 1 || kw < 1 || kh > 64 || kw > 64) throw Error(fmt::format("pool: window {}x{} outside [1, 64]", kh, kw));
  if (sh < 1 || sw < 1 || sh > kMaxElements || sw > kMaxElements) throw Error("pool: stride must be positive");
  if (ph < 0 || pw < 0 || 2 * ph > kh || 2 * pw > kw) {
    throw Error(fmt::format("pool: padding {}x{} must be at most half the window {}x{}", ph, pw, kh, kw));
  }
  if (out_h() < 1 || out_w() < 1) throw Error(fmt::format("pool: the window {}x{} leaves an empty output", kh, kw));
}

std::string PoolShape::key() const {
  std::string k = fmt::format("{}_{},n={},c={},h={},w={}", pool_kind_name(kind), backward ? "bwd" : "fwd", n, c, h, w);
  if (kind == PoolKind::kAdaptiveAvg) return k;
  k += fmt::format(",k={}x{},s={}x{},p={}x{},ceil={}", kh, kw, sh, sw, ph, pw, ceil_mode ? 1 : 0);
  if (kind == PoolKind::kAvg) k += fmt::format(",cip={}", count_include_pad ? 1 : 0);
  if (kind == PoolKind::kMax && !backward) k += fmt::format(",idx={}", indices ? 1 : 0);
  return k;
}

nlohmann::json PoolShape::to_json() const {
  nlohmann::json j = {{"op", "pool"},
                      {"kind", pool_kind_name(kind)},
                      {"backward", backward},
                      {"dtype", dtype_name(dtype)},
                      {"n", n},
                      {"c", c},
                      {"h", h},
                      {"w", w}};
  if (kind == PoolKind::kAdaptiveAvg) return j;
  j.update({{"kh", kh}, {"kw", kw}, {"sh", sh}, {"sw", sw}, {"ph", ph}, {"pw", pw}, {"ceil_mode", ceil_mode}});
  if (kind == PoolKind::kAvg) j["count_include_pad"] = count_include_pad;
  if (kind == PoolKind::kMax && !backward) j["indices"] = indices;
  return j;
}

PoolShape PoolShape::from_json(const nlohmann::json& j) {
  PoolShape s;
  s.kind = parse_kind(string_field(j, "kind", "max"));
  if (s.kind == PoolKind::kAdaptiveAvg) {
    check_known_fields(j, {"kind", "backward", "dtype", "n", "c", "h", "w"});
  } else {
    check_known_fields(j, {"kind", "backward", "dtype", "n", "c", "h", "w", "kh", "kw", "sh", "sw", "ph", "pw",
                           "ceil_mode", "count_include_pad", "indices"});
  }
  s.backward = bool_field(j, "backward", false);
  s.dtype = parse_dtype(string_field(j, "dtype", "fp32"));
  s.n = int_field(j, "n", 0, kMaxElements);
  s.c = int_field(j, "c", 0, kMaxElements);
  s.h = int_field(j, "h", 1, kMaxElements);
  s.w = int_field(j, "w", 1, kMaxElements);
  if (s.kind != PoolKind::kAdaptiveAvg) {
    s.kh = int_field(j, "kh", 1, 64);
    s.kw = int_field(j, "kw", 1, 64);
    s.sh = int_field(j, "sh", 1, kMaxElements, s.kh);  // PyTorch: the stride defaults to the window
    s.sw = int_field(j, "sw", 1, kMaxElements, s.kw);
    s.ph = int_field(j, "ph", 0, 32, 0);
    s.pw = int_field(j, "pw", 0, 32, 0);
    s.ceil_mode = bool_field(j, "ceil_mode", false);
    s.count_include_pad = bool_field(j, "count_include_pad", true);
    s.indices = bool_field(j, "indices", true);
  }
  s.validate();
  return s;
}

double PoolShape::flops() const {
  const double planes_d = static_cast<double>(planes());
  if (kind == PoolKind::kAdaptiveAvg) return planes_d * static_cast<double>(h * w);
  return planes_d * static_cast<double>(out_h() * out_w() * kh * kw);
}

double PoolShape::bytes() const {
  const double size = static_cast<double>(dtype_bytes(dtype));
  const double planes_d = static_cast<double>(planes());
  const double in_plane = static_cast<double>(h * w);
  const double out_plane = static_cast<double>(out_h() * out_w());
  if (kind == PoolKind::kAdaptiveAvg) return planes_d * size * (in_plane + 1);
  if (backward) {
    const double index_bytes = kind == PoolKind::kMax ? 8.0 : 0.0;
    return planes_d * ((size + index_bytes) * out_plane + size * in_plane);
  }
  // With a stride above the window some rows and columns are never read.
  const double touched = static_cast<double>(covered(h, out_h(), kh, sh, ph) * covered(w, out_w(), kw, sw, pw));
  return planes_d * (size * (touched + out_plane) + (writes_indices() ? 8.0 * out_plane : 0.0));
}

ElementwiseShape PoolShape::adaptive_backward_as_elementwise() const {
  ElementwiseShape e;
  e.input = {{planes(), h * w}, {1, 0}};
  e.steps = {{.op = ElementwiseOp::kDiv, .scalar = static_cast<float>(h * w)}};
  e.dtype = dtype;
  return e;
}

}  // namespace ocltune
