// The packing pass of the wgmma_packed_tf32 GEMM variant (kernels/gemm_pack_tf32.cl) is portable
// OpenCL, so it runs here on every device: against a host model of TF32 rounding (to nearest, ties
// away from zero, as cvt.rna) and of wgmma's K-major core-matrix layout, on odd shapes, both
// storage orders, offsets, padded leading dimensions and batches. The GEMM kernel that reads the
// packed operands needs Hopper (GemmTf32.TensorCoreConfigurationsMatchTheReference).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "harness/launch.h"
#include "harness/session.h"
#include "ops/gemm/gemm_variants.h"
#include "tests/support/test_session.h"
#include "tests/support/tf32_model.h"

namespace ocltune {
namespace {

using testing::float_bits;
using testing::tf32_model;

TEST(GemmPack, RoundingModelMatchesCvtRna) {
  EXPECT_EQ(tf32_model(1.0f + 0x1.0p-11f), 1.0f + 0x1.0p-10f);  // a tie goes away from zero
  EXPECT_EQ(tf32_model(-1.0f - 0x1.0p-11f), -1.0f - 0x1.0p-10f);
  EXPECT_EQ(tf32_model(1.0f + 0x1.0p-12f), 1.0f);  // below the tie
  EXPECT_EQ(tf32_model(std::numeric_limits<float>::max()), std::numeric_limits<float>::infinity());
}

// Packs a rows x k operand (element (r, k) at offset + b * stride + r * ld + k, or + k * ld + r when
// stored transposed) and compares every word of the packed buffer, padding included.
void check_pack(bool k_contiguous, std::int64_t rows, std::int64_t k, std::int64_t batches) {
  Session& session = testing::test_session();
  const std::int64_t padded_rows = (rows + 63) / 64 * 64, padded_k = (k + 63) / 64 * 64;
  const std::int64_t ld = (k_contiguous ? k : rows) + 3, offset = 7;
  const std::int64_t stride = (k_contiguous ? rows : k) * ld + 11;
  std::vector<float> src(static_cast<std::size_t>(offset + batches * stride));
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  for (float& x : src) x = uniform(rng);
  // Ties, both signs, values just past a tie, the top of the range, infinity, NaN and zeros.
  const float specials[] = {1.0f + 0x1.0p-11f,
                            -1.0f - 0x1.0p-11f,
                            -1.0f - 0x3.0p-11f,
                            1.0f + 0x1.0p-11f + 0x1.0p-20f,
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            0.0f,
                            -0.0f,
                            1e-30f};
  const auto index = [&](std::int64_t b, std::int64_t r, std::int64_t kk) {
    return static_cast<std::size_t>(offset + b * stride + (k_contiguous ? r * ld + kk : kk * ld + r));
  };
  // Specials at the first elements of the first entry (as many as it has).
  for (std::int64_t i = 0; i < std::min<std::int64_t>(std::size(specials), rows * k); ++i) {
    src[index(0, i % rows, i / rows)] = specials[i];
  }
  const auto at = [&](std::int64_t b, std::int64_t r, std::int64_t kk) { return src[index(b, r, kk)]; };

  const std::size_t words = static_cast<std::size_t>(batches * padded_rows * padded_k);
  cl::Buffer in(session.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, src.size() * 4, src.data());
  std::vector<std::uint32_t> packed(words, 0xDEADBEEFu);  // every word must be written
  cl::Buffer out(session.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, words * 4, packed.data());
  LaunchPlan plan;
  plan.kernels.push_back(
      pack_tf32_launch(batches, in, offset, ld, stride, k_contiguous, rows, k, padded_rows, padded_k, out));
  enqueue(session.queue(), prepare(session, plan));
  session.queue().enqueueReadBuffer(out, CL_TRUE, 0, words * 4, packed.data());

  int mismatches = 0;
  for (std::int64_t b = 0; b < batches; ++b) {
    for (std::int64_t r = 0; r < padded_rows; ++r) {
      for (std::int64_t kk = 0; kk < padded_k; ++kk) {
        // Core matrices of 8 rows x 4 k, 128 bytes each, ordered along K, then by 8-row group.
        const std::int64_t word =
            b * padded_rows * padded_k + ((r / 8) * (padded_k / 4) + kk / 4) * 32 + (r % 8) * 4 + kk % 4;
        const float expected = r < rows && kk < k ? tf32_model(at(b, r, kk)) : 0.0f;
        const std::uint32_t got = packed[static_cast<std::size_t>(word)];
        const bool ok = std::isnan(expected) ? (got & 0x7F800000u) == 0x7F800000u && (got & 0x7FFFFFu) != 0
                                             : got == float_bits(expected);
        if (!ok && ++mismatches <= 5) {
          ADD_FAILURE() << "batch " << b << " row " << r << " k " << kk << ": got 0x" << std::hex << got
                        << ", expected 0x" << float_bits(expected) << " (" << expected << ")";
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(GemmPack, KContiguousOperandOnOddShape) { check_pack(true, 37, 45, 2); }
TEST(GemmPack, TransposedOperandOnOddShape) { check_pack(false, 37, 45, 2); }
TEST(GemmPack, SingleRowAndColumn) {
  check_pack(true, 1, 1, 1);
  check_pack(false, 1, 1, 1);
}
TEST(GemmPack, SeveralBlocksEachWay) { check_pack(false, 130, 97, 1); }

// The 16-bit pack (kernels/gemm_pack_16bit.cl): bits copied unchanged (NaN payloads included)
// into core matrices of 8 rows x 8 k, K padded to 128, zeros in the padding.
// `aligned`: even offset, leading dimension and batch stride (what 4-byte loads of element pairs
// would need; probe51 measured them slower and they were dropped); else odd ones.
void check_pack_16bit(bool k_contiguous, std::int64_t rows, std::int64_t k, std::int64_t batches,
                      bool aligned = false) {
  Session& session = testing::test_session();
  const std::int64_t padded_rows = (rows + 63) / 64 * 64, padded_k = (k + 127) / 128 * 128;
  const std::int64_t contiguous = k_contiguous ? k : rows;
  const std::int64_t ld = aligned ? (contiguous + 1) / 2 * 2 + 2 : contiguous | 1, offset = aligned ? 6 : 5;
  const std::int64_t stride = aligned ? (k_contiguous ? rows : k) * ld + 8 : (k_contiguous ? rows : k) * ld + 9;
  std::vector<std::uint16_t> src(static_cast<std::size_t>(offset + batches * stride));
  std::mt19937 rng(7);
  for (std::uint16_t& x : src) x = static_cast<std::uint16_t>(rng() | 1u);  // never 0, so padding stands out
  const auto at = [&](std::int64_t b, std::int64_t r, std::int64_t kk) {
    return src[static_cast<std::size_t>(offset + b * stride + (k_contiguous ? r * ld + kk : kk * ld + r))];
  };

  const std::size_t halves = static_cast<std::size_t>(batches * padded_rows * padded_k);
  cl::Buffer in(session.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, src.size() * 2, src.data());
  std::vector<std::uint16_t> packed(halves, 0xBEEFu);  // every element must be written
  cl::Buffer out(session.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, halves * 2, packed.data());
  LaunchPlan plan;
  plan.kernels.push_back(
      pack_16bit_launch(batches, in, offset, ld, stride, k_contiguous, rows, k, padded_rows, padded_k, out));
  enqueue(session.queue(), prepare(session, plan));
  session.queue().enqueueReadBuffer(out, CL_TRUE, 0, halves * 2, packed.data());

  int mismatches = 0;
  for (std::int64_t b = 0; b < batches; ++b) {
    for (std::int64_t r = 0; r < padded_rows; ++r) {
      for (std::int64_t kk = 0; kk < padded_k; ++kk) {
        const std::int64_t index =
            b * padded_rows * padded_k + ((r / 8) * (padded_k / 8) + kk / 8) * 64 + (r % 8) * 8 + kk % 8;
        const std::uint16_t expected = r < rows && kk < k ? at(b, r, kk) : 0;
        const std::uint16_t got = packed[static_cast<std::size_t>(index)];
        if (got != expected && ++mismatches <= 5) {
          ADD_FAILURE() << "batch " << b << " row " << r << " k " << kk << ": got 0x" << std::hex << got
                        << ", expected 0x" << expected;
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(GemmPack16, KContiguousOperandOnOddShape) { check_pack_16bit(true, 37, 45, 2); }
TEST(GemmPack16, TransposedOperandOnOddShape) { check_pack_16bit(false, 37, 45, 2); }
TEST(GemmPack16, SingleElement) {
  check_pack_16bit(true, 1, 1, 1);
  check_pack_16bit(false, 1, 1, 1);
}
TEST(GemmPack16, SeveralBlocksEachWay) {
  check_pack_16bit(false, 130, 197, 1);
  check_pack_16bit(true, 65, 129, 1);
}
TEST(GemmPack16, EvenLayoutsOnOddShapes) {
  check_pack_16bit(true, 37, 45, 2, true);
  check_pack_16bit(false, 37, 45, 2, true);
  check_pack_16bit(true, 130, 197, 1, true);
  check_pack_16bit(false, 65, 1, 1, true);
}

// The plan: A and op(B) packed into the workspace (an operand shared by every batch entry once),
// then the GEMM over whole tiles and a K padded to 32.
TEST(GemmPack, PlanPacksASharedOperandOnce) {
  Session& session = testing::test_session();
  const GemmShape shape{.m = 100, .n = 70, .k = 50, .batch = 3, .math = MathMode::kTf32};
  const std::size_t bytes = 4 * 100 * 70 * 3;
  cl::Buffer a(session.context(), CL_MEM_READ_WRITE, bytes), b(session.context(), CL_MEM_READ_WRITE, bytes),
      c(session.context(), CL_MEM_READ_WRITE, bytes);
  GemmOperands o = packed_operands(shape, a, b, c);
  o.stride_a = 0;  // one A for every entry, as conv2d's weights
  Workspace workspace(session.context());
  Config config = gemm_wgmma_packed_default_config();
  config["BM"] = 128;  // 128 x 256 tiles of two warpgroups
  config["BN"] = 256;
  config["WGS"] = 2;
  const LaunchPlan plan = gemm_plan(shape, o, config, workspace);
  ASSERT_EQ(plan.kernels.size(), 3u);
  EXPECT_EQ(plan.kernels[0].kernel, "pack_tf32");
  EXPECT_EQ(plan.kernels[0].global[0], 64u / 2);  // K padded to 64: one 64 x 64 block per (32, 8) work-group
  EXPECT_EQ(plan.kernels[0].global[1], 128u / 8);
  EXPECT_EQ(plan.kernels[0].global[2], 1u);  // shared A: packed once
  EXPECT_EQ(plan.kernels[1].global[1], 256u / 8);
  EXPECT_EQ(plan.kernels[1].global[2], 3u);
  EXPECT_EQ(plan.kernels[2].kernel, "gemm_wgmma_packed");
  EXPECT_EQ(plan.kernels[2].global[0], 256u);  // one 256-wide tile of 256 work-items
  EXPECT_EQ(plan.kernels[2].global[1], 1u);
  EXPECT_EQ(plan.kernels[2].global[2], 3u);
}

}  // namespace
}  // namespace ocltune
