// Float64 references of layer_norm and batch_norm, forward and backward, on host tensors.
#include "ops/norm/norm_reference.h"

#include <algorithm>
#include <cmath>

namespace ocltune {
namespace {

// Segments (rows or planes) compared: every one, or an evenly spaced sample plus the last.
struct Sampler {
  std::int64_t step = 1, count = 0;
  Sampler(std::int64_t segments, std::int64_t segment_size)
      : step(
            std::max<std::int64_t>(1, (segments * segment_size + kNormFullCheckElements - 1) / kNormFullCheckElements)),
        count(segments) {}
  bool take(std::int64_t s) const { return s % step == 0 || s == count - 1; }
  // Sampled outputs: every element of the tensor is written (and must be finite) even if not compared.
  void mark(OutputReference& out, const StoredTensor& t) const {
    if (step == 1) return;
    out.written.assign(t.total(), 0);
    for (std::int64_t i = 0; i < t.count(); ++i) out.written[static_cast<std::size_t>(t.offset() + i)] = 1;
  }
};

std::size_t at(const StoredTensor& t, std::int64_t i) { return static_cast<std::size_t>(t.offset() + i); }

double tolerance_for(std::int64_t length) { return (8.0 * std::sqrt(static_cast<double>(length)) + 16.0) * 0x1.0p-24; }

void layer_forward(const NormShape& s, const NormTensors& t, NormReference& ref) {
  const std::int64_t rows = s.rows(), n = s.n();
  const double tol = ref.tolerance = tolerance_for(n);
  OutputReference& y = ref.outputs["y"];
  OutputReference& mean = ref.outputs["mean"];
  OutputReference& rstd = ref.outputs["rstd"];
  mean.any_non_finite = true;
  const Sampler sampler(rows, n);
  sampler.mark(y, t.y);
  // A row of x through the prologue, with the largest error bound of its fp32 chain (units of 2^-24).
  std::vector<double> xr(static_cast<std::size_t>(n)), operands(t.prologue.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    double chain_error = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      double v = t.x.at(i * n + j);
      if (!s.prologue.empty()) {
        for (std::size_t p = 0; p < t.prologue.size(); ++p) operands[p] = t.prologue[p].at(i * n + j);
        const BoundedValue b = s.prologue.apply(v, operands);
        v = b.value;
        chain_error = std::max(chain_error, b.error);
      }
      xr[static_cast<std::size_t>(j)] = v;
    }
    auto x_at = [&](std::int64_t j) { return xr[static_cast<std::size_t>(j)]; };
    double sum = 0, abs_sum = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      sum += x_at(j);
      abs_sum += std::abs(x_at(j));
    }
    const double m = sum / static_cast<double>(n);
    // The chain's error moves the mean by as much as each element's.
    const double m_abs = abs_sum / static_cast<double>(n) + chain_error * 0x1.0p-24 / tol;
    double sq = 0;
    for (std::int64_t j = 0; j < n; ++j) sq += (x_at(j) - m) * (x_at(j) - m);
    const double sd = std::sqrt(sq / static_cast<double>(n));
    const double r = 1.0 / std::sqrt(sq / static_cast<double>(n) + static_cast<double>(s.eps));
    mean.expected.push_back(expect_stored(at(t.mean, i), m, m_abs, tol, DType::kFp32));
    rstd.expected.push_back(expect_stored(at(t.rstd, i), r, r, tol, DType::kFp32));
    if (!sampler.take(i)) continue;
    // y's error from the mean is relative to the row's spread, not to the mean of |x|: a row near
    // 1000 with unit noise must keep y's digits. The mean itself may be off by what rounding it to
    // fp32 costs (|m| 2^-24); sums of deviations scale with |x - m| and the standard deviation.
    const double mean_rounding = (std::abs(m) + 2 * chain_error) * 0x1.0p-24 / tol;
    for (std::int64_t j = 0; j < n; ++j) {
      const double xc = x_at(j) - m, g = t.gamma.at(j), b = t.beta.at(j);
      // Errors of the mean and of rstd both scale with |gamma| rstd.
      const double scale = std::abs(g) * r * (std::abs(xc) + sd + mean_rounding) + std::abs(b);
      y.expected.push_back(expect_stored(at(t.y, i * n + j), xc * r * g + b, scale, tol, s.dtype));
    }
  }
}

