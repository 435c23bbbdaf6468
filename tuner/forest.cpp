// A small random-forest regressor: bootstrap samples, a random subset of features per split,
// splits that minimise the squared error, mean and spread over the trees.
#include "tuner/forest.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tuner/random.h"

namespace ocltune {
namespace {

// Each feature's values become levels once per fit (at most kMaxLevels, by quantiles), so a split
// search is one pass over a node's rows per feature rather than a sort.
constexpr std::size_t kMaxLevels = 64;

struct Builder {
  std::size_t features;
  const std::vector<double>& y;
  const Forest::Options& options;
  Rng& rng;
  std::vector<std::vector<double>> edges;  // per feature: ascending level bounds
  std::vector<std::uint16_t> level;        // row x feature
  std::vector<std::size_t> rows;           // bootstrap sample, partitioned in place
  std::vector<std::size_t> feature_order;
  std::vector<double> sums;
  std::vector<std::size_t> counts;

  void index_levels(const std::vector<double>& x) {
    const std::size_t n = y.size();
    edges.assign(features, {});
    level.assign(n * features, 0);
    std::vector<double> column(n);
    for (std::size_t f = 0; f < features; ++f) {
      for (std::size_t r = 0; r < n; ++r) column[r] = x[r * features + f];
      std::vector<double> distinct = column;
      std::sort(distinct.begin(), distinct.end());
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      if (distinct.size() > kMaxLevels) {
        std::vector<double> cuts;
        for (std::size_t q = 1; q <= kMaxLevels; ++q) cuts.push_back(distinct[q * (distinct.size() - 1) / kMaxLevels]);
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        distinct = std::move(cuts);
      }
      for (std::size_t r = 0; r < n; ++r) {
        level[r * features + f] = static_cast<std::uint16_t>(
            std::lower_bound(distinct.begin(), distinct.end(), column[r]) - distinct.begin());
      }
      edges[f] = std::move(distinct);
    }
  }

  template <typename Node>
  int build(std::vector<Node>& tree, std::size_t begin, std::size_t end, int depth) {
    const auto n = static_cast<double>(end - begin);
    double sum = 0, sum2 = 0;
    for (std::size_t i = begin; i < end; ++i) {
      sum += y[rows[i]];
      sum2 += y[rows[i]] * y[rows[i]];
    }
    const int id = static_cast<int>(tree.size());
    tree.push_back(Node{});
    tree[static_cast<std::size_t>(id)].value = sum / n;
    const auto min_leaf = static_cast<std::size_t>(options.min_leaf);
    if (end - begin < 2 * min_leaf || depth >= options.max_depth || sum2 - sum * sum / n <= 1e-12) return id;

    // The features tried at this split: a random subset (partial Fisher-Yates).
    const std::size_t tried = std::max<std::size_t>(
        1, static_cast<std::size_t>(std::ceil(options.feature_fraction * static_cast<double>(features))));
    for (std::size_t k = 0; k < tried && k + 1 < features; ++k) {
      std::swap(feature_order[k], feature_order[k + rng.index(features - k)]);
    }
    double best_gain = 1e-12;
    int best_feature = -1;
    std::size_t best_level = 0;
    const double parent_score = sum * sum / n;
    for (std::size_t k = 0; k < tried; ++k) {
      const std::size_t f = feature_order[k];
      const std::size_t levels = edges[f].size();
      sums.assign(levels, 0);
      counts.assign(levels, 0);
      for (std::size_t i = begin; i < end; ++i) {
        const std::size_t l = level[rows[i] * features + f];
        sums[l] += y[rows[i]];
        ++counts[l];
      }
      double left = 0;
      std::size_t left_count = 0;
      for (std::size_t l = 0; l + 1 < levels; ++l) {
        left += sums[l];
        left_count += counts[l];
        if (counts[l] == 0 || left_count < min_leaf || end - begin - left_count < min_leaf) continue;
        if (left_count == end - begin) break;
        const auto nl = static_cast<double>(left_count);
        const double score = left * left / nl + (sum - left) * (sum - left) / (n - nl);
        if (score - parent_score > best_gain) {
          best_gain = score - parent_score;
          best_feature = static_cast<int>(f);
          best_level = l;
        }
      }
    }
    if (best_feature < 0) return id;
    const auto f = static_cast<std::size_t>(best_feature);
    const auto middle = std::stable_partition(rows.begin() + static_cast<std::ptrdiff_t>(begin),
                                              rows.begin() + static_cast<std::ptrdiff_t>(end),
                                              [&](std::size_t r) { return level[r * features + f] <= best_level; });
    const auto split = static_cast<std::size_t>(middle - rows.begin());
    const int left_id = build(tree, begin, split, depth + 1);
    const int right_id = build(tree, split, end, depth + 1);
    Node& node = tree[static_cast<std::size_t>(id)];
    node.feature = best_feature;
    node.threshold = edges[f][best_level];
    node.left = left_id;
    node.right = right_id;
    return id;
  }
};

}  // namespace

void Forest::fit(const std::vector<double>& x, std::size_t features, const std::vector<double>& y, std::uint64_t seed,
                 const Options& options) {
  trees_.clear();
  if (y.empty() || features == 0) return;
  Rng rng(seed);
  Builder builder{features, y, options, rng, {}, {}, {}, {}, {}, {}};
  builder.index_levels(x);
  builder.feature_order.resize(features);
  for (int t = 0; t < options.trees; ++t) {
    builder.rows.resize(y.size());
    for (std::size_t& r : builder.rows) r = rng.index(y.size());  // bootstrap
    std::iota(builder.feature_order.begin(), builder.feature_order.end(), std::size_t{0});
    Tree tree;
    builder.build(tree, 0, y.size(), 0);
    trees_.push_back(std::move(tree));
  }
}

Forest::Prediction Forest::predict(const double* row) const {
  Prediction p;
  if (trees_.empty()) return p;
  p.sd = 0;
  double sum = 0, sum2 = 0;
  for (const Tree& tree : trees_) {
    std::size_t node = 0;
    while (tree[node].feature >= 0) {
      node = static_cast<std::size_t>(row[tree[node].feature] <= tree[node].threshold ? tree[node].left
                                                                                      : tree[node].right);
    }
    sum += tree[node].value;
    sum2 += tree[node].value * tree[node].value;
  }
  const auto n = static_cast<double>(trees_.size());
  p.mean = sum / n;
  p.sd = std::sqrt(std::max(0.0, sum2 / n - p.mean * p.mean));
  return p;
}

}  // namespace ocltune
