// One thing the benchmark suite times: a configuration of our kernels or a baseline library call.
#pragma once

#include <string>

namespace ocltune::bench {

class Timed {
 public:
  virtual ~Timed() = default;
  // What ran, for the benchmark's label: a configuration's canonical text or a library routine.
  virtual std::string label() const = 0;
  // Runs once on fresh outputs and checks them against a float64 reference: empty when correct,
  // otherwise why not. Nothing is timed before this has passed.
  virtual std::string verify() = 0;
  // Runs once and returns the device time of the whole operation in nanoseconds.
  virtual double run_ns() = 0;
};

}  // namespace ocltune::bench
