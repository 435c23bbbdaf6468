// The caller's tensors of an elementwise prologue: checks and the plan's operands.
#include "runtime/prologue_buffers.h"

#include <fmt/format.h>

#include "harness/buffer_extent.h"
#include "harness/error.h"

namespace ocltune {

void check_prologue_buffers(const Prologue& prologue, const PrologueBuffers& buffers, std::int64_t elements,
                            DType dtype, const char* family) {
  if (buffers.tensors.size() != prologue.tensors() || buffers.offsets.size() != buffers.tensors.size()) {
    throw Error(fmt::format("{}: the prologue has {} tensor operands; {} buffers and {} offsets given", family,
                            prologue.tensors(), buffers.tensors.size(), buffers.offsets.size()));
  }
  for (std::size_t t = 0; t < buffers.tensors.size(); ++t) {
    if (!buffers.tensors[t]) throw Error(fmt::format("{}: prologue operand {} is a null buffer", family, t));
    if (buffers.offsets[t] < 0) throw Error(fmt::format("{}: prologue operand {} has a negative offset", family, t));
    check_buffer_extent(buffers.tensors[t], buffers.offsets[t], elements, dtype_bytes(dtype), family,
                        "a prologue operand");
  }
}

PrologueOperands prologue_operands(const PrologueBuffers& buffers) {
  PrologueOperands o;
  for (std::size_t t = 0; t < buffers.tensors.size(); ++t) {
    o.tensors.emplace_back(buffers.tensors[t], true);
    o.offsets.push_back(buffers.offsets[t]);
  }
  return o;
}

}  // namespace ocltune
