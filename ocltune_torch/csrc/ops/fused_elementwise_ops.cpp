// ocltune::elementwise_chain: up to four elementwise steps fused into one kernel of the elementwise
// family, the op the torch.compile backend (ocltune_torch/compile.py) puts where a graph had a chain
// of aten elementwise ops. Intermediate values stay in registers in fp32: one read of each input and
// one write of the result, where eager runs one kernel (and one round trip to memory) per op.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/elementwise.h"
#include "ocltune_torch/csrc/ops/fused_elementwise.h"

namespace ocltune_torch {
namespace {

// The result's sizes: the broadcast of the input and every tensor operand.
std::vector<std::int64_t> chain_sizes(const at::Tensor& input, const c10::List<std::optional<at::Tensor>>& operands) {
  at::DimVector sizes(input.sizes().begin(), input.sizes().end());
  for (const std::optional<at::Tensor> t : operands) {
    if (t && t->defined()) sizes = at::infer_size_dimvector(sizes, t->sizes());
  }
  return {sizes.begin(), sizes.end()};
}

void check_chain(const at::Tensor& input, const std::vector<std::string>& ops,
                 const c10::List<std::optional<at::Tensor>>& operands, c10::ArrayRef<double> scalars,
                 at::IntArrayRef reversed) {
  TORCH_CHECK(ops.size() <= OCLTUNE_ELEMENTWISE_MAX_STEPS, "ocltune::elementwise_chain: ", ops.size(),
              " steps; a chain holds at most ", OCLTUNE_ELEMENTWISE_MAX_STEPS);
  TORCH_CHECK(operands.size() == ops.size() && scalars.size() == ops.size() && reversed.size() == ops.size(),
              "ocltune::elementwise_chain: ops, operands, scalars and reversed must have one entry per step");
  TORCH_CHECK(kernel_dtype(input.scalar_type()), "ocltune::elementwise_chain: dtype ", input.scalar_type(),
              " is not one of float32, float16, bfloat16");
  for (const std::optional<at::Tensor> t : operands) {
    if (!t || !t->defined()) continue;
    TORCH_CHECK(t->scalar_type() == input.scalar_type(), "ocltune::elementwise_chain: an operand of dtype ",
                t->scalar_type(), " in a chain of ", input.scalar_type());
  }
}

// The most result elements one chain kernel computes: the family indexes 2^30. Below that only for
// tests ($OCLTUNE_TORCH_MAX_CHAIN_ELEMENTS), which cannot allocate results that large.
std::int64_t max_chain_elements() {
  constexpr std::int64_t kFamilyLimit = std::int64_t{1} << 30;
  const char* text = std::getenv("OCLTUNE_TORCH_MAX_CHAIN_ELEMENTS");
  const std::int64_t asked = text ? std::atoll(text) : 0;
  return asked > 0 && asked < kFamilyLimit ? asked : kFamilyLimit;
}

// One kernel of the family over `out` (dense) and `expanded` (input, then the tensor operands, all of
// out's sizes, dims merged).
void chain_kernel(const at::Tensor& out, const std::vector<at::Tensor>& expanded, const std::vector<std::string>& ops,
                  const c10::List<std::optional<at::Tensor>>& operands, c10::ArrayRef<double> scalars,
                  at::IntArrayRef reversed) {
  std::vector<const at::Tensor*> views;
  for (const at::Tensor& t : expanded) views.push_back(&t);
  const std::optional<MergedLayout> layout = family_layout(out, views);
  TORCH_CHECK(layout, "ocltune::elementwise_chain: more than ", OCLTUNE_MAX_DIMS,
              " dimensions remain after merging (the compile pass fuses tensors of at most 4)");

  ocltune_elementwise_chain_args args{};
  args.dtype = *ocltune_dtype_of(out.scalar_type());
  args.input = strided_operand(layout->sizes, layout->strides[1], cl_tensor_of(expanded[0]));
  args.nsteps = static_cast<int>(ops.size());
  std::size_t tensor = 1;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    ocltune_elementwise_step& step = args.steps[i];
    step.op = ops[i].c_str();
    step.scalar = static_cast<float>(scalars[i]);
    step.reversed = reversed[i] != 0 ? 1 : 0;
    const std::optional<at::Tensor> t = operands.get(i);
    if (t && t->defined()) {
      step.operand = strided_operand(layout->sizes, layout->strides[tensor + 1], cl_tensor_of(expanded[tensor]));
      ++tensor;
    }
  }
  args.out = cl_tensor_of(out);
  call_ocltune("ocltune::elementwise_chain", [&] { device_runtime(out.device().index()).elementwise_chain(args); });
}

// The chain over `out`, in slices of at most `max_elements`: the compile pass fuses graphs whose sizes
// are symbolic (dynamic shapes), so a call may bring more elements than one kernel indexes. An
// element-wise result's slice along its first dimension comes from the same slice of every operand,
// and a slice of the dense out along dim 0 stays dense.
void chain_into(const at::Tensor& out, const std::vector<at::Tensor>& expanded, const std::vector<std::string>& ops,
                const c10::List<std::optional<at::Tensor>>& operands, c10::ArrayRef<double> scalars,
                at::IntArrayRef reversed, std::int64_t max_elements) {
  if (out.numel() <= max_elements || out.dim() == 0) {
    chain_kernel(out, expanded, ops, operands, scalars, reversed);
    return;
  }
  auto each = [&](auto slice) {
    std::vector<at::Tensor> sliced;
    for (const at::Tensor& t : expanded) sliced.push_back(slice(t));
    chain_into(slice(out), sliced, ops, operands, scalars, reversed, max_elements);
  };
  if (out.size(0) == 1) {
    each([](const at::Tensor& t) { return t.select(0, 0); });
    return;
  }
  const std::int64_t rows = std::max<std::int64_t>(1, max_elements / (out.numel() / out.size(0)));
  for (std::int64_t start = 0; start < out.size(0); start += rows) {
    const std::int64_t length = std::min(rows, out.size(0) - start);
    each([&](const at::Tensor& t) { return t.narrow(0, start, length); });
  }
}

// Shapes only, for the fake tensors torch.compile traces with.
at::Tensor elementwise_chain_meta(const at::Tensor& input, const std::vector<std::string>& ops,
                                  const c10::List<std::optional<at::Tensor>>& operands, c10::ArrayRef<double> scalars,
                                  at::IntArrayRef reversed) {
  check_chain(input, ops, operands, scalars, reversed);
  return at::empty(chain_sizes(input, operands), input.options());
}

}  // namespace

