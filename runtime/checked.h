// Checked<Call>: a call its family's checker accepted, so that each call is checked exactly once.
#pragma once

namespace ocltune {

// The only constructor runs the family's checker (check_gemm_call, ...: it throws ocltune::Error
// for a call no kernel can serve), and the call cannot be changed afterwards. An entry point that
// takes a Checked<Call> therefore checks nothing again: the C ABI (runtime/capi/) checks while it
// converts its arguments, then calls ops::<op>(..., const Checked<Call>&); the C++ entry points
// taking a plain call check it themselves. Each family specialises the constructor (declared in
// runtime/<op>.h, defined in runtime/<op>.cpp).
template <typename Call>
class Checked {
 public:
  explicit Checked(Call call);

  const Call& operator*() const { return call_; }
  const Call* operator->() const { return &call_; }

 private:
  Call call_;
};

}  // namespace ocltune
