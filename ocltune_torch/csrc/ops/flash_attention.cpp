// Fused (flash-style) attention on ocl: the host side of plain/kernels/plain_flash_attention.cl
// (flash_attention.h; decision 0064). Forward: one kernel, O and the row lse. Backward
// (FlashAttention-2): D = rowsum(dO O), then dK and dV per key block and dQ per query block, each
// recomputing the weights from q, k and lse, so nothing of size [B, H, L, S] is ever allocated.
#include "ocltune_torch/csrc/ops/flash_attention.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include <ATen/ATen.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

constexpr int kItems = 64;  // PlainLaunch's work-group, the kernels' FA_ITEMS

// Dims and Layout4 of the kernel file.
struct Dims {
  cl_long b, h, l, s, e, ev;
};
struct Layout4 {
  cl_long offset = 0;
  cl_long stride[4] = {};
};

// A [B, H, rows, cols] tensor (a mask: broadcast to it, stride 0 where it repeats) for the kernels.
Layout4 layout_of(const at::Tensor& t) {
  Layout4 l;
  if (!t.defined()) return l;
  l.offset = element_offset(t);
  for (int d = 0; d < 4; ++d) l.stride[d] = t.stride(d);
  return l;
}

std::uint64_t local_mem_bytes(int device) {
  static std::mutex mutex;
  static std::map<int, std::uint64_t> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(device);
  if (it != known.end()) return it->second;
  cl_ulong bytes = 0;
  clGetDeviceInfo(device_runtime(device).device(), CL_DEVICE_LOCAL_MEM_SIZE, sizeof(bytes), &bytes, nullptr);
  return known[device] = bytes;
}

std::int64_t round_up(std::int64_t x, std::int64_t m) { return (x + m - 1) / m * m; }

// The local memory of flash_attention_backward_kv, the largest of the three kernels: q and dO tiles,
// k and v tiles, P~ and dS, lse and D.
std::uint64_t backward_local_bytes(int bm, int bn, std::int64_t ep, std::int64_t evp) {
  return 4 * static_cast<std::uint64_t>(bm * ep + bm * evp + bn * ep + bn * evp + 2 * bm * bn + 2 * bm);
}

// The program for q's dtype (slot A), the mask's (M) and the forward's output (O).
cl_program flash_program(const at::Tensor& q, at::ScalarType mask_type, at::ScalarType out_type,
                         const FlashBlocks& blocks) {
  const int device = q.device().index();
  const std::string defines = "#define FA_BM " + std::to_string(blocks.bm) + "\n#define FA_BN " +
                              std::to_string(blocks.bn) + "\n#define FA_EP " + std::to_string(blocks.ep) +
                              "\n#define FA_EVP " + std::to_string(blocks.evp) + "\n#define FA_VEC " +
                              std::to_string(blocks.vec) + "\n";
  return plain_program(device, PlainFiles{"plain_philox.cl", "plain_flash_attention.cl"},
                       {{"A", q.scalar_type()}, {"M", mask_type}, {"O", out_type}}, defines);
}

FlashBlocks blocks_or_raise(const at::Tensor& q, std::int64_t ev) {
  const std::optional<FlashBlocks> blocks = flash_blocks(q.device().index(), q.size(3), ev);
  TORCH_CHECK(blocks, "ocltune_torch: flash attention: head dims ", q.size(3), " and ", ev,
              " need more local memory than the device has (", local_mem_bytes(q.device().index()), " bytes)");
  return *blocks;
}

// The mask broadcast to [B, H, L, S] as a view (stride 0 where it repeats), or a dummy of q's dtype.
at::Tensor mask_view(const at::Tensor& mask, const at::Tensor& q, std::int64_t s) {
  if (!mask.defined()) return at::empty({0}, q.options());
  return mask.expand({q.size(0), q.size(1), q.size(2), s});
}

// The arguments the kernels share after their tensors: mask, has_mask, causal, scale.
void mask_args(PlainLaunch& launch, const at::Tensor& mask_or_dummy, bool has_mask, const FlashArgs& args) {
  launch.tensor(mask_or_dummy).arg(has_mask ? layout_of(mask_or_dummy) : Layout4{});
  launch.arg<cl_int>(has_mask ? 1 : 0).arg<cl_int>(args.is_causal ? 1 : 0).arg(static_cast<float>(args.scale));
}

