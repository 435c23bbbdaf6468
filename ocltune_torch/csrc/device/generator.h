// The random generator of an ocl device: a seed and an offset, as a counter-based generator keeps.
#pragma once

#include <cstdint>

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

namespace ocltune_torch {

// Each random op takes `count` numbers: it reads (seed, offset) and advances the offset, so a seed
// gives the same sequence of ops the same values. The values themselves are made on the host for
// now (random_ops.cpp); a Philox kernel on the device can keep this state as it is.
class OclGenerator final : public c10::GeneratorImpl {
 public:
  explicit OclGenerator(c10::DeviceIndex device, std::uint64_t seed = c10::default_rng_seed_val);

  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

  void set_current_seed(std::uint64_t seed) override;
  std::uint64_t current_seed() const override { return seed_; }
  std::uint64_t seed() override;  // a new nondeterministic seed
  void set_offset(std::uint64_t offset) override { offset_ = offset; }
  std::uint64_t get_offset() const override { return offset_; }
  // The state is 16 bytes: seed and offset, little-endian uint64 (a CPU uint8 tensor).
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  // Reserves `count` numbers: the (seed, offset) they start at. Call with mutex_ held.
  std::uint64_t take(std::uint64_t count);

 private:
  OclGenerator* clone_impl() const override;

  std::uint64_t seed_;
  std::uint64_t offset_ = 0;
};

// The default generator of device `index` (-1: the current device), seeded by torch.manual_seed.
const at::Generator& default_generator(int index);
at::Generator new_generator(int index);

}  // namespace ocltune_torch
