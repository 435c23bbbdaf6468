// The random generator of an ocl device: a seed and an offset, as a counter-based generator keeps.
#include "ocltune_torch/csrc/device/generator.h"

#include <cstring>
#include <mutex>
#include <vector>

#include <ATen/Functions.h>
#include <c10/util/Exception.h>

#include "ocltune_torch/csrc/device/device.h"

namespace ocltune_torch {

OclGenerator::OclGenerator(c10::DeviceIndex device, std::uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      seed_(seed) {}

void OclGenerator::set_current_seed(std::uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

std::uint64_t OclGenerator::seed() {
  const std::uint64_t s = c10::detail::getNonDeterministicRandom();
  set_current_seed(s);
  return s;
}

void OclGenerator::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK(new_state.dtype() == caffe2::TypeMeta::Make<std::uint8_t>() && new_state.numel() == 16 &&
                  new_state.is_contiguous() && new_state.device_type() == c10::DeviceType::CPU,
              "ocltune_torch: an ocl generator state is a CPU uint8 tensor of 16 bytes (seed, offset)");
  const auto* bytes = static_cast<const std::uint8_t*>(new_state.data());
  std::memcpy(&seed_, bytes, 8);
  std::memcpy(&offset_, bytes + 8, 8);
}

c10::intrusive_ptr<c10::TensorImpl> OclGenerator::get_state() const {
  at::Tensor state = at::empty({16}, at::TensorOptions().dtype(at::kByte).device(at::kCPU));
  std::memcpy(state.data_ptr(), &seed_, 8);
  std::memcpy(static_cast<std::uint8_t*>(state.data_ptr()) + 8, &offset_, 8);
  return state.getIntrusivePtr();
}

std::uint64_t OclGenerator::take(std::uint64_t count) {
  const std::uint64_t start = offset_;
  offset_ += count;
  return start;
}

OclGenerator* OclGenerator::clone_impl() const {
  auto* g = new OclGenerator(device_.index(), seed_);
  g->offset_ = offset_;
  return g;
}

const at::Generator& default_generator(int index) {
  // One per device, made on first use, never destroyed (Python may hold them past exit).
  static std::vector<at::Generator>* generators = [] {
    auto* v = new std::vector<at::Generator>();
    for (int i = 0; i < device_count(); ++i) {
      v->push_back(at::make_generator<OclGenerator>(static_cast<c10::DeviceIndex>(i)));
    }
    return v;
  }();
  const int i = index == -1 ? current_device() : index;
  check_device_index(i);
  return (*generators)[static_cast<std::size_t>(i)];
}

at::Generator new_generator(int index) {
  const int i = index == -1 ? current_device() : index;
  check_device_index(i);
  return at::make_generator<OclGenerator>(static_cast<c10::DeviceIndex>(i));
}

}  // namespace ocltune_torch
