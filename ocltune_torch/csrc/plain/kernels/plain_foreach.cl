// The per-element steps of the `_foreach_*` ops that torch.optim's default (foreach) SGD spends its
// calls in: _foreach_mul_(buffers, momentum), _foreach_add_(buffers, grads, alpha=1 - dampening) and
// _foreach_add_(params, buffers, alpha=-lr), and _foreach_add_(tensors, scalar); then Adam's. One
// launch updates up to MT_TENSORS dense tensors (csrc/ops/foreach_ops.cpp), as CUDA's multi-tensor apply
// does: PyTorch's per-tensor loop dispatches a whole add_ or mul_ for each (24 us a tensor on the H200),
// and even one launch per tensor costs a resnet50 SGD step about 480 launches.
//
// Slot P: the tensors' type (a float type; the host takes anything else the slow way). Values are
// computed in float, the opmath type, and rounded once when stored, as the CPU's vectorised kernels
// do: add with alpha is fma(other, alpha, self) there (vec::fmadd) and here. FP_CONTRACT is off so
// that nothing else is fused.
//
// Defined by the host: MT_TENSORS (tensors per launch), MT_CHUNK (elements per chunk).

#pragma OPENCL FP_CONTRACT OFF

#define MT_OPERANDS 3  // the most lists an op here reads or writes (addcmul_: self, a, b)
#define MT_BUFFERS 8   // distinct cl_mem arguments per launch

// Where the tensors of one launch live; mirrors MtTable in csrc/ops/foreach_ops.cpp. The tensor k holds
// the chunks first_chunk[k] .. first_chunk[k + 1] - 1 of the launch, MT_CHUNK elements each (its last
// one partial); its operand j is buffer slot[j][k] from element offset[j][k] on.
typedef struct {
  long numel[MT_TENSORS];
  long offset[MT_OPERANDS][MT_TENSORS];
  int first_chunk[MT_TENSORS + 1];
  int tensors;
  float scalar[MT_TENSORS];  // the op's scalar, per tensor (a ScalarList) or the same for all
  uchar slot[MT_OPERANDS][MT_TENSORS];
} MtTable;

#define MT_BUFFER_PARAMS                                                                                    \
  global P_S *b0, global P_S *b1, global P_S *b2, global P_S *b3, global P_S *b4, global P_S *b5, global P_S *b6, \
      global P_S *b7

inline global P_S* mt_buffer(const uchar slot, MT_BUFFER_PARAMS) {
  switch (slot) {
    case 0: return b0;
    case 1: return b1;
    case 2: return b2;
    case 3: return b3;
    case 4: return b4;
    case 5: return b5;
    case 6: return b6;
    default: return b7;
  }
}

