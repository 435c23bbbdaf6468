// The error type of the database layer; code() is the SQLite result code when there is one.
#pragma once

#include "harness/error.h"

namespace ocltune {

class DatabaseError : public Error {
 public:
  explicit DatabaseError(const std::string& message, int code = 0) : Error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

}  // namespace ocltune
