"""The binary forms of op_forms.h on the elementwise generator (ops/elementwise.h): each op's functional,
in-place and out= forms come from one kernel, routed to the elementwise family (float dtypes) or to the
plain kernel (integers, bool, comparisons); every form runs on the device (strict mode) and matches the
CPU, into views with gaps, transposed and resized outputs."""

import pytest
import torch

from conftest import DEVICE, assert_close, rand

# (op, dtypes, whether it has an in-place form)
OPS = [
    ("add", [torch.float32, torch.float16, torch.int64, torch.int32], True),
    ("sub", [torch.float32, torch.bfloat16, torch.int64], True),
    ("mul", [torch.float32, torch.float16, torch.int32, torch.bool], True),
    ("maximum", [torch.float32, torch.int64], False),
    ("minimum", [torch.float16, torch.int32], False),
    ("eq", [torch.float32, torch.int64], True),
    ("lt", [torch.float16, torch.int32], True),
    ("ge", [torch.float32, torch.uint8], True),
    ("bitwise_and", [torch.int64, torch.bool], True),
    ("bitwise_xor", [torch.int32, torch.uint8], True),
]
CASES = [(name, dtype, in_place) for name, dtypes, in_place in OPS for dtype in dtypes]


def operand(dtype, *shape, seed=0):
    x = rand(*shape, seed=seed) * 4
    if dtype == torch.bool:
        return x > 0
    if not dtype.is_floating_point:
        x = x.round().abs() if dtype == torch.uint8 else x.round()
    return x.to(dtype)


@pytest.mark.parametrize("name,dtype,has_in_place", CASES, ids=[f"{n}-{d}" for n, d, _ in CASES])
def test_binary_forms_match_cpu(name, dtype, has_in_place, strict):
    fn = getattr(torch, name)
    a, b = operand(dtype, 5, 7), operand(dtype, 7, seed=1)  # b broadcasts along the rows
    b[2] = a[1, 2]  # some equal elements for the comparisons
    expected = fn(a, b)
    x, y = a.to(DEVICE), b.to(DEVICE)
    assert_close(fn(x, y), expected)
    out = torch.empty(0, device=DEVICE, dtype=expected.dtype)
    assert fn(x, y, out=out) is out  # resized
    assert_close(out, expected)
    base = torch.zeros(5, 14, device=DEVICE, dtype=expected.dtype)
    fn(x, y, out=base[:, ::2])  # a view with gaps; the other columns untouched
    assert_close(base[:, ::2], expected)
    assert (base[:, 1::2].cpu() == 0).all()
    transposed = torch.empty(7, 5, device=DEVICE, dtype=expected.dtype).t()
    fn(x, y, out=transposed)
    assert_close(transposed, expected)
    if has_in_place:
        gaps = torch.zeros(5, 14, device=DEVICE, dtype=dtype)
        gaps[:, ::2] = x
        view = gaps[:, ::2]
        assert getattr(view, name + "_")(y) is view
        expected_in_place = a.clone()
        getattr(expected_in_place, name + "_")(b)
        assert_close(view, expected_in_place)
        assert (gaps[:, 1::2].cpu() == 0).all()


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_comparison_scalar_forms(name, dtype, strict):
    a = operand(dtype, 4, 6)
    number = a[1, 1].item()
    x = a.to(DEVICE)
    assert_close(getattr(torch, name)(x, number), getattr(torch, name)(a, number))
    out = torch.empty(4, 6, device=DEVICE, dtype=torch.bool)
    getattr(torch, name)(x, number, out=out)
    assert_close(out, getattr(torch, name)(a, number))
    y, expected = x.clone(), a.clone()
    getattr(y, name + "_")(number)
    getattr(expected, name + "_")(number)
    assert_close(y, expected)  # in place: the comparison's 0 and 1 in self's dtype


def test_numbers_alpha_and_mixed_dtypes(strict):
    a = operand(torch.int64, 3, 5)
    x = a.to(DEVICE)
    assert_close(torch.add(x, 3, alpha=2), torch.add(a, 3, alpha=2))
    assert_close(torch.sub(x, x[0], alpha=-3), torch.sub(a, a[0], alpha=-3))
    assert_close(2 - x, 2 - a)
    h = rand(3, 5).half()
    f = rand(5, seed=2)
    z = h.to(DEVICE)
    z.add_(f.to(DEVICE), alpha=0.5)  # half += float: computed in float, cast into self
    assert_close(z, h.clone().add_(f, alpha=0.5))
    out = torch.empty(3, 5, device=DEVICE, dtype=torch.float32)
    torch.mul(x, 2, out=out)  # an int64 result cast into a float32 out
    assert_close(out, torch.mul(a, 2, out=torch.empty(3, 5)))


def test_output_errors_match_cpu():
    a = rand(3, 4)
    i = operand(torch.int64, 3, 4)
    for cpu_args, run in [
        ((i, a), lambda p, q: p.add_(q)),  # float result into an int64 self
        ((a, rand(2, 3, 4)), lambda p, q: p.mul_(q)),  # broadcast shape larger than self
        ((a, a), lambda p, q: torch.add(p, q, out=torch.empty(3, 4, dtype=torch.int64, device=p.device))),
        ((rand(2, 3, 4), a), lambda p, q: q.expand(2, 3, 4).add_(p)),  # internal overlap
    ]:
        with pytest.raises(RuntimeError) as cpu_error:
            run(*cpu_args)
        with pytest.raises(RuntimeError) as ocl_error:
            run(*(t.to(DEVICE) for t in cpu_args))
        assert str(cpu_error.value).split("\n")[0][:30] in str(ocl_error.value)


def test_sub_with_a_bool_operand_raises_as_the_cpu():
    # PyTorch's sub_check refuses a bool on either side, not only a bool result: ocl used to compute
    # x - True as x - 1 (and so _foreach_sub(tensors, True)). Found by test_properties_registered.py.
    f, i, b = rand(3, 4), operand(torch.int64, 3, 4), operand(torch.bool, 3, 4)
    for run in [
        lambda p, q, r: p - True,
        lambda p, q, r: p - r,
        lambda p, q, r: q - r,
        lambda p, q, r: r - r,
        lambda p, q, r: torch.rsub(r, p),
        lambda p, q, r: torch._foreach_sub([p, p], True),
        lambda p, q, r: torch._foreach_sub_([p], True),
    ]:
        with pytest.raises(RuntimeError) as cpu_error:
            run(f.clone(), i, b)
        with pytest.raises(RuntimeError) as ocl_error:
            run(f.to(DEVICE), i.to(DEVICE), b.to(DEVICE))
        assert str(cpu_error.value).split("\n")[0] == str(ocl_error.value).split("\n")[0]
    assert torch.equal((f.to(DEVICE) - 1).cpu(), f - 1)  # the device still works
