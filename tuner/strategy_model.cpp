// Model-based search (Bayesian optimisation): a random-forest surrogate of log time over the
// parameters (log2 of powers of two), expected improvement over the unmeasured points, and a warm
// start from measurements of the same op at other shapes or on other devices.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "tuner/forest.h"
#include "tuner/indexed_strategy.h"

namespace ocltune {
namespace {

// One feature per parameter: log2 of the value when every value is a positive power of two (tile
// sizes, vector widths), else the value; -1 for a parameter the point's variant lacks.
std::vector<double> encode_space(const SpaceIndex& index, std::vector<bool>& log_scale) {
  const std::size_t d = index.dimensions();
  log_scale.assign(d, true);
  for (std::size_t p = 0; p < d; ++p) {
    for (std::int64_t v : index.values(p)) log_scale[p] = log_scale[p] && v > 0 && (v & (v - 1)) == 0;
  }
  std::vector<double> x(index.size() * d);
  for (std::size_t i = 0; i < index.size(); ++i) {
    for (std::size_t p = 0; p < d; ++p) {
      const int l = index.level(i, p);
      const auto v = l < 0 ? 0 : index.values(p)[static_cast<std::size_t>(l)];
      x[i * d + p] = l < 0 ? -1.0 : log_scale[p] ? std::log2(static_cast<double>(v)) : static_cast<double>(v);
    }
  }
  return x;
}

double normal_pdf(double z) { return std::exp(-0.5 * z * z) * 0.3989422804014327; }
double normal_cdf(double z) { return 0.5 * std::erfc(-z * 0.7071067811865476); }

class Model : public IndexedStrategy {
 public:
  Model(std::vector<Config> configs, std::uint64_t seed, std::vector<PriorPoint> prior)
      : IndexedStrategy(std::move(configs)), rng_(seed), seed_(seed) {
    std::vector<bool> log_scale;
    base_ = encode_space(index_, log_scale);
    features_ = index_.dimensions();
    x_ = base_;
    if (!prior.empty()) add_prior_feature(prior, log_scale);
  }

 protected:
  std::optional<std::size_t> propose() override {
    std::optional<std::size_t> choice = choose();
    if (choice) pending_.insert(*choice);
    return choice;
  }

  void observed(std::size_t i, std::optional<double> log_time) override {
    pending_.erase(i);
    observations_.push_back({i, log_time});
    if (log_time) {
      ++ok_;
      best_ = std::min(best_, *log_time);
      worst_ = std::max(worst_, *log_time);
    }
  }

 private:
  struct Observation {
    std::size_t index;
    std::optional<double> log_time;
  };

  std::optional<std::size_t> choose() {
    if (index_.remaining() == 0) return std::nullopt;
    const std::size_t known = observations_.size() + pending_.size();
    if (known < initial_design()) {
      // With a prior, half of the initial design is its favourites, half random points (the
      // prior may come from a different device and be wrong).
      if (!prior_rank_.empty() && known % 2 == 0) {
        while (prior_next_ < prior_rank_.size() && index_.proposed(prior_rank_[prior_next_])) ++prior_next_;
        if (prior_next_ < prior_rank_.size()) return prior_rank_[prior_next_];
      }
      return index_.random_unproposed(rng_);
    }
    if (ok_ == 0) return index_.random_unproposed(rng_);  // nothing to model yet
    check_prior();
    refit_if_due();
    // Alternate global expected improvement with a model-guided local step: the piecewise-constant
    // forest is coarse near the optimum, where the neighbours of the best points are what matter.
    if (++steps_ % 2 == 0) {
      if (auto local = best_predicted_neighbour()) return local;
    }
    return best_expected_improvement();
  }

  std::size_t initial_design() const {
    // Small, so the model steers early even under a tight budget (16 evaluations on CPUs).
    return std::clamp<std::size_t>(index_.size() / 200, 6, 12);
  }

