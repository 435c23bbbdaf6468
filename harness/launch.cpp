// Launch plans: the kernels an operator enqueues for one configuration, as data.
#include "harness/launch.h"

#include "harness/error.h"
#include "harness/session.h"

namespace ocltune {
namespace {

void set_arg(cl::Kernel& kernel, cl_uint index, const KernelArg& arg) {
  std::visit(
      [&](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, LocalMemory>) {
          kernel.setArg(index, cl::Local(value.bytes));
        } else {
          kernel.setArg(index, value);
        }
      },
      arg);
}

}  // namespace

PreparedPlan prepare(Session& session, const LaunchPlan& plan) {
  PreparedPlan prepared;
  prepared.steps.reserve(plan.kernels.size());
  for (const KernelLaunch& launch : plan.kernels) {
    cl::Program program = session.programs().get(launch.program);
    try {
      cl::Kernel kernel(program, launch.kernel.c_str());
      for (std::size_t i = 0; i < launch.args.size(); ++i) {
        set_arg(kernel, static_cast<cl_uint>(i), launch.args[i]);
        if (const auto* buffer = std::get_if<cl::Buffer>(&launch.args[i])) prepared.buffers.push_back(*buffer);
      }
      prepared.steps.push_back({std::move(kernel), launch.global, launch.local});
    } catch (const cl::Error& e) {
      throw ClError(e);
    }
  }
  return prepared;
}

std::vector<cl::Event> enqueue(cl::CommandQueue& queue, const PreparedPlan& plan) {
  std::vector<cl::Event> events(plan.steps.size());
  try {
    for (std::size_t i = 0; i < plan.steps.size(); ++i) {
      const auto& step = plan.steps[i];
      queue.enqueueNDRangeKernel(step.kernel, cl::NullRange, step.global, step.local, nullptr, &events[i]);
    }
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  return events;
}

}  // namespace ocltune
