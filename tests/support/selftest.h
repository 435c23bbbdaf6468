// The `selftest` op family, for tests of the tuner only: a trivial kernel that, for some parameter
// values, never terminates (MODE=1) or crashes its process (MODE=2). It lives in test support and
// joins the registry through register_selftest_family(), so production binaries never carry it.
#pragma once

#include "ops/family.h"

namespace ocltune {

const OpFamily& selftest_family();

// Registers the family and its kernel (selftest.cl) once; test mains call it before anything else.
void register_selftest_family();

}  // namespace ocltune
