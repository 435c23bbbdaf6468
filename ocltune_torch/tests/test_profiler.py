"""torch.profiler on ocl (issue 40): with ProfilerActivity.OCL (PyTorch's PrivateUse1 activity) each
kernel the device runs is recorded with its device time from its OpenCL event, linked to the aten op
that launched it, and carries the family, configuration and lookup level that chose it; key_averages
shows device time per op and the Chrome trace draws the kernels on the device's own track."""

import json
import threading

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from conftest import DEVICE, rand

KERNEL = torch.autograd.DeviceType.PrivateUse1


def device_time(event):
    """An event's device time in us (the attribute's name changed with PyTorch's device-generic profiler)."""
    return getattr(event, "device_time_total", None) or getattr(event, "cuda_time_total", 0.0)


def kernels(prof):
    return [e for e in prof.events() if e.device_type == KERNEL]


def warm():
    """Programs built and decisions made before a profile, so that it sees the ops' kernels only."""
    a, b = rand(33, 20).to(DEVICE), rand(20, 17, seed=1).to(DEVICE)
    x, w = rand(2, 3, 9, 9).to(DEVICE), rand(4, 3, 3, 3, seed=2).to(DEVICE)
    torch.mm(a, b)
    F.conv2d(x, w, padding=1)
    (torch.mm(a, b) + 1).relu().sum()
    a.to(torch.int32)
    torch.ocl.synchronize(DEVICE)
    return a, b, x, w


def test_kernels_have_device_time_and_count_toward_their_ops():
    a, b, x, w = warm()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.OCL]) as prof:
        torch.mm(a, b)
        F.conv2d(x, w, padding=1)
        (torch.mm(a, b) + 1).relu().sum()
        a.to(torch.int32)  # a plain kernel (a cast)
        torch.ocl.synchronize(DEVICE)
    found = kernels(prof)
    assert found, "no ocl kernel was recorded"
    assert all(device_time(k) > 0 for k in found), [(k.name, device_time(k)) for k in found]
    per_op = {e.key: e for e in prof.key_averages()}
    for op in ("aten::mm", "aten::add", "aten::relu", "aten::sum"):
        assert device_time(per_op[op]) > 0, f"{op} shows no device time"
    conv = [k for k, e in per_op.items() if "conv" in k and k.startswith("aten::") and device_time(e) > 0]
    assert conv, "the convolution shows no device time"
    # aten::mm's device time is that of the kernels the two mm calls launched, each linked to its op.
    mm_calls = [e for e in prof.events() if e.name == "aten::mm"]
    assert len(mm_calls) == 2
    for call in mm_calls:
        assert call.kernels and all(k.name.startswith("gemm") and k.duration > 0 for k in call.kernels), call.kernels
    mm_time = sum(k.duration for call in mm_calls for k in call.kernels)
    assert abs(device_time(per_op["aten::mm"]) - mm_time) <= 1e-3 * mm_time + 1e-3


def test_the_chrome_trace_has_a_device_track_with_each_kernels_configuration(tmp_path):
    a, b, x, w = warm()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.OCL]) as prof:
        torch.mm(a, b)
        a.to(torch.int32)
        torch.ocl.synchronize(DEVICE)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    device_kernels = [e for e in events if e.get("cat") == "kernel"]
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    assert device_kernels and ops
    families = {e["args"]["family"] for e in device_kernels}
    assert {"gemm", "plain"} <= families, families
    for k in device_kernels:
        assert k["args"]["level"] in ("exact", "nearest", "class", "builtin", "library", "plain"), k
        assert k["args"]["device"] == str(DEVICE.index), k
        assert k["dur"] > 0 and k["pid"] != ops[0]["pid"], k  # on a track of its own, not the host's
        if k["args"]["family"] == "gemm":
            assert "=" in k["args"]["config"], k  # NAME=value,...
    names = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert f"ocl:{DEVICE.index}" in names, names
    # Each kernel lies inside the time of the op that launched it, give or take the clock mapping.
    mm = next(e for e in ops if e["name"] == "aten::mm")
    gemm = next(k for k in device_kernels if k["args"]["family"] == "gemm")
    assert gemm["args"]["correlation"] != "0"
    assert mm["ts"] - 1000 <= gemm["ts"], (mm, gemm)


