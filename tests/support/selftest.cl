// Test-only kernel of the hidden `selftest` op: out[i] = 2 * in[i] + 1, or, for some values of
// MODE, a kernel that never terminates or crashes its process. It exercises the tuner's --isolate
// handling of hanging and crashing kernels; it is never part of `--ops all`.

#ifndef MODE
#define MODE 0  // 0: correct; 1: never terminates; 2: writes through a null pointer (crashes a CPU driver)
#endif
#ifndef WG
#define WG 32  // work-group size
#endif
#ifndef REPEAT
#define REPEAT 1  // the result is summed this many times and divided back (exact for powers of two)
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void selftest(__global const float* in, __global float* out, volatile __global const int* spin, const int n) {
  const int i = (int)get_global_id(0);
#if MODE == 1
  // spin[0] is 0 and nothing ever changes it; a volatile read cannot be folded away.
  while (spin[0] == 0) {
  }
#elif MODE == 2
  if (i == 0) {
    volatile __global float* nowhere = (volatile __global float*)(size_t)spin[0];
    nowhere[0] = 1.0f;
  }
#endif
  if (i < n) {
    float sum = 0.0f;
    for (int r = 0; r < REPEAT; ++r) sum += 2.0f * in[i] + 1.0f;
    out[i] = sum / REPEAT;
  }
}
