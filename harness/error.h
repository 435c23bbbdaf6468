// Error types: every OpenCL failure names the failed call and the CL error code by name.
#pragma once

#include <stdexcept>
#include <string>

namespace cl {
class Error;
}

namespace ocltune {

// Base of all errors ocltune reports to a user; what() is a complete sentence fragment.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An OpenCL call returned an error code.
class ClError : public Error {
 public:
  ClError(std::string call, int code);
  explicit ClError(const cl::Error& e);
  const std::string& call() const { return call_; }
  int code() const { return code_; }

 private:
  std::string call_;
  int code_;
};

// A program failed to build; log() is the compiler's build log.
class BuildError : public ClError {
 public:
  BuildError(int code, std::string log);
  const std::string& log() const { return log_; }

 private:
  std::string log_;
};

// "CL_OUT_OF_RESOURCES" for -5; "CL error -1234" for codes it does not know.
std::string cl_error_name(int code);

}  // namespace ocltune