// The elements [begin, end) of a chunk. On a GPU the items of a work-group take every local-size-th
// element, so that a warp reads consecutive elements; on a CPU (PLAIN_CPU) each item one contiguous
// block, which PoCL's compiler vectorises (see FOR_EACH_INDEX in plain_common.cl).
#ifdef PLAIN_CPU
#define MT_FOR_CHUNK(i, ch)                                                                                 \
  for (long i##_per_ = (MT_CHUNK + (long)get_local_size(0) - 1) / (long)get_local_size(0),                     \
            i = (ch).begin + (long)get_local_id(0) * i##_per_, i##_end_ = min((ch).end, i + i##_per_);         \
       i < i##_end_; ++i)
#else
#define MT_FOR_CHUNK(i, ch) for (long i = (ch).begin + (long)get_local_id(0); i < (ch).end; i += get_local_size(0))
#endif

// Chunk c of a launch: its tensor's operands (those the op does not have point at operand 0) and
// scalar, and the elements [begin, end) of that tensor it covers.
typedef struct {
  global P_S* o[MT_OPERANDS];
  float s;
  long begin, end;
} Chunk;

inline Chunk mt_chunk(const MtTable* t, const int c, MT_BUFFER_PARAMS) {
  int k = 0;  // a few dozen tensors at most: a linear walk, once per chunk
  while (k + 1 < t->tensors && t->first_chunk[k + 1] <= c) ++k;
  Chunk ch;
  for (int j = 0; j < MT_OPERANDS; ++j) ch.o[j] = mt_buffer(t->slot[j][k], b0, b1, b2, b3, b4, b5, b6, b7) + t->offset[j][k];
  ch.s = t->scalar[k];
  ch.begin = (long)(c - t->first_chunk[k]) * MT_CHUNK;
  ch.end = min(t->numel[k], ch.begin + MT_CHUNK);
  return ch;
}

// Each work-group takes the chunks group id, + groups, ... of the launch.
#define MT_FOR_EACH_CHUNK(c) for (int c = get_group_id(0); c < t.first_chunk[t.tensors]; c += get_num_groups(0))
#define MT_CHUNK_OF(c) mt_chunk(&t, (c), b0, b1, b2, b3, b4, b5, b6, b7)

// self[i] = self[i] + alpha * other[i]
kernel void foreach_add_list(const MtTable t, MT_BUFFER_PARAMS) {
  MT_FOR_EACH_CHUNK(c) {
    const Chunk ch = MT_CHUNK_OF(c);
    MT_FOR_CHUNK(i, ch) { P_STORE(ch.o[0], i, fma(P_LOAD(ch.o[1], i), ch.s, P_LOAD(ch.o[0], i))); }
  }
}

// self[i] = self[i] * s
kernel void foreach_mul_scalar(const MtTable t, MT_BUFFER_PARAMS) {
  MT_FOR_EACH_CHUNK(c) {
    const Chunk ch = MT_CHUNK_OF(c);
    MT_FOR_CHUNK(i, ch) { P_STORE(ch.o[0], i, P_LOAD(ch.o[0], i) * ch.s); }
  }
}

// self[i] = self[i] + s
kernel void foreach_add_scalar(const MtTable t, MT_BUFFER_PARAMS) {
  MT_FOR_EACH_CHUNK(c) {
    const Chunk ch = MT_CHUNK_OF(c);
    MT_FOR_CHUNK(i, ch) { P_STORE(ch.o[0], i, P_LOAD(ch.o[0], i) + ch.s); }
  }
}

// The steps of torch.optim's default (foreach) Adam and AdamW, in the CPU kernels' forms.

// self[i] = lerp(self[i], end[i], w): at::vec's lerp (weight below 0.5 from self, else from end).
kernel void foreach_lerp_scalar(const MtTable t, MT_BUFFER_PARAMS) {
  MT_FOR_EACH_CHUNK(c) {
    const Chunk ch = MT_CHUNK_OF(c);
    const float w = ch.s;
    MT_FOR_CHUNK(i, ch) {
      const float a = P_LOAD(ch.o[0], i), e = P_LOAD(ch.o[1], i);
      P_STORE(ch.o[0], i, fabs(w) < 0.5f ? fma(w, e - a, a) : fma(w - 1.0f, e - a, e));
    }
  }
}

// self[i] = self[i] + v * a[i] * b[i] (the CPU's self + scalar * t1 * t2, left to right, not fused)
kernel void foreach_addcmul_scalar(const MtTable t, MT_BUFFER_PARAMS) {
  MT_FOR_EACH_CHUNK(c) {
    const Chunk ch = MT_CHUNK_OF(c);
    MT_FOR_CHUNK(i, ch) {
      P_STORE(ch.o[0], i, P_LOAD(ch.o[0], i) + ch.s * P_LOAD(ch.o[1], i) * P_LOAD(ch.o[2], i));
    }
  }
}

// self[i] = self[i] + v * a[i] / b[i] (likewise: (v * a) / b)
kernel void foreach_addcdiv_scalar(const MtTable t, MT_BUFFER_PARAMS) {
  MT_FOR_EACH_CHUNK(c) {
    const Chunk ch = MT_CHUNK_OF(c);
    MT_FOR_CHUNK(i, ch) {
      P_STORE(ch.o[0], i, P_LOAD(ch.o[0], i) + ch.s * P_LOAD(ch.o[1], i) / P_LOAD(ch.o[2], i));
    }
  }
}

// self[i] = self[i] / s
kernel void foreach_div_scalar(const MtTable t, MT_BUFFER_PARAMS) {
  MT_FOR_EACH_CHUNK(c) {
    const Chunk ch = MT_CHUNK_OF(c);
    MT_FOR_CHUNK(i, ch) { P_STORE(ch.o[0], i, P_LOAD(ch.o[0], i) / ch.s); }
  }
}

// out[i] = sqrt(x[i])
kernel void foreach_sqrt(const MtTable t, MT_BUFFER_PARAMS) {
  MT_FOR_EACH_CHUNK(c) {
    const Chunk ch = MT_CHUNK_OF(c);
    MT_FOR_CHUNK(i, ch) { P_STORE(ch.o[0], i, sqrt(P_LOAD(ch.o[1], i))); }
  }
}
