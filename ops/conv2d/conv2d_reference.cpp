// Float64 reference of conv2d, element by element, with the magnitude of each element's terms.
#include "ops/conv2d/conv2d_reference.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace ocltune {

Conv2dReference::Conv2dReference(const Conv2dShape& shape, std::span<const float> input, std::span<const float> weight,
                                 std::span<const float> output, std::span<const float> bias)
    : shape_(shape), input_(input), weight_(weight), output_(output), bias_(bias) {}

ReferenceValue Conv2dReference::forward(std::int64_t n, std::int64_t k, std::int64_t p, std::int64_t q) const {
  const Conv2dShape& s = shape_;
  const std::int64_t cg = s.c_per_group(), g = k / s.k_per_group();
  double sum = 0, magnitude = 0;
  for (std::int64_t c = 0; c < cg; ++c) {
    const std::int64_t channel = g * cg + c;
    for (std::int64_t r = 0; r < s.r; ++r) {
      const std::int64_t ih = p * s.stride_h - s.pad_h + r * s.dil_h;
      if (ih < 0 || ih >= s.h) continue;
      for (std::int64_t t = 0; t < s.s; ++t) {
        const std::int64_t iw = q * s.stride_w - s.pad_w + t * s.dil_w;
        if (iw < 0 || iw >= s.w) continue;
        const double term =
            static_cast<double>(input_[static_cast<std::size_t>(((n * s.c + channel) * s.h + ih) * s.w + iw)]) *
            weight_[static_cast<std::size_t>(((k * cg + c) * s.r + r) * s.s + t)];
        sum += term;
        magnitude += std::abs(term);
      }
    }
  }
  if (s.bias) {
    sum += bias_[static_cast<std::size_t>(k)];
    magnitude += std::abs(static_cast<double>(bias_[static_cast<std::size_t>(k)]));
  }
  return activation_value(s.act, {sum, magnitude});
}

ReferenceValue Conv2dReference::backward_data(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) const {
  const Conv2dShape& s = shape_;
  const std::int64_t cg = s.c_per_group(), kg = s.k_per_group(), g = c / cg, cl = c - g * cg;
  const std::int64_t p_count = s.p(), q_count = s.q();
  double sum = 0, magnitude = 0;
  for (std::int64_t kk = 0; kk < kg; ++kk) {
    const std::int64_t k = g * kg + kk;
    for (std::int64_t r = 0; r < s.r; ++r) {
      const std::int64_t th = h + s.pad_h - r * s.dil_h;
      if (th < 0 || th % s.stride_h != 0 || th / s.stride_h >= p_count) continue;
      for (std::int64_t t = 0; t < s.s; ++t) {
        const std::int64_t tw = w + s.pad_w - t * s.dil_w;
        if (tw < 0 || tw % s.stride_w != 0 || tw / s.stride_w >= q_count) continue;
        const std::int64_t p = th / s.stride_h, q = tw / s.stride_w;
        const double term =
            static_cast<double>(output_[static_cast<std::size_t>(((n * s.k + k) * p_count + p) * q_count + q)]) *
            weight_[static_cast<std::size_t>(((k * cg + cl) * s.r + r) * s.s + t)];
        sum += term;
        magnitude += std::abs(term);
      }
    }
  }
  return {sum, magnitude};
}

ReferenceValue Conv2dReference::backward_weight(std::int64_t k, std::int64_t c, std::int64_t r, std::int64_t t) const {
  const Conv2dShape& s = shape_;
  const std::int64_t channel = (k / s.k_per_group()) * s.c_per_group() + c;
  const std::int64_t p_count = s.p(), q_count = s.q();
  double sum = 0, magnitude = 0;
  for (std::int64_t n = 0; n < s.n; ++n) {
    for (std::int64_t p = 0; p < p_count; ++p) {
      const std::int64_t ih = p * s.stride_h - s.pad_h + r * s.dil_h;
      if (ih < 0 || ih >= s.h) continue;
      for (std::int64_t q = 0; q < q_count; ++q) {
        const std::int64_t iw = q * s.stride_w - s.pad_w + t * s.dil_w;
        if (iw < 0 || iw >= s.w) continue;
        const double term =
            static_cast<double>(output_[static_cast<std::size_t>(((n * s.k + k) * p_count + p) * q_count + q)]) *
            input_[static_cast<std::size_t>(((n * s.c + channel) * s.h + ih) * s.w + iw)];
        sum += term;
        magnitude += std::abs(term);
      }
    }
  }
  return {sum, magnitude};
}