def test_copies_and_fills_are_drawn_as_memcpy_and_memset_with_their_ops(tmp_path):
    host = rand(64, 33)
    warm()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.OCL]) as prof:
        x = host.to(DEVICE)       # host to device
        y = x.clone()             # device to device
        z = torch.zeros(100, device=DEVICE)  # a fill
        back = y.cpu()            # device to host
        torch.ocl.synchronize(DEVICE)
    assert torch.equal(back, host) and not z.any()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    transfers = {e["name"]: e for e in events if e.get("cat") in ("gpu_memcpy", "gpu_memset")}
    assert {"Memcpy HtoD", "Memcpy DtoD", "Memcpy DtoH", "Memset"} <= transfers.keys(), sorted(transfers)
    for name, e in transfers.items():
        assert e["dur"] >= 0 and e["args"]["device"] == str(DEVICE.index), e
        assert e["args"]["config"].endswith(" bytes") and e["args"]["correlation"] != "0", e
    assert transfers["Memcpy HtoD"]["args"]["config"] == f"{64 * 33 * 4} bytes"
    # The copies count as the device time of the ops that made them, as cuda's do.
    per_op = {e.key: e for e in prof.key_averages()}
    assert any(device_time(e) > 0 for k, e in per_op.items() if "copy" in k), sorted(per_op)


def test_backward_kernels_are_linked_and_other_threads_kernels_are_recorded():
    a, b, _, _ = warm()
    p = a.clone().requires_grad_()
    results = []

    def worker():
        results.append(torch.mm(b.t(), a.t()))

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.OCL]) as prof:
        torch.mm(p, b).sum().backward()
        torch.ocl.synchronize(DEVICE)
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        torch.ocl.synchronize(DEVICE)
    per_op = {e.key: e for e in prof.key_averages()}
    # Backward's product runs on the autograd engine's thread, under MmBackward0, linked to its mm.
    assert any(device_time(e) > 0 for k, e in per_op.items() if "MmBackward" in k), sorted(per_op)
    mm_calls = [e for e in prof.events() if e.name == "aten::mm"]
    assert len(mm_calls) == 2 and all(call.kernels for call in mm_calls), mm_calls
    assert len({call.thread for call in mm_calls}) == 2  # the caller's thread and autograd's
    # PyTorch's profiler records the ops of the thread that started it and of autograd's only (as on
    # cuda); the kernel of another thread's op is recorded all the same, linked to no op.
    found = kernels(prof)
    linked = [k for k in found if k.linked_correlation_id != 0]
    assert len(found) == len(linked) + 1 and any(k.name.startswith("gemm") for k in set(found) - set(linked))


def test_nothing_is_recorded_without_the_ocl_activity_or_between_profiles():
    a, b, _, _ = warm()
    with profile(activities=[ProfilerActivity.CPU]) as cpu_only:
        torch.mm(a, b)
        torch.ocl.synchronize(DEVICE)
    assert not kernels(cpu_only)
    for _ in range(3):  # between two profiles: must not show up in the next one
        torch.mm(a, b)
    torch.ocl.synchronize(DEVICE)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.OCL]) as prof:
        torch.mm(a, b)
        torch.ocl.synchronize(DEVICE)
    gemm_kernels = [k for k in kernels(prof) if k.name.startswith("gemm")]
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.OCL]) as one:
        torch.mm(a, b)
        torch.ocl.synchronize(DEVICE)
    assert len(gemm_kernels) == len([k for k in kernels(one) if k.name.startswith("gemm")]) >= 1
