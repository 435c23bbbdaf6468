"""The `_foreach_*` ops that run plain/kernels/plain_foreach.cl on many dense tensors a launch (_foreach_add_.List,
_foreach_add_.Scalar, _foreach_mul_.Scalar: torch.optim's default SGD; _foreach_lerp_, _foreach_addcmul_,
_foreach_addcdiv_, _foreach_div_, _foreach_sqrt: its Adam and AdamW), in strict mode, against the same
op on CPU copies: every dtype the kernels take, odd sizes, a 0-dim and an empty tensor, and lists that
mix tensors the kernels take with ones that go PyTorch's per-tensor way (transposed, int64, a partner
broadcast to its tensor, an aliased pair). Both computations round once from float, so they agree to a unit in
the last place (the CPU's scalar tail loop may not fuse the multiply-add its vector loop fuses)."""

import pytest
import torch

import ocltune_torch
from conftest import DEVICE, rand

MANTISSA = {torch.float32: 23, torch.float16: 10, torch.bfloat16: 7}
SHAPES = [(7, 13), (1031,), (), (0,), (3, 5, 4), (70001,)]


def assert_ulp(actual, expected, what):
    assert actual.device.type == "ocl" and actual.dtype == expected.dtype and actual.shape == expected.shape, what
    if expected.numel() == 0:
        return
    if not expected.is_floating_point():
        assert torch.equal(actual.cpu(), expected), what
        return
    e, a = expected.float(), actual.cpu().float()
    rtol = 2.0 ** -MANTISSA[expected.dtype]
    torch.testing.assert_close(a, e, rtol=rtol, atol=rtol * e.abs().max().item() + 1e-30, msg=lambda m: f"{what}: {m}")


def pairs(dtype, seed=0):
    cpu = [rand(*s, dtype=dtype, seed=seed + i) for i, s in enumerate(SHAPES)]
    return cpu, [t.to(DEVICE) for t in cpu]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("alpha", [1, -0.05, 0.1])
def test_add_list_follows_cpu(dtype, alpha, strict):
    self_cpu, self_ocl = pairs(dtype)
    other_cpu, other_ocl = pairs(dtype, seed=100)
    torch._foreach_add_(self_cpu, other_cpu, alpha=alpha)
    torch._foreach_add_(self_ocl, other_ocl, alpha=alpha)
    for i, (a, e) in enumerate(zip(self_ocl, self_cpu)):
        assert_ulp(a, e, f"tensor {i}")
    for i, (a, e) in enumerate(zip(other_ocl, other_cpu)):  # the partner is only read
        assert torch.equal(a.cpu(), e), f"other {i} changed"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("op", ["mul", "add"])
@pytest.mark.parametrize("scalar", [0.9, -3, True])
def test_scalar_ops_follow_cpu(dtype, op, scalar, strict):
    cpu, ocl = pairs(dtype)
    fn = torch._foreach_mul_ if op == "mul" else torch._foreach_add_
    fn(cpu, scalar)
    fn(ocl, scalar)
    for i, (a, e) in enumerate(zip(ocl, cpu)):
        assert_ulp(a, e, f"{op} tensor {i}")


def positive(cpu, ocl):
    """The same lists made positive (sqrt and division by them)."""
    return [t.abs() + 0.5 for t in cpu], [t.abs() + 0.5 for t in ocl]


# Division and sqrt: OpenCL allows 2.5 and 3 units in the last place in float; CPUs round correctly.
ADAM_ULPS = {torch.float32: 4, torch.float16: 1, torch.bfloat16: 1}


