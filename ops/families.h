// Every operator family, one accessor each; ops/registry.cpp lists them for `--ops`.
#pragma once

#include <vector>

#include "ops/family.h"
#include "ops/elementwise_problem.h"
#include "ops/gemm_problem.h"
#include "ops/pool_problem.h"

namespace ocltune {

const OpFamily& gemm_family();
const OpFamily& pool_family();
const OpFamily& elementwise_family();

// The GEMM correctness table (shared by tests, the "test" preset and benchmarks).
struct GemmTestCase {
  GemmShape shape;
  GemmLayout layout;
};
std::vector<GemmTestCase> gemm_test_cases();

// The elementwise correctness table: every op, dtype and addressing mode at odd shapes.
struct ElementwiseTestCase {
  ElementwiseShape shape;
  ElementwiseLayout layout;
};
std::vector<ElementwiseTestCase> elementwise_test_cases();

// The pooling correctness table: every kind and direction at odd shapes and windows.
struct PoolTestCase {
  PoolShape shape;
  PoolLayout layout;
};
std::vector<PoolTestCase> pool_test_cases();

}  // namespace ocltune
