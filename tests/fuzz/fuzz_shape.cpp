// Fuzz target: the shape parser of every op family (from_json through problems_from_json), the
// configuration parsers, the nearest-shape description, and the up-front device fit check of every
// family's buffers. Contract: ocltune::Error or success,
// nothing else; a parsed shape round-trips through to_json to the same key.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "harness/error.h"
#include "ops/device_fit.h"
#include "ops/family.h"
#include "runtime/tuned_rows.h"
#include "tests/fuzz/fuzz_device.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ocltune;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    parse_config(text);
  } catch (const Error&) {
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    config_from_json(j);
  } catch (const Error&) {
  }
  const ShapeInfo info = shape_info(j);
  (void)shape_distance(info, info);
  try {
    const ProblemList problems = problems_from_json(j.is_array() ? j : nlohmann::json::array({j}), family_names());
    for (const auto& p : problems) {
      // A shape that was accepted must read back from its own JSON (the tuner stores that JSON and
      // the runtime parses it again) with the same key.
      std::unique_ptr<Problem> again;
      try {
        again = find_family(p->op())->from_json(p->shape_json());
      } catch (const Error&) {
        __builtin_trap();
      }
      if (again->shape_key() != p->shape_key() || again->shape_json() != p->shape_json()) __builtin_trap();
      (void)p->flops();
      (void)p->bytes();
      (void)p->space(fuzz::device()).check(p->default_config(fuzz::device()));
      (void)device_fit_problem(*p, fuzz::device());  // what `ocltune --shapes` checks up front
    }
  } catch (const Error&) {
  }
  return 0;
}
