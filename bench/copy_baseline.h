// The memory-bound baseline: clEnqueueCopyBuffer moving the same number of bytes as the problem.
#pragma once

#include <cstddef>

#include "bench/baselines.h"

namespace ocltune::bench {

// A copy reads and writes each byte once, so it copies bytes() / 2 to match the problem's traffic.
BaselineSpec copy_baseline(const Problem& problem);

// The copy on its own: `bytes` copied (2 x bytes moved), verified by reading the destination back.
std::unique_ptr<Timed> make_copy(Session& session, std::size_t bytes);

}  // namespace ocltune::bench
