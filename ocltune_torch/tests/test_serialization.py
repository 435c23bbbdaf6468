"""torch.save / torch.load of ocl tensors and state_dicts, with map_location both ways.

PyTorch serialises a PrivateUse1 storage through the backend's name (torch.serialization's
"privateuse1" package, registered by torch itself) and restores it with UntypedStorage.to(device),
which needs the renamed backend, the device module (torch.ocl: is_available, device_count) and the
allocator; torch 2.11 and 2.15 take the same path (see the README)."""

import io

import pytest
import torch

from conftest import DEVICE, assert_close, rand


def saved(obj) -> io.BytesIO:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.bool])
def test_tensor_round_trip(dtype):
    x = (rand(3, 7) * 4).to(dtype)
    y = torch.load(saved(x.to(DEVICE)))
    assert y.device == DEVICE and y.dtype == dtype
    assert torch.equal(y.cpu(), x)


def test_views_keep_sharing_their_storage():
    base = torch.arange(24.0).to(DEVICE)
    parts = torch.load(saved({"base": base, "slice": base[5:11], "t": base.view(4, 6).t()}))
    assert parts["slice"].untyped_storage().data_ptr() == parts["base"].untyped_storage().data_ptr()
    assert parts["t"].stride() == (1, 6)
    parts["base"][7] = -1.0  # one storage: the slice sees it
    assert parts["slice"].cpu().tolist() == [5.0, 6.0, -1.0, 8.0, 9.0, 10.0]
    expected = torch.arange(24.0)
    expected[7] = -1.0
    assert torch.equal(parts["t"].cpu(), expected.view(4, 6).t())


def test_map_location_cpu_of_a_file_saved_from_ocl():
    x = rand(5, 4)
    for location in ["cpu", torch.device("cpu"), {f"ocl:{DEVICE.index}": "cpu"}, lambda storage, loc: storage]:
        y = torch.load(saved(x.to(DEVICE)), map_location=location)
        assert y.device.type == "cpu", location
        assert torch.equal(y, x)


def test_map_location_ocl_of_a_file_saved_from_cpu():
    x = rand(6, 2)
    current = torch.device("ocl", torch.ocl.current_device())  # what "ocl" means; DEVICE need not be it
    for location, device in [("ocl", current), (str(DEVICE), DEVICE), (DEVICE, DEVICE)]:
        y = torch.load(saved(x), map_location=location)
        assert y.device == device, location
        assert torch.equal(y.cpu(), x)


def test_state_dict_of_a_module_moved_to_ocl():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.BatchNorm1d(7), torch.nn.Linear(7, 3))
    reference = {k: v.clone() for k, v in model.state_dict().items()}
    model = model.to(DEVICE)
    buffer = saved(model.state_dict())
    on_ocl = torch.load(buffer)
    buffer.seek(0)
    on_cpu = torch.load(buffer, map_location="cpu")
    assert set(on_ocl) == set(reference) and set(on_cpu) == set(reference)
    for name, value in reference.items():
        assert on_ocl[name].device == DEVICE, name
        assert on_cpu[name].device.type == "cpu", name
        assert torch.equal(on_ocl[name].cpu(), value), name
        assert torch.equal(on_cpu[name], value), name
    assert on_ocl["1.num_batches_tracked"].dtype == torch.int64

    # Loaded into a fresh CPU model, then moved: the same outputs as the original on ocl.
    fresh = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.BatchNorm1d(7), torch.nn.Linear(7, 3)).eval()
    fresh.load_state_dict(on_cpu)
    x = rand(4, 5, seed=3)
    assert_close(model.eval()(x.to(DEVICE)), fresh(x), scale=10)
    fresh.to(DEVICE).load_state_dict(on_ocl)
    assert_close(fresh(x.to(DEVICE)), model(x.to(DEVICE)).cpu())


def test_load_onto_a_device_that_does_not_exist_is_a_clear_error():
    bad = torch.ocl.device_count()
    with pytest.raises(RuntimeError, match=rf"(?i)ocl device {bad}|invalid device ocl:{bad}"):
        torch.load(saved(rand(3)), map_location=f"ocl:{bad}")


CHECKPOINT_WRITER = """
import sys, torch, ocltune_torch
torch.manual_seed(0)
device = sys.argv[1]
model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(16, 6).to(device)
for _ in range(3):
    optimizer.zero_grad()
    model(x).square().mean().backward()
    optimizer.step()
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "x": x}, sys.argv[2])
optimizer.zero_grad()
model(x).square().mean().backward()
optimizer.step()  # the step the reader resumes with
print(repr(model(x).sum().item()))
if len(sys.argv) > 3:  # the same save again, killed (SIGKILL) while writing
    import os, signal, threading
    threading.Timer(float(sys.argv[3]), lambda: os.kill(os.getpid(), signal.SIGKILL)).start()
    while True:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "x": x}, sys.argv[2] + ".part")
"""


def write_checkpoint(tmp_path, *extra):
    import subprocess
    import sys

    path = tmp_path / "checkpoint.pt"
    done = subprocess.run([sys.executable, "-c", CHECKPOINT_WRITER, str(DEVICE), str(path), *extra],
                          capture_output=True, text=True, timeout=300)
    return path, done


@pytest.mark.parametrize("map_location", [None, "cpu"])
def test_a_checkpoint_of_another_process_resumes_training_exactly(tmp_path, map_location):
    # Model and Adam state saved on ocl by another process: loaded here (onto ocl, or the CPU and then
    # moved), one more step gives the writer's own result after that step.
    path, done = write_checkpoint(tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    expected = float(done.stdout.split()[-1])
    state = torch.load(path, map_location=map_location)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)).to(DEVICE)
    model.load_state_dict(state["model"])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    optimizer.load_state_dict(state["optimizer"])
    x = state["x"].to(DEVICE)
    optimizer.zero_grad()
    model(x).square().mean().backward()
    optimizer.step()
    assert next(iter(optimizer.state.values()))["exp_avg"].device == DEVICE
    assert model(x).sum().item() == pytest.approx(expected, rel=1e-5, abs=1e-6)


def test_a_checkpoint_killed_while_written_never_loads_silently(tmp_path):
    # SIGKILL while torch.save writes (the writer loops saving): what is on disk is either a whole
    # checkpoint or refused by torch.load; never a truncated model that loads.
    path, done = write_checkpoint(tmp_path, "0.5")
    assert done.returncode == -9, done.stderr[-2000:]
    partial = tmp_path / "checkpoint.pt.part"
    whole = torch.load(path, map_location="cpu")
    sizes = {name: t.shape for name, t in whole["model"].items()}
    data = partial.read_bytes() if partial.exists() else b""
    for cut in sorted({len(data), *(len(data) * k // 7 for k in range(7))}):
        candidate = tmp_path / f"cut{cut}.pt"
        candidate.write_bytes(data[:cut])
        try:
            loaded = torch.load(candidate, map_location="cpu")
        except Exception:  # noqa: BLE001  (refused: the guarantee holds)
            continue
        assert {name: t.shape for name, t in loaded["model"].items()} == sizes, f"cut at {cut} loaded a partial model"
