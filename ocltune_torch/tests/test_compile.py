"""torch.compile on ocl (issue 40): backend="ocltune" runs the captured forward and backward graphs on
ocl with chains of elementwise ops fused into one kernel each, activations fused into the convolution
or linear layer before them, (inference) eval batch norms folded into the convolution, and reductions
reading the chain before them; results and gradients match eager (CPU, at fp32 tolerance), a fused
chain launches fewer kernels than eager, a graph the pass cannot fuse computes what eager computes,
and torch.compile's default backend fails with an error that names backend="ocltune"."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import ocltune_torch
from conftest import DEVICE, TOLERANCES, assert_close, rand


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def elementwise_calls():
    """Elementwise-family calls on the test device since the last reset (one kernel each)."""
    device = ocltune_torch.dispatch_stats()["devices"].get(DEVICE.index, {})
    return sum(device.get("families", {}).get("elementwise", {}).values())


def eager_and_compiled(model, x):
    """model(x) eagerly and compiled (after a first compiled call that compiles), each with the
    elementwise-family calls it made."""
    ocltune_torch.reset_dispatch_stats()
    eager = model(x)
    eager_elementwise = elementwise_calls()
    compiled_model = torch.compile(model, backend="ocltune")
    compiled_model(x)
    ocltune_torch.reset_dispatch_stats()
    compiled = compiled_model(x)
    return eager, compiled, eager_elementwise, elementwise_calls()


def recorded_passes(monkeypatch):
    """The list that every compiler.lower call's summary is appended to."""
    from ocltune_torch import compiler

    passes = []
    lower = compiler.lower
    monkeypatch.setattr(compiler, "lower", lambda gm: passes.append(lower(gm)) or passes[-1])
    return passes


def compiled_training_matches(reference, model, x):
    """One compiled training step of `model` (on ocl, reference's weights) against `reference` on the CPU:
    the outputs and every parameter's gradient."""
    expected = reference(x)
    expected.square().mean().backward()
    out = torch.compile(model, backend="ocltune")(x.to(DEVICE))
    out.square().mean().backward()
    assert_close(out, expected, rtol=1e-4, atol=1e-5)
    for p, q in zip(reference.parameters(), model.parameters()):
        assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-5)


def chain(x, b):
    return ((x + b).relu() * 0.5 - 2).sigmoid() + x


def test_a_chain_of_elementwise_ops_runs_as_one_kernel():
    x, b = rand(8, 19), rand(19, seed=1)
    expected = chain(x, b)
    ocltune_torch.reset_dispatch_stats()
    eager = chain(x.to(DEVICE), b.to(DEVICE))
    eager_calls = elementwise_calls()
    compiled_fn = torch.compile(chain, backend="ocltune")
    compiled_fn(x.to(DEVICE), b.to(DEVICE))  # compiles (fake tensors: no kernels on ocl)
    ocltune_torch.reset_dispatch_stats()
    compiled = compiled_fn(x.to(DEVICE), b.to(DEVICE))
    compiled_calls = elementwise_calls()
    assert_close(eager, expected)
    assert_close(compiled, expected)
    # Six ops, six kernels eagerly; one chain of four, then sigmoid and the add of x: at most three.
    assert eager_calls == 6 and compiled_calls <= 3, (eager_calls, compiled_calls)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.norm = nn.Linear(12, 24), nn.Linear(24, 6), nn.LayerNorm(24)

    def forward(self, x):
        h = F.gelu(self.fc1(x))
        h = self.norm(h) * 1.5 + 0.25
        return torch.tanh(self.fc2(F.silu(h))) * 2


class Block(nn.Module):
    """A residual block of a CNN: conv, batch norm, relu, conv, batch norm, add, relu."""

    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(4, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4)
        self.conv2, self.bn2 = nn.Conv2d(4, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + x)


