// The order in which the runtime tries a TF32 call's candidate configurations on a device with TF32
// units (docs/decisions/0055): configurations that run on matrix units first.
#pragma once

#include <algorithm>
#include <vector>

namespace ocltune {

// Moves the candidates for which `on_matrix_units` holds ahead of the others, keeping the lookup
// order (exact, nearest, class, built-in) within each group. With `keep_first`, the first candidate
// stays first: the exact level's pick where the call's shape has a tf32 row, compared by recorded
// time with the shape's exact-math row (measured; anything else is a guess).
template <class Candidate, class OnMatrixUnits>
void matrix_units_first(std::vector<Candidate>& candidates, bool keep_first, OnMatrixUnits on_matrix_units) {
  auto from = candidates.begin();
  if (keep_first && from != candidates.end()) ++from;
  std::stable_partition(from, candidates.end(), on_matrix_units);
}

}  // namespace ocltune
