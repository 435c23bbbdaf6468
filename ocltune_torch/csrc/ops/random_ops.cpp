// Random ops on ocl: uniform_, normal_, bernoulli_, random_, native_dropout (+ backward) on the device
// with Philox4x32-10 (plain/kernels/plain_random.cl), from the device generator's (seed, offset); dropout
// at a given state for other ops (random_ops.h).
//
// Each call takes 4 numbers per Philox counter it uses from the ocl generator, so torch.manual_seed
// makes the values reproducible and two calls differ. randperm is drawn on the CPU from a generator
// seeded by the ocl generator's (seed, offset) and copied to the device (it is rare and sequential).
#include "ocltune_torch/csrc/ops/random_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/Operators.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/copy.h"
#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/generator.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

// Reserves `counters` Philox counters (4 numbers each) of self's ocl generator.
PhiloxState take_counters(const std::optional<at::Generator>& generator, const at::Tensor& self,
                          std::uint64_t counters) {
  auto* g = at::get_generator_or_default<OclGenerator>(generator, default_generator(self.device().index()));
  std::lock_guard<std::mutex> lock(g->mutex_);
  PhiloxState s;
  s.seed = g->current_seed();
  s.base = (g->take(4 * counters) + 3) / 4;
  return s;
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Launches a kernel of plain_random.cl on self (every element, in self's memory order) and returns
// the launch after its (shape, out, strides, seed, base) arguments, for the kernel's own ones.
struct RandomLaunch {
  PlainLayout layout;
  std::optional<PlainLaunch> launch;
};

// The same at a state already reserved.
void start_at(RandomLaunch& r, const char* kernel, const at::Tensor& self, const std::vector<const at::Tensor*>& inputs,
              at::ScalarType input_type, PhiloxState s) {
  std::vector<const at::Tensor*> tensors = {&self};
  tensors.insert(tensors.end(), inputs.begin(), inputs.end());
  r.layout = plain_layout(self.sizes(), tensors);
  const int device = self.device().index();
  cl_program program = plain_program(device, PlainFiles{"plain_philox.cl", "plain_random.cl"},
                                     {{"O", self.scalar_type()}, {"A", input_type}});
  r.launch.emplace(device, program, kernel);
  r.launch->arg(r.layout.shape).tensor(self).arg(r.layout.operands[0]).arg<cl_ulong>(s.seed).arg<cl_ulong>(s.base);
}

void start(RandomLaunch& r, const char* kernel, const at::Tensor& self, const std::vector<const at::Tensor*>& inputs,
           at::ScalarType input_type, const std::optional<at::Generator>& generator, std::int64_t per_counter) {
  const std::int64_t n = self.numel();
  start_at(r, kernel, self, inputs, input_type,
           take_counters(generator, self, static_cast<std::uint64_t>((n + per_counter - 1) / per_counter)));
}

at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> generator) {
  check_ocl(self, "uniform_", "self");
  if (!kernel_dtype(self.scalar_type())) return fallback<ATEN_OP(uniform_)>::call(self, from, to, generator);
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  if (self.numel() == 0) return self;
  at::assert_no_internal_overlap(self);
  RandomLaunch r;
  start(r, "uniform", self, {}, at::kFloat, generator, 4);
  r.launch->arg(static_cast<float>(from)).arg(static_cast<float>(to)).run((r.layout.shape.numel + 3) / 4);
  return self;
}

at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> generator) {
  check_ocl(self, "normal_", "self");
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  if (!kernel_dtype(self.scalar_type())) return fallback<ATEN_OP(normal_)>::call(self, mean, std, generator);
  if (self.numel() == 0) return self;
  at::assert_no_internal_overlap(self);
  RandomLaunch r;
  start(r, "normal", self, {}, at::kFloat, generator, 4);
  r.launch->arg(static_cast<float>(mean)).arg(static_cast<float>(std)).run((r.layout.shape.numel + 3) / 4);
  return self;
}