@pytest.mark.parametrize("make,shape", [(Mlp, (5, 12)), (Block, (2, 4, 7, 6))], ids=["mlp", "cnn_block"])
def test_training_steps_match_eager(make, shape):
    torch.manual_seed(0)
    reference = make()
    model = make()
    model.load_state_dict(reference.state_dict())
    model.to(DEVICE)
    compiled = torch.compile(model, backend="ocltune")
    x = rand(*shape)
    for step in range(2):  # the second step reuses the compiled graphs
        expected = reference(x)
        expected.square().mean().backward()
        out = compiled(x.to(DEVICE))
        out.square().mean().backward()
        assert_close(out, expected, rtol=1e-4, atol=1e-5)
        for (name, p), q in zip(reference.named_parameters(), model.parameters()):
            assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-5), (step, name)
            p.grad, q.grad = None, None
    for (name, b), c in zip(reference.named_buffers(), model.buffers()):
        assert_close(c, b, rtol=1e-4, atol=1e-5), name  # batch norm's running statistics


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16bit_chains_compute_in_float_and_store_in_their_dtype(dtype):
    x, b = rand(6, 33, dtype=dtype), rand(33, dtype=dtype, seed=1)
    compiled = torch.compile(chain, backend="ocltune")(x.to(DEVICE), b.to(DEVICE))
    assert compiled.dtype == dtype
    # Intermediate values stay in fp32 (as Inductor's do): closer to the float result than eager's.
    assert_close(compiled, chain(x.float(), b.float()).to(dtype), **TOLERANCES[dtype])


def unfusable(x, y, z):
    # Mixed dtypes (type promotion), 5-D tensors (more dims than the family), integer arithmetic.
    mixed = (x.half() + y).relu() * 3
    five = (z + 1).exp() - z
    return mixed, five, (x > 0).int() * 2 + 1


def test_what_cannot_be_fused_computes_what_eager_computes():
    x, y = rand(4, 9), rand(4, 9, seed=1)
    z = rand(2, 3, 2, 2, 3, seed=2)
    expected = unfusable(x, y, z)
    got = torch.compile(unfusable, backend="ocltune")(x.to(DEVICE), y.to(DEVICE), z.to(DEVICE))
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.device == DEVICE
        assert_close(g, e)


