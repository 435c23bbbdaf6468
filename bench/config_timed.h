// Our kernels for one configuration of a problem, verified once and then timed by device events.
#pragma once

#include <string>

#include "bench/timed.h"
#include "core/config.h"
#include "harness/launch.h"
#include "ops/problem.h"

namespace ocltune::bench {

class ConfigTimed : public Timed {
 public:
  // Builds the plan (throws BuildError / ClError); `evaluation` must outlive this object.
  ConfigTimed(Session& session, Evaluation& evaluation, const Config& config);
  std::string label() const override { return to_string(config_); }
  std::string verify() override;
  double run_ns() override;

 private:
  Session& session_;
  Evaluation& evaluation_;
  Config config_;
  PreparedPlan plan_;
};

}  // namespace ocltune::bench
