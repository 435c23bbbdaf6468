// The check every op makes before it enqueues: a buffer holds the elements the call reads or
// writes. A too-small buffer would otherwise be written past its end (heap corruption on PoCL).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "harness/cl.h"

namespace ocltune {

// Throws ocltune::Error naming `op` and `what` unless `buffer` holds `count` elements of
// `element_bytes` after `offset` elements (nothing is needed when count is 0). One
// clGetMemObjectInfo per call: cheap next to an enqueue, and never stale, unlike a cache keyed by
// handles that the driver reuses.
void check_buffer_extent(cl_mem buffer, std::int64_t offset, std::int64_t count, std::size_t element_bytes,
                         std::string_view op, std::string_view what);

}  // namespace ocltune
