// Float64 references of pooling with a bound of the fp32 kernels' error (units of value).
#include "ops/pool/pool_reference.h"

#include <cmath>
#include <limits>

namespace ocltune {
namespace {

constexpr double kU32 = 0x1.0p-24;

// Window of output (oh, ow) in padded coordinates, clipped to the input, and PyTorch's divisor.
struct Window {
  std::int64_t h0, h1, w0, w1;  // valid input rows [h0, h1), columns [w0, w1)
  std::int64_t divisor;         // 0: no input under the window
};

Window window(const PoolShape& s, std::int64_t oh, std::int64_t ow) {
  const std::int64_t hs = oh * s.sh - s.ph, ws = ow * s.sw - s.pw;
  const std::int64_t he = std::min(hs + s.kh, s.h + s.ph), we = std::min(ws + s.kw, s.w + s.pw);
  Window win{std::max<std::int64_t>(hs, 0), std::min(he, s.h), std::max<std::int64_t>(ws, 0), std::min(we, s.w), 0};
  if (win.h0 < win.h1 && win.w0 < win.w1) {
    win.divisor = s.count_include_pad ? (he - hs) * (we - ws) : (win.h1 - win.h0) * (win.w1 - win.w0);
  }
  return win;
}

}  // namespace

PoolReference pool_reference(const PoolShape& s, std::span<const float> in, std::span<const std::int64_t> indices) {
  PoolReference r;
  const std::int64_t planes = s.planes(), plane = s.h * s.w;
  if (s.kind == PoolKind::kAdaptiveAvg) {
    const auto count = static_cast<std::size_t>(s.backward ? planes * plane : planes);
    r.value.resize(count);
    r.bound.resize(count);
    for (std::int64_t p = 0; p < planes; ++p) {
      if (s.backward) {
        const double g = in[static_cast<std::size_t>(p)] / static_cast<double>(plane);
        for (std::int64_t i = 0; i < plane; ++i) {
          r.value[static_cast<std::size_t>(p * plane + i)] = g;
          r.bound[static_cast<std::size_t>(p * plane + i)] =
              static_cast<float>(5 * kU32 * std::abs(g));  // one division
        }
        continue;
      }
      double sum = 0, magnitude = 0;
      for (std::int64_t i = 0; i < plane; ++i) {
        sum += in[static_cast<std::size_t>(p * plane + i)];
        magnitude += std::abs(in[static_cast<std::size_t>(p * plane + i)]);
      }
      // Summation in any order (sequential, strided, tree), then a division.
      const double n = static_cast<double>(plane);
      r.value[static_cast<std::size_t>(p)] = sum / n;
      r.bound[static_cast<std::size_t>(p)] = static_cast<float>((8 * std::sqrt(n) + 9) * kU32 * magnitude / n);
    }
    return r;
  }

  const std::int64_t oh_count = s.out_h(), ow_count = s.out_w(), out_plane = oh_count * ow_count;
  if (!s.backward) {
    r.value.resize(static_cast<std::size_t>(planes * out_plane));
    r.bound.resize(r.value.size());
    if (s.kind == PoolKind::kMax) r.indices.resize(r.value.size());
  } else {
    r.value.assign(static_cast<std::size_t>(planes * plane), 0.0);
    r.bound.assign(r.value.size(), 0.0f);
  }
  std::vector<double> magnitude(s.backward ? r.value.size() : 0, 0.0);
  std::vector<std::int32_t> terms(s.backward ? r.value.size() : 0, 0);
  for (std::int64_t p = 0; p < planes; ++p) {
    for (std::int64_t oh = 0; oh < oh_count; ++oh) {
      for (std::int64_t ow = 0; ow < ow_count; ++ow) {
        const auto o = static_cast<std::size_t>(p * out_plane + oh * ow_count + ow);
        const Window win = window(s, oh, ow);
        if (s.backward) {
          // Scatter the gradient of output o into its inputs.
          const double g = in[o];
          if (s.kind == PoolKind::kMax) {
            const auto i = static_cast<std::size_t>(p * plane + indices[o]);
            r.value[i] += g;
            magnitude[i] += std::abs(g);
            ++terms[i];
            continue;
          }
          if (win.divisor == 0) continue;
          const double share = g / static_cast<double>(win.divisor);
          for (std::int64_t h = win.h0; h < win.h1; ++h) {
            for (std::int64_t w = win.w0; w < win.w1; ++w) {
              const auto i = static_cast<std::size_t>(p * plane + h * s.w + w);
              r.value[i] += share;
              magnitude[i] += std::abs(share);
              terms[i] += 1;
            }
          }
          continue;
        }
        if (s.kind == PoolKind::kMax) {
          double best = -std::numeric_limits<double>::infinity();
          std::int64_t at = win.h0 * s.w + win.w0;
          for (std::int64_t h = win.h0; h < win.h1; ++h) {
            for (std::int64_t w = win.w0; w < win.w1; ++w) {
              const double v = in[static_cast<std::size_t>(p * plane + h * s.w + w)];
              if (v > best || std::isnan(v)) {
                best = v;
                at = h * s.w + w;
              }
            }
          }
          r.value[o] = best;
          r.indices[o] = at;
          continue;
        }
        double sum = 0, mag = 0;
        for (std::int64_t h = win.h0; h < win.h1; ++h) {
          for (std::int64_t w = win.w0; w < win.w1; ++w) {
            const double v = in[static_cast<std::size_t>(p * plane + h * s.w + w)];
            sum += v;
            mag += std::abs(v);
          }
        }
        const double d = static_cast<double>(win.divisor);
        const double terms_in = static_cast<double>((win.h1 - win.h0) * (win.w1 - win.w0));
        r.value[o] = win.divisor ? sum / d : 0.0;
        r.bound[o] = win.divisor ? static_cast<float>((terms_in + 5) * kU32 * mag / d) : 0.0f;
      }
    }
  }
  // Backward: fp32 accumulation of `terms` values; average pooling scales each by the reciprocals
  // of its window's rows and columns (three more roundings, two of 2.5 ulp).
  const double per_term = s.kind == PoolKind::kAvg ? 16 : 5;
  for (std::size_t i = 0; i < magnitude.size(); ++i) {
    r.bound[i] = static_cast<float>((terms[i] + per_term) * kU32 * magnitude[i]);
  }
  return r;
}

}  // namespace ocltune