def assert_ulps(actual, expected, what, ulps):
    e, a = expected.float(), actual.cpu().float()
    if expected.numel() == 0:
        assert actual.shape == expected.shape, what
        return
    rtol = ulps * 2.0 ** -MANTISSA[expected.dtype]
    torch.testing.assert_close(a, e, rtol=rtol, atol=rtol * e.abs().max().item() + 1e-30, msg=lambda m: f"{what}: {m}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("op", ["lerp", "addcmul", "addcdiv", "addcdiv_list", "div_list", "sqrt"])
def test_adam_ops_follow_cpu(dtype, op, strict):
    self_cpu, self_ocl = pairs(dtype)
    a_cpu, a_ocl = pairs(dtype, seed=100)
    b_cpu, b_ocl = positive(*pairs(dtype, seed=200))
    scalars = [0.1 * (i + 1) for i in range(len(SHAPES))]
    for selfs, a, b in ((self_cpu, a_cpu, b_cpu), (self_ocl, a_ocl, b_ocl)):
        if op == "lerp":
            torch._foreach_lerp_(selfs, a, 0.1)
            torch._foreach_lerp_(selfs, a, 0.7)  # the other form of the lerp
        elif op == "addcmul":
            torch._foreach_addcmul_(selfs, a, b, 0.001)
        elif op == "addcdiv":
            torch._foreach_addcdiv_(selfs, a, b, -0.01)
        elif op == "addcdiv_list":
            torch._foreach_addcdiv_(selfs, a, b, scalars)
        elif op == "div_list":
            torch._foreach_div_(selfs, scalars)
    if op == "sqrt":
        got, want = torch._foreach_sqrt(b_ocl), torch._foreach_sqrt(b_cpu)
        assert all(g.data_ptr() != x.data_ptr() for g, x in zip(got, b_ocl) if x.numel()), "sqrt must not be in place"
    else:
        got, want = self_ocl, self_cpu
    for i, (g, w) in enumerate(zip(got, want)):
        assert_ulps(g, w, f"{op} tensor {i}", ADAM_ULPS[dtype])


def steps_follow_cpu(make, seed, rtol, steps=3):
    """The optimiser `make(params)` on CPU and on ocl over `steps` steps of the same gradients, the
    parameters compared after each."""
    params_cpu = [torch.nn.Parameter(rand(*s, seed=seed + i)) for i, s in enumerate([(8, 3), (17,), (2, 3, 5)])]
    params_ocl = [torch.nn.Parameter(p.detach().to(DEVICE)) for p in params_cpu]
    opt_cpu, opt_ocl = make(params_cpu), make(params_ocl)
    for step in range(steps):
        for i, (pc, po) in enumerate(zip(params_cpu, params_ocl)):
            g = rand(*pc.shape, seed=100 * step + i)
            pc.grad, po.grad = g.clone(), g.to(DEVICE)
        opt_cpu.step()
        opt_ocl.step()
        for i, (pc, po) in enumerate(zip(params_cpu, params_ocl)):
            torch.testing.assert_close(po.detach().cpu(), pc.detach(), rtol=rtol, atol=1e-6,
                                       msg=lambda m: f"step {step} param {i}: {m}")


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_foreach_follows_cpu(name, strict):
    """torch.optim's default (foreach) Adam and AdamW steps, as the encoder benchmark runs AdamW."""
    make = getattr(torch.optim, name)
    steps_follow_cpu(lambda ps: make(ps, lr=0.01, weight_decay=0.01, foreach=True), seed=20, rtol=1e-5)


def test_sqrt_of_a_transposed_tensor_takes_the_per_tensor_way(strict):
    x_cpu = rand(5, 7, seed=9).abs()
    x_ocl = x_cpu.t().contiguous().to(DEVICE).t()
    (got,), (want,) = torch._foreach_sqrt([x_ocl]), torch._foreach_sqrt([x_cpu])
    assert_ulps(got, want, "sqrt", 4)


def test_mixed_lists_take_the_per_tensor_way_where_needed(strict):
    """Transposed and int64 tensors, a partner broadcast to its tensor and an aliased pair, beside dense ones."""
    base = rand(9, 6, seed=1)
    self_cpu = [rand(5, 7, seed=2), rand(6, 9, seed=3).t(), torch.arange(10), rand(4, 4, seed=4), base]
    other_cpu = [rand(5, 7, seed=5), rand(9, 6, seed=6), torch.arange(10) * 3, rand(4, seed=7), base]
    self_ocl = [t.to(DEVICE) for t in self_cpu[:4]]
    self_ocl[1] = self_cpu[1].t().contiguous().to(DEVICE).t()  # transposed on the device too
    base_ocl = base.to(DEVICE)
    self_ocl.append(base_ocl)
    other_ocl = [t.to(DEVICE) for t in other_cpu[:4]] + [base_ocl]
    assert not self_ocl[1].is_contiguous()
    torch._foreach_add_(self_cpu, other_cpu, alpha=2)
    torch._foreach_add_(self_ocl, other_ocl, alpha=2)
    for i, (a, e) in enumerate(zip(self_ocl, self_cpu)):
        assert_ulp(a, e, f"tensor {i}")
    torch._foreach_mul_(self_cpu, 3)
    torch._foreach_mul_(self_ocl, 3)
    for i, (a, e) in enumerate(zip(self_ocl, self_cpu)):
        assert_ulp(a, e, f"mul tensor {i}")


def test_views_update_their_base(strict):
    """A dense view with an offset (a row of a matrix) is updated in place, the rest untouched."""
    m_cpu = rand(4, 33, seed=8)
    m_ocl = m_cpu.to(DEVICE)
    torch._foreach_mul_([m_cpu[2]], 0.5)
    torch._foreach_mul_([m_ocl[2]], 0.5)
    assert_ulp(m_ocl, m_cpu, "matrix")


def test_lists_of_unequal_length_raise():
    a = [torch.zeros(3, device=DEVICE)]
    with pytest.raises(RuntimeError, match="same length|must have the same"):
        torch._foreach_add_(a, a + a)


def test_sgd_foreach_follows_cpu(strict):
    """torch.optim.SGD's default (foreach) step with momentum, as the CNN benchmarks run it."""
    steps_follow_cpu(lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01, foreach=True), seed=10,
                     rtol=1e-6)


