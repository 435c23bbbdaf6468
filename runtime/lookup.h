// The lookup chain as an ordered list of candidate configurations for one problem: exact ->
// nearest -> device class -> built-in (or a library), with the rows of equivalent problems and
// TF32's matrix-units-first order. The runtime tries them in this order at its cold path
// (runtime/resolve.cpp: the first that plans, builds and passes its first-dispatch check serves
// the call); `ocltune db holdout` asks the same chain what it would pick for a shape whose rows
// were held out. One function, so the two can never differ.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/config.h"
#include "harness/device.h"
#include "ops/problem.h"
#include "runtime/adapter.h"
#include "runtime/table.h"

namespace ocltune {

struct Candidate {
  Level level = Level::kBuiltin;
  Config config;        // empty for kLibrary
  std::string source;   // which row (database, device, shape, math), or "built-in configuration"
  double distance = 0;  // nearest-shape distance, for kNearest and kClass
};

struct LookupContext {
  const TunedTable& table;
  const DeviceInfo& device;
  double max_nearest_distance = 8.0;
  // The device has TF32 (and 16-bit) matrix units: a tf32 or 16-bit call tries configurations that
  // use them first.
  bool tf32_units = false;
  // A library that serves this call in place of the built-in configuration ("clblast"); empty: none.
  std::string library;
  // Configurations refused for this problem earlier (failed checks): skipped by the nearest levels.
  std::function<bool(const Config&)> blocked;
};

// Every candidate for `problem`, in the order to try them; the last is the built-in configuration
// (or the library). A level contributes at most one row per kind of rows it reads.
std::vector<Candidate> lookup_candidates(const Problem& problem, const LookupContext& context);

// "system database /x.db: device 1a2b..., shape ..., math exact", for a candidate's source.
std::string describe(const TunedEntry& entry);

}  // namespace ocltune