def test_graph_breaks_run_eagerly_between_compiled_graphs():
    def with_break(x):
        y = (x * 2).relu() + 1
        scale = float(y.sum().item())  # a graph break: the value goes to Python
        return (y / scale).sigmoid() - 0.5

    x = rand(7, 5)
    assert_close(torch.compile(with_break, backend="ocltune")(x.to(DEVICE)), with_break(x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("activation", ["none", "relu", "relu6", "gelu", "sigmoid"])
def test_conv2d_act_is_a_convolution_then_its_activation(activation, dtype):
    x, w, b = rand(2, 5, 9, 7, dtype=dtype), rand(6, 5, 3, 3, dtype=dtype, seed=1), rand(6, dtype=dtype, seed=2)
    then = {"none": lambda y: y, "relu": F.relu, "relu6": F.relu6, "gelu": F.gelu, "sigmoid": torch.sigmoid}[activation]
    expected = then(F.conv2d(x.float(), w.float(), b.float(), stride=(2, 1), padding=1)).to(dtype)
    got = torch.ops.ocltune.conv2d_act(x.to(DEVICE), w.to(DEVICE), b.to(DEVICE), [2, 1], [1, 1], [1, 1], 1, activation)
    assert_close(got, expected, scale=3)
    with pytest.raises(RuntimeError, match="unknown activation 'tanh'"):
        torch.ops.ocltune.conv2d_act(x.to(DEVICE), w.to(DEVICE), None, [1, 1], [0, 0], [1, 1], 1, "tanh")


class EvalNet(nn.Module):
    """What inference graphs hold: conv, batch norm and an activation, three times over."""

    def __init__(self):
        super().__init__()
        self.c1, self.n1 = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.c2, self.n2 = nn.Conv2d(8, 8, 3, groups=2, bias=False), nn.BatchNorm2d(8)
        self.c3 = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        y = F.relu(self.n1(self.c1(x)))
        y = F.relu6(self.n2(self.c2(y)))
        return torch.sigmoid(self.c3(y)) + F.gelu(self.c3(y))  # two calls of c3: two convolutions, each fused


def test_inference_folds_batch_norms_and_fuses_activations_into_convolutions(monkeypatch):
    from ocltune_torch import compiler

    monkeypatch.setattr(compiler, "CONV_EPILOGUES", True)
    torch.manual_seed(0)
    model = EvalNet()
    for norm in (model.n1, model.n2):  # statistics far from the identity, so that a wrong fold shows
        norm.running_mean.uniform_(-1, 1)
        norm.running_var.uniform_(0.25, 4)
        norm.weight.data.uniform_(0.5, 1.5)
        norm.bias.data.uniform_(-1, 1)
    model.eval()
    x = rand(2, 3, 10, 9)
    passes = recorded_passes(monkeypatch)
    with torch.no_grad():
        expected = model(x)
        model.to(DEVICE)
        eager, compiled, eager_elementwise, compiled_elementwise = eager_and_compiled(model, x.to(DEVICE))
    assert len(passes) == 1 and passes[0]["batch_norms_folded"] == 2 and passes[0]["conv_epilogues"] == 4, passes
    assert_close(eager, expected)
    assert_close(compiled, expected, rtol=1e-4, atol=1e-5)
    # relu, relu6, sigmoid, gelu and the add eagerly; the activations in the convolutions compiled (the
    # batch norms: one pass over the activations eagerly, one over the weights compiled).
    assert eager_elementwise == 5 and compiled_elementwise == 1, (eager_elementwise, compiled_elementwise)


def test_a_batch_norm_stays_where_its_weights_outweigh_the_activations(monkeypatch):
    """The fold reads and writes the convolution's weight at every call: over a 2x2 output of 64
    channels (512 values) a 3x3 convolution's 36864 weights are not worth it; the batch norm stays, and
    so does the activation after it."""
    from ocltune_torch import compiler

    monkeypatch.setattr(compiler, "CONV_EPILOGUES", True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
    model[1].running_mean.uniform_(-1, 1)
    model[1].running_var.uniform_(0.25, 4)
    model.eval()
    x = rand(2, 64, 2, 2)
    passes = recorded_passes(monkeypatch)
    with torch.no_grad():
        expected = model(x)
        compiled = torch.compile(model.to(DEVICE), backend="ocltune")(x.to(DEVICE))
    assert passes[0]["batch_norms_folded"] == 0 and passes[0]["conv_epilogues"] == 0, passes
    assert_close(compiled, expected, rtol=1e-4, atol=1e-5)


def test_training_graphs_fuse_conv_epilogues_and_keep_their_gradients(monkeypatch):
    from ocltune_torch import compiler

    monkeypatch.setattr(compiler, "CONV_EPILOGUES", True)
    torch.manual_seed(0)
    reference = nn.Sequential(nn.Conv2d(3, 6, 3), nn.ReLU(), nn.Conv2d(6, 4, 1), nn.Sigmoid())
    model = nn.Sequential(nn.Conv2d(3, 6, 3), nn.ReLU(), nn.Conv2d(6, 4, 1), nn.Sigmoid())
    model.load_state_dict(reference.state_dict())
    model.to(DEVICE)
    passes = recorded_passes(monkeypatch)
    x = rand(2, 3, 8, 7)
    expected = reference(x)
    expected.square().mean().backward()
    out = torch.compile(model, backend="ocltune")(x.to(DEVICE))
    out.square().mean().backward()
    assert passes[0]["conv_epilogues"] == 2  # the forward graph: both convolutions with their activation
    assert_close(out, expected, rtol=1e-4, atol=1e-5)
    for p, q in zip(reference.parameters(), model.parameters()):
        assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-5)


class Head(nn.Module):
    """Linear layers followed by relu (on a 3-D input: a view between the addmm and the activation),
    relu6, sigmoid (not fused: too costly in the GEMM's epilogue) and one without an activation."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3, self.fc4 = nn.Linear(12, 20), nn.Linear(20, 9), nn.Linear(9, 7), nn.Linear(7, 5)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = F.relu6(self.fc2(h)) * 0.5
        return self.fc4(torch.sigmoid(self.fc3(h)).relu())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_inference_fuses_activations_into_linear_layers(monkeypatch, strict, dtype):
    torch.manual_seed(0)
    model = Head().to(dtype).eval()
    x = rand(2, 3, 12, dtype=dtype)
    passes = recorded_passes(monkeypatch)
    with torch.no_grad():
        expected = model.double()(x.double()).to(dtype)
        model.to(dtype).to(DEVICE)
        eager, compiled, eager_elementwise, compiled_elementwise = eager_and_compiled(model, x.to(DEVICE))
    assert passes[0]["linear_epilogues"] == 2, passes  # relu (through the view), relu6
    tolerance = dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=3e-2, atol=3e-2)
    assert_close(eager, expected, **tolerance)
    assert_close(compiled, expected, **tolerance)
    # relu, relu6, the scale, sigmoid and relu eagerly; the scale and sigmoid-relu (a chain) compiled.
    assert eager_elementwise == 5 and compiled_elementwise <= 2, (eager_elementwise, compiled_elementwise)


def test_training_graphs_fuse_linear_relus_and_keep_their_gradients(monkeypatch, strict):
    """relu's backward reads its output, so the fused addmm_act's result serves it; gelu's reads its
    input (the addmm), which then has a second user and stays unfused."""

    torch.manual_seed(0)
    reference = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8), nn.GELU(), nn.Linear(8, 3))
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8), nn.GELU(), nn.Linear(8, 3))
    model.load_state_dict(reference.state_dict())
    model.to(DEVICE)
    passes = recorded_passes(monkeypatch)
    compiled_training_matches(reference, model, rand(6, 10))
    assert passes[0]["linear_epilogues"] == 1, passes


def test_addmm_act_without_a_bias_row_computes_the_ops_one_by_one(strict):
    a, b, full = rand(5, 7), rand(7, 4, seed=1), rand(5, 4, seed=2)
    for name, act in (("relu", torch.relu), ("gelu", F.gelu), ("sigmoid", torch.sigmoid)):
        got = torch.ops.ocltune.addmm_act(full.to(DEVICE), a.to(DEVICE), b.to(DEVICE), name)
        assert_close(got, act(torch.addmm(full, a, b)), rtol=1e-4, atol=1e-5)
    with pytest.raises(RuntimeError, match="unknown activation 'swish'"):
        torch.ops.ocltune.addmm_act(full.to(DEVICE), a.to(DEVICE), b.to(DEVICE), "swish")


def test_the_default_backend_says_to_use_ocltune():
    model = nn.Sequential(nn.Linear(6, 6), nn.ReLU()).to(DEVICE)
    with pytest.raises(Exception, match='backend="ocltune"'):
        torch.compile(model)(rand(3, 6).to(DEVICE))


class DynamicNet(nn.Module):
    """A convolution, batch norm and relu, a chain of elementwise ops, and a head over pooled features."""

    def __init__(self):
        super().__init__()
        self.conv, self.norm, self.fc = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.Linear(8, 5)

    def forward(self, x):
        y = F.relu(self.norm(self.conv(x)))
        y = ((y * 0.5 + 1).sigmoid() - 0.25) * y
        return torch.tanh(self.fc(y.mean((2, 3)))) * 2 + 1


def test_dynamic_shapes_compile_once_fuse_and_match_eager(monkeypatch):
    """dynamic=True: one graph of symbolic sizes serves every batch and image size, with its chains fused
    (training) and its batch norm folded and relu fused (inference)."""
    from ocltune_torch import compiler

    monkeypatch.setattr(compiler, "CONV_EPILOGUES", True)
    passes = recorded_passes(monkeypatch)
    torch.manual_seed(0)
    reference, model = DynamicNet(), DynamicNet()
    model.load_state_dict(reference.state_dict())
    model.to(DEVICE)
    compiled = torch.compile(model, backend="ocltune", dynamic=True)
    for shape in [(2, 3, 10, 7), (4, 3, 9, 13), (5, 3, 6, 11)]:  # no two sizes equal (duck sizing)
        x = rand(*shape)
        expected = reference(x)
        expected.square().mean().backward()
        out = compiled(x.to(DEVICE))
        out.square().mean().backward()
        assert_close(out, expected, rtol=1e-4, atol=1e-5)
        for p, q in zip(reference.parameters(), model.parameters()):
            assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-5), shape
            p.grad, q.grad = None, None
    assert len(passes) == 2, passes  # one forward and one backward graph for the three shapes
    assert all(p["elementwise_chains"] >= 1 for p in passes), passes
    reference.eval()
    model.eval()
    with torch.no_grad():
        for shape in [(2, 3, 10, 7), (6, 3, 8, 5)]:
            x = rand(*shape, seed=1)
            assert_close(compiled(x.to(DEVICE)), reference(x), rtol=1e-4, atol=1e-5)
    assert len(passes) == 3 and passes[2]["batch_norms_folded"] == 1 and passes[2]["conv_epilogues"] == 1, passes


@pytest.mark.parametrize("shape,kernels", [((7, 5, 9), 4), ((1, 3, 70), 3)], ids=["rows", "leading_one"])
def test_a_chain_larger_than_one_kernel_runs_in_slices(monkeypatch, shape, kernels):
    """A fused chain of symbolic sizes may meet more elements than the family indexes in one kernel: it
    runs in slices along the first dimension (the limit lowered here, as 2^30 elements cannot be tested)."""
    monkeypatch.setenv("OCLTUNE_TORCH_MAX_CHAIN_ELEMENTS", "100")
    x, b, c = rand(*shape), rand(shape[1], 1, seed=1), rand(shape[2], seed=2)
    ops, scalars = ["add", "mul", "sigmoid", "sub"], [0.0, 0.0, 0.0, 0.5]
    ocltune_torch.reset_dispatch_stats()
    got = torch.ops.ocltune.elementwise_chain(x.to(DEVICE), ops, [b.to(DEVICE), c.to(DEVICE), None, None], scalars,
                                              [0, 0, 0, 0])
    assert elementwise_calls() == kernels
    assert_close(got, ((x + b) * c).sigmoid() - 0.5)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
def test_transformer_layers_train_as_in_eager(norm_first):
    """A transformer encoder layer (SDPA, layer norms, GEMMs, gelu): its compiled graphs view SDPA's output
    as the meta function lays it out, so ocl's must match (it did not: "view size is not compatible")."""
    torch.manual_seed(0)
    make = lambda: nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation="gelu", batch_first=True,  # noqa: E731
                                              norm_first=norm_first)
    reference, model = make(), make()
    model.load_state_dict(reference.state_dict())
    model.to(DEVICE)
    compiled = torch.compile(model, backend="ocltune")
    for step in range(2):
        x = rand(3, 11, 32, seed=step)
        expected = reference(x)
        expected.square().mean().backward()
        out = compiled(x.to(DEVICE))
        out.square().mean().backward()
        assert_close(out, expected, rtol=1e-4, atol=1e-5)
        for (name, p), q in zip(reference.named_parameters(), model.parameters()):
            assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-5), (step, name)
            p.grad, q.grad = None, None


