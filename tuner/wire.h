// The messages between the tuner and an isolated worker process: one JSON object per line.
#pragma once

#include <nlohmann/json.hpp>

#include "tuner/evaluator.h"

namespace ocltune {

nlohmann::json to_json(const TimingPolicy& policy);
TimingPolicy timing_from_json(const nlohmann::json& j);
nlohmann::json to_json(const EvalOutcome& outcome);
// Throws ocltune::Error on a malformed message.
EvalOutcome outcome_from_json(const nlohmann::json& j);

// `ocltune worker`: reads requests from stdin, answers on stdout, until stdin closes.
// Requests: {"problem": SHAPE_JSON} (answered {"ready": true} or {"worker_error": ...}, as any failed request is),
// {"prefetch": [PARAMS...]} (no answer), {"evaluate": PARAMS, "timing": {...}} (an outcome),
// {"interleave": [PARAMS...], "rounds": R, "runs": N} (answered {"samples": [[...], ...]}).
int run_worker(int device_index, int compile_threads);

}  // namespace ocltune