void layer_backward(const NormShape& s, const NormTensors& t, NormReference& ref) {
  const std::int64_t rows = s.rows(), n = s.n();
  const double tol = ref.tolerance = tolerance_for(std::max(rows, n));
  OutputReference& dx = ref.outputs["dx"];
  const Sampler sampler(rows, n);
  sampler.mark(dx, t.dx);
  std::vector<double> dg(static_cast<std::size_t>(n), 0), dg_abs(dg), db(dg), db_abs(dg);
  std::vector<double> xhat(static_cast<std::size_t>(n)), g(xhat);
  for (std::int64_t i = 0; i < rows; ++i) {
    const double mu = t.mean.at(i), rs = t.rstd.at(i);
    double a = 0, a_abs = 0, b = 0, b_abs = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      const auto k = static_cast<std::size_t>(j);
      const double d = t.dy.at(i * n + j);
      xhat[k] = (t.x.at(i * n + j) - mu) * rs;
      g[k] = d * t.gamma.at(j);
      a += g[k] * xhat[k];
      a_abs += std::abs(g[k] * xhat[k]);
      b += g[k];
      b_abs += std::abs(g[k]);
      dg[k] += d * xhat[k];
      dg_abs[k] += std::abs(d * xhat[k]);
      db[k] += d;
      db_abs[k] += std::abs(d);
    }
    if (!sampler.take(i)) continue;
    const double inv_n = 1.0 / static_cast<double>(n);
    for (std::int64_t j = 0; j < n; ++j) {
      const auto k = static_cast<std::size_t>(j);
      const double value = rs * (g[k] - (b + xhat[k] * a) * inv_n);
      const double scale = rs * (std::abs(g[k]) + (b_abs + std::abs(xhat[k]) * a_abs) * inv_n);
      dx.expected.push_back(expect_stored(at(t.dx, i * n + j), value, scale, tol, s.dtype));
    }
  }
  for (std::int64_t j = 0; j < n; ++j) {
    const auto k = static_cast<std::size_t>(j);
    ref.outputs["dgamma"].expected.push_back(expect_stored(at(t.dgamma, j), dg[k], dg_abs[k], tol, s.dtype));
    ref.outputs["dbeta"].expected.push_back(expect_stored(at(t.dbeta, j), db[k], db_abs[k], tol, s.dtype));
  }
}

// Index of element (n, c, p) of an N x C x plane tensor.
std::int64_t nchw(const NormShape& s, std::int64_t n, std::int64_t c, std::int64_t p) {
  return (n * s.channels() + c) * s.plane() + p;
}

void batch_forward(const NormShape& s, const NormTensors& t, NormReference& ref) {
  const std::int64_t batch = s.batch(), channels = s.channels(), plane = s.plane();
  const double count = static_cast<double>(batch * plane), mom = static_cast<double>(s.momentum);
  const double tol = ref.tolerance = tolerance_for(batch * plane);
  OutputReference& y = ref.outputs["y"];
  OutputReference& mean = ref.outputs["mean"];
  OutputReference& invstd = ref.outputs["rstd"];
  OutputReference& running_mean = ref.outputs["running_mean"];
  OutputReference& running_var = ref.outputs["running_var"];
  mean.any_non_finite = running_mean.any_non_finite = true;
  const Sampler sampler(batch * channels, plane);
  sampler.mark(y, t.y);
  for (std::int64_t c = 0; c < channels; ++c) {
    double sum = 0, abs_sum = 0;
    for (std::int64_t n = 0; n < batch; ++n) {
      for (std::int64_t p = 0; p < plane; ++p) {
        sum += t.x.at(nchw(s, n, c, p));
        abs_sum += std::abs(t.x.at(nchw(s, n, c, p)));
      }
    }
    const double m = sum / count, m_abs = abs_sum / count;
    double sq = 0;
    for (std::int64_t n = 0; n < batch; ++n) {
      for (std::int64_t p = 0; p < plane; ++p) sq += (t.x.at(nchw(s, n, c, p)) - m) * (t.x.at(nchw(s, n, c, p)) - m);
    }
    const double r = 1.0 / std::sqrt(sq / count + static_cast<double>(s.eps));
    const double unbiased = sq / (count - 1);
    const double rm = t.running_mean.at(c), rv = t.running_var.at(c);
    mean.expected.push_back(expect_stored(at(t.mean, c), m, m_abs, tol, DType::kFp32));
    invstd.expected.push_back(expect_stored(at(t.rstd, c), r, r, tol, DType::kFp32));
    running_mean.expected.push_back(expect_stored(at(t.running_mean, c), (1 - mom) * rm + mom * m,
                                                  (1 - mom) * std::abs(rm) + mom * m_abs, tol, DType::kFp32));
    running_var.expected.push_back(expect_stored(at(t.running_var, c), (1 - mom) * rv + mom * unbiased,
                                                 (1 - mom) * std::abs(rv) + mom * unbiased, tol, DType::kFp32));
    const double g = t.gamma.at(c), b = t.beta.at(c);
    for (std::int64_t n = 0; n < batch; ++n) {
      if (!sampler.take(n * channels + c)) continue;
      for (std::int64_t p = 0; p < plane; ++p) {
        const double xc = t.x.at(nchw(s, n, c, p)) - m;
        const double scale = std::abs(g) * r * (std::abs(xc) + m_abs) + std::abs(b);
        y.expected.push_back(expect_stored(at(t.y, nchw(s, n, c, p)), xc * r * g + b, scale, tol, s.dtype));
      }
    }
  }
}

