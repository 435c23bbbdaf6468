// Best-effort append of one line to a small record file shared by processes.
#pragma once

#include <string>

namespace ocltune {

// Appends `line` and a newline to `path` (its folder created), in one write(2) to a file opened with
// O_APPEND, so that lines of concurrent processes do not interleave within a line on a local file
// system. Returns false when nothing could be written: a record that cannot be written costs its
// readers work, never an error.
bool append_line(const std::string& path, const std::string& line);

}  // namespace ocltune
