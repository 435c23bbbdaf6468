// The CPU fallback of ops without an ocl kernel: counted per op, warned once, refused in strict mode.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <ATen/native/CPUFallback.h>

namespace ocltune_torch {

// The boxed fallback: the op runs on the CPU on copies of its ocl arguments, and its results are
// copied back. OCLTUNE_TORCH_STRICT=1 (read on every call) raises instead.
void ocl_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// Records a call of `name` on the CPU: raises in strict mode, counts it, warns the first time.
void note_fallback(const std::string& name);

// Calls of the fallback since the start (or the last reset), by op name ("aten::abs", "aten::add.out").
std::map<std::string, std::int64_t> fallback_stats();
void reset_fallback_stats();

// For a kernel of ours that meets arguments it cannot compute (an integer dtype, a mix of dtypes):
// the op through the fallback, counted like any other, e.g. fallback<ATEN_OP(mm)>::call(a, b).
template <class Op>
using fallback = at::native::call_fallback_fn<&ocl_cpu_fallback, Op>;
template <class Op>
using fallback_symint = at::native::call_fallback_fn_symint<&ocl_cpu_fallback, Op>;

}  // namespace ocltune_torch
