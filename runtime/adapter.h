// The per-family dispatch adapter: what the runtime needs from an op family to serve its calls.
// A family adds one file (see runtime/gemm.cpp) with its call struct, an adapter and an entry point.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "harness/cl.h"
#include "harness/error.h"
#include "harness/launch.h"
#include "harness/workspace.h"
#include "ops/problem.h"

namespace ocltune {

class DispatchAdapter;

// Which level of the lookup chain answered (docs/RUNTIME.md).
enum class Level : int { kExact = 0, kNearest = 1, kClass = 2, kBuiltin = 3, kLibrary = 4 };
const char* level_name(Level level);

// Kernels of one call whose arguments the hot path binds without allocating (a 16-bit GEMM through
// fp32 kernels has five: widen A, B and C, multiply, narrow C). Longer plans run too, re-planned on
// every call, and return kMaxSteps events at most (see Dispatch).
inline constexpr std::size_t kMaxSteps = 6;

// Compact identity of a call's problem: everything its programs and launch geometry depend on (not
// buffers, offsets or scalars). The key of the runtime's decision cache: built without allocating.
struct ShapeCode {
  static constexpr std::size_t kMaxDims = 14;
  const DispatchAdapter* adapter = nullptr;
  std::uint32_t size = 0;
  std::array<std::int64_t, kMaxDims> dims{};

  void push(std::int64_t v) { dims[size++] = v; }
  bool operator==(const ShapeCode& o) const {
    return adapter == o.adapter && size == o.size &&
           std::memcmp(dims.data(), o.dims.data(), size * sizeof(std::int64_t)) == 0;
  }
};
struct ShapeCodeHash {
  std::size_t operator()(const ShapeCode& c) const noexcept;
};

// One kernel argument as clSetKernelArg takes it.
// Trivially constructible, so that arrays of them cost nothing on the hot path.
struct RawArg {
  enum Kind : std::uint8_t { kValue, kMem, kLocal };
  Kind kind;
  std::uint32_t size;  // bytes of the value, or of the local allocation
  alignas(8) unsigned char bytes[8];

  template <typename T>
  static RawArg value(T v) {
    static_assert(sizeof(T) <= 8);
    RawArg a;
    a.kind = kValue;
    a.size = sizeof(T);
    std::memset(a.bytes, 0, sizeof a.bytes);
    std::memcpy(a.bytes, &v, sizeof(T));
    return a;
  }
  static RawArg local(std::size_t bytes) {
    RawArg a = value(std::uint64_t{0});
    a.kind = kLocal;
    a.size = static_cast<std::uint32_t>(bytes);
    return a;
  }
  static RawArg mem(cl_mem m) {
    RawArg a = value(m);
    a.kind = kMem;
    return a;
  }
  bool operator==(const RawArg& o) const {
    return kind == o.kind && size == o.size && std::memcmp(bytes, o.bytes, sizeof bytes) == 0;
  }
};

// The arguments of one kernel launch, in order.
struct RawArgs {
  // elementwise with five tensor operands takes 39 (9 + 6 per tensor).
  static constexpr std::size_t kMax = 48;
  std::uint32_t count = 0;
  std::array<RawArg, kMax> args;
  void push(const RawArg& a) {
    if (count == kMax) throw Error("a kernel has more arguments than the runtime supports");
    args[count++] = a;
  }
};
// The same arguments as a plan holds them (what a family's fast binder must reproduce).
RawArgs raw_args(const KernelLaunch& launch);

// Options of one dispatch.
struct DispatchOptions {
  std::span<const cl_event> wait;  // events the first kernel waits for
  bool events = true;              // return the kernels' events
};

// What a dispatch enqueued.
struct Dispatch {
  Level level = Level::kBuiltin;
  // Events held (when asked for): one per kernel enqueued, except that a plan of more than
  // kMaxSteps kernels keeps its last kernel's event in events[kMaxSteps - 1].
  std::uint32_t count = 0;
  std::array<cl::Event, kMaxSteps> events;
  // The event whose completion means the op is done (kernels are chained by events on an
  // out-of-order queue, in order on an in-order one); null when events were
  // not asked for.
  const cl::Event* last() const { return count && events[count - 1]() ? &events[count - 1] : nullptr; }
};

// The family side of dispatch. `call` always points to the family's own call struct.
class DispatchAdapter {
 public:
  virtual ~DispatchAdapter() = default;
  virtual std::string op() const = 0;
  // The problem of a call: the database shape key, the space that validates configurations, the
  // built-in configuration, and the evaluation the first-dispatch check runs (synthetic data, the
  // family's float64 reference). Throws ocltune::Error for a call no kernel can serve.
  virtual std::unique_ptr<Problem> problem(const void* call) const = 0;
  // The kernels of `config` on the call's own buffers: the family's <op>_plan.
  virtual LaunchPlan plan(const void* call, const Config& config, Workspace& workspace) const = 0;
  // Hot path: each step's arguments for `call`, exactly as plan() would set them, without
  // allocating. `resolved` holds the arguments of the plan of the call that resolved this shape
  // code, so a binder may copy them and set only what varies between calls of one code (buffers,
  // offsets, scalars). Families that cannot do this return false and plan() runs on every call.
  virtual bool fast_args(const void* /*call*/, std::span<const RawArgs> /*resolved*/,
                         std::span<RawArgs> /*steps*/) const {
    return false;
  }
  // A vendor library that can serve the call instead of the built-in configuration ("" if none).
  virtual std::string library() const { return ""; }
  // Whether that library can serve this call on `device` (a dtype it lacks, an extension the
  // device lacks): where not, the built-in configuration is the fallback.
  virtual bool library_serves(const void* /*call*/, const DeviceInfo& /*device*/) const { return true; }
  // Enqueues the call through that library.
  virtual Dispatch library_enqueue(const void* /*call*/, cl_command_queue /*queue*/,
                                   const DispatchOptions& /*options*/) const {
    return {};
  }
};

// Typed base: a family implements the same functions on its call struct.
template <typename Call>
class TypedAdapter : public DispatchAdapter {
 public:
  virtual std::unique_ptr<Problem> problem_of(const Call& call) const = 0;
  virtual LaunchPlan plan_of(const Call& call, const Config& config, Workspace& workspace) const = 0;
  virtual bool fast_args_of(const Call& /*call*/, std::span<const RawArgs> /*resolved*/,
                            std::span<RawArgs> /*steps*/) const {
    return false;
  }
  virtual Dispatch library_enqueue_of(const Call& /*call*/, cl_command_queue /*queue*/,
                                      const DispatchOptions& /*options*/) const {
    return {};
  }
  virtual bool library_serves_of(const Call& /*call*/, const DeviceInfo& /*device*/) const { return true; }

  std::unique_ptr<Problem> problem(const void* call) const final { return problem_of(*static_cast<const Call*>(call)); }
  LaunchPlan plan(const void* call, const Config& config, Workspace& workspace) const final {
    return plan_of(*static_cast<const Call*>(call), config, workspace);
  }
  bool fast_args(const void* call, std::span<const RawArgs> resolved, std::span<RawArgs> steps) const final {
    return fast_args_of(*static_cast<const Call*>(call), resolved, steps);
  }
  Dispatch library_enqueue(const void* call, cl_command_queue queue, const DispatchOptions& options) const final {
    return library_enqueue_of(*static_cast<const Call*>(call), queue, options);
  }
  bool library_serves(const void* call, const DeviceInfo& device) const final {
    return library_serves_of(*static_cast<const Call*>(call), device);
  }
};

}  // namespace ocltune
