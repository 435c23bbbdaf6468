// What a runtime dispatched: calls per lookup level and family, the distinct problems behind them,
// and those problems as an `ocltune --shapes` file (the tune-what-you-run loop, docs/RUNTIME.md).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/adapter.h"

namespace ocltune {

class Runtime;

// Levels of the lookup chain, the index of every per-level count (Level's values are 0 to 4).
inline constexpr std::size_t kLevelCount = 5;
using LevelCounts = std::array<std::uint64_t, kLevelCount>;

// One distinct problem (op, dtype, math, shape key: the database's key) and the calls that reached it.
struct DispatchedProblem {
  std::string op, dtype, math, shape_key;
  nlohmann::json shape;           // the family's canonical shape: an entry of a --shapes file
  Level level = Level::kBuiltin;  // the level that answers it now (its newest decision)
  LevelCounts calls{};            // by the level that answered each call
  std::uint64_t total() const;
};

struct DispatchStats {
  LevelCounts by_level{};
  std::map<std::string, LevelCounts> by_op;  // family name -> calls by level
  std::uint64_t total() const;
};

// Sums of the problems' calls.
DispatchStats dispatch_stats_of(const std::vector<DispatchedProblem>& problems);

// {"calls": N, "levels": {"exact": n, ...}, "ops": {"gemm": {"exact": n, ...}, ...},
//  "problems": [{"op", "dtype", "math", "shape_key", "level", "calls": {...}, "shape": {...}}, ...]}
// with every level named in each "levels" and "calls" object.
nlohmann::json dispatch_stats_json(const std::vector<DispatchedProblem>& problems);

// The problems dispatched by every runtime in `runtimes`, one entry per database key (calls added up;
// the shape and level of the runtime and decision with the most calls), as the JSON list a --shapes
// file holds: grouped by family in the order `--ops all` tunes them, then by shape key. Each entry is
// the problem's canonical shape ("op" first) plus "recorded": {"level": ..., "calls": N, "levels":
// {the levels that answered: calls}}, which shapes files may carry and the tuner ignores.
nlohmann::ordered_json shapes_file_json(std::span<const Runtime* const> runtimes);

// Writes shapes_file_json(runtimes) to `path` atomically (a temporary file beside it, then rename):
// a reader never sees half a file. Returns the number of problems. Throws ocltune::Error naming the
// path when it cannot be written.
std::size_t write_shapes_file(const std::string& path, std::span<const Runtime* const> runtimes);

}  // namespace ocltune