// torch.normal with a tensor mean and/or std, as PyTorch computes it on every device: standard normal
// samples in the broadcast shape, then * std + mean (aten/src/ATen/native/DistributionTemplates.h).
// The std check reads the device, as CUDA's does.
void check_normal_std(const at::Tensor& std) {
  TORCH_CHECK(!std.is_complex(), "normal expects standard deviation to be non-complex");
  TORCH_CHECK(std.numel() == 0 || std.min().ge(0).item<bool>(), "normal expects all elements of std >= 0.0");
}

at::Tensor normal_tensor_tensor(const at::Tensor& mean, const at::Tensor& std, std::optional<at::Generator> generator) {
  check_normal_std(std);
  at::Tensor out = at::empty(at::infer_size(mean.sizes(), std.sizes()), mean.options());  // mean's dtype, as on CPU
  ocltune_torch::normal_(out, 0.0, 1.0, generator);
  return out.mul_(std).add_(mean);
}

at::Tensor normal_tensor_float(const at::Tensor& mean, double std, std::optional<at::Generator> generator) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  at::Tensor out = at::empty_like(mean, at::MemoryFormat::Contiguous);
  ocltune_torch::normal_(out, 0.0, std, generator);
  return out.add_(mean);
}

at::Tensor normal_float_tensor(double mean, const at::Tensor& std, std::optional<at::Generator> generator) {
  check_normal_std(std);
  at::Tensor out = at::empty_like(std, at::MemoryFormat::Contiguous);
  ocltune_torch::normal_(out, 0.0, 1.0, generator);
  return out.mul_(std).add_(mean);
}

at::Tensor& bernoulli_float(at::Tensor& self, double p, std::optional<at::Generator> generator) {
  check_ocl(self, "bernoulli_", "self");
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(bernoulli__float)>::call(self, p, generator);
  if (self.numel() == 0) return self;
  at::assert_no_internal_overlap(self);
  RandomLaunch r;
  start(r, "bernoulli_scalar", self, {}, at::kFloat, generator, 4);
  r.launch->arg(static_cast<float>(p)).run((r.layout.shape.numel + 3) / 4);
  return self;
}

at::Tensor& bernoulli_tensor(at::Tensor& self, const at::Tensor& p_arg, std::optional<at::Generator> generator) {
  check_ocl(self, "bernoulli_", "self");
  if (!plain_dtype(self.scalar_type()) || !kernel_dtype(p_arg.scalar_type())) {
    return fallback<ATEN_OP(bernoulli__Tensor)>::call(self, p_arg, generator);
  }
  if (self.numel() == 0) return self;
  at::assert_no_internal_overlap(self);
  const at::Tensor p_device = p_arg.is_cpu() ? p_arg.to(self.device()) : p_arg;
  check_same_device(self, p_device, "bernoulli_", "p");
  TORCH_CHECK(at::is_expandable_to(p_device.sizes(), self.sizes()), "bernoulli_: p of shape ", p_device.sizes(),
              " cannot be broadcast to self's ", self.sizes());
  // PyTorch's check that every p is a probability (one read of two flags).
  const at::Tensor bad = at::logical_or(at::lt(p_device, 0), at::gt(p_device, 1)).any();
  TORCH_CHECK(!bad.item<bool>(), "bernoulli_: expected all probabilities in [0, 1]");
  at::Tensor p = p_device.expand(self.sizes());
  if (may_overlap(self, p)) p = p.clone();
  RandomLaunch r;
  start(r, "bernoulli_tensor", self, {&p}, p.scalar_type(), generator, 4);
  r.launch->tensor(p).arg(r.layout.operands[1]).run((r.layout.shape.numel + 3) / 4);
  return self;
}

// from + uniform integers in [0, range).
at::Tensor& random_range(at::Tensor& self, std::int64_t from, std::uint64_t range,
                         const std::optional<at::Generator>& generator) {
  if (self.numel() == 0) return self;
  at::assert_no_internal_overlap(self);
  RandomLaunch r;
  start(r, "random_range", self, {}, at::kFloat, generator, 2);
  r.launch->arg<cl_long>(from).arg<cl_ulong>(range).run((r.layout.shape.numel + 1) / 2);
  return self;
}