def reduce_calls():
    """Reduce-family calls on the test device since the last reset."""
    device = ocltune_torch.dispatch_stats()["devices"].get(DEVICE.index, {})
    return sum(device.get("families", {}).get("reduce", {}).values())


PROLOGUE_CASES = {
    "chain_mean_rows": (lambda x, y: (x - y).relu().mul(0.5).mean(dim=1), (7, 33)),
    "one_op_sum_all": (lambda x, y: torch.sigmoid(x).sum(), (5, 3, 9)),
    "amax_two_runs": (lambda x, y: (x * y + 1).amax(dim=(0, 2), keepdim=True), (4, 6, 5)),
    "gelu_sum_columns": (lambda x, y: F.gelu(x + y).sum(dim=0), (41, 6)),
    "reversed_amin": (lambda x, y: (y - x.relu()).amin(dim=-1), (3, 70)),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("case", PROLOGUE_CASES, ids=list(PROLOGUE_CASES))
def test_reductions_read_their_elementwise_chain_in_one_kernel(monkeypatch, strict, case, dtype):
    """sum, mean, amax and amin of a chain (or of one op) become ocltune::reduce_prologue: no elementwise
    kernel at all, one reduction, the result of eager to the dtype's tolerance."""

    fn, shape = PROLOGUE_CASES[case]
    passes = recorded_passes(monkeypatch)
    x, y = rand(*shape, dtype=dtype), rand(*shape, dtype=dtype, seed=1)
    expected = fn(x.double(), y.double()).to(dtype)
    ocltune_torch.reset_dispatch_stats()
    eager = fn(x.to(DEVICE), y.to(DEVICE))
    eager_elementwise = elementwise_calls()
    compiled_fn = torch.compile(fn, backend="ocltune")
    compiled_fn(x.to(DEVICE), y.to(DEVICE))
    ocltune_torch.reset_dispatch_stats()
    compiled = compiled_fn(x.to(DEVICE), y.to(DEVICE))
    assert passes[0]["reduction_prologues"] == 1, passes
    assert eager_elementwise >= 1 and elementwise_calls() == 0 and reduce_calls() == 1, (
        eager_elementwise, elementwise_calls(), reduce_calls())
    tolerance = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-2, atol=1e-2)
    assert_close(eager, expected, **tolerance)
    assert_close(compiled, expected, **tolerance)