void dropout_args(PlainLaunch& launch, const FlashArgs& args) {
  const double keep = 1.0 - args.dropout_p;
  launch.arg<cl_ulong>(args.dropout_state.seed).arg<cl_ulong>(args.dropout_state.base);
  launch.arg(static_cast<float>(keep)).arg(static_cast<float>(keep == 0.0 ? 0.0 : 1.0 / keep));
  launch.arg<cl_int>(args.dropout_p > 0.0 ? 1 : 0);
}

// OCLTUNE_SDPA: "flash", "gemm", or unset / empty (the measured rule).
std::optional<bool> forced_flash() {
  const char* value = std::getenv("OCLTUNE_SDPA");
  if (value == nullptr || *value == '\0') return std::nullopt;
  const std::string v = value;
  TORCH_CHECK(v == "flash" || v == "gemm", "ocltune_torch: OCLTUNE_SDPA=", v,
              " is neither `flash` nor `gemm` (unset: flash where it measured faster)");
  return v == "flash";
}

}  // namespace

// Block sizes: a tile's work is FA_BM x FA_BN scores over 64 items (an 8 x 8 grid of items, each a
// micro-tile of FA_BM / 8 rows by FA_BN / 8 keys whose operand vectors are loaded once and used
// FA_BN / 8 or FA_BM / 8 times). The largest blocks whose backward tiles (q, dO, k, v, P~, dS) take at
// most half the device's local memory (two work-groups per compute unit), then up to all of it (head
// dims of 256 on a GPU with 48 KiB):
// - CPU (PoCL): 64 x 64 first. PoCL runs a work-group's items one after another between barriers,
//   so the work between two barriers has to be large: forward + backward at [2, 4, 256, 64] took
//   84 ms with 64 x 64, 147 with 32 x 32, 191 with 16 x 16 (64 x 128: 90; decision 0064).
//   Vectors of 8 floats (AVX): 84 against 154 ms with 4.
// - GPU: 32 x 32 at most: 64 x 64 gives each item 8 x 8 accumulators of 4 floats, 256 registers.
//   Vectors of 4 (128-bit local loads). Not measured here (no GPU): a tuned family should search these.
// OCLTUNE_SDPA_FLASH_BLOCKS=bm,bn,vec sets them instead, for measuring others (the hook a tuned
// family would use).
std::optional<FlashBlocks> flash_blocks(int device, std::int64_t e, std::int64_t ev) {
  FlashBlocks blocks;
  blocks.vec = plain_cpu_device(device) ? 8 : 4;
  const std::uint64_t local = local_mem_bytes(device);
  if (const char* forced = std::getenv("OCLTUNE_SDPA_FLASH_BLOCKS"); forced != nullptr && *forced != '\0') {
    int bm = 0, bn = 0, vec = 0;
    const bool parsed = std::sscanf(forced, "%d,%d,%d", &bm, &bn, &vec) == 3;
    auto block = [](int x) { return x == 8 || x == 16 || x == 32 || x == 64 || x == 128; };
    TORCH_CHECK(parsed && block(bm) && bm <= 64 && block(bn) && (vec == 4 || vec == 8),
                "ocltune_torch: OCLTUNE_SDPA_FLASH_BLOCKS=", forced,
                ": bm,bn,vec wanted, bm and bn of 8, 16, 32, 64, 128 (bm at most 64) and vec 4 or 8");
    blocks = FlashBlocks{bm, bn, vec, static_cast<int>(round_up(e, vec)), static_cast<int>(round_up(ev, vec))};
    if (backward_local_bytes(bm, bn, blocks.ep, blocks.evp) > local) return std::nullopt;
    return blocks;
  }
  blocks.ep = static_cast<int>(round_up(e, blocks.vec));
  blocks.evp = static_cast<int>(round_up(ev, blocks.vec));
  static constexpr std::pair<int, int> kCandidates[] = {{64, 64}, {32, 32}, {32, 16}, {16, 16}, {16, 8}, {8, 8}};
  const bool cpu = plain_cpu_device(device);
  for (const std::uint64_t budget : {local / 2, local}) {
    for (const auto& [bm, bn] : kCandidates) {
      if (bm == 64 && !cpu) continue;
      if (backward_local_bytes(bm, bn, blocks.ep, blocks.evp) <= budget) {
        blocks.bm = bm;
        blocks.bn = bn;
        return blocks;
      }
    }
  }
  return std::nullopt;
}

