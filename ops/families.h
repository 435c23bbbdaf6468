// Every operator family, one accessor each; ops/registry.cpp lists them for `--ops`.
#pragma once

#include <vector>

#include "ops/family.h"
#include "ops/gemm_problem.h"

namespace ocltune {

const OpFamily& gemm_family();
const OpFamily& conv2d_family();  // test table: conv2d_test_cases() in ops/conv2d_problem.h

// The GEMM correctness table (shared by tests, the "test" preset and benchmarks).
struct GemmTestCase {
  GemmShape shape;
  GemmLayout layout;
};
std::vector<GemmTestCase> gemm_test_cases();

}  // namespace ocltune
