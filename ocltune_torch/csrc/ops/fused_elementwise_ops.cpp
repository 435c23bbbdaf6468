// ocltune::elementwise_chain: up to four elementwise steps fused into one kernel of the elementwise
// family, the op the torch.compile backend (ocltune_torch/compile.py) puts where a graph had a chain
// of aten elementwise ops. Intermediate values stay in registers in fp32: one read of each input and
// one write of the result, where eager runs one kernel (and one round trip to memory) per op.
#include <string>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/elementwise.h"

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

  // Every tensor expanded to the result's sizes (stride 0 where it broadcasts), dims merged.
  std::vector<at::Tensor> expanded = {input.expand(sizes)};
  for (const std::optional<at::Tensor> t : operands) {
    if (t && t->defined()) expanded.push_back(t->expand(sizes));
  }
  std::vector<const at::Tensor*> views;
  for (const at::Tensor& t : expanded) views.push_back(&t);
  const std::optional<MergedLayout> layout = family_layout(out, views);
  TORCH_CHECK(layout, "ocltune::elementwise_chain: more than ", OCLTUNE_MAX_DIMS,
              " dimensions remain after merging, or too many elements (the compile pass fuses only what fits)");

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
  return out;
}

// Shapes only, for the fake tensors torch.compile traces with.
at::Tensor elementwise_chain_meta(const at::Tensor& input, const std::vector<std::string>& ops,
                                  const c10::List<std::optional<at::Tensor>>& operands, c10::ArrayRef<double> scalars,
                                  at::IntArrayRef reversed) {
  check_chain(input, ops, operands, scalars, reversed);
  return at::empty(chain_sizes(input, operands), input.options());
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ocltune, m) {
  m.def("elementwise_chain(Tensor input, str[] ops, Tensor?[] operands, float[] scalars, int[] reversed) -> Tensor");
}

TORCH_LIBRARY_IMPL(ocltune, PrivateUse1, m) { m.impl("elementwise_chain", &elementwise_chain); }

TORCH_LIBRARY_IMPL(ocltune, Meta, m) { m.impl("elementwise_chain", &elementwise_chain_meta); }

}  // namespace ocltune_torch
