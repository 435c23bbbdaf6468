"""The fused LSTM and GRU cells (_thnn_fused_lstm_cell, _thnn_fused_gru_cell and their backward) and
the modules built on them (nn.LSTM, nn.GRU, nn.LSTMCell, nn.GRUCell), in strict mode.

PyTorch's CPU has no kernel for the fused cells (its modules compose the cell of matmuls and
elementwise ops instead), so the ops themselves are checked against the cell written with torch ops
in float64, forward and through autograd, and the modules against the same module on the CPU.
"""

import copy

import pytest
import torch
import torch.nn.functional as F

from conftest import DEVICE, TOLERANCES, assert_close, rand

# (batch, hidden): 1 and odd sizes, hidden 33 past a warp's worth of units.
SIZES = [(1, 1), (5, 7), (3, 33)]


def on_device(t, transpose=False):
    """t on the device; with `transpose`, a non-contiguous view of the same values (a 2-D tensor
    transposed, a 1-D one every other element of a buffer twice its size)."""
    if not transpose:
        return t.to(DEVICE)
    if t.dim() == 1:
        return torch.stack([t, t], 1).to(DEVICE)[:, 0]
    return t.t().contiguous().to(DEVICE).t()


def lstm_reference(ig, hg, cx, bi=None, bh=None):
    gates = ig + hg
    if bi is not None:
        gates = gates + bi + bh
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    return o * cy.tanh(), cy