# One launch of plain_foreach.cl takes up to 16 tensors in up to 8 buffers, in chunks of 4096 (GPU) or
# 65536 (CPU) elements; the lists below cross each of those limits.


def launches(fn):
    """The plain kernel launches fn() makes."""
    before = ocltune_torch.dispatch_stats()["plain_launches"]
    fn()
    return ocltune_torch.dispatch_stats()["plain_launches"] - before


def test_one_launch_updates_many_tensors(strict):
    """16 small tensors of one buffer pool in one launch, 17 in two; an SGD step's three foreach ops
    over 16 parameters launch three kernels, not one per tensor and op."""
    selfs = [torch.ones(37 + i, device=DEVICE) for i in range(17)]
    others = [torch.ones(37 + i, device=DEVICE) for i in range(17)]
    assert launches(lambda: torch._foreach_add_(selfs[:16], others[:16], alpha=2)) == 1
    assert launches(lambda: torch._foreach_add_(selfs, others, alpha=2)) == 2
    assert launches(lambda: torch._foreach_mul_(selfs[:16], 0.5)) == 1
    assert all(torch.equal(t.cpu(), torch.full((t.numel(),), 2.5)) for t in selfs[:16])  # (1 + 2 + 2) / 2
    assert torch.equal(selfs[16].cpu(), torch.full((53,), 3.0))

BOUNDARY_SIZES = [1, 4095, 4096, 4097, 65535, 65537, 131073, 3, 0, 70001]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_many_tensors_of_many_buffers_follow_cpu(dtype, strict):
    """40 tensors of sizes around the chunk sizes, then 9 of over 10 MiB (a buffer each: 18 buffers in
    all), so that the tensors of one call go in several launches."""
    sizes = BOUNDARY_SIZES * 4 + [2_700_000 + i for i in range(9)]
    self_cpu = [rand(n, dtype=dtype, seed=i) for i, n in enumerate(sizes)]
    other_cpu = [rand(n, dtype=dtype, seed=500 + i) for i, n in enumerate(sizes)]
    self_ocl, other_ocl = [t.to(DEVICE) for t in self_cpu], [t.to(DEVICE) for t in other_cpu]
    torch._foreach_mul_(self_cpu, 0.9)
    torch._foreach_mul_(self_ocl, 0.9)
    torch._foreach_add_(self_cpu, other_cpu, alpha=-0.1)
    torch._foreach_add_(self_ocl, other_ocl, alpha=-0.1)
    for i, (a, e) in enumerate(zip(self_ocl, self_cpu)):
        assert_ulp(a, e, f"tensor {i} of {sizes[i]}")