  void add_prior_feature(const std::vector<PriorPoint>& prior, const std::vector<bool>& log_scale) {
    const std::size_t d = index_.dimensions();
    std::vector<double> px;
    std::vector<double> py;
    // A bounded, deterministic subsample keeps the fit quick on a large database.
    const std::size_t stride = std::max<std::size_t>(1, prior.size() / 4000);
    for (std::size_t k = 0; k < prior.size(); k += stride) {
      const PriorPoint& point = prior[k];
      for (std::size_t p = 0; p < d; ++p) {
        auto it = point.config.find(index_.name(p));
        px.push_back(it == point.config.end()         ? -1.0
                     : log_scale[p] && it->second > 0 ? std::log2(static_cast<double>(it->second))
                                                      : static_cast<double>(it->second));
      }
      py.push_back(point.score);
    }
    Forest prior_model;
    prior_model.fit(px, d, py, seed_ ^ 0x9e3779b97f4a7c15ULL);
    features_ = d + 1;
    x_.assign(index_.size() * features_, 0);
    std::vector<std::pair<double, std::size_t>> ranked;
    for (std::size_t i = 0; i < index_.size(); ++i) {
      std::copy_n(&base_[i * d], d, &x_[i * features_]);
      const double predicted = prior_model.predict(&base_[i * d]).mean;
      x_[i * features_ + d] = predicted;
      ranked.emplace_back(predicted, i);
    }
    std::sort(ranked.begin(), ranked.end());
    for (const auto& [score, i] : ranked) prior_rank_.push_back(i);
  }

  // A prior from another shape or device can mislead (a different optimum, values outside the
  // range it saw): while there are few measurements of this problem, the prior must rank them
  // (Spearman correlation >= 0.3) or it is dropped, and the model goes on from the parameters alone.
  void check_prior() {
    if (features_ == index_.dimensions() || ok_ < 6 || ok_ > 30) return;
    std::vector<std::pair<double, double>> pairs;  // (prior prediction, measured log time)
    for (const Observation& o : observations_) {
      if (o.log_time) pairs.emplace_back(x_[o.index * features_ + features_ - 1], *o.log_time);
    }
    if (spearman(pairs) >= 0.3) return;
    features_ = index_.dimensions();
    x_ = base_;
    model_ = Forest();
    predictions_.clear();
  }

