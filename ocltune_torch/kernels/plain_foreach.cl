// The per-tensor steps of the `_foreach_*` ops that torch.optim's default (foreach) SGD spends its
// calls in: _foreach_mul_(buffers, momentum), _foreach_add_(buffers, grads, alpha=1 - dampening) and
// _foreach_add_(params, buffers, alpha=-lr), and _foreach_add_(tensors, scalar); then Adam's. One launch per dense
// tensor from one kernel object (csrc/foreach_ops.cpp), where PyTorch's per-tensor loop dispatches a
// whole add_ or mul_ for each (24 us a tensor on the H200 against CUDA's multi-tensor launch).
//
// Slot P: the tensors' type (a float type; the host takes anything else the slow way). Values are
// computed in float, the opmath type, and rounded once when stored, as the CPU's vectorised kernels
// do: add with alpha is fma(other, alpha, self) there (vec::fmadd) and here. FP_CONTRACT is off so
// that nothing else is fused.

#pragma OPENCL FP_CONTRACT OFF

// self[i] = self[i] + alpha * other[i]
kernel void foreach_add_list(const long n, global P_S* self, const long self_at, global const P_S* other,
                             const long other_at, const float alpha) {
  FOR_EACH_INDEX(i, n) {
    P_STORE(self, self_at + i, fma(P_LOAD(other, other_at + i), alpha, P_LOAD(self, self_at + i)));
  }
}

// self[i] = self[i] * s
kernel void foreach_mul_scalar(const long n, global P_S* self, const long self_at, const float s) {
  FOR_EACH_INDEX(i, n) { P_STORE(self, self_at + i, P_LOAD(self, self_at + i) * s); }
}

// self[i] = self[i] + s
kernel void foreach_add_scalar(const long n, global P_S* self, const long self_at, const float s) {
  FOR_EACH_INDEX(i, n) { P_STORE(self, self_at + i, P_LOAD(self, self_at + i) + s); }
}

// The steps of torch.optim's default (foreach) Adam and AdamW, in the CPU kernels' forms.

// self[i] = lerp(self[i], end[i], w): at::vec's lerp (weight below 0.5 from self, else from end).
kernel void foreach_lerp_scalar(const long n, global P_S* self, const long self_at, global const P_S* end,
                                const long end_at, const float w) {
  FOR_EACH_INDEX(i, n) {
    const float s = P_LOAD(self, self_at + i), e = P_LOAD(end, end_at + i);
    P_STORE(self, self_at + i, fabs(w) < 0.5f ? fma(w, e - s, s) : fma(w - 1.0f, e - s, e));
  }
}

// self[i] = self[i] + v * a[i] * b[i] (the CPU's self + scalar * t1 * t2, left to right, not fused)
kernel void foreach_addcmul_scalar(const long n, global P_S* self, const long self_at, global const P_S* a,
                                   const long a_at, global const P_S* b, const long b_at, const float v) {
  FOR_EACH_INDEX(i, n) {
    P_STORE(self, self_at + i, P_LOAD(self, self_at + i) + v * P_LOAD(a, a_at + i) * P_LOAD(b, b_at + i));
  }
}

// self[i] = self[i] + v * a[i] / b[i] (likewise: (v * a) / b)
kernel void foreach_addcdiv_scalar(const long n, global P_S* self, const long self_at, global const P_S* a,
                                   const long a_at, global const P_S* b, const long b_at, const float v) {
  FOR_EACH_INDEX(i, n) {
    P_STORE(self, self_at + i, P_LOAD(self, self_at + i) + v * P_LOAD(a, a_at + i) / P_LOAD(b, b_at + i));
  }
}

// self[i] = self[i] / s
kernel void foreach_div_scalar(const long n, global P_S* self, const long self_at, const float s) {
  FOR_EACH_INDEX(i, n) { P_STORE(self, self_at + i, P_LOAD(self, self_at + i) / s); }
}

// out[i] = sqrt(x[i])
kernel void foreach_sqrt(const long n, global P_S* out, const long out_at, global const P_S* x, const long x_at) {
  FOR_EACH_INDEX(i, n) { P_STORE(out, out_at + i, sqrt(P_LOAD(x, x_at + i))); }
}