def test_a_tensor_listed_twice_is_updated_twice(strict):
    """PyTorch's loop goes index by index: a tensor listed twice gets both updates, in order."""
    a_cpu, b_cpu = rand(5000, seed=1), rand(5000, seed=2)
    a_ocl, b_ocl = a_cpu.to(DEVICE), b_cpu.to(DEVICE)
    torch._foreach_add_([a_cpu, a_cpu], [b_cpu, a_cpu], alpha=0.5)
    # Two launches: the second index must see the first's update, so they cannot share one.
    assert launches(lambda: torch._foreach_add_([a_ocl, a_ocl], [b_ocl, a_ocl], alpha=0.5)) == 2
    assert_ulp(a_ocl, a_cpu, "a after a += b / 2, then a += a / 2")
    torch._foreach_mul_([a_cpu, b_cpu, a_cpu], 3)
    torch._foreach_mul_([a_ocl, b_ocl, a_ocl], 3)
    assert_ulp(a_ocl, a_cpu, "a times 9")
    assert_ulp(b_ocl, b_cpu, "b times 3")


def test_overlapping_views_keep_the_order_of_the_list(strict):
    """Views sharing elements across the list: each index reads what the ones before it wrote, as on the CPU."""
    x_cpu, y_cpu = rand(100, seed=3), rand(100, seed=4)
    x_ocl, y_ocl = x_cpu.to(DEVICE), y_cpu.to(DEVICE)
    for x, y in ((x_cpu, y_cpu), (x_ocl, y_ocl)):
        update = lambda: torch._foreach_add_([x[0:60], y[10:70], x[40:100]], [y[0:60], x[20:80], y[30:90]],  # noqa: E731
                                             alpha=2)
        if x.device.type == "cpu":
            update()
        else:  # index 1 reads what index 0 wrote, index 2 writes what index 1 read: three launches
            assert launches(update) == 3
    assert_ulp(x_ocl, x_cpu, "x")
    assert_ulp(y_ocl, y_cpu, "y")


def test_rows_of_one_matrix_and_mixed_types_follow_cpu(strict):
    """Disjoint rows of one matrix (one buffer, several offsets) among tensors of other float types."""
    m_cpu = rand(6, 4097, seed=5)
    m_ocl = m_cpu.to(DEVICE)
    extra_cpu = [rand(33, dtype=torch.float16, seed=6), rand(9, seed=7), rand(4100, dtype=torch.bfloat16, seed=8)]
    selfs_cpu = [m_cpu[0], extra_cpu[0], m_cpu[3], m_cpu[1], extra_cpu[1], extra_cpu[2], m_cpu[5]]
    selfs_ocl = [m_ocl[0], extra_cpu[0].to(DEVICE), m_ocl[3], m_ocl[1], extra_cpu[1].to(DEVICE),
                 extra_cpu[2].to(DEVICE), m_ocl[5]]
    torch._foreach_add_(selfs_cpu, 0.25)
    # float rows 0 and 3, half, float 3 and 1 and 9, bf16, float row 5: a launch per change of type
    assert launches(lambda: torch._foreach_add_(selfs_ocl, 0.25)) == 5
    for i, (a, e) in enumerate(zip(selfs_ocl, selfs_cpu)):
        assert_ulp(a, e, f"tensor {i}")
    assert_ulp(m_ocl, m_cpu, "the matrix, rows 2 and 4 untouched")
