"""The caching allocator: reuse without growing, statistics, empty_cache, out of memory."""

import pytest
import torch

from conftest import DEVICE

MIB = 1 << 20


def settle():
    torch.ocl.synchronize(DEVICE)
    torch.ocl.empty_cache()


def test_a_freed_block_is_reused():
    settle()
    x = torch.empty(3 * MIB // 4, device=DEVICE)  # 3 MiB: the large pool
    reserved = torch.ocl.memory_reserved(DEVICE)
    ptr = x.data_ptr()
    del x
    y = torch.empty(3 * MIB // 4, device=DEVICE)
    assert y.data_ptr() == ptr
    assert torch.ocl.memory_reserved(DEVICE) == reserved
    small = [torch.empty(100, device=DEVICE) for _ in range(50)]  # share one 2 MiB segment
    reserved = torch.ocl.memory_reserved(DEVICE)
    ptrs = sorted(t.data_ptr() for t in small)
    assert all(b - a >= 512 and (b - a) % 512 == 0 for a, b in zip(ptrs, ptrs[1:]))  # 512-byte blocks
    del small
    again = [torch.empty(100, device=DEVICE) for _ in range(50)]
    assert torch.ocl.memory_reserved(DEVICE) == reserved
    del again, y


def test_statistics():
    settle()
    base_alloc = torch.ocl.memory_allocated(DEVICE)
    torch.ocl.reset_peak_memory_stats(DEVICE)
    a = torch.empty(1000, device=DEVICE)  # 4000 bytes -> 4096 (512-byte rounding)
    assert torch.ocl.memory_allocated(DEVICE) == base_alloc + 4096
    b = torch.empty(5 * MIB // 4, device=DEVICE)
    assert torch.ocl.memory_allocated(DEVICE) == base_alloc + 4096 + 5 * MIB
    peak = torch.ocl.max_memory_allocated(DEVICE)
    assert peak == base_alloc + 4096 + 5 * MIB
    assert torch.ocl.memory_reserved(DEVICE) >= torch.ocl.memory_allocated(DEVICE)
    del b
    assert torch.ocl.memory_allocated(DEVICE) == base_alloc + 4096
    assert torch.ocl.max_memory_allocated(DEVICE) == peak
    stats = torch.ocl.memory_stats(DEVICE)
    assert stats["allocated_bytes.all.current"] == base_alloc + 4096
    del a
    assert torch.ocl.memory_allocated(DEVICE) == base_alloc


def test_split_blocks_merge_and_empty_cache_releases():
    settle()
    reserved0 = torch.ocl.memory_reserved(DEVICE)
    parts = [torch.empty(2 * MIB // 4, device=DEVICE) for _ in range(3)]  # 2 MiB each from one 20 MiB segment
    assert torch.ocl.memory_reserved(DEVICE) == reserved0 + 20 * MIB
    del parts  # the three blocks merge back into one free segment...
    whole = torch.empty(18 * MIB // 4, device=DEVICE)  # ...that serves a larger request
    assert torch.ocl.memory_reserved(DEVICE) == reserved0 + 20 * MIB
    del whole
    torch.ocl.empty_cache()
    assert torch.ocl.memory_reserved(DEVICE) == reserved0


def test_values_survive_reuse():
    a = torch.arange(1000.0).to(DEVICE)
    b = torch.full((1000,), 2.0, device=DEVICE)
    del a
    c = torch.arange(1000.0).to(DEVICE) * b
    assert torch.equal(c.cpu(), torch.arange(1000.0) * 2)


def test_out_of_memory_raises_cleanly():
    settle()
    allocated = torch.ocl.memory_allocated(DEVICE)
    props_total = torch.ops.ocltune.memory_stats(DEVICE.index)  # the device exists and answers
    assert props_total[0] == allocated
    huge = 1 << 50  # bytes: more than any device has
    # The message gives the size asked for, the device's limits and what is allocated and reserved.
    sizes = r"tried to allocate 1024\.00 TiB .*the device has \d.* \(CL_DEVICE_GLOBAL_MEM_SIZE\), its largest allocation"
    with pytest.raises(torch.OutOfMemoryError, match=r"ocl:\d+ is out of memory: " + sizes):
        torch.empty(huge // 4, device=DEVICE)
    with pytest.raises(torch.OutOfMemoryError, match=r"CL_DEVICE_MAX_MEM_ALLOC_SIZE\); .* allocated by PyTorch, .* reserved"):
        torch.empty(huge, dtype=torch.uint8, device=DEVICE)
    assert torch.ocl.memory_allocated(DEVICE) == allocated  # nothing leaked
    assert torch.ones(4, device=DEVICE).sum().item() == 4.0  # and the device still works


def test_device_allocations_are_counted_and_released():
    settle()
    before = torch.ocl.memory_stats(DEVICE)
    x = torch.empty(30 * MIB // 4, device=DEVICE)  # a segment of its own
    after = torch.ocl.memory_stats(DEVICE)
    assert after["num_device_alloc"] == before["num_device_alloc"] + 1
    del x
    torch.ocl.empty_cache()
    assert torch.ocl.memory_stats(DEVICE)["num_device_free"] >= before["num_device_free"] + 1


@pytest.mark.parametrize("optimiser", ["sgd", "adamw"])
def test_steady_state_training_steps_create_no_buffer(optimiser, strict):
    """Issue 21: after warm-up, a training step takes every block from the allocator's cache; no
    clCreateBuffer call on the hot path."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5)).to(DEVICE)
    opt = (torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if optimiser == "sgd"
           else torch.optim.AdamW(model.parameters(), lr=1e-3))
    x = torch.randn(4, 3, 13, 11).to(DEVICE)
    target = torch.tensor([0, 3, 1, 4]).to(DEVICE)

    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), target).backward()
        opt.step()

    for _ in range(2):  # warm-up: optimiser state and the step's blocks are allocated here
        step()
    torch.ocl.synchronize(DEVICE)
    allocs = torch.ocl.memory_stats(DEVICE)["num_device_alloc"]
    for _ in range(3):
        step()
    torch.ocl.synchronize(DEVICE)
    assert torch.ocl.memory_stats(DEVICE)["num_device_alloc"] == allocs


@pytest.mark.skipif(tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 15),
                    reason="the allocator implements c10::DeviceAllocator only when built against torch 2.15+")
def test_torch_accelerator_memory_functions_answer_for_ocl():
    """Device-agnostic code reads memory through torch.accelerator, which asks the allocator for
    c10::DeviceAllocator's interface: it raised an internal assert before (issues 40 and 41). The
    device is named in every call: the current one may be another (the suite runs on ocl:1 too)."""
    assert torch.accelerator.current_accelerator().type == "ocl"
    torch.accelerator.empty_cache()
    torch.accelerator.reset_peak_memory_stats(DEVICE)
    before = torch.accelerator.memory_allocated(DEVICE)
    x = torch.empty(64 << 20, dtype=torch.uint8, device=DEVICE)  # a segment of its own (over 10 MiB)
    assert torch.accelerator.memory_allocated(DEVICE) == torch.ocl.memory_allocated(DEVICE) >= before + (64 << 20)
    assert torch.accelerator.memory_reserved(DEVICE) == torch.ocl.memory_reserved(DEVICE)
    assert torch.accelerator.max_memory_allocated(DEVICE) >= torch.accelerator.memory_allocated(DEVICE)
    stats = torch.accelerator.memory_stats(DEVICE)
    assert stats["allocated_bytes.all.current"] == torch.ocl.memory_allocated(DEVICE)
    assert stats["num_device_alloc"] == torch.ocl.memory_stats(DEVICE)["num_device_alloc"]
    reserved = torch.accelerator.memory_reserved(DEVICE)
    del x
    torch.accelerator.empty_cache()
    assert torch.accelerator.memory_reserved(DEVICE) <= reserved - (64 << 20)
    assert torch.accelerator.memory_allocated(DEVICE) == before
    torch.accelerator.reset_peak_memory_stats(DEVICE)
    assert torch.accelerator.max_memory_allocated(DEVICE) == before
    with pytest.raises(RuntimeError):
        torch.accelerator.memory_allocated(torch.ocl.device_count())