// The largest value random_ draws for a dtype (integers exact in a float type's mantissa).
std::int64_t random_max(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return std::int64_t{1} << 24;
    case at::kHalf: return std::int64_t{1} << 11;
    case at::kBFloat16: return std::int64_t{1} << 8;
    case at::kLong: return std::numeric_limits<std::int64_t>::max();
    case at::kInt: return std::numeric_limits<std::int32_t>::max();
    case at::kShort: return std::numeric_limits<std::int16_t>::max();
    case at::kChar: return std::numeric_limits<std::int8_t>::max();
    case at::kByte: return std::numeric_limits<std::uint8_t>::max();
    case at::kBool: return 1;
    default: TORCH_INTERNAL_ASSERT(false);
  }
}

at::Tensor& random_(at::Tensor& self, std::optional<at::Generator> generator) {
  check_ocl(self, "random_", "self");
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(random_)>::call(self, generator);
  return random_range(self, 0, static_cast<std::uint64_t>(random_max(self.scalar_type())) + 1, generator);
}

at::Tensor& random_from(at::Tensor& self, std::int64_t from, std::optional<std::int64_t> to,
                        std::optional<at::Generator> generator) {
  check_ocl(self, "random_", "self");
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(random__from)>::call(self, from, to, generator);
  if (to) {
    TORCH_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", *to);
    return random_range(self, from, static_cast<std::uint64_t>(*to) - static_cast<std::uint64_t>(from), generator);
  }
  const std::int64_t max = random_max(self.scalar_type());
  TORCH_CHECK(from <= max, "random_ expects 'from' to be at most ", max, " for ", self.scalar_type());
  return random_range(self, from, static_cast<std::uint64_t>(max) - static_cast<std::uint64_t>(from) + 1, generator);
}

at::Tensor& random_to(at::Tensor& self, std::int64_t to, std::optional<at::Generator> generator) {
  return random_from(self, 0, to, generator);
}

at::Tensor& randperm_out(std::int64_t n, std::optional<at::Generator> generator, at::Tensor& out) {
  check_ocl(out, "randperm", "out");
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  const std::uint64_t offset_seed = [&] {
    auto* g = at::get_generator_or_default<OclGenerator>(generator, default_generator(out.device().index()));
    std::lock_guard<std::mutex> lock(g->mutex_);
    const std::uint64_t seed = g->current_seed();
    return splitmix64(seed ^ splitmix64(g->take(4)));
  }();
  const at::Tensor host =
      at::randperm(n, at::make_generator<at::CPUGeneratorImpl>(offset_seed), out.options().device(at::kCPU));
  out.resize_({n});
  out.copy_(host);
  return out;
}

// True where every operand of the layout is dense in one order (merged to one dim of stride 1): the
// dropout kernels then take four elements per work item with vector loads (dropout_dense).
bool dense_layout(const PlainLayout& layout) {
  return layout.shape.ndim == 1 && std::all_of(layout.operands.begin(), layout.operands.end(),
                                               [](const KernelStrides& s) { return s.strides[0] == 1; });
}

// A dense dropout kernel of plain_random.cl for out's and in's dtypes (fp32 both: float4 loads).
PlainLaunch dense_launch(const at::Tensor& out, const at::Tensor& in, const char* kernel) {
  const int device = out.device().index();
  const bool float4 = out.scalar_type() == at::kFloat && in.scalar_type() == at::kFloat;
  return PlainLaunch(
      device,
      plain_program(device, PlainFiles{"plain_philox.cl", "plain_random.cl"},
                    {{"O", out.scalar_type()}, {"A", in.scalar_type()}}, float4 ? "#define DROPOUT_FLOAT4 1\n" : ""),
      kernel);
}