def test_a_chain_that_broadcasts_or_has_other_users_is_not_read_by_the_reduction(monkeypatch, strict):
    """The family reads a prologue's operands at the input's index: a broadcast operand (a bias row)
    keeps the chain's own kernel, as does a chain whose result is also returned."""

    passes = recorded_passes(monkeypatch)

    def broadcast(x, b):
        return (x + b).relu().sum(dim=1)

    def returned(x, b):
        h = (x * b).relu()
        return h, h.mean()

    x, b = rand(6, 10), rand(10, seed=1)
    assert_close(torch.compile(broadcast, backend="ocltune")(x.to(DEVICE), b.to(DEVICE)), broadcast(x, b),
                 rtol=1e-5, atol=1e-5)
    for got, want in zip(torch.compile(returned, backend="ocltune")(x.to(DEVICE), b.to(DEVICE)), returned(x, b)):
        assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert [p["reduction_prologues"] for p in passes] == [0, 0], passes


def test_reduce_prologue_takes_any_layout_and_refuses_what_it_cannot_compute(strict):
    """Called directly: strided tensors are packed, a tensor wider than the family's 4 merged dims
    computes the chain first, reducing only dims of size 1 returns the chain; bad arguments raise."""
    op = torch.ops.ocltune.reduce_prologue
    x, y = rand(9, 12), rand(12, 9, seed=1)
    got = op(x.to(DEVICE).t(), ["sub", "abs"], [y.to(DEVICE), None], [0.0, 0.0], [1, 0], "sum", [0], False)
    assert_close(got, (y - x.t()).abs().sum(0), rtol=1e-5, atol=1e-5)
    wide, other = rand(2, 3, 2, 3, 2), rand(2, 3, 2, 3, 2, seed=2)
    got = op(wide.to(DEVICE), ["mul"], [other.to(DEVICE)], [0.0], [0], "mean", [0, 2, 4], True)
    assert_close(got, (wide * other).mean((0, 2, 4), keepdim=True), rtol=1e-5, atol=1e-5)
    ones = rand(4, 1, 5)
    got = op(ones.to(DEVICE), ["relu"], [None], [0.0], [0], "amax", [1], False)
    assert_close(got, ones.relu().amax(1))
    with pytest.raises(RuntimeError, match="input's dtype and sizes"):
        op(x.to(DEVICE), ["add"], [rand(12).to(DEVICE)], [0.0], [0], "sum", None, False)
    with pytest.raises(RuntimeError, match="kind 'prod'"):
        op(x.to(DEVICE), ["relu"], [None], [0.0], [0], "prod", None, False)
    with pytest.raises(RuntimeError, match="unknown prologue op 'cube'"):
        op(x.to(DEVICE), ["cube"], [None], [0.0], [0], "sum", None, False)
    got = op(torch.empty(0, 3, device=DEVICE), ["relu"], [None], [0.0], [0], "sum", [0], False)
    assert_close(got, torch.zeros(3))