void batch_backward(const NormShape& s, const NormTensors& t, NormReference& ref) {
  const std::int64_t batch = s.batch(), channels = s.channels(), plane = s.plane();
  const double inv_count = 1.0 / static_cast<double>(batch * plane);
  const double tol = ref.tolerance = tolerance_for(batch * plane);
  OutputReference& dx = ref.outputs["dx"];
  const Sampler sampler(batch * channels, plane);
  sampler.mark(dx, t.dx);
  for (std::int64_t c = 0; c < channels; ++c) {
    const double mu = t.mean.at(c), rs = t.rstd.at(c), g = t.gamma.at(c);
    double a = 0, a_abs = 0, b = 0, b_abs = 0;  // sum(dy), sum(dy * xhat)
    for (std::int64_t n = 0; n < batch; ++n) {
      for (std::int64_t p = 0; p < plane; ++p) {
        const double d = t.dy.at(nchw(s, n, c, p)), xhat = (t.x.at(nchw(s, n, c, p)) - mu) * rs;
        a += d;
        a_abs += std::abs(d);
        b += d * xhat;
        b_abs += std::abs(d * xhat);
      }
    }
    ref.outputs["dgamma"].expected.push_back(expect_stored(at(t.dgamma, c), b, b_abs, tol, s.dtype));
    ref.outputs["dbeta"].expected.push_back(expect_stored(at(t.dbeta, c), a, a_abs, tol, s.dtype));
    for (std::int64_t n = 0; n < batch; ++n) {
      if (!sampler.take(n * channels + c)) continue;
      for (std::int64_t p = 0; p < plane; ++p) {
        const double d = t.dy.at(nchw(s, n, c, p)), xhat = (t.x.at(nchw(s, n, c, p)) - mu) * rs;
        const double value = g * rs * (d - a * inv_count - xhat * b * inv_count);
        const double scale = std::abs(g) * rs * (std::abs(d) + a_abs * inv_count + std::abs(xhat) * b_abs * inv_count);
        dx.expected.push_back(expect_stored(at(t.dx, nchw(s, n, c, p)), value, scale, tol, s.dtype));
      }
    }
  }
}

}  // namespace

void fill_saved_statistics(const NormShape& s, NormTensors& t) {
  const bool batch = is_batch_norm(s.kind);
  const std::int64_t groups = batch ? s.channels() : s.rows();
  for (std::int64_t gi = 0; gi < groups; ++gi) {
    std::vector<double> xs;
    if (batch) {
      for (std::int64_t n = 0; n < s.batch(); ++n) {
        for (std::int64_t p = 0; p < s.plane(); ++p) xs.push_back(t.x.at(nchw(s, n, gi, p)));
      }
    } else {
      for (std::int64_t j = 0; j < s.n(); ++j) xs.push_back(t.x.at(gi * s.n() + j));
    }
    double sum = 0;
    for (double v : xs) sum += v;
    const double m = sum / static_cast<double>(xs.size());
    double sq = 0;
    for (double v : xs) sq += (v - m) * (v - m);
    t.mean.set(gi, static_cast<float>(m));
    t.rstd.set(gi,
               static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(xs.size()) + static_cast<double>(s.eps))));
  }
}

NormReference norm_reference(const NormShape& shape, const NormTensors& t) {
  NormReference ref;
  switch (shape.kind) {
    case NormKind::kLayer: layer_forward(shape, t, ref); break;
    case NormKind::kLayerBackward: layer_backward(shape, t, ref); break;
    case NormKind::kBatch: batch_forward(shape, t, ref); break;
    case NormKind::kBatchBackward: batch_backward(shape, t, ref); break;
  }
  return ref;
}

}  // namespace ocltune