def gru_reference(ig, hg, hx, bi=None, bh=None):
    if bi is not None:
        ig, hg = ig + bi, hg + bh
    ir, iz, in_ = ig.chunk(3, 1)
    hr, hz, hn = hg.chunk(3, 1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return n + z * (hx - n)


def leaves(tensors, device_side):
    """Fresh leaves requiring grad: float64 CPU copies, or device copies (every other one a
    non-contiguous view: input gates, the state and the input bias)."""
    out = []
    for k, t in enumerate(tensors):
        if t is None:
            out.append(None)
            continue
        x = on_device(t, transpose=k in (0, 2, 3)) if device_side else t.double()
        out.append(x.detach().requires_grad_())
    return out


def grads_close(device_leaves, ref_leaves, dtype, scale=1.0):
    for d, r in zip(device_leaves, ref_leaves):
        if r is None:
            continue
        assert d.grad is not None
        assert_close(d.grad, r.grad.to(dtype), scale=scale)


# fp32: every size, with and without biases, both gradients or one (the other None in backward);
# 16-bit: the larger sizes with both gradients.
LSTM_CASES = [
    (torch.float32, batch, hidden, bias, grads)
    for batch, hidden in SIZES
    for bias in (True, False)
    for grads in ("both", "hy", "cy")
] + [(dtype, 5, 7, True, "both") for dtype in (torch.float16, torch.bfloat16)] + [
    (dtype, 3, 33, False, "both") for dtype in (torch.float16, torch.bfloat16)
]


def case_id(case):
    """float32-5x7-bias-both for (torch.float32, 5, 7, True, "both")."""
    dtype, batch, hidden, bias, *rest = case
    return "-".join([str(dtype).removeprefix("torch."), f"{batch}x{hidden}", "bias" if bias else "nobias", *rest])


@pytest.mark.parametrize("dtype,batch,hidden,bias,grads", LSTM_CASES, ids=[case_id(c) for c in LSTM_CASES])
def test_fused_lstm_cell(strict, dtype, batch, hidden, bias, grads):
    seed = batch * 100 + hidden
    ig, hg = rand(batch, 4 * hidden, dtype=dtype, seed=seed), rand(batch, 4 * hidden, dtype=dtype, seed=seed + 1)
    cx = rand(batch, hidden, dtype=dtype, seed=seed + 2)
    bi = rand(4 * hidden, dtype=dtype, seed=seed + 3) if bias else None
    bh = rand(4 * hidden, dtype=dtype, seed=seed + 4) if bias else None
    dhy, dcy = rand(batch, hidden, seed=seed + 5), rand(batch, hidden, seed=seed + 6)

    ref = leaves([ig, hg, cx, bi, bh], device_side=False)
    hy_ref, cy_ref = lstm_reference(*ref)
    dev = leaves([ig, hg, cx, bi, bh], device_side=True)
    hy, cy, workspace = torch.ops.aten._thnn_fused_lstm_cell(*dev)
    assert workspace.shape == (batch, 4 * hidden) and workspace.dtype == dtype
    assert_close(hy, hy_ref.to(dtype))
    assert_close(cy, cy_ref.to(dtype))

    # Only the outputs in `grads` reach the loss: the other gradient is undefined (None) in backward.
    outs_ref, outs_dev, gs = [], [], []
    if grads in ("both", "hy"):
        outs_ref.append(hy_ref), outs_dev.append(hy), gs.append(dhy)
    if grads in ("both", "cy"):
        outs_ref.append(cy_ref), outs_dev.append(cy), gs.append(dcy)
    torch.autograd.backward(outs_ref, [g.to(dtype).double() for g in gs])
    torch.autograd.backward(outs_dev, [g.to(dtype).to(DEVICE) for g in gs])
    grads_close(dev, ref, dtype, scale=1.0 if dtype == torch.float32 else 2.0)


@pytest.mark.parametrize("grad_hy,grad_cy", [(True, True), (True, False), (False, True), (False, False)])
def test_fused_lstm_cell_backward_impl(strict, grad_hy, grad_cy):
    """The backward op called directly: None gradients, non-contiguous ones, has_bias."""
    batch, hidden = 5, 7
    ig, hg, cx = rand(batch, 4 * hidden, seed=1), rand(batch, 4 * hidden, seed=2), rand(batch, hidden, seed=3)
    hy, cy, workspace = torch.ops.aten._thnn_fused_lstm_cell(ig.to(DEVICE), hg.to(DEVICE), cx.to(DEVICE))
    dhy = on_device(rand(batch, hidden, seed=4), transpose=True) if grad_hy else None
    dcy = on_device(rand(batch, hidden, seed=5), transpose=True) if grad_cy else None
    grad_gates, grad_cx, grad_bias = torch.ops.aten._thnn_fused_lstm_cell_backward_impl(
        dhy, dcy, cx.to(DEVICE), cy, workspace, True
    )
    if not grad_hy and not grad_cy:
        assert grad_gates is None and grad_cx is None and grad_bias is None
        return
    ref = leaves([ig, hg, cx], device_side=False)
    hy_ref, cy_ref = lstm_reference(*ref)
    outs, gs = [], []
    if grad_hy:
        outs.append(hy_ref), gs.append(dhy.cpu().double())
    if grad_cy:
        outs.append(cy_ref), gs.append(dcy.cpu().double())
    torch.autograd.backward(outs, gs)
    assert_close(grad_gates, ref[0].grad.float())
    assert_close(grad_cx, ref[2].grad.float())
    assert_close(grad_bias, ref[0].grad.sum(0).float())
    _, _, no_bias = torch.ops.aten._thnn_fused_lstm_cell_backward_impl(dhy, dcy, cx.to(DEVICE), cy, workspace, False)
    assert no_bias is None


GRU_CASES = [(torch.float32, batch, hidden, bias) for batch, hidden in SIZES for bias in (True, False)] + [
    (dtype, 5, 7, True) for dtype in (torch.float16, torch.bfloat16)
] + [(dtype, 3, 33, False) for dtype in (torch.float16, torch.bfloat16)]


@pytest.mark.parametrize("dtype,batch,hidden,bias", GRU_CASES, ids=[case_id(c) for c in GRU_CASES])
def test_fused_gru_cell(strict, dtype, batch, hidden, bias):
    seed = batch * 100 + hidden + 50
    ig, hg = rand(batch, 3 * hidden, dtype=dtype, seed=seed), rand(batch, 3 * hidden, dtype=dtype, seed=seed + 1)
    hx = rand(batch, hidden, dtype=dtype, seed=seed + 2)
    bi = rand(3 * hidden, dtype=dtype, seed=seed + 3) if bias else None
    bh = rand(3 * hidden, dtype=dtype, seed=seed + 4) if bias else None
    dhy = rand(batch, hidden, seed=seed + 5)

    ref = leaves([ig, hg, hx, bi, bh], device_side=False)
    hy_ref = gru_reference(*ref)
    dev = leaves([ig, hg, hx, bi, bh], device_side=True)
    hy, workspace = torch.ops.aten._thnn_fused_gru_cell(*dev)
    assert workspace.shape == (batch, 5 * hidden) and workspace.dtype == dtype
    assert_close(hy, hy_ref.to(dtype))
    hy_ref.backward(dhy.to(dtype).double())
    hy.backward(dhy.to(dtype).to(DEVICE))
    grads_close(dev, ref, dtype, scale=1.0 if dtype == torch.float32 else 2.0)


def test_fused_gru_cell_backward_direct(strict):
    batch, hidden = 3, 5
    ig, hg, hx = rand(batch, 3 * hidden, seed=1), rand(batch, 3 * hidden, seed=2), rand(batch, hidden, seed=3)
    _, workspace = torch.ops.aten._thnn_fused_gru_cell(ig.to(DEVICE), hg.to(DEVICE), hx.to(DEVICE))
    dhy = rand(batch, hidden, seed=4)
    gi, gh, ghx, gbi, gbh = torch.ops.aten._thnn_fused_gru_cell_backward(on_device(dhy, True), workspace, True)
    ref = leaves([ig, hg, hx], device_side=False)
    gru_reference(*ref).backward(dhy.double())
    assert_close(gi, ref[0].grad.float())
    assert_close(gh, ref[1].grad.float())
    assert_close(ghx, ref[2].grad.float())
    assert_close(gbi, ref[0].grad.sum(0).float())
    assert_close(gbh, ref[1].grad.sum(0).float())
    assert torch.ops.aten._thnn_fused_gru_cell_backward(dhy.to(DEVICE), workspace, False)[3] is None


def test_bad_arguments():
    g, c = torch.zeros(2, 8, device=DEVICE), torch.zeros(2, 2, device=DEVICE)
    with pytest.raises(RuntimeError, match="hidden_gates of size"):
        torch.ops.aten._thnn_fused_lstm_cell(g, torch.zeros(2, 4, device=DEVICE), c)
    with pytest.raises(RuntimeError, match="cx of size"):
        torch.ops.aten._thnn_fused_lstm_cell(g, g, torch.zeros(2, 3, device=DEVICE))
    with pytest.raises(RuntimeError, match="no multiple of 3"):
        torch.ops.aten._thnn_fused_gru_cell(g, g, c)
    with pytest.raises(RuntimeError, match="both input_bias and hidden_bias or neither"):
        torch.ops.aten._thnn_fused_lstm_cell(g, g, c, torch.zeros(8, device=DEVICE))
    with pytest.raises(RuntimeError, match="of dtype"):
        torch.ops.aten._thnn_fused_lstm_cell(g, g.half(), c)
    with pytest.raises(RuntimeError, match="workspace"):
        torch.ops.aten._thnn_fused_gru_cell_backward(c, torch.zeros(2, 9, device=DEVICE), True)


# ---- modules ----


def to_ocl(x):
    return tuple(to_ocl(t) for t in x) if isinstance(x, tuple) else x.to(DEVICE)


def train_both(module, make_inputs, forward, steps=3, lr=0.1):
    """`steps` SGD steps of `module` on the CPU and of a copy on ocl (strict mode is the caller's) with
    the same inputs: outputs, every parameter's gradient and the parameters after each step match."""
    cpu = module
    ocl = copy.deepcopy(module).to(DEVICE)
    opt_cpu = torch.optim.SGD(cpu.parameters(), lr=lr)
    opt_ocl = torch.optim.SGD(ocl.parameters(), lr=lr)
    for step in range(steps):
        inputs = make_inputs(step)
        out_cpu = forward(cpu, inputs)
        out_ocl = forward(ocl, [to_ocl(x) for x in inputs])
        g = torch.Generator().manual_seed(100 + step)
        loss_cpu = sum((o * torch.randn(o.shape, generator=g)).sum() for o in out_cpu)
        g = torch.Generator().manual_seed(100 + step)
        loss_ocl = sum((o * torch.randn(o.shape, generator=g).to(DEVICE)).sum() for o in out_ocl)
        for a, b in zip(out_ocl, out_cpu):
            assert_close(a.detach(), b.detach())
        opt_cpu.zero_grad()
        opt_ocl.zero_grad()
        loss_cpu.backward()
        loss_ocl.backward()
        for (name, p_ocl), p_cpu in zip(ocl.named_parameters(), cpu.parameters()):
            assert p_ocl.grad is not None, name
            assert_close(p_ocl.grad, p_cpu.grad)
        opt_cpu.step()
        opt_ocl.step()
    for p_ocl, p_cpu in zip(ocl.parameters(), cpu.parameters()):
        assert_close(p_ocl.detach(), p_cpu.detach())


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize(
    "batch_first,bidirectional,bias", [(False, False, True), (True, True, True), (True, False, False)]
)
def test_rnn_module_trains(strict, kind, batch_first, bidirectional, bias):
    torch.manual_seed(0)
    module = getattr(torch.nn, kind)(
        5, 7, num_layers=2, batch_first=batch_first, bidirectional=bidirectional, bias=bias
    )
    batch, steps = 3, 4
    layers = 2 * (2 if bidirectional else 1)

    def make_inputs(step):
        shape = (batch, steps, 5) if batch_first else (steps, batch, 5)
        state = [rand(layers, batch, 7, seed=20 + step)]
        if kind == "LSTM":
            state = [(state[0], rand(layers, batch, 7, seed=30 + step))]
        return [rand(*shape, seed=10 + step)] + state

    def forward(m, inputs):
        out, state = m(inputs[0], inputs[1])
        return [out] + (list(state) if kind == "LSTM" else [state])

    train_both(module, make_inputs, forward)


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell"])
def test_cell_module_trains(strict, kind):
    torch.manual_seed(0)
    module = getattr(torch.nn, kind)(6, 33)

    def make_inputs(step):
        h = rand(5, 33, seed=40 + step)
        return [rand(5, 6, seed=50 + step), (h, rand(5, 33, seed=60 + step)) if kind == "LSTMCell" else h]

    def forward(m, inputs):
        out = m(inputs[0], inputs[1])
        return list(out) if isinstance(out, tuple) else [out]

    train_both(module, make_inputs, forward)


def test_rnn_module_no_state_and_eval(strict):
    """No initial state (zeros made on the device), then eval under no_grad."""
    torch.manual_seed(1)
    lstm = torch.nn.LSTM(4, 9, num_layers=2)
    x = rand(6, 2, 4, seed=3)
    out_cpu, (h_cpu, c_cpu) = lstm(x)
    lstm_ocl = copy.deepcopy(lstm).to(DEVICE)
    out, (h, c) = lstm_ocl(x.to(DEVICE))
    out.sum().backward()
    assert_close(out.detach(), out_cpu.detach())
    assert_close(c.detach(), c_cpu.detach())
    with torch.no_grad():
        lstm_ocl.eval()
        assert_close(lstm_ocl(x.to(DEVICE))[0], out_cpu.detach())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_rnn_module_16bit(strict, dtype, kind):
    """A 16-bit module's forward against the fp32 CPU module, and its backward runs on the device."""
    torch.manual_seed(2)
    module = getattr(torch.nn, kind)(8, 16, num_layers=2, batch_first=True)
    x = rand(3, 5, 8, seed=7)
    ref, _ = module(x)
    dev = copy.deepcopy(module).to(DEVICE, dtype)
    out, _ = dev(x.to(dtype).to(DEVICE))
    tol = {k: 4 * v for k, v in TOLERANCES[dtype].items()}  # two layers of 16-bit weights and matmuls
    assert_close(out.detach(), ref.detach().to(dtype), **tol)
    out.float().sum().backward()
    ref.sum().backward()
    for p_dev, p_ref in zip(dev.parameters(), module.parameters()):
        assert p_dev.grad is not None and p_dev.grad.dtype == dtype
        scale = p_ref.grad.abs().max().item() + 1.0
        torch.testing.assert_close(p_dev.grad.cpu().float(), p_ref.grad, rtol=0.1, atol=0.05 * scale)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_rnn_module_autocast(strict, kind):
    """Under autocast the fused cells are in the fp16 list (PyTorch's CUDA lists): gates, state and
    biases reach them as fp16, and the fp32 parameters get fp32 gradients."""
    torch.manual_seed(4)
    module = getattr(torch.nn, kind)(8, 16, num_layers=2, batch_first=True)
    x = rand(3, 5, 8, seed=8)
    ref, _ = module(x)
    dev = copy.deepcopy(module).to(DEVICE)
    with torch.autocast("ocl", dtype=torch.float16):
        out, _ = dev(x.to(DEVICE))
    assert_close(out.detach(), ref.detach().half(), **{k: 4 * v for k, v in TOLERANCES[torch.float16].items()})
    out.float().sum().backward()
    ref.sum().backward()
    for p_dev, p_ref in zip(dev.parameters(), module.parameters()):
        assert p_dev.grad.dtype == torch.float32
        scale = p_ref.grad.abs().max().item() + 1.0
        torch.testing.assert_close(p_dev.grad.cpu(), p_ref.grad, rtol=0.05, atol=0.02 * scale)


def test_empty_batch(strict):
    cell = torch.nn.LSTMCell(4, 5).to(DEVICE)
    x = torch.zeros(0, 4, device=DEVICE, requires_grad=True)
    h, c = cell(x)
    assert h.shape == (0, 5) and c.shape == (0, 5)
    (h.sum() + c.sum()).backward()
    assert x.grad.shape == (0, 4) and cell.bias_ih.grad.abs().sum().item() == 0
    hy = torch.nn.GRUCell(4, 5).to(DEVICE)(torch.zeros(0, 4, device=DEVICE))
    assert hy.shape == (0, 5)


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(20, 8)
        self.lstm = torch.nn.LSTM(8, 12, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(12, 3)

    def forward(self, tokens):
        out, _ = self.lstm(self.embedding(tokens))
        return self.head(out[:, -1])


def test_lstm_classifier_trains(strict):
    torch.manual_seed(3)
    model = Classifier()
    g = torch.Generator().manual_seed(4)
    tokens = torch.randint(0, 20, (6, 7), generator=g)
    labels = torch.randint(0, 3, (6,), generator=g)

    def forward(m, inputs):
        return [F.cross_entropy(m(inputs[0]), inputs[1])]

    cpu, ocl = model, copy.deepcopy(model).to(DEVICE)
    opt_cpu = torch.optim.SGD(cpu.parameters(), lr=0.5)
    opt_ocl = torch.optim.SGD(ocl.parameters(), lr=0.5)
    losses = []
    for _ in range(5):
        loss_cpu = forward(cpu, [tokens, labels])[0]
        loss_ocl = forward(ocl, [tokens.to(DEVICE), labels.to(DEVICE)])[0]
        assert_close(loss_ocl.detach(), loss_cpu.detach())
        losses.append(loss_ocl.item())
        for opt, loss in ((opt_cpu, loss_cpu), (opt_ocl, loss_ocl)):
            opt.zero_grad()
            loss.backward()
            opt.step()
    assert losses[-1] < losses[0]
    for p_ocl, p_cpu in zip(ocl.parameters(), cpu.parameters()):
        assert_close(p_ocl.detach(), p_cpu.detach())
