"""New element-wise results are laid out as PyTorch's TensorIterator lays them out (the meta functions
torch.compile traces with run it, and CPU and CUDA return it): a compiled graph views results as the meta
functions say, so a result laid out otherwise breaks a later view. Found in convnext_tiny: layer_scale
[C, 1, 1] times a permuted [N, H, W, C] activation came out row-major on ocl, channels-last on the CPU.
The CPU's result on the same views is the reference for both the strides and the values."""

import pytest
import torch

from conftest import DEVICE, assert_close, rand

SIZES = (2, 6, 5, 3)

# name -> (the base tensor's sizes from the view's sizes, the view of the base): each applied to a CPU
# base and to its device copy gives the same strides on both.
LAYOUTS = {
    "contiguous": (lambda s: s, lambda t: t),
    "transposed": (lambda s: s[::-1], lambda t: t.permute(*reversed(range(t.dim())))),
    "nhwc_permuted": (lambda s: (s[0], s[2], s[3], s[1]), lambda t: t.permute(0, 3, 1, 2)),
    "sliced": (lambda s: (*s[:-1], 2 * s[-1]), lambda t: t[..., ::2]),
    "sliced_transposed": (lambda s: (*s[:-2], s[-1], 2 * s[-2]), lambda t: t.transpose(-1, -2)[..., ::2, :]),
    "expanded": (lambda s: (*s[:-1], 1), lambda t: t.expand(*t.shape[:-1], SIZES[-1])),
}

UNARY = {"relu": torch.relu, "exp": torch.exp, "neg": torch.neg, "sigmoid": torch.sigmoid, "floor": torch.floor,
         "abs": torch.abs, "add_number": lambda x: x + 2, "mul_scalar": lambda x: torch.mul(x, 0.5),
         "gt_number": lambda x: x > 0.1}
BINARY = {"add": torch.add, "mul": torch.mul, "sub_alpha": lambda a, b: torch.sub(a, b, alpha=2), "div": torch.div,
          "maximum": torch.maximum, "eq": torch.eq}
# Second operands: the same layout, a contiguous one, a per-channel scale (convnext's layer_scale), a row,
# a 0-dim CPU number.
OTHERS = ["same", "contiguous", "per_channel", "row", "number"]


def pair(layout, seed=0):
    """The layout's view of a CPU base and of the base's device copy."""
    base_sizes, view = LAYOUTS[layout]
    base = rand(*base_sizes(SIZES), seed=seed)
    return view(base), view(base.to(DEVICE))


def other_pair(kind, layout):
    if kind == "same":
        return pair(layout, seed=1)
    if kind == "contiguous":
        return pair("contiguous", seed=1)
    if kind == "number":
        number = torch.tensor(1.5)
        return number, number
    t = rand(SIZES[1], 1, 1, seed=2) if kind == "per_channel" else rand(SIZES[-1], seed=3)
    return t, t.to(DEVICE)


def check(op, cpu_args, ocl_args):
    expected, got = op(*cpu_args), op(*ocl_args)
    assert got.device == DEVICE and got.dtype == expected.dtype
    assert got.stride() == expected.stride(), (got.stride(), expected.stride())
    assert_close(got, expected)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_results(name, layout, strict):
    x_cpu, x_ocl = pair(layout)
    check(UNARY[name], [x_cpu], [x_ocl])


@pytest.mark.parametrize("other", OTHERS)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_results_either_way_round(name, layout, other, strict):
    a_cpu, a_ocl = pair(layout)
    b_cpu, b_ocl = other_pair(other, layout)
    op = BINARY[name]
    check(op, [a_cpu, b_cpu], [a_ocl, b_ocl])
    if other != "number" or name not in ("maximum",):  # maximum takes no number first
        check(op, [b_cpu, a_cpu], [b_ocl, a_ocl])


def test_convnext_layer_scale_keeps_channels_last():
    """The case that broke: layer_scale * block(x), the block ending in a permute to [N, C, H, W]."""
    scale = rand(96, 1, 1)
    x = rand(2, 8, 8, 96, seed=1)
    got = scale.to(DEVICE) * x.to(DEVICE).permute(0, 3, 1, 2)
    assert got.is_contiguous(memory_format=torch.channels_last)
    assert_close(got, scale * x.permute(0, 3, 1, 2))