at::Tensor elementwise_chain(const at::Tensor& input, const std::vector<std::string>& ops,
                             const c10::List<std::optional<at::Tensor>>& operands, c10::ArrayRef<double> scalars,
                             at::IntArrayRef reversed) {
  check_ocl(input, "ocltune::elementwise_chain", "input");
  check_chain(input, ops, operands, scalars, reversed);
  for (const std::optional<at::Tensor> t : operands) {
    if (t && t->defined()) check_same_device(input, *t, "ocltune::elementwise_chain", "operand");
  }
  const std::vector<std::int64_t> sizes = chain_sizes(input, operands);
  at::Tensor out = at::empty(sizes, input.options());
  if (out.numel() == 0) return out;

  // Every tensor expanded to the result's sizes (stride 0 where it broadcasts).
  std::vector<at::Tensor> expanded = {input.expand(sizes)};
  for (const std::optional<at::Tensor> t : operands) {
    if (t && t->defined()) expanded.push_back(t->expand(sizes));
  }
  chain_into(out, expanded, ops, operands, scalars, reversed, max_chain_elements());
  return out;
}

void ChainPrologue::check(const char* op, const at::Tensor& input) const {
  TORCH_CHECK(!ops.empty() && ops.size() <= OCLTUNE_MAX_PROLOGUE_STEPS, op, ": ", ops.size(),
              " steps; a prologue holds 1 to ", OCLTUNE_MAX_PROLOGUE_STEPS);
  TORCH_CHECK(operands.size() == ops.size() && scalars.size() == ops.size() && reversed.size() == ops.size(), op,
              ": ops, operands, scalars and reversed must have one entry per step");
  TORCH_CHECK(kernel_dtype(input.scalar_type()), op, ": dtype ", input.scalar_type(),
              " is not one of float32, float16, bfloat16");
  for (const std::optional<at::Tensor> t : operands) {
    if (!t || !t->defined()) continue;
    TORCH_CHECK(t->scalar_type() == input.scalar_type() && t->sizes() == input.sizes(), op,
                ": a tensor operand must have the input's dtype and sizes (", input.scalar_type(), " ", input.sizes(),
                "), not ", t->scalar_type(), " ", t->sizes());
    if (!input.is_meta()) check_same_device(input, *t, op, "operand");
  }
}

ocltune_prologue ChainPrologue::c_form(std::vector<at::Tensor>& packed) const {
  ocltune_prologue p{};
  p.num_steps = static_cast<int>(ops.size());
  packed.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    ocltune_prologue_step& step = p.steps[i];
    step.op = ops[i].c_str();
    step.scalar = static_cast<float>(scalars[i]);
    step.reversed = reversed[i] != 0 ? 1 : 0;
    const std::optional<at::Tensor> t = operands.get(i);
    if (t && t->defined()) {
      packed.push_back(t->contiguous());
      step.has_tensor = 1;
      step.tensor = cl_tensor_of(packed.back());
    }
  }
  return p;
}

at::Tensor ChainPrologue::apply(const at::Tensor& input) const {
  return elementwise_chain(input, ops, operands, scalars, reversed);
}

TORCH_LIBRARY_FRAGMENT(ocltune, m) {
  m.def("elementwise_chain(Tensor input, str[] ops, Tensor?[] operands, float[] scalars, int[] reversed) -> Tensor");
}

TORCH_LIBRARY_IMPL(ocltune, PrivateUse1, m) { m.impl("elementwise_chain", &elementwise_chain); }

TORCH_LIBRARY_IMPL(ocltune, Meta, m) { m.impl("elementwise_chain", &elementwise_chain_meta); }

}  // namespace ocltune_torch
