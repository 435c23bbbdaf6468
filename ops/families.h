// Every operator family, one accessor each; ops/registry.cpp lists them for `--ops`.
#pragma once

#include <vector>

#include "ops/elementwise/elementwise_problem.h"
#include "ops/family.h"
#include "ops/gemm/gemm_problem.h"
#include "ops/norm/norm_problem.h"
#include "ops/pool/pool_problem.h"
#include "ops/reduce/reduce_problem.h"
#include "ops/softmax/softmax_problem.h"

namespace ocltune {

const OpFamily& gemm_family();
const OpFamily& pool_family();
const OpFamily& elementwise_family();

const OpFamily& conv2d_family();  // test table: conv2d_test_cases() in ops/conv2d/conv2d_problem.h

// The GEMM correctness table (shared by tests, the "test" preset and benchmarks).
struct GemmTestCase {
  GemmShape shape;
  GemmLayout layout;
};
std::vector<GemmTestCase> gemm_test_cases();

const OpFamily& reduce_family();

// The reduction correctness table (odd shapes, offsets, NaN/Inf inputs).
struct ReduceTestCase {
  ReduceShape shape;
  ReduceInstance instance;
  bool thorough = false;  // correctness tests run it under every sampled configuration
};
std::vector<ReduceTestCase> reduce_test_cases();

const OpFamily& softmax_family();

// The softmax correctness table (odd shapes, offsets, NaN/Inf inputs).
struct SoftmaxTestCase {
  SoftmaxShape shape;
  SoftmaxInstance instance;
  bool thorough = false;  // correctness tests run it under every sampled configuration
};
std::vector<SoftmaxTestCase> softmax_test_cases();

const OpFamily& norm_family();

// The normalisation correctness table (odd shapes, offsets, NaN/Inf inputs).
struct NormTestCase {
  NormShape shape;
  NormInstance instance;
  bool thorough = false;  // correctness tests run it under every sampled configuration
};
std::vector<NormTestCase> norm_test_cases();

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
