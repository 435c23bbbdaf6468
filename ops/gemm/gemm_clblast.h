// GEMM through CLBlast: the same-process baseline for benchmarks and a fallback for the runtime.
// fp32 and fp16 (HGEMM: fp16 scalars, and fp16 accumulation on most devices); CLBlast has no bf16.
#pragma once

#include "harness/cl.h"
#include "harness/device.h"
#include "ops/gemm/gemm.h"

namespace ocltune {

// Whether CLBlast can run a GEMM of this storage type on `device`: fp32 always, fp16 where the
// device has cl_khr_fp16 (NVIDIA's OpenCL does not), bf16 never.
bool clblast_supports(DType dtype, const DeviceInfo& device);

// Enqueues C = alpha * op(A) * op(B) + beta * C with CLBlast (row-major; batched shapes through
// GemmStridedBatched). CLBlast may launch several kernels (pad, transpose, gemm) and its event
// covers only the last, so time a whole call (markers around it, or queue.finish() and a host
// clock). `event`, when given, receives CLBlast's event. Throws ocltune::Error naming CLBlast's
// status code on failure (CLBlast refuses a leading dimension or a buffer too small itself), and
// for bf16. The operands are not checked here: the runtime's call was, once, at its entry
// (docs/decisions/0053); the benchmarks' and `ocltune eval`'s are packed operands of their shape.
void clblast_gemm(cl::CommandQueue& queue, const GemmShape& shape, const GemmOperands& operands,
                  cl::Event* event = nullptr);

}  // namespace ocltune
