// The CPU fallback of ops without an ocl kernel: counted per op, warned once, refused in strict mode.
#include "ocltune_torch/csrc/fallback.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

namespace ocltune_torch {
namespace {

struct Stats {
  std::mutex mutex;
  std::map<std::string, std::int64_t> calls;
  std::set<std::string> warned;  // not cleared by a reset: the warning is once per op and process
};

Stats& stats() {
  static Stats* s = new Stats();
  return *s;
}

bool strict_mode() {
  const char* v = std::getenv("OCLTUNE_TORCH_STRICT");
  return v && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0;
}

std::string name_of(const c10::OperatorHandle& op) {
  const c10::OperatorName& name = op.schema().operator_name();
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

}  // namespace

void note_fallback(const std::string& name) {
  TORCH_CHECK(!strict_mode(), "ocltune_torch: ", name,
              " has no ocl kernel for these arguments, and OCLTUNE_TORCH_STRICT=1 forbids running it on the CPU");
  bool first = false;
  {
    Stats& s = stats();
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.calls[name];
    first = s.warned.insert(name).second;
  }
  if (first) {
    TORCH_WARN("ocltune_torch: ", name,
               " runs on the CPU (no ocl kernel for these arguments); its tensors are copied to the host and back. "
               "ocltune_torch.fallback_stats() counts these calls, OCLTUNE_TORCH_STRICT=1 makes them errors.");
  }
}

void ocl_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  note_fallback(name_of(op));
  at::native::cpu_fallback(op, stack);
}

namespace {

// PyTorch sends convolutions of backends it does not know to convolution_overrideable (and its
// backward), whose default kernel raises instead of reaching the boxed fallback; and on the CPU key
// the same op would raise too. So these two run at::convolution(_backward) on CPU copies themselves.
// (ocltune's conv2d family is the later ocl kernel.)
at::Tensor convolution_on_cpu(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                              c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation,
                              bool transposed, c10::IntArrayRef output_padding, int64_t groups) {
  note_fallback("aten::convolution_overrideable");
  std::optional<at::Tensor> cpu_bias;
  if (bias && bias->defined()) cpu_bias = bias->cpu();
  return at::convolution(input.cpu(), weight.cpu(), cpu_bias, stride, padding, dilation, transposed, output_padding,
                         groups)
      .to(input.device());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_on_cpu(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, c10::IntArrayRef stride,
    c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed, c10::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  note_fallback("aten::convolution_backward_overrideable");
  const std::vector<int64_t> bias_size = {grad_output.size(1)};
  at::OptionalIntArrayRef bias_sizes;
  if (output_mask[2]) bias_sizes = bias_size;
  const auto grads = at::convolution_backward(grad_output.cpu(), input.cpu(), weight.cpu(), bias_sizes, stride, padding,
                                              dilation, transposed, output_padding, groups, output_mask);
  const c10::Device device = input.device();
  auto back = [&](const at::Tensor& t) { return t.defined() ? t.to(device) : t; };
  return {back(std::get<0>(grads)), back(std::get<1>(grads)), back(std::get<2>(grads))};
}

}  // namespace

std::map<std::string, std::int64_t> fallback_stats() {
  Stats& s = stats();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.calls;
}

void reset_fallback_stats() {
  Stats& s = stats();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.calls.clear();
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&ocl_cpu_fallback>()); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", convolution_on_cpu);
  m.impl("convolution_backward_overrideable", convolution_backward_on_cpu);
}

}  // namespace ocltune_torch
