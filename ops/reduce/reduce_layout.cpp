// Reduction layouts: dims + reduced axes -> (outer, length, inner) passes.
#include "ops/reduce/reduce_layout.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/error.h"

namespace ocltune {

ReduceLayout reduce_layout(const std::vector<std::int64_t>& dims, const std::vector<int>& axes) {
  if (dims.empty() || dims.size() > 4) throw Error(fmt::format("a tensor of 1 to 4 dimensions, not {}", dims.size()));
  std::vector<bool> reduced(dims.size(), false);
  for (int a : axes) {
    if (a < 0 || a >= static_cast<int>(dims.size()))
      throw Error(fmt::format("axis {} outside 0..{}", a, dims.size() - 1));
    if (reduced[static_cast<std::size_t>(a)]) throw Error(fmt::format("axis {} is repeated", a));
    reduced[static_cast<std::size_t>(a)] = true;
  }
  ReduceLayout layout;
  layout.elements = 1;
  layout.outputs = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 0) throw Error(fmt::format("dimension {} is negative", d));
    if (dims[d] == 0 && reduced[d]) throw Error(fmt::format("reduced dimension {} is empty", d));
    layout.elements *= dims[d];
    if (reduced[d]) {
      layout.reduced *= dims[d];
    } else {
      layout.outputs *= dims[d];
    }
  }
  if (layout.outputs == 0) return layout;

  // Runs of dimensions (extent > 1) that are all reduced or all kept, outermost first.
  struct Run {
    std::int64_t extent;
    bool reduced;
  };
  std::vector<Run> runs;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!runs.empty() && runs.back().reduced == reduced[d]) {
      runs.back().extent *= dims[d];
    } else {
      runs.push_back({dims[d], reduced[d]});
    }
  }
  std::vector<std::size_t> reduced_runs;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].reduced) reduced_runs.push_back(i);
  }
  auto product = [&](std::size_t from, std::size_t to) {
    std::int64_t p = 1;
    for (std::size_t i = from; i < to; ++i) p *= runs[i].extent;
    return p;
  };
  if (reduced_runs.empty()) {
    layout.passes.push_back({layout.elements, 1, 1});  // every reduced extent is 1: a map
    return layout;
  }
  // At most 4 dimensions alternate as R K R K at worst: never more than two reduced runs.
  const std::size_t last = reduced_runs.back();
  layout.passes.push_back({product(0, last), runs[last].extent, product(last + 1, runs.size())});
  if (reduced_runs.size() == 2) {
    const std::size_t first = reduced_runs.front();
    layout.passes.push_back(
        {product(0, first), runs[first].extent, product(first + 1, runs.size()) / runs[last].extent});
  }
  return layout;
}

std::vector<std::int64_t> reduced_dims(const std::vector<std::int64_t>& dims, const std::vector<int>& axes,
                                       bool keepdim) {
  std::vector<std::int64_t> out;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const bool r = std::find(axes.begin(), axes.end(), static_cast<int>(d)) != axes.end();
    if (!r) {
      out.push_back(dims[d]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

std::string dims_text(const std::vector<std::int64_t>& dims) { return fmt::format("{}", fmt::join(dims, "x")); }
std::string axes_text(const std::vector<int>& axes) { return fmt::format("{}", fmt::join(axes, ".")); }

std::vector<std::int64_t> int_list_field(const nlohmann::json& shape, const char* name, std::size_t max_len,
                                         std::int64_t lo, std::int64_t hi) {
  if (!shape.is_object() || !shape.contains(name)) throw Error(fmt::format("shape field '{}' is missing", name));
  const nlohmann::json& v = shape.at(name);
  if (!v.is_array() || v.empty() || v.size() > max_len) {
    throw Error(fmt::format("shape field '{}' must be a list of 1 to {} integers", name, max_len));
  }
  std::vector<std::int64_t> out;
  for (const nlohmann::json& x : v) {
    if (!x.is_number_integer()) throw Error(fmt::format("shape field '{}' must hold integers", name));
    if (x.is_number_unsigned() && x.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
      throw Error(fmt::format("shape field '{}' holds {} outside [{}, {}]", name, x.get<std::uint64_t>(), lo, hi));
    }
    const std::int64_t i = x.get<std::int64_t>();
    if (i < lo || i > hi) throw Error(fmt::format("shape field '{}' holds {} outside [{}, {}]", name, i, lo, hi));
    out.push_back(i);
  }
  return out;
}

}  // namespace ocltune
