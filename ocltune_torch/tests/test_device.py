"""The device: registration, counting as `ocltune devices` does, current device, errors, seeds, threads."""

import importlib.util
import os
import pathlib
import re
import subprocess
import threading

import pytest
import torch

import ocltune_torch
from conftest import DEVICE, assert_close, rand


def test_registration():
    assert torch._C._get_privateuse1_backend_name() == "ocl"
    assert torch.ocl.is_available()
    assert torch.ocl.device_count() >= 1
    assert torch.ocl.device_count() == torch.ops.ocltune.device_count()
    t = torch.ones(3).ocl()
    assert t.is_ocl and t.device.type == "ocl"
    assert torch.ones(2, device=DEVICE).device == DEVICE
    # The wheel's torch.backends entry point (pyproject.toml, installed beside the package) imports
    # the package; with the package loaded already, it changes nothing.
    path = pathlib.Path(ocltune_torch.__file__).parent / "packaging" / "_ocltune_torch_autoload.py"
    spec = importlib.util.spec_from_file_location("_ocltune_torch_autoload", path)
    entry_point = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(entry_point)
    entry_point.load()
    assert torch.ones(2, device=DEVICE).cpu().tolist() == [1.0, 1.0]


def test_import_is_idempotent():
    import importlib

    importlib.reload(ocltune_torch)
    assert torch.ones(2, device=DEVICE).cpu().tolist() == [1.0, 1.0]


def test_counts_devices_as_the_cli_does():
    cli = os.environ.get("OCLTUNE_CLI") or str(pathlib.Path(__file__).resolve().parents[2] / "build" / "ocltune")
    if not os.path.isfile(cli):
        pytest.fail(f"no ocltune executable at {cli}: set OCLTUNE_CLI (CTest does)")
    listing = subprocess.run([cli, "devices"], check=True, capture_output=True, text=True).stdout
    indexes = [int(m) for m in re.findall(r"^\[(\d+)\]", listing, flags=re.M)]
    assert indexes == list(range(torch.ocl.device_count()))
    name = re.search(rf"^\[{DEVICE.index}\] (.*)$", listing, flags=re.M).group(1).strip()
    assert torch.ocl.get_device_name(DEVICE) == name


def test_bad_device_index():
    bad = torch.ocl.device_count()
    with pytest.raises(RuntimeError, match=rf"invalid device ocl:{bad}.*{bad} ocl device"):
        torch.empty(3, device=f"ocl:{bad}")
    with pytest.raises(RuntimeError, match="invalid device"):
        torch.ones(3).to(f"ocl:{bad + 5}")
    with pytest.raises(RuntimeError, match="invalid device"):
        torch.ocl.set_device(bad)


def test_current_device_and_context_manager():
    assert torch.ocl.current_device() == 0
    with torch.ocl.device(DEVICE):
        assert torch.ocl.current_device() == DEVICE.index
        assert torch.empty(1, device="ocl").device == DEVICE
    assert torch.ocl.current_device() == 0


def test_synchronize_and_async_ops():
    a = rand(64, 64)
    x = a.to(DEVICE)
    for _ in range(5):
        x = x * 1.0 + 0.0  # enqueued, not waited for
    torch.ocl.synchronize()
    torch.ocl.synchronize(DEVICE)
    assert_close(x, a)


def test_manual_seed_reproduces_randn():
    torch.manual_seed(1234)
    a = torch.randn(5, 7, device=DEVICE)
    b = torch.rand(11, device=DEVICE)
    torch.manual_seed(1234)
    a2 = torch.randn(5, 7, device=DEVICE)
    b2 = torch.rand(11, device=DEVICE)
    assert torch.equal(a.cpu(), a2.cpu()) and torch.equal(b.cpu(), b2.cpu())
    assert not torch.equal(torch.randn(5, 7, device=DEVICE).cpu(), a.cpu())  # the offset moved on
    torch.manual_seed(99)
    assert not torch.equal(torch.randn(5, 7, device=DEVICE).cpu(), a.cpu())
    # normal_ and uniform_ run on our generator, not through the CPU fallback
    assert "aten::normal_" not in ocltune_torch.fallback_stats()
    assert "aten::uniform_" not in ocltune_torch.fallback_stats()


def test_generator_state_and_explicit_generators():
    with torch.ocl.device(DEVICE):  # manual_seed and initial_seed act on the current device
        torch.ocl.manual_seed(7)
        assert torch.ocl.initial_seed() == 7
    state = torch.ocl.get_rng_state(DEVICE)
    x = torch.randn(8, device=DEVICE)
    torch.ocl.set_rng_state(state, DEVICE)
    assert torch.equal(torch.randn(8, device=DEVICE).cpu(), x.cpu())
    g = torch.Generator(device=DEVICE)
    g.manual_seed(5)
    y = torch.randn(8, device=DEVICE, generator=g)
    g.manual_seed(5)
    assert torch.equal(torch.randn(8, device=DEVICE, generator=g).cpu(), y.cpu())
    torch.manual_seed(2**64 - 1)  # any uint64 seed reaches every device's generator
    with torch.ocl.device(DEVICE):
        assert torch.ocl.initial_seed() == 2**64 - 1


def test_two_threads_at_once():
    errors = []

    def work(seed):
        try:
            for i in range(15):
                a, b = rand(33, 17, seed=seed + i), rand(17, 9, seed=seed + 100 + i)
                c = torch.relu(a.to(DEVICE) @ b.to(DEVICE) + 0.5).sum(1)
                assert_close(c, torch.relu(a @ b + 0.5).sum(1), scale=10)
        except Exception as e:  # reported below, from the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in (0, 1000)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_copies_between_devices():
    # Every other ocl device (none on a machine with one): copies go through the host.
    a = rand(5, 6)
    for i in range(torch.ocl.device_count()):
        other = torch.device("ocl", i)
        x = a.to(DEVICE).to(other)
        assert x.device == other
        y = (x.t() * 2).to(DEVICE)
        assert y.device == DEVICE
        assert_close(y, a.t() * 2)


@pytest.mark.parametrize(
    "make",
    [lambda: torch.randn(3, 4), lambda: torch.randn(2, 3).half(), lambda: torch.randn(2, 3).bfloat16(),
     lambda: torch.arange(5), lambda: torch.tensor([True, False]), lambda: torch.tensor(2.5),
     lambda: torch.empty(0, 3), lambda: torch.randn(2000, 100), lambda: torch.randn(4, 6).t()],
    ids=["float", "half", "bfloat16", "int64", "bool", "scalar", "empty", "summarised", "transposed"])
def test_printing_formats_the_values_on_the_host(make, strict):
    # torch formats CUDA-like tensors with float64 ops on their device; ocl has none, so printing raised
    # in strict mode. The text is the CPU tensor's with the device suffix.
    t = make()
    text = repr(t.to(DEVICE))
    assert f"device='{DEVICE}'" in text
    assert "".join(text.split()).replace(f",device='{DEVICE}'", "") == "".join(repr(t).split())
