// What a runtime dispatched: its entries' call counts gathered per problem, statistics, and the
// `ocltune --shapes` file of the tune-what-you-run loop (written atomically).
#include "runtime/dispatch_record.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/error.h"
#include "ops/family.h"
#include "runtime/entry.h"
#include "runtime/runtime.h"

namespace ocltune {
namespace {

using ProblemKey = std::tuple<std::string, std::string, std::string, std::string>;  // op, dtype, math, shape key

// Gathers entries (of one or several runtimes) into problems. Several entries can hold one problem:
// decision-cache keys finer than the database key (16-bit GEMMs with and without beta), entries
// retired by reload(), other runtimes. The shape and level shown are those of the entry with the
// most calls, live entries (the decisions that answer now) before retired ones.
class ProblemMerger {
 public:
  void add(const Runtime::Entry& e, bool live) {
    if (!e.ready.load(std::memory_order_acquire)) return;
    const std::uint64_t calls = e.calls.load(std::memory_order_relaxed);
    if (calls == 0) return;
    Slot& slot = problems_[{e.op, e.dtype, e.math, e.shape_key}];
    DispatchedProblem& p = slot.problem;
    if (p.op.empty()) {
      p.op = e.op;
      p.dtype = e.dtype;
      p.math = e.math;
      p.shape_key = e.shape_key;
    }
    p.calls[static_cast<std::size_t>(e.decision.level)] += calls;
    const std::pair<bool, std::uint64_t> rank{live, calls};
    if (rank > slot.best) {
      slot.best = rank;
      p.shape = e.shape;
      p.level = e.decision.level;
    }
  }

  std::vector<DispatchedProblem> take() {
    std::vector<DispatchedProblem> out;
    out.reserve(problems_.size());
    for (auto& [key, slot] : problems_) out.push_back(std::move(slot.problem));
    return out;
  }

 private:
  struct Slot {
    DispatchedProblem problem;
    std::pair<bool, std::uint64_t> best{false, 0};
  };
  std::map<ProblemKey, Slot> problems_;
};

nlohmann::json levels_json(const LevelCounts& counts) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < kLevelCount; ++i) j[level_name(static_cast<Level>(i))] = counts[i];
  return j;
}

// Where a family's problems go in a shapes file: the order `--ops all` tunes the families, then
// families outside that list (registered by tests) by name.
std::size_t family_rank(const std::string& op) {
  const std::vector<const OpFamily*>& families = op_families();
  for (std::size_t i = 0; i < families.size(); ++i) {
    if (families[i]->name() == op) return i;
  }
  return families.size();
}

}  // namespace

std::uint64_t DispatchedProblem::total() const {
  std::uint64_t n = 0;
  for (const std::uint64_t c : calls) n += c;
  return n;
}

std::uint64_t DispatchStats::total() const {
  std::uint64_t n = 0;
  for (const std::uint64_t c : by_level) n += c;
  return n;
}

DispatchStats dispatch_stats_of(const std::vector<DispatchedProblem>& problems) {
  DispatchStats s;
  for (const DispatchedProblem& p : problems) {
    LevelCounts& op = s.by_op[p.op];
    for (std::size_t i = 0; i < kLevelCount; ++i) {
      s.by_level[i] += p.calls[i];
      op[i] += p.calls[i];
    }
  }
  return s;
}

nlohmann::json dispatch_stats_json(const std::vector<DispatchedProblem>& problems) {
  const DispatchStats s = dispatch_stats_of(problems);
  nlohmann::json j = {{"calls", s.total()}, {"levels", levels_json(s.by_level)}, {"ops", nlohmann::json::object()}};
  for (const auto& [op, counts] : s.by_op) j["ops"][op] = levels_json(counts);
  nlohmann::json list = nlohmann::json::array();
  for (const DispatchedProblem& p : problems) {
    list.push_back({{"op", p.op},
                    {"dtype", p.dtype},
                    {"math", p.math},
                    {"shape_key", p.shape_key},
                    {"level", level_name(p.level)},
                    {"calls", levels_json(p.calls)},
                    {"shape", p.shape}});
  }
  j["problems"] = std::move(list);
  return j;
}