namespace {

// The forward kernel into out (of q's dtype, or float) and lse; m: mask_view's.
void run_forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& m, bool has_mask,
                 const FlashArgs& args, const FlashBlocks& blocks, const at::Tensor& out, const at::Tensor& lse) {
  const Dims d{q.size(0), q.size(1), q.size(2), k.size(2), q.size(3), v.size(3)};
  PlainLaunch launch(q.device().index(), flash_program(q, m.scalar_type(), out.scalar_type(), blocks),
                     "flash_attention_forward");
  launch.arg(d);
  for (const at::Tensor* t : {&q, &k, &v}) launch.tensor(*t).arg(layout_of(*t));
  mask_args(launch, m, has_mask, args);
  launch.tensor(out).arg(layout_of(out)).tensor_at(lse);
  dropout_args(launch, args);
  launch.run(d.b * d.h * ((d.l + blocks.bm - 1) / blocks.bm) * kItems);
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> flash_attention_forward(const at::Tensor& q, const at::Tensor& k,
                                                           const at::Tensor& v, const at::Tensor& mask,
                                                           const FlashArgs& args) {
  const FlashBlocks blocks = blocks_or_raise(q, v.size(3));
  const at::Tensor m = mask_view(mask, q, k.size(2));
  at::Tensor out = at::empty({q.size(0), q.size(1), q.size(2), v.size(3)}, q.options());
  at::Tensor lse = at::empty({q.size(0), q.size(1), q.size(2)}, q.options().dtype(at::kFloat));
  run_forward(q, k, v, m, mask.defined(), args, blocks, out, lse);
  return {out, lse};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> flash_attention_backward(const at::Tensor& grad_out, const at::Tensor& q,
                                                                        const at::Tensor& k, const at::Tensor& v,
                                                                        const at::Tensor& out, const at::Tensor& lse,
                                                                        const at::Tensor& mask, const FlashArgs& args,
                                                                        std::array<bool, 3> grad_qkv) {
  const Dims d{q.size(0), q.size(1), q.size(2), k.size(2), q.size(3), v.size(3)};
  TORCH_CHECK(lse.numel() == d.b * d.h * d.l,
              "_scaled_dot_product_fused_attention_overrideable_backward: logsumexp has ", lse.numel(),
              " elements, one per query row ([B, H, L]) wanted: ", d.b * d.h * d.l);
  TORCH_CHECK(grad_out.dim() == 4 && grad_out.sizes() == out.sizes() && out.size(3) == d.ev,
              "_scaled_dot_product_fused_attention_overrideable_backward: grad_out ", grad_out.sizes(), " and out ",
              out.sizes(), " must both be [B, H, L, Ev]");
  const FlashBlocks blocks = blocks_or_raise(q, d.ev);
  const int device = q.device().index();
  const bool has_mask = mask.defined();
  const at::Tensor m = mask_view(mask, q, d.s);
  const cl_program program = flash_program(q, m.scalar_type(), q.scalar_type(), blocks);
  const at::Tensor row_lse = lse.to(at::kFloat).contiguous();
  // The dtype of grad_out may differ from q's only through a caller's mistake; the kernels read both as A.
  const at::Tensor go = grad_out.scalar_type() == q.scalar_type() ? grad_out : grad_out.to(q.scalar_type());
  const at::Tensor o = out.scalar_type() == q.scalar_type() ? out : out.to(q.scalar_type());

  at::Tensor dsum = at::empty({d.b, d.h, d.l}, q.options().dtype(at::kFloat));
  {
    // D from the output in fp32: a 16-bit output, rounded, would put D (and every gradient through
    // it) past the CPU's own error, so 16-bit calls run the forward again into fp32 (same draws).
    at::Tensor o32 = o;
    if (q.scalar_type() != at::kFloat) {
      o32 = at::empty({d.b, d.h, d.l, d.ev}, q.options().dtype(at::kFloat));
      run_forward(q, k, v, m, has_mask, args, blocks, o32, at::empty_like(row_lse));
    }
    PlainLaunch launch(device, flash_program(q, m.scalar_type(), o32.scalar_type(), blocks),
                       "flash_attention_backward_rowsum");
    launch.arg(d).tensor(go).arg(layout_of(go)).tensor(o32).arg(layout_of(o32)).tensor_at(dsum);
    launch.run(d.b * d.h * d.l);
  }
  // Arguments up to dO, lse and D, the same for both kernels.
  auto common = [&](PlainLaunch& launch) {
    launch.arg(d);
    for (const at::Tensor* t : {&q, &k, &v}) launch.tensor(*t).arg(layout_of(*t));
    mask_args(launch, m, has_mask, args);
    launch.tensor(go).arg(layout_of(go)).tensor_at(row_lse).tensor_at(dsum);
  };
  at::Tensor grad_q, grad_k, grad_v;
  if (grad_qkv[1] || grad_qkv[2]) {
    grad_k = at::empty({d.b, d.h, d.s, d.e}, q.options());
    grad_v = at::empty({d.b, d.h, d.s, d.ev}, q.options());
    PlainLaunch launch(device, program, "flash_attention_backward_kv");
    common(launch);
    launch.tensor(grad_k).arg(layout_of(grad_k)).tensor(grad_v).arg(layout_of(grad_v));
    dropout_args(launch, args);
    launch.run(d.b * d.h * ((d.s + blocks.bn - 1) / blocks.bn) * kItems);
    if (!grad_qkv[1]) grad_k = at::Tensor();
    if (!grad_qkv[2]) grad_v = at::Tensor();
  }
  if (grad_qkv[0]) {
    grad_q = at::empty({d.b, d.h, d.l, d.e}, q.options());
    PlainLaunch launch(device, program, "flash_attention_backward_q");
    common(launch);
    launch.tensor(grad_q).arg(layout_of(grad_q));
    dropout_args(launch, args);
    launch.run(d.b * d.h * ((d.l + blocks.bm - 1) / blocks.bm) * kItems);
  }
  return {grad_q, grad_k, grad_v};
}

bool flash_attention_wanted(const at::Tensor& q, std::int64_t s, std::int64_t ev, bool is_causal) {
  const int device = q.device().index();
  if (!flash_blocks(device, q.size(3), ev)) return false;
  if (const std::optional<bool> forced = forced_flash()) return *forced;
  // Memory: the GEMM path holds the scores and, in backward, dS beside them ([B*H, L, S] each in q's
  // dtype); past an eighth of the device's memory, or half its largest buffer, flash takes it.
  const DeviceLimits& limits = device_limits(device);
  const std::uint64_t scores =
      static_cast<std::uint64_t>(q.size(0) * q.size(1) * q.size(2)) * static_cast<std::uint64_t>(s) * q.element_size();
  if (2 * scores > limits.global_mem_bytes / 8 || scores > limits.max_alloc_bytes / 2) return true;
  // Speed, measured on PoCL (attention_bench.py --paths, E = 64; decision 0064): causal calls skip the
  // key blocks past their rows' diagonal, where the GEMM path computes every score and masks half;
  // flash / gemm forward 1.1x at L = S = 256, 1.3x at 512, 1.8x at 1024 (0.94x at 197), forward +
  // backward 1.05x at 512 and 1.2x at 1024 (0.64x at 256). Not causal, flash measured 0.5-0.8x
  // everywhere. No GPU has measured the kernels yet: the same rule there until one does.
  // One threshold for forward and backward: a backward must take the path its forward took (in 16 bits the
  // lse depends on it), and whether a backward follows cannot be known in a compiled graph's forward (it
  // runs with grad mode off), so the forward-alone gain at 256-511 is given up.
  if (!is_causal) return false;
  return std::min(q.size(2), s) >= 512;
}

}  // namespace ocltune_torch
