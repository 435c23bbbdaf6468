// Internal to the runtime: a cached decision with its prepared kernels and a pool of kernel sets.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/lookup.h"
#include "runtime/runtime.h"

namespace ocltune {

struct Runtime::Entry {
  // One kernel of the op: built program, kernel name, launch geometry (fixed by the shape code).
  struct Step {
    cl::Program program;
    // What the program was built from, less its inline text (compared with a later plan's: a plan may
    // differ from the resolved one in its work sizes, never in its kernels).
    std::vector<std::string> files;
    std::vector<std::pair<std::string, std::string>> defines;
    std::string options;
    std::string kernel;
    cl_uint dims = 1;
    std::array<std::size_t, 3> global{};
    std::array<std::size_t, 3> local{};
    bool driver_local = false;  // cl::NullRange: the driver picks the work-group size
  };
  // A set of kernel objects for one thread at a time: clSetKernelArg on a shared cl_kernel from two
  // threads would race. `last` holds the scalar arguments already set, which need not be set again.
  struct alignas(64) Slot {
    std::atomic<bool> busy{false};
    std::vector<cl::Kernel> kernels;
    std::vector<RawArgs> last;
  };
  static constexpr std::size_t kSlots = 32;

  std::mutex resolve_mutex;
  std::atomic<bool> ready{false};
  Decision decision;
  bool library = false;  // served by the adapter's library (CLBlast)
  bool fast = false;     // the adapter's fast_args reproduce its plan's arguments
  std::vector<Step> steps;
  // With `fast`: the arguments of the plan at resolution, which fast_args may copy and patch.
  std::vector<RawArgs> plan_args;
  // The problem's database key and canonical shape, set with the decision (before `ready`): what
  // dispatched_problems() reports. The hot path's only bookkeeping is `calls`.
  std::string op, dtype, math, shape_key;
  nlohmann::json shape;
  std::atomic<std::uint64_t> calls{0};  // dispatches since the last reset_dispatch_stats()
  // Fast start: set (before `ready`) when this entry runs its built-in configuration while a better one
  // is prepared; once that is done, the next call replaces the entry (Runtime::upgrade).
  std::shared_ptr<Upgrade> upgrade;

  std::mutex slots_mutex;  // creation of slots only
  std::atomic<std::size_t> slot_count{0};
  std::array<std::unique_ptr<Slot>, kSlots> slots;

  // A free slot, created (with its kernels) when every existing one is busy. Waits when kSlots
  // threads are dispatching the same problem at once.
  Slot& acquire();
  static void release(Slot& slot) { slot.busy.store(false, std::memory_order_release); }
};

// The better candidates of a provisional entry, in lookup order, each with the call's programs and
// the check key it still needs (empty: none); the background thread builds and checks them in turn
// until one is ready (refusing the others as a resolution does), then sets `done`.
struct Runtime::Upgrade {
  struct Option {
    Candidate candidate;
    std::vector<ProgramSource> programs;
    std::string check_key;
  };
  std::unique_ptr<Problem> problem;
  std::vector<Option> options;
  // The option that passed (set before `done`): its check need not run again for a later call, whose
  // plan may differ in scalar arguments (the check record's key) but not in its kernels.
  std::optional<Config> ready;
  std::atomic<bool> done{false};
};

}  // namespace ocltune
