// Buffer-size checks of op calls (harness/buffer_extent.h).
#include "harness/buffer_extent.h"

#include <fmt/format.h>

#include "harness/error.h"

namespace ocltune {

void check_buffer_extent(cl_mem buffer, std::int64_t offset, std::int64_t count, std::size_t element_bytes,
                         std::string_view op, std::string_view what) {
  if (offset < 0 || count < 0) throw Error(fmt::format("{}: negative offset or size of {}", op, what));
  if (count == 0) return;
  if (!buffer) throw Error(fmt::format("{}: the buffer of {} is null", op, what));
  std::size_t size = 0;
  if (clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof size, &size, nullptr) != CL_SUCCESS) {
    throw Error(fmt::format("{}: the buffer of {} is not a valid cl_mem", op, what));
  }
  // In elements, so nothing overflows: (offset + count) * element_bytes <= size.
  if (static_cast<std::uint64_t>(offset) + static_cast<std::uint64_t>(count) > size / element_bytes) {
    throw Error(
        fmt::format("{}: {} needs {} elements of {} bytes from element offset {}, but its buffer holds {} bytes", op,
                    what, count, element_bytes, offset, size));
  }
}

}  // namespace ocltune
