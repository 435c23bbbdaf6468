// A small random-forest regressor: the surrogate model of the model-based strategy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ocltune {

class Forest {
 public:
  struct Options {
    int trees = 24;
    int min_leaf = 1;
    int max_depth = 16;
    double feature_fraction = 0.6;  // features tried per split
  };
  struct Prediction {
    double mean = 0;
    double sd = -1;  // spread of the trees' predictions (the model's uncertainty); -1: none made
  };

  // x: rows of `features` values each (row-major); y: one target per row. Deterministic for a seed.
  void fit(const std::vector<double>& x, std::size_t features, const std::vector<double>& y, std::uint64_t seed,
           const Options& options);
  void fit(const std::vector<double>& x, std::size_t features, const std::vector<double>& y, std::uint64_t seed) {
    fit(x, features, y, seed, Options{});
  }
  bool empty() const { return trees_.empty(); }
  Prediction predict(const double* row) const;

 private:
  struct Node {
    int feature = -1;  // -1: a leaf holding `value`
    double threshold = 0;
    int left = 0, right = 0;
    double value = 0;
  };
  using Tree = std::vector<Node>;

  std::vector<Tree> trees_;
};

}  // namespace ocltune