  static double spearman(std::vector<std::pair<double, double>> pairs) {
    const std::size_t n = pairs.size();
    auto ranks = [n](std::vector<double> v) {
      std::vector<std::size_t> order(n);
      for (std::size_t i = 0; i < n; ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
      std::vector<double> r(n);
      for (std::size_t k = 0; k < n; ++k) r[order[k]] = static_cast<double>(k);
      return r;
    };
    std::vector<double> a, b;
    for (const auto& [x, y] : pairs) {
      a.push_back(x);
      b.push_back(y);
    }
    const std::vector<double> ra = ranks(a), rb = ranks(b);
    const double mean = 0.5 * static_cast<double>(n - 1);
    double sab = 0, saa = 0, sbb = 0;
    for (std::size_t i = 0; i < n; ++i) {
      sab += (ra[i] - mean) * (rb[i] - mean);
      saa += (ra[i] - mean) * (ra[i] - mean);
      sbb += (rb[i] - mean) * (rb[i] - mean);
    }
    return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
  }

  // Refitting after every measurement is wasted work once there are many: refit when the data
  // grew by 10% (and after every measurement while it is small).
  void refit_if_due() {
    if (!model_.empty() && observations_.size() < fitted_on_ + std::max<std::size_t>(1, fitted_on_ / 10)) return;
    std::vector<double> x;
    std::vector<double> y;
    // A failed point (does not compile, wrong result) counts as much slower than the slowest
    // that worked, so the model steers away from its region.
    const double failure = worst_ + 1.0;
    for (const Observation& o : observations_) {
      x.insert(x.end(), &x_[o.index * features_], &x_[o.index * features_] + features_);
      y.push_back(o.log_time.value_or(failure));
    }
    model_.fit(x, features_, y, seed_ + observations_.size());
    fitted_on_ = observations_.size();
    predictions_.clear();
  }

  // Predictions change only when the model is refitted: cached until then.
  const Forest::Prediction& predict(std::size_t i) {
    if (predictions_.empty()) predictions_.resize(index_.size());
    Forest::Prediction& p = predictions_[i];
    if (p.sd < 0) p = model_.predict(&x_[i * features_]);
    return p;
  }

  std::size_t best_expected_improvement() {
    const std::vector<std::size_t> pool = candidates();
    if (pool.empty()) return *index_.random_unproposed(rng_);
    double best_score = -1;
    std::size_t best_index = pool.front();
    for (std::size_t i : pool) {
      const Forest::Prediction& p = predict(i);
      const double sd = std::max(p.sd, 1e-6);
      const double z = (best_ - p.mean) / sd;
      const double ei = (best_ - p.mean) * normal_cdf(z) + sd * normal_pdf(z);
      if (ei > best_score) {
        best_score = ei;
        best_index = i;
      }
    }
    return best_index;
  }

  // The unmeasured neighbour (up to two steps along one value list) of the three best points
  // with the fastest predicted time.
  std::optional<std::size_t> best_predicted_neighbour() {
    std::optional<std::size_t> best;
    double best_mean = std::numeric_limits<double>::infinity();
    for (std::size_t k : ranked_ok(3)) {
      for (std::size_t j : index_.neighbours(k, 2)) {
        const double mean = predict(j).mean;
        if (mean < best_mean) {
          best_mean = mean;
          best = j;
        }
      }
    }
    return best;
  }

  // The `count` fastest measured points, fastest first.
  std::vector<std::size_t> ranked_ok(std::size_t count) const {
    std::vector<Observation> ranked;
    for (const Observation& o : observations_) {
      if (o.log_time) ranked.push_back(o);
    }
    const std::size_t n = std::min(count, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n), ranked.end(),
                      [](const Observation& a, const Observation& b) {
                        return *a.log_time != *b.log_time ? *a.log_time < *b.log_time : a.index < b.index;
                      });
    std::vector<std::size_t> out;
    for (std::size_t k = 0; k < n; ++k) out.push_back(ranked[k].index);
    return out;
  }

  // Every unmeasured point of a space of moderate size; in a large one a random sample plus the
  // surroundings of the best points found so far.
  std::vector<std::size_t> candidates() {
    std::vector<std::size_t> out;
    if (index_.remaining() <= kMaxCandidates) {
      for (std::size_t i = 0; i < index_.size(); ++i) {
        if (!index_.proposed(i)) out.push_back(i);
      }
      return out;
    }
    for (std::size_t k : ranked_ok(8)) {
      for (std::size_t j : index_.neighbours(k, 2)) out.push_back(j);
    }
    for (std::size_t k = 0; k < kMaxCandidates / 2; ++k) {
      if (auto j = index_.random_unproposed(rng_)) out.push_back(*j);
    }
    return out;
  }

  static constexpr std::size_t kMaxCandidates = 6000;

  Rng rng_;
  std::uint64_t seed_;
  std::vector<double> base_;  // encoded parameters, size() x dimensions()
  std::vector<double> x_;     // model features: base_ plus the prior's prediction when there is one
  std::size_t features_ = 0;
  std::vector<std::size_t> prior_rank_;
  std::size_t prior_next_ = 0;
  std::vector<Observation> observations_;
  std::set<std::size_t> pending_;  // proposed, not yet observed
  std::size_t ok_ = 0, fitted_on_ = 0, steps_ = 0;
  double best_ = std::numeric_limits<double>::infinity();
  double worst_ = -std::numeric_limits<double>::infinity();
  Forest model_;
  std::vector<Forest::Prediction> predictions_;  // sd < 0: not computed since the last fit
};

}  // namespace

std::unique_ptr<Strategy> make_model(std::vector<Config> configs, std::uint64_t seed, std::vector<PriorPoint> prior) {
  return std::make_unique<Model>(std::move(configs), seed, std::move(prior));
}

}  // namespace ocltune
