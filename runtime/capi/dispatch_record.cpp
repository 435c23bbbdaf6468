// The C ABI of what a runtime dispatched: counts per level and family, the statistics as JSON, their
// reset, and the `ocltune --shapes` file of the tune-what-you-run loop (include/ocltune/ocltune.h).
#include "runtime/dispatch_record.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "harness/error.h"
#include "ops/family.h"
#include "runtime/capi/capi_support.h"

using namespace ocltune::capi;

static_assert(OCLTUNE_LEVEL_COUNT == ocltune::kLevelCount, "the C ABI's level count is the runtime's");

extern "C" {

ocltune_status ocltune_runtime_dispatch_counts(ocltune_runtime runtime, const char* op,
                                               uint64_t calls[OCLTUNE_LEVEL_COUNT]) {
  if (!runtime || !calls)
    return fail(OCLTUNE_INVALID_ARGUMENT, "ocltune_runtime_dispatch_counts: runtime or calls is NULL");
  if (op && !ocltune::find_family(op)) {
    return fail(OCLTUNE_INVALID_ARGUMENT,
                std::string("ocltune_runtime_dispatch_counts: unknown op '") + std::string(op).substr(0, 64) + "'");
  }
  return guarded([&] {
    const ocltune::DispatchStats s = runtime->runtime->dispatch_stats();
    ocltune::LevelCounts counts = s.by_level;
    if (op) {
      auto it = s.by_op.find(op);
      counts = it == s.by_op.end() ? ocltune::LevelCounts{} : it->second;
    }
    std::copy(counts.begin(), counts.end(), calls);
  });
}

ocltune_status ocltune_runtime_dispatch_stats_json(ocltune_runtime runtime, char* buffer, size_t size, size_t* length) {
  if (!runtime || !length) {
    return fail(OCLTUNE_INVALID_ARGUMENT, "ocltune_runtime_dispatch_stats_json: runtime or length is NULL");
  }
  if (size > 0 && !buffer) {
    return fail(OCLTUNE_INVALID_ARGUMENT, "ocltune_runtime_dispatch_stats_json: size > 0 but buffer is NULL");
  }
  return guarded([&] {
    nlohmann::json stats = ocltune::dispatch_stats_json(runtime->runtime->dispatched_problems());
    stats["databases"] = runtime->runtime->layer_paths();
    const ocltune::RuntimeStats cold = runtime->runtime->stats();
    stats["cold_path"] = {{"resolutions", cold.resolutions},
                          {"resolve_s", cold.resolve_seconds},
                          {"checks", cold.checks},
                          {"check_s", cold.check_seconds},
                          {"compiled", cold.programs_compiled},
                          {"compile_s", cold.compile_seconds},
                          {"loaded", cold.binary_loads},
                          {"load_s", cold.load_seconds},
                          {"stored", cold.binary_stores},
                          {"store_s", cold.store_seconds},
                          {"checks_remembered", cold.checks_remembered},
                          {"provisional", cold.provisional},
                          {"upgrades", cold.upgrades}};
    const std::string text = stats.dump();
    *length = text.size();
    if (size == 0) return;
    const std::size_t n = std::min(text.size(), size - 1);
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  });
}

ocltune_status ocltune_runtime_reset_dispatch_stats(ocltune_runtime runtime) {
  if (!runtime) return fail(OCLTUNE_INVALID_ARGUMENT, "ocltune_runtime_reset_dispatch_stats: runtime is NULL");
  return guarded([&] { runtime->runtime->reset_dispatch_stats(); });
}

ocltune_status ocltune_write_shapes_file(const ocltune_runtime* runtimes, size_t count, const char* path,
                                         size_t* problems) {
  if (problems) *problems = 0;
  if (!path || (count > 0 && !runtimes)) {
    return fail(OCLTUNE_INVALID_ARGUMENT,
                "ocltune_write_shapes_file: path is NULL, or runtimes is NULL with count > 0");
  }
  std::vector<const ocltune::Runtime*> list;
  for (size_t i = 0; i < count; ++i) {
    if (!runtimes[i]) return fail(OCLTUNE_INVALID_ARGUMENT, "ocltune_write_shapes_file: a runtime is NULL");
    list.push_back(runtimes[i]->runtime.get());
  }
  clear_last_error();
  try {
    const std::size_t n = ocltune::write_shapes_file(path, list);
    if (problems) *problems = n;
    return OCLTUNE_SUCCESS;
  } catch (const ocltune::Error& e) {
    return fail(OCLTUNE_INVALID_ARGUMENT, e.what());  // a path that cannot be written
  } catch (...) {
    return fail_from_current_exception();
  }
}

}  // extern "C"