ReferenceValue Conv2dReference::bias_gradient(std::int64_t k) const {
  const Conv2dShape& s = shape_;
  const std::int64_t plane = s.p() * s.q();
  double sum = 0, magnitude = 0;
  for (std::int64_t n = 0; n < s.n; ++n) {
    for (std::int64_t i = 0; i < plane; ++i) {
      const double v = output_[static_cast<std::size_t>((n * s.k + k) * plane + i)];
      sum += v;
      magnitude += std::abs(v);
    }
  }
  return {sum, magnitude};
}

ReferenceValue activation_value(Activation act, ReferenceValue z) {
  const ActivatedValue y = activate_reference(act, z.value, z.scale);
  return {y.value, y.scale};
}

std::int64_t accumulation_length(const Conv2dShape& s) {
  switch (s.dir) {
    case ConvDirection::kForward: return s.c_per_group() * s.r * s.s + (s.bias ? 1 : 0);
    case ConvDirection::kBackwardData: return s.k_per_group() * s.r * s.s;
    default: return s.n * s.p() * s.q();
  }
}

double winograd_magnitude_factor(int m) {
  static const double bt2[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static const double g2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static const double at2[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
  static const double bt4[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                                   {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  static const double g4[6][3] = {{1.0 / 4, 0, 0},
                                  {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                  {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                  {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                  {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                  {0, 0, 1}};
  static const double at4[4][6] = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  const int alpha = m + 2;
  double worst = 0;
  for (int x = 0; x < m; ++x) {
    double sum = 0;
    for (int i = 0; i < alpha; ++i) {
      const double a = std::abs(m == 2 ? at2[x][i] : at4[x][i]);
      for (int r = 0; r < 3; ++r) {
        const double g = std::abs(m == 2 ? g2[i][r] : g4[i][r]);
        for (int t = 0; t < alpha; ++t) sum += a * g * std::abs(m == 2 ? bt2[i][t] : bt4[i][t]);
      }
    }
    worst = std::max(worst, sum / 3.0);
  }
  return worst * worst;
}

std::vector<std::array<std::int64_t, 4>> reference_sample(std::array<std::int64_t, 4> dims, std::int64_t terms,
                                                          double budget_macs) {
  std::vector<std::array<std::int64_t, 4>> sample;
  const double total = static_cast<double>(dims[0] * dims[1] * dims[2] * dims[3]);
  if (total * static_cast<double>(std::max<std::int64_t>(terms, 1)) <= budget_macs) {
    for (std::int64_t a = 0; a < dims[0]; ++a)
      for (std::int64_t b = 0; b < dims[1]; ++b)
        for (std::int64_t c = 0; c < dims[2]; ++c)
          for (std::int64_t d = 0; d < dims[3]; ++d) sample.push_back({a, b, c, d});
    return sample;
  }
  // Two shifted diagonals: every value of every index occurs (the first and last of each among them).
  const std::int64_t longest = *std::max_element(dims.begin(), dims.end());
  for (std::int64_t shift = 0; shift < 2; ++shift) {
    for (std::int64_t j = 0; j < longest; ++j) {
      std::array<std::int64_t, 4> e{};
      for (int i = 0; i < 4; ++i) e[i] = shift == 0 ? j % dims[i] : (dims[i] - 1 - j % dims[i]);
      sample.push_back(e);
    }
  }
  std::mt19937_64 rng(12345);
  const auto count = static_cast<std::size_t>(budget_macs / static_cast<double>(std::max<std::int64_t>(terms, 1)));
  while (sample.size() < count) {
    std::array<std::int64_t, 4> e{};
    for (int i = 0; i < 4; ++i) e[i] = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(dims[i]));
    sample.push_back(e);
  }
  return sample;
}

}  // namespace ocltune
