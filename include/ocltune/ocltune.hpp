// ocltune C++ API: RAII and exceptions over the C ABI of ocltune/ocltune.h, header-only, so a C++
// framework links only libocltune.so (whose ABI is the C one) and never the library's internals.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "ocltune/ocltune.h"

namespace ocltune::api {

// A failed call: the status and ocltune_last_error()'s message.
class Error : public std::runtime_error {
 public:
  Error(ocltune_status status, const std::string& message)
      : std::runtime_error(std::string(ocltune_status_name(status)) + ": " + message), status_(status) {}
  ocltune_status status() const { return status_; }

 private:
  ocltune_status status_;
};

inline void check(ocltune_status status) {
  if (status != OCLTUNE_SUCCESS) throw Error(status, ocltune_last_error());
}

// One runtime: a device, its databases and decision cache. Move-only; thread-safe like the C ABI.
class Runtime {
 public:
  // On device `index`, counted as `ocltune devices` lists them, with a context and queue of its own.
  static Runtime for_index(int index, const ocltune_options* options = nullptr) {
    ocltune_runtime handle = nullptr;
    check(ocltune_runtime_create_for_index(index, options, &handle));
    return Runtime(handle);
  }
  // On the caller's context and device.
  Runtime(cl_context context, cl_device_id device, const ocltune_options* options = nullptr) {
    check(ocltune_runtime_create(context, device, options, &handle_));
  }
  Runtime(Runtime&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Runtime& operator=(Runtime&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime() {
    if (handle_) ocltune_runtime_destroy(handle_);
  }

  ocltune_runtime handle() const { return handle_; }
  cl_context context() const { return ocltune_runtime_context(handle_); }
  cl_device_id device() const { return ocltune_runtime_device(handle_); }
  cl_command_queue queue() const { return ocltune_runtime_queue(handle_); }
  void reload() { check(ocltune_runtime_reload(handle_)); }
  // The caller's OpenCL C `source` built through the runtime's program cache (ocltune.h); the
  // caller releases the program.
  cl_program build_program(std::string_view source, const char* options = nullptr) {
    cl_program program = nullptr;
    check(ocltune_runtime_build_program(handle_, source.data(), source.size(), options, &program));
    return program;
  }

  // What the runtime dispatched (ocltune.h): calls by ocltune_level of family `op` (nullptr: all),
  // the statistics as JSON text, their reset.
  std::array<std::uint64_t, OCLTUNE_LEVEL_COUNT> dispatch_counts(const char* op = nullptr) const {
    std::array<std::uint64_t, OCLTUNE_LEVEL_COUNT> calls{};
    check(ocltune_runtime_dispatch_counts(handle_, op, calls.data()));
    return calls;
  }
  std::string dispatch_stats_json() const {
    std::string text;
    std::size_t length = 0;
    check(ocltune_runtime_dispatch_stats_json(handle_, nullptr, 0, &length));
    // Another thread may dispatch a new problem between the two calls: then the text grew.
    do {
      text.resize(length + 64);
      check(ocltune_runtime_dispatch_stats_json(handle_, text.data(), text.size(), &length));
    } while (length >= text.size());
    text.resize(length);
    return text;
  }
  void reset_dispatch_stats() { check(ocltune_runtime_reset_dispatch_stats(handle_)); }

  // Each op enqueues on `queue` (nullptr: the runtime's own) after `wait`; `event`, when given,
  // receives an event of the op that the caller releases. Returns the lookup level that answered.
  ocltune_level gemm(const ocltune_gemm_args& args, cl_command_queue queue = nullptr,
                     std::span<const cl_event> wait = {}, cl_event* event = nullptr) {
    return call(ocltune_gemm, args, queue, wait, event);
  }
  ocltune_level conv2d(const ocltune_conv2d_args& args, cl_command_queue queue = nullptr,
                       std::span<const cl_event> wait = {}, cl_event* event = nullptr) {
    return call(ocltune_conv2d, args, queue, wait, event);
  }
  ocltune_level pool(const ocltune_pool_args& args, cl_command_queue queue = nullptr,
                     std::span<const cl_event> wait = {}, cl_event* event = nullptr) {
    return call(ocltune_pool, args, queue, wait, event);
  }
  ocltune_level reduce(const ocltune_reduce_args& args, cl_command_queue queue = nullptr,
                       std::span<const cl_event> wait = {}, cl_event* event = nullptr) {
    return call(ocltune_reduce, args, queue, wait, event);
  }
  ocltune_level softmax(const ocltune_softmax_args& args, cl_command_queue queue = nullptr,
                        std::span<const cl_event> wait = {}, cl_event* event = nullptr) {
    return call(ocltune_softmax, args, queue, wait, event);
  }
  ocltune_level norm(const ocltune_norm_args& args, cl_command_queue queue = nullptr,
                     std::span<const cl_event> wait = {}, cl_event* event = nullptr) {
    return call(ocltune_norm, args, queue, wait, event);
  }
  ocltune_level elementwise(const ocltune_elementwise_args& args, cl_command_queue queue = nullptr,
                            std::span<const cl_event> wait = {}, cl_event* event = nullptr) {
    return call(ocltune_elementwise, args, queue, wait, event);
  }
  ocltune_level elementwise_chain(const ocltune_elementwise_chain_args& args, cl_command_queue queue = nullptr,
                                  std::span<const cl_event> wait = {}, cl_event* event = nullptr) {
    return call(ocltune_elementwise_chain, args, queue, wait, event);
  }

 private:
  explicit Runtime(ocltune_runtime handle) : handle_(handle) {}

  template <typename Args>
  using Entry = ocltune_status (*)(ocltune_runtime, cl_command_queue, const Args*, cl_uint, const cl_event*, cl_event*,
                                   ocltune_level*);
  template <typename Args>
  ocltune_level call(Entry<Args> entry, const Args& args, cl_command_queue queue, std::span<const cl_event> wait,
                     cl_event* event) {
    ocltune_level level = OCLTUNE_LEVEL_BUILTIN;
    check(entry(handle_, queue ? queue : this->queue(), &args, static_cast<cl_uint>(wait.size()),
                wait.empty() ? nullptr : wait.data(), event, &level));
    return level;
  }

  ocltune_runtime handle_ = nullptr;
};

// The problems `runtimes` dispatched as an `ocltune --shapes` file at `path` (written atomically);
// returns how many it holds.
inline std::size_t write_shapes_file(const std::string& path, std::span<const ocltune_runtime> runtimes) {
  std::size_t problems = 0;
  check(ocltune_write_shapes_file(runtimes.data(), runtimes.size(), path.c_str(), &problems));
  return problems;
}

}  // namespace ocltune::api