std::vector<DispatchedProblem> Runtime::dispatched_problems() const {
  ProblemMerger merger;
  {
    std::shared_lock lock(entries_mutex_);
    for (const auto& e : retired_) merger.add(*e, false);
    for (const auto& [code, e] : entries_) merger.add(*e, true);
  }
  return merger.take();
}

DispatchStats Runtime::dispatch_stats() const { return dispatch_stats_of(dispatched_problems()); }

void Runtime::reset_dispatch_stats() {
  // Counters only: the entries (and their decisions) stay, so the next call is still a cache hit.
  std::shared_lock lock(entries_mutex_);
  for (const auto& e : retired_) e->calls.store(0, std::memory_order_relaxed);
  for (const auto& [code, e] : entries_) e->calls.store(0, std::memory_order_relaxed);
}

std::size_t Runtime::write_shapes_file(const std::string& path) const {
  const Runtime* self = this;
  return ocltune::write_shapes_file(path, std::span<const Runtime* const>(&self, 1));
}

nlohmann::ordered_json shapes_file_json(std::span<const Runtime* const> runtimes) {
  // Each runtime's problems are already merged; across runtimes the same key meets again.
  std::map<ProblemKey, std::pair<DispatchedProblem, std::uint64_t>> merged;  // problem, calls of its shape
  for (const Runtime* rt : runtimes) {
    if (!rt) continue;
    for (DispatchedProblem& p : rt->dispatched_problems()) {
      auto [it, fresh] = merged.try_emplace({p.op, p.dtype, p.math, p.shape_key});
      auto& [into, shape_calls] = it->second;
      if (fresh) {
        shape_calls = p.total();
        into = std::move(p);
        continue;
      }
      for (std::size_t i = 0; i < kLevelCount; ++i) into.calls[i] += p.calls[i];
      if (p.total() > shape_calls) {
        shape_calls = p.total();
        into.shape = std::move(p.shape);
        into.level = p.level;
      }
    }
  }
  std::vector<const DispatchedProblem*> order;
  for (const auto& [key, value] : merged) order.push_back(&value.first);
  std::sort(order.begin(), order.end(), [](const DispatchedProblem* a, const DispatchedProblem* b) {
    return std::forward_as_tuple(family_rank(a->op), a->op, a->shape_key, a->dtype, a->math) <
           std::forward_as_tuple(family_rank(b->op), b->op, b->shape_key, b->dtype, b->math);
  });
  // "op" first and "recorded" last, so that a person reads each line as the CLI's examples.
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const DispatchedProblem* p : order) {
    nlohmann::ordered_json entry = {{"op", p->op}};
    for (const auto& [name, value] : p->shape.items()) {
      if (name != "op") entry[name] = value;
    }
    nlohmann::ordered_json levels = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < kLevelCount; ++i) {
      if (p->calls[i]) levels[level_name(static_cast<Level>(i))] = p->calls[i];
    }
    entry["recorded"] = {{"level", level_name(p->level)}, {"calls", p->total()}, {"levels", std::move(levels)}};
    list.push_back(std::move(entry));
  }
  return list;
}

std::size_t write_shapes_file(const std::string& path, std::span<const Runtime* const> runtimes) {
  if (path.empty()) throw Error("write_shapes_file: the path is empty");
  const nlohmann::ordered_json list = shapes_file_json(runtimes);
  // One problem per line: a shapes file is read and edited by people too.
  std::string text = "[";
  for (std::size_t i = 0; i < list.size(); ++i) text += (i ? ",\n " : "\n ") + list[i].dump();
  text += list.empty() ? "]\n" : "\n]\n";

  static std::atomic<unsigned> counter{0};
  const std::string temp = fmt::format("{}.tmp.{}.{}", path, getpid(), counter++);
  std::error_code ec;
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(fmt::format("cannot write shapes file {}: {}", path, std::strerror(errno)));
    out << text;
    out.close();
    if (!out) {
      std::filesystem::remove(temp, ec);
      throw Error(fmt::format("cannot write shapes file {} (disk full?)", path));
    }
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw Error(fmt::format("cannot write shapes file {}: {}", path, ec.message()));
  }
  return list.size();
}

}  // namespace ocltune