class PostNorm(nn.Module):
    """A post-norm residual block, as BERT's layers end: layer_norm(x + f(x))."""

    def __init__(self, width=48):
        super().__init__()
        self.fc, self.norm = nn.Linear(width, width), nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(x + torch.tanh(self.fc(x)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_inference_layer_norms_read_the_residual_sum(monkeypatch, strict, dtype):
    """layer_norm(x + f(x)) in an inference graph becomes ocltune::layer_norm_prologue: the sum is read
    in the norm's kernel, never stored (tanh and the add stay one chain kernel... or none)."""

    torch.manual_seed(0)
    model = PostNorm().to(dtype).eval()
    with torch.no_grad():
        model.norm.weight.uniform_(0.5, 1.5)
        model.norm.bias.uniform_(-1, 1)
    x = rand(3, 7, 48, dtype=dtype)
    passes = recorded_passes(monkeypatch)
    with torch.no_grad():
        expected = model.double()(x.double()).to(dtype)
        model.to(dtype).to(DEVICE)
        eager, compiled, eager_elementwise, compiled_elementwise = eager_and_compiled(model, x.to(DEVICE))
    assert passes[0]["layer_norm_prologues"] == 1, passes
    tolerance = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=3e-2, atol=3e-2)
    assert_close(eager, expected, **tolerance)
    assert_close(compiled, expected, **tolerance)
    # tanh and the add eagerly; the chain tanh -> add read by the norm compiled.
    assert eager_elementwise == 2 and compiled_elementwise == 0, (eager_elementwise, compiled_elementwise)


def test_training_layer_norms_keep_their_saved_input(monkeypatch, strict):
    """In a training graph the norm's input is saved for its backward: no prologue, gradients as eager."""

    torch.manual_seed(0)
    reference = PostNorm()
    model = PostNorm()
    model.load_state_dict(reference.state_dict())
    model.to(DEVICE)
    passes = recorded_passes(monkeypatch)
    compiled_training_matches(reference, model, rand(4, 48))
    assert passes[0]["layer_norm_prologues"] == 0, passes


def test_layer_norm_prologue_matches_native_layer_norm_of_the_chain(strict):
    """Called directly: without weight and bias, a strided input, a normalized shape of two dims, and a
    16-bit input with a far-off mean (the kernel's shift) all give native_layer_norm of the chain."""
    op = torch.ops.ocltune.layer_norm_prologue
    x, r = rand(5, 3, 24), rand(5, 3, 24, seed=1)
    y, mean, rstd = op(x.to(DEVICE), ["add", "mul"], [r.to(DEVICE), None], [0.0, 2.0], [0, 0], [24], None, None, 1e-5)
    want = torch.native_layer_norm((x + r) * 2, [24], None, None, 1e-5)
    assert_close(y, want[0], rtol=1e-5, atol=1e-5)
    assert_close(mean, want[1], rtol=1e-5, atol=1e-5)
    assert_close(rstd, want[2], rtol=1e-5, atol=1e-5)
    w, b = rand(3, 24, seed=2), rand(3, 24, seed=3)
    xt = rand(24, 3, 5, seed=4)
    y, _, _ = op(xt.to(DEVICE).permute(2, 1, 0), ["sub"], [r.to(DEVICE)], [0.0], [1], [3, 24], w.to(DEVICE),
                 b.to(DEVICE), 1e-5)
    assert_close(y, F.layer_norm(r - xt.permute(2, 1, 0), [3, 24], w, b), rtol=1e-5, atol=1e-5)
    far = (rand(6, 64) + 100).to(torch.bfloat16)
    other = rand(6, 64, dtype=torch.bfloat16, seed=5)
    y, _, _ = op(far.to(DEVICE), ["add"], [other.to(DEVICE)], [0.0], [0], [64], None, None, 1e-5)
    assert_close(y, F.layer_norm((far.double() + other.double()), [64]).to(torch.bfloat16), rtol=3e-2, atol=3e-2)
    with pytest.raises(RuntimeError, match="input's dtype and sizes"):
        op(x.to(DEVICE), ["add"], [rand(24).to(DEVICE)], [0.0], [0], [24], None, None, 1e-5)