std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p, std::optional<bool> train) {
  check_ocl(input, "native_dropout", "input");
  if (!kernel_dtype(input.scalar_type())) return fallback<ATEN_OP(native_dropout)>::call(input, p, train);
  TORCH_CHECK(0 <= p && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (input.numel() == 0 || (train.has_value() && !*train)) {
    at::Tensor mask = at::empty_like(input, input.options().dtype(at::kBool));
    return {input.clone(), input.numel() == 0 ? mask : mask.fill_(true)};
  }
  return dropout_at(input, p, reserve_dropout(input, input.numel()));
}

at::Tensor native_dropout_backward(const at::Tensor& grad_output, const at::Tensor& mask, double scale) {
  check_ocl(grad_output, "native_dropout_backward", "grad_output");
  if (!kernel_dtype(grad_output.scalar_type())) {
    return fallback<ATEN_OP(native_dropout_backward)>::call(grad_output, mask, scale);
  }
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be Bool Scalar Type", mask.scalar_type());
  check_same_device(grad_output, mask, "native_dropout_backward", "mask");
  at::Tensor out = at::empty_like(grad_output);
  if (out.numel() == 0) return out;
  if (mask.sizes() == grad_output.sizes()) {
    const PlainLayout layout = plain_layout(out.sizes(), {&out, &grad_output, &mask});
    if (dense_layout(layout)) {
      PlainLaunch launch = dense_launch(out, grad_output, "dropout_backward_dense");
      launch.arg<cl_long>(out.numel()).tensor(out).arg<cl_long>(layout.operands[0].offset);
      launch.tensor(grad_output).arg<cl_long>(layout.operands[1].offset);
      launch.tensor(mask).arg<cl_long>(layout.operands[2].offset).arg(static_cast<float>(scale));
      launch.run((out.numel() + 3) / 4);
      return out;
    }
  }
  run_plain_elementwise("masked_scale", out, {grad_output, mask.expand(grad_output.sizes())}, {"A", "B"},
                        grad_output.scalar_type(), {scale});
  return out;
}

}  // namespace

PhiloxState reserve_dropout(const at::Tensor& t, std::int64_t numel) {
  return take_counters(std::nullopt, t, static_cast<std::uint64_t>((numel + 3) / 4));
}

std::tuple<at::Tensor, at::Tensor> dropout_at(const at::Tensor& input, double p, PhiloxState state) {
  const double keep = 1.0 - p;
  const double scale = keep == 0.0 ? 0.0 : 1.0 / keep;
  at::Tensor out = at::empty_like(input);
  at::Tensor mask = at::empty_like(input, input.options().dtype(at::kBool));
  if (input.numel() == 0) return {out, mask};
  const std::int64_t n = input.numel();
  // Mask and out share out's layout (both are empty_like input); input may be strided anyway.
  const PlainLayout layout = plain_layout(out.sizes(), {&out, &input, &mask});
  if (dense_layout(layout)) {
    PlainLaunch launch = dense_launch(out, input, "dropout_dense");
    // Element offsets from the merged layout: with a dim of size 1 dropped, the tensor's own may differ.
    launch.arg<cl_long>(n).tensor(out).arg<cl_long>(layout.operands[0].offset);
    launch.tensor(input).arg<cl_long>(layout.operands[1].offset).tensor(mask).arg<cl_long>(layout.operands[2].offset);
    launch.arg<cl_ulong>(state.seed).arg<cl_ulong>(state.base);
    launch.arg(static_cast<float>(keep)).arg(static_cast<float>(scale)).run((n + 3) / 4);
    return {out, mask};
  }
  RandomLaunch r;
  start_at(r, "dropout", out, {&input, &mask}, input.scalar_type(), state);
  r.launch->tensor(input).arg(r.layout.operands[1]).tensor(mask).arg(r.layout.operands[2]);
  r.launch->arg(static_cast<float>(keep)).arg(static_cast<float>(scale)).run((r.layout.shape.numel + 3) / 4);
  return {out, mask};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("uniform_", uniform_);
  m.impl("normal_", normal_);
  m.impl("normal.Tensor_Tensor", normal_tensor_tensor);
  m.impl("normal.Tensor_float", normal_tensor_float);
  m.impl("normal.float_Tensor", normal_float_tensor);
  m.impl("bernoulli_.float", bernoulli_float);
  m.impl("bernoulli_.Tensor", bernoulli_tensor);
  m.impl("random_", random_);
  m.impl("random_.from", random_from);
  m.impl("random_.to", random_to);
  m.impl("randperm.generator_out", randperm_out);
  m.impl("native_dropout", native_dropout);
  m.impl("native_dropout_backward", native_dropout_backward);
}

}  // namespace ocltune_torch
