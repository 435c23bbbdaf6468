// The fused LSTM and GRU cells (csrc/ops/rnn_ops.cpp): PyTorch's _thnn_fused_lstm_cell,
// _thnn_fused_lstm_cell_backward_impl, _thnn_fused_gru_cell and _thnn_fused_gru_cell_backward, which
// nn.LSTM, nn.GRU, nn.LSTMCell and nn.GRUCell call once per time step and layer off the CPU. Each is
// one read and one write of a few values per hidden unit: nothing to tune.
//
// Slot A: every tensor's type (fp32, fp16 or bf16); values are computed in float and each result is
// rounded once to A, as CUDA's kernels (aten/src/ATen/native/cuda/RNN.cu) compute. Every tensor is
// contiguous (the host's copy), `count` = batch * hidden work items, one per hidden unit of a row;
// the gates of a row are [B, 4H] (LSTM: i, f, g, o) or [B, 3H] (GRU: r, z, n), so unit j of row b
// reads gate k at b * gates * H + k * H + j. has_bias 0: the host passes another buffer, never read.
//
// The workspaces are the forward's saved values, which autograd hands to the backward unchanged:
//   LSTM [B, 4H]: the gates after their activations, i, f, g, o;
//   GRU  [B, 5H]: r, z, n after their activations, hx, and the hidden n gate plus its bias (hn + b_hn).

inline float rnn_sigmoid(const float x) { return 1.0f / (1.0f + exp(-x)); }

kernel void lstm_cell_forward(const long count, const long hidden, global const A_S* ig_base, const long ig_at,
                              global const A_S* hg_base, const long hg_at, global const A_S* cx_base,
                              const long cx_at, global const A_S* bi_base, const long bi_at,
                              global const A_S* bh_base, const long bh_at, const int has_bias,
                              global A_S* hy_base, const long hy_at, global A_S* cy_base, const long cy_at,
                              global A_S* ws_base, const long ws_at) {
  global const A_S* ig = ig_base + ig_at;
  global const A_S* hg = hg_base + hg_at;
  global const A_S* cx = cx_base + cx_at;
  global const A_S* bi = bi_base + bi_at;
  global const A_S* bh = bh_base + bh_at;
  global A_S* hy = hy_base + hy_at;
  global A_S* cy = cy_base + cy_at;
  global A_S* ws = ws_base + ws_at;
  FOR_EACH_INDEX(i, count) {
    const long row = i / hidden, j = i - row * hidden, g = row * 4 * hidden + j;
    float pre[4];
    for (int k = 0; k < 4; ++k) {
      const long at = g + k * hidden;
      pre[k] = (float)A_LOAD(ig, at) + (float)A_LOAD(hg, at);
      if (has_bias) pre[k] += (float)A_LOAD(bi, j + k * hidden) + (float)A_LOAD(bh, j + k * hidden);
    }
    const float in_gate = rnn_sigmoid(pre[0]), forget_gate = rnn_sigmoid(pre[1]);
    const float cell_gate = tanh(pre[2]), out_gate = rnn_sigmoid(pre[3]);
    const float c = forget_gate * (float)A_LOAD(cx, i) + in_gate * cell_gate;
    A_STORE(cy, i, TO_A(c));
    A_STORE(hy, i, TO_A(out_gate * tanh(c)));
    A_STORE(ws, g, TO_A(in_gate));
    A_STORE(ws, g + hidden, TO_A(forget_gate));
    A_STORE(ws, g + 2 * hidden, TO_A(cell_gate));
    A_STORE(ws, g + 3 * hidden, TO_A(out_gate));
  }
}

// grad_gates [B, 4H] (the gradient of the gates before their activations, which is the gradient of
// both the input and the hidden gates) and grad_cx [B, H]. has_ghy / has_gcy 0: that gradient is
// zero (undefined in autograd) and its buffer is never read.
kernel void lstm_cell_backward(const long count, const long hidden, global const A_S* ghy_base, const long ghy_at,
                               const int has_ghy, global const A_S* gcy_base, const long gcy_at, const int has_gcy,
                               global const A_S* cx_base, const long cx_at, global const A_S* cy_base,
                               const long cy_at, global const A_S* ws_base, const long ws_at,
                               global A_S* gg_base, const long gg_at, global A_S* gcx_base, const long gcx_at) {
  global const A_S* ghy = ghy_base + ghy_at;
  global const A_S* gcy = gcy_base + gcy_at;
  global const A_S* cx = cx_base + cx_at;
  global const A_S* cy = cy_base + cy_at;
  global const A_S* ws = ws_base + ws_at;
  global A_S* gg = gg_base + gg_at;
  global A_S* gcx = gcx_base + gcx_at;
  FOR_EACH_INDEX(i, count) {
    const long row = i / hidden, j = i - row * hidden, g = row * 4 * hidden + j;
    const float in_gate = (float)A_LOAD(ws, g), forget_gate = (float)A_LOAD(ws, g + hidden);
    const float cell_gate = (float)A_LOAD(ws, g + 2 * hidden), out_gate = (float)A_LOAD(ws, g + 3 * hidden);
    const float dh = has_ghy ? (float)A_LOAD(ghy, i) : 0.0f;
    const float dcy = has_gcy ? (float)A_LOAD(gcy, i) : 0.0f;
    const float tanh_cy = tanh((float)A_LOAD(cy, i));
    // dc: the gradient of cy through hy = o * tanh(cy) and directly.
    const float dc = dh * out_gate * (1.0f - tanh_cy * tanh_cy) + dcy;
    A_STORE(gg, g, TO_A(dc * cell_gate * in_gate * (1.0f - in_gate)));
    A_STORE(gg, g + hidden, TO_A(dc * (float)A_LOAD(cx, i) * forget_gate * (1.0f - forget_gate)));
    A_STORE(gg, g + 2 * hidden, TO_A(dc * in_gate * (1.0f - cell_gate * cell_gate)));
    A_STORE(gg, g + 3 * hidden, TO_A(dh * tanh_cy * out_gate * (1.0f - out_gate)));
    A_STORE(gcx, i, TO_A(dc * forget_gate));
  }
}

