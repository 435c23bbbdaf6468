"""Pinned host memory: pin_memory(), is_pinned(), non_blocking copies from it, and DataLoader(pin_memory=True)."""

import warnings

import pytest
import torch

from conftest import DEVICE, assert_close, rand


def test_pin_memory_gives_pinned_cpu_memory_with_the_same_values():
    x = rand(17, 33)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.device.type == "cpu"
    assert p.data_ptr() != x.data_ptr()
    assert torch.equal(p, x)
    assert p.pin_memory().data_ptr() == p.data_ptr()  # already pinned: the same tensor
    assert p[3:].is_pinned(), "a view into pinned memory is pinned"
    assert not x.clone().is_pinned()
    assert torch.empty(0).pin_memory().numel() == 0
    for dtype in [torch.float16, torch.int64, torch.bool, torch.uint8]:
        q = (x * 3).to(dtype).pin_memory()
        assert q.is_pinned() and torch.equal(q, (x * 3).to(dtype))


@pytest.mark.parametrize("shape", [(1,), (97,), (31, 7), (3, 5, 11)])
def test_non_blocking_copies_from_pinned_memory_are_correct(shape):
    x = rand(*shape)
    p = x.pin_memory()
    y = p.to(DEVICE, non_blocking=True)
    z = (y * 2).sum()  # ordered after the copy on the device's queue
    assert_close(y, x)
    assert_close(z, (x * 2).sum(), scale=10)
    # Into an existing tensor, a transposed source (not dst's layout: the blocking path), and back.
    dst = torch.empty(shape, device=DEVICE)
    dst.copy_(p, non_blocking=True)
    assert_close(dst, x)
    if len(shape) == 2:
        t = p.t()
        assert_close(t.to(DEVICE, non_blocking=True), x.t())
    back = torch.empty(shape).pin_memory()
    back.copy_(y * 3, non_blocking=True)
    torch.ocl.synchronize(DEVICE)
    assert torch.allclose(back, x * 3)


def test_the_source_of_a_copy_in_flight_is_never_overwritten():
    # Each pinned source is freed right after its non_blocking copy and its size is asked for again at
    # once: a block is reused only after the copies recorded on it have read it.
    n = 1 << 18
    expected, copies = [], []
    for i in range(12):
        src = torch.full((n,), float(i)).pin_memory()
        copies.append(src.to(DEVICE, non_blocking=True))
        expected.append(float(i))
        del src
        scribble = torch.empty(n).pin_memory()
        scribble.fill_(-1.0)
    for value, y in zip(expected, copies):
        host = y.cpu()
        assert host.min().item() == value and host.max().item() == value


def test_empty_cache_releases_pinned_memory_and_it_still_works():
    p = rand(1000).pin_memory()
    del p
    torch.ocl.empty_cache()
    q = rand(1000, seed=4).pin_memory()
    assert q.is_pinned()
    assert_close(q.to(DEVICE, non_blocking=True), rand(1000, seed=4))


@pytest.mark.parametrize("pin_memory_device", ["", "ocl"])
def test_dataloader_pin_memory(pin_memory_device):
    data = torch.utils.data.TensorDataset(rand(23, 5), torch.arange(23))
    loader = torch.utils.data.DataLoader(data, batch_size=4, pin_memory=True, pin_memory_device=pin_memory_device)
    seen = 0
    with warnings.catch_warnings():
        # torch says pin_memory_device is deprecated (the current accelerator, ocl, is used anyway).
        warnings.filterwarnings("ignore", message=".*pin_memory_device.*")
        for x, index in loader:
            assert x.is_pinned() and index.is_pinned()
            y = x.to(DEVICE, non_blocking=True)
            assert_close(y * 2, data.tensors[0][index] * 2)
            seen += len(index)
    assert seen == 23
