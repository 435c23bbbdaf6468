// The caller's tensors of an elementwise prologue (ops/elementwise/elementwise_prologue.h) in a
// runtime call of the reduce or norm family: checked against the prologue, handed to the plan.
#pragma once

#include <cstdint>
#include <vector>

#include "core/storage.h"
#include "harness/cl.h"
#include "ops/elementwise/elementwise_prologue.h"

namespace ocltune {

// One buffer and element offset per step with a tensor operand, in step order; each tensor is like
// the family's input (its element count, dtype and layout).
struct PrologueBuffers {
  std::vector<cl_mem> tensors{};
  std::vector<std::int64_t> offsets{};
};

// Throws ocltune::Error naming `family`: a count that does not match the prologue's tensor steps, a
// null buffer, a negative offset, a buffer shorter than `elements` of `dtype` past its offset.
void check_prologue_buffers(const Prologue& prologue, const PrologueBuffers& buffers, std::int64_t elements,
                            DType dtype, const char* family);
// The plan's operands (each buffer retained: the caller keeps its own reference).
PrologueOperands prologue_operands(const PrologueBuffers& buffers);

}  // namespace ocltune
