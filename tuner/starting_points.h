// Where the search of a problem starts besides the defaults and the family's seeds: configurations
// of the nearest tuned shapes (TuneOptions::starting_points) and neighbours of the nearest one.
#pragma once

#include <cstddef>
#include <vector>

#include "core/config.h"

namespace ocltune {

// The configurations of `nearest` that are among `space` (the problem's valid, allowed
// configurations), in order; then the first one's counterpart in each variant of `space` that
// extends its variant (its parameters at the same values, and parameters of the other variant's own:
// gemm.cl's KSPLIT); then up to `neighbours` unrepeated configurations that differ from the first in
// one parameter by one step of its value list. Repeats are left out.
std::vector<Config> starting_points(const std::vector<Config>& nearest, const std::vector<Config>& space,
                                    std::size_t neighbours);

}  // namespace ocltune
