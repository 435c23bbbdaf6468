// Launch plans: the kernels an operator enqueues for one configuration, as data.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "harness/cl.h"
#include "harness/program.h"

namespace ocltune {

class Session;

// Dynamic local memory of the given size in bytes (clSetKernelArg with a null pointer).
struct LocalMemory {
  std::size_t bytes;
};

using KernelArg = std::variant<cl::Buffer, cl_int, cl_uint, cl_long, cl_ulong, cl_float, LocalMemory>;

struct KernelLaunch {
  ProgramSource program;
  std::string kernel;
  std::vector<KernelArg> args;
  cl::NDRange global;
  cl::NDRange local;  // cl::NullRange lets the driver choose
};

// Kernels enqueued in order on one in-order queue; the op is timed from first start to last end.
struct LaunchPlan {
  std::vector<KernelLaunch> kernels;
};

// A plan with programs built and arguments set, ready to enqueue many times.
struct PreparedPlan {
  struct Step {
    cl::Kernel kernel;
    cl::NDRange global;
    cl::NDRange local;
  };
  std::vector<Step> steps;
  // The plan's buffers. A kernel does not retain its arguments, so a prepared plan outliving its
  // LaunchPlan (the tuner prepares every finalist, then times them in turns) would otherwise
  // enqueue a released buffer once a workspace had grown past it.
  std::vector<cl::Buffer> buffers;
};

// Builds (through the session's cache) and binds every kernel of the plan. Throws BuildError when a
// program does not compile and ClError when a kernel cannot be created or an argument is refused.
PreparedPlan prepare(Session& session, const LaunchPlan& plan);

// Enqueues every step; returns one event per kernel. Throws ClError when a launch is refused.
std::vector<cl::Event> enqueue(cl::CommandQueue& queue, const PreparedPlan& plan);

}  // namespace ocltune
