"""torch.use_deterministic_algorithms(True) on ocl (issue 41): the ops that accumulate floats through
atomics (index_add, scatter_add, scatter_reduce's sum/prod/mean, index_put_ with accumulate, embedding
backward, torchvision's roi_align backward) raise as CUDA's ops without a deterministic kernel do, or warn with warn_only=True and still
compute the right result; integer accumulation and amax/amin, whose result does not depend on the
order, run."""

import pytest
import torch

from conftest import DEVICE, assert_close


@pytest.fixture
def deterministic():
    before, warn_only = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True)
    yield
    torch.use_deterministic_algorithms(before, warn_only=warn_only)


def index_add(x):
    return x.index_add(0, torch.tensor([0, 2, 0], device=x.device), torch.ones(3, 4, dtype=x.dtype, device=x.device))


def scatter_add(x):
    return x.scatter_add(0, torch.tensor([[0, 1, 0, 1]], device=x.device), torch.ones(1, 4, dtype=x.dtype, device=x.device))


def scatter_mean(x):
    return x.scatter_reduce(0, torch.tensor([[0, 1, 0, 1]], device=x.device),
                            torch.ones(1, 4, dtype=x.dtype, device=x.device), "mean")


def index_put_accumulate(x):
    return x.index_put((torch.tensor([1, 1], device=x.device),), torch.ones(2, 4, dtype=x.dtype, device=x.device),
                       accumulate=True)


def embedding_backward(x):
    w = x.clone().requires_grad_()
    torch.nn.functional.embedding(torch.tensor([0, 2, 0], device=x.device), w).sum().backward()
    return w.grad


def roi_align_backward(x):
    torchvision = pytest.importorskip("torchvision")
    x = x.view(1, 1, 3, 4).clone().requires_grad_()
    rois = torch.tensor([[0.0, 0, 0, 2, 2], [0, 1, 0, 3, 2]], device=x.device)  # overlapping
    torchvision.ops.roi_align(x, rois, (2, 2), sampling_ratio=2).sum().backward()
    return x.grad.view(3, 4)


FLOAT_ATOMICS = [index_add, scatter_add, scatter_mean, index_put_accumulate, embedding_backward, roi_align_backward]


@pytest.mark.usefixtures("deterministic")
@pytest.mark.parametrize("op", FLOAT_ATOMICS, ids=lambda f: f.__name__)
def test_float_atomics_raise(op):
    with pytest.raises(RuntimeError, match="does not have a deterministic implementation"):
        op(torch.zeros(3, 4, device=DEVICE))


@pytest.mark.parametrize("op", FLOAT_ATOMICS, ids=lambda f: f.__name__)
def test_float_atomics_warn_only_and_compute(op):
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with pytest.warns(UserWarning, match="does not have a deterministic implementation"):
            actual = op(torch.zeros(3, 4, device=DEVICE))
    finally:
        torch.use_deterministic_algorithms(before)
    assert_close(actual, op(torch.zeros(3, 4)))


@pytest.mark.usefixtures("deterministic")
@pytest.mark.parametrize("op", [index_add, scatter_add, index_put_accumulate], ids=lambda f: f.__name__)
def test_integer_accumulation_runs(op):
    assert_close(op(torch.zeros(3, 4, dtype=torch.long, device=DEVICE)), op(torch.zeros(3, 4, dtype=torch.long)))


@pytest.mark.usefixtures("deterministic")
@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_order_free_float_reductions_run(reduce):
    index = torch.tensor([[0, 1, 0, 1], [1, 0, 1, 0]])
    src = torch.randn(2, 4)
    expected = torch.zeros(3, 4).scatter_reduce(0, index, src, reduce)
    assert_close(torch.zeros(3, 4, device=DEVICE).scatter_reduce(0, index.to(DEVICE), src.to(DEVICE), reduce), expected)