// hy = n + z * (hx - n) with r = sigmoid(ir + hr), z = sigmoid(iz + hz) and
// n = tanh(in + r * hn) (each gate with its two biases; the hidden n gate's bias inside the product).
kernel void gru_cell_forward(const long count, const long hidden, global const A_S* ig_base, const long ig_at,
                             global const A_S* hg_base, const long hg_at, global const A_S* hx_base,
                             const long hx_at, global const A_S* bi_base, const long bi_at,
                             global const A_S* bh_base, const long bh_at, const int has_bias, global A_S* hy_base,
                             const long hy_at, global A_S* ws_base, const long ws_at) {
  global const A_S* ig = ig_base + ig_at;
  global const A_S* hg = hg_base + hg_at;
  global const A_S* hx = hx_base + hx_at;
  global const A_S* bi = bi_base + bi_at;
  global const A_S* bh = bh_base + bh_at;
  global A_S* hy = hy_base + hy_at;
  global A_S* ws = ws_base + ws_at;
  FOR_EACH_INDEX(i, count) {
    const long row = i / hidden, j = i - row * hidden, g = row * 3 * hidden + j, w = row * 5 * hidden + j;
    float in_part[3], hidden_part[3];
    for (int k = 0; k < 3; ++k) {
      in_part[k] = (float)A_LOAD(ig, g + k * hidden);
      hidden_part[k] = (float)A_LOAD(hg, g + k * hidden);
      if (has_bias) {
        in_part[k] += (float)A_LOAD(bi, j + k * hidden);
        hidden_part[k] += (float)A_LOAD(bh, j + k * hidden);
      }
    }
    const float reset_gate = rnn_sigmoid(in_part[0] + hidden_part[0]);
    const float update_gate = rnn_sigmoid(in_part[1] + hidden_part[1]);
    const float new_gate = tanh(in_part[2] + reset_gate * hidden_part[2]);
    A_STORE(hy, i, TO_A(new_gate + update_gate * ((float)A_LOAD(hx, i) - new_gate)));
    A_STORE(ws, w, TO_A(reset_gate));
    A_STORE(ws, w + hidden, TO_A(update_gate));
    A_STORE(ws, w + 2 * hidden, TO_A(new_gate));
    ws[w + 3 * hidden] = hx[i];  // hx itself, bit for bit
    A_STORE(ws, w + 4 * hidden, TO_A(hidden_part[2]));
  }
}

// grad_input_gates, grad_hidden_gates [B, 3H] (the same but for the n gate, whose hidden part is
// scaled by r) and grad_hx [B, H], from grad_hy and the workspace alone.
kernel void gru_cell_backward(const long count, const long hidden, global const A_S* ghy_base, const long ghy_at,
                              global const A_S* ws_base, const long ws_at, global A_S* gig_base, const long gig_at,
                              global A_S* ghg_base, const long ghg_at, global A_S* ghx_base, const long ghx_at) {
  global const A_S* ghy = ghy_base + ghy_at;
  global const A_S* ws = ws_base + ws_at;
  global A_S* gig = gig_base + gig_at;
  global A_S* ghg = ghg_base + ghg_at;
  global A_S* ghx = ghx_base + ghx_at;
  FOR_EACH_INDEX(i, count) {
    const long row = i / hidden, j = i - row * hidden, g = row * 3 * hidden + j, w = row * 5 * hidden + j;
    const float reset_gate = (float)A_LOAD(ws, w), update_gate = (float)A_LOAD(ws, w + hidden);
    const float new_gate = (float)A_LOAD(ws, w + 2 * hidden), h_prev = (float)A_LOAD(ws, w + 3 * hidden);
    const float hn = (float)A_LOAD(ws, w + 4 * hidden);
    const float dh = (float)A_LOAD(ghy, i);
    const float d_update = dh * (h_prev - new_gate) * (1.0f - update_gate) * update_gate;
    const float d_new = dh * (1.0f - update_gate) * (1.0f - new_gate * new_gate);
    const float d_reset = d_new * hn * (1.0f - reset_gate) * reset_gate;
    A_STORE(gig, g, TO_A(d_reset));
    A_STORE(gig, g + hidden, TO_A(d_update));
    A_STORE(gig, g + 2 * hidden, TO_A(d_new));
    A_STORE(ghg, g, TO_A(d_reset));
    A_STORE(ghg, g + hidden, TO_A(d_update));
    A_STORE(ghg, g + 2 * hidden, TO_A(d_new * reset_gate));
    A_STORE(ghx, i, TO_A(dh * update_gate));
  }
}
