// normal_ and uniform_ on ocl: values from the device's generator (seed, offset), made on the host.
//
// Each call takes numel numbers from the ocl generator and seeds a CPU generator with its (seed,
// offset), so torch.manual_seed makes torch.randn(device="ocl") reproducible and two calls differ.
// The values are PyTorch's CPU ones for that seed; a Philox kernel on the device is later work.
#include <cstdint>
#include <mutex>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/copy.h"
#include "ocltune_torch/csrc/generator.h"
#include "ocltune_torch/csrc/tensor_util.h"

namespace ocltune_torch {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A CPU generator for the next `count` numbers of self's ocl generator (the given one or the default).
at::Generator host_generator(const std::optional<at::Generator>& generator, const at::Tensor& self) {
  auto* g = at::get_generator_or_default<OclGenerator>(generator, default_generator(self.device().index()));
  std::uint64_t seed = 0, offset = 0;
  {
    std::lock_guard<std::mutex> lock(g->mutex_);
    seed = g->current_seed();
    offset = g->take(static_cast<std::uint64_t>(self.numel()));
  }
  return at::make_generator<at::CPUGeneratorImpl>(splitmix64(seed ^ splitmix64(offset)));
}

at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> generator) {
  check_ocl(self, "normal_", "self");
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  if (self.numel() == 0) return self;
  at::Tensor values = at::empty(self.sizes(), self.options().device(at::kCPU));
  values.normal_(mean, std, host_generator(generator, self));
  write_from_host(self, values);
  return self;
}

at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> generator) {
  check_ocl(self, "uniform_", "self");
  if (self.numel() == 0) return self;
  at::Tensor values = at::empty(self.sizes(), self.options().device(at::kCPU));
  values.uniform_(from, to, host_generator(generator, self));
  write_from_host(self, values);
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("normal_", normal_);
  m.impl("uniform_", uniform_);
}

}  // namespace ocltune_torch
