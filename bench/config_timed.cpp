// Our kernels for one configuration of a problem, verified once and then timed by device events.
#include "bench/config_timed.h"

#include "harness/error.h"
#include "harness/session.h"
#include "harness/timing.h"

namespace ocltune::bench {

ConfigTimed::ConfigTimed(Session& session, Evaluation& evaluation, const Config& config)
    : session_(session), evaluation_(evaluation), config_(config), plan_(prepare(session, evaluation.plan(config))) {}

std::string ConfigTimed::verify() {
  evaluation_.reset();
  enqueue(session_.queue(), plan_);
  try {
    session_.queue().finish();
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  const VerifyResult result = evaluation_.verify();
  return result.ok ? "" : "wrong result: " + result.message;
}

double ConfigTimed::run_ns() {
  const std::vector<cl::Event> events = enqueue(session_.queue(), plan_);
  try {
    session_.queue().finish();
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  // From the first kernel's start to the last one's end: multi-kernel plans are timed whole.
  return event_span_ns(events);
}

}  // namespace ocltune::bench
