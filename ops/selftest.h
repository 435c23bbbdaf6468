// The hidden `selftest` op family, for tests of the tuner only: a trivial kernel that, for some
// parameter values, never terminates (MODE=1) or crashes its process (MODE=2). Not part of
// `--ops all`; `--ops selftest` names it explicitly.
#pragma once

#include <string_view>

#include "ops/family.h"

namespace ocltune {

const OpFamily& selftest_family();

// find_family(name), or the selftest family for "selftest".
const OpFamily* find_family_or_selftest(std::string_view name);

}  // namespace ocltune
