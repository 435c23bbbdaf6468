"""The tune-what-you-run loop end to end: ops dispatched at the built-in level are recorded as a shapes
file, `ocltune --shapes` tunes them into $OCLTUNE_DB, and after reload() the same ops answer at `exact`
and still match the CPU. Also: the statistics' shape, their reset, and the shapes file written at exit."""

import json
import os
import pathlib
import subprocess
import sys

import pytest
import torch

import ocltune_torch
from conftest import DEVICE, assert_close, rand

CLI = os.environ.get("OCLTUNE_CLI") or str(pathlib.Path(__file__).resolve().parents[2] / "build" / "ocltune")
FAMILIES = ("gemm", "softmax", "reduce")


@pytest.fixture
def own_database(tmp_path, monkeypatch):
    """A fresh user database and no shipped rows, read by every runtime of this process from now on."""
    db = tmp_path / "tuned.db"
    monkeypatch.setenv("OCLTUNE_DB", str(db))
    monkeypatch.setenv("OCLTUNE_SYSTEM_DB", str(tmp_path / "no-system.db"))
    torch.ones(1, device=DEVICE).sum()  # the device's runtime exists...
    ocltune_torch.reload()  # ...and reads these layers
    ocltune_torch.reset_dispatch_stats()
    yield db
    monkeypatch.undo()
    ocltune_torch.reload()


def run_ops(a, b, x):
    """An mm of an odd shape, a softmax and a sum, each through one of ocltune's families."""
    return a.to(DEVICE) @ b.to(DEVICE), torch.softmax(x.to(DEVICE), dim=1), x.to(DEVICE).sum(dim=1)


def check_against_cpu(a, b, x):
    mm, soft, total = run_ops(a, b, x)
    assert_close(mm, a @ b, scale=10)
    assert_close(soft, torch.softmax(x, dim=1))
    assert_close(total, x.sum(dim=1), scale=10)


def test_dispatch_stats_count_per_level_and_family(own_database):
    a, b, x = rand(37, 29), rand(29, 13, seed=1), rand(5, 67, seed=2)
    check_against_cpu(a, b, x)
    check_against_cpu(a, b, x)
    stats = ocltune_torch.dispatch_stats()
    assert set(stats["levels"]) == {"exact", "nearest", "class", "builtin", "library"}
    for family in FAMILIES:
        assert stats["families"][family]["builtin"] == 2, stats["families"]
    assert stats["calls"] == sum(stats["levels"].values())
    device = stats["devices"][DEVICE.index]
    problems = {p["op"] for p in device["problems"]}
    assert set(FAMILIES) <= problems
    gemm = [p for p in device["problems"] if p["op"] == "gemm"]
    assert gemm[0]["shape"]["m"] == 37 and gemm[0]["level"] == "builtin"

    ocltune_torch.reset_dispatch_stats()
    assert ocltune_torch.dispatch_stats()["calls"] == 0
    check_against_cpu(a, b, x)
    assert ocltune_torch.dispatch_stats()["families"]["gemm"]["builtin"] == 1


def test_record_tune_reload_dispatches_exactly(own_database, tmp_path):
    a, b, x = rand(37, 29), rand(29, 13, seed=1), rand(5, 67, seed=2)
    check_against_cpu(a, b, x)
    shapes = tmp_path / "shapes.json"
    written = ocltune_torch.record_shapes(shapes)
    entries = json.loads(shapes.read_text())
    assert written == len(entries) >= 3
    assert {e["op"] for e in entries} >= set(FAMILIES)
    assert all(e["recorded"]["level"] != "exact" for e in entries)
    mm = next(e for e in entries if e["op"] == "gemm")
    assert (mm["m"], mm["n"], mm["k"]) == (37, 13, 29)

    # The smallest budget docs/CLI.md offers: the default configuration and one more per shape.
    tune = subprocess.run(
        [CLI, "--device", str(DEVICE.index), "--shapes", str(shapes), "--max-evals", "1", "--final", "0", "--quiet"],
        env={**os.environ, "OCLTUNE_DB": str(own_database)}, capture_output=True, text=True, timeout=300,
    )
    assert tune.returncode == 0, tune.stdout + tune.stderr
    assert own_database.is_file()

    ocltune_torch.reload()
    ocltune_torch.reset_dispatch_stats()
    check_against_cpu(a, b, x)
    stats = ocltune_torch.dispatch_stats()
    not_exact = {level: n for level, n in stats["levels"].items() if level != "exact" and n}
    assert not not_exact, f"every recorded problem was tuned, yet some calls were answered at {not_exact}: {stats}"
    for family in FAMILIES:
        assert stats["families"][family]["exact"] >= 1, stats["families"]

    # Written again (a flush to the same path): now every problem says exact.
    ocltune_torch.record_shapes()
    assert {e["recorded"]["level"] for e in json.loads(shapes.read_text())} == {"exact"}


def test_environment_variable_writes_the_file_at_exit(tmp_path):
    shapes = tmp_path / "at-exit.json"
    script = (
        "import torch, ocltune_torch\n"
        f"x = torch.arange(12.0).reshape(3, 4).to('{DEVICE}')\n"
        "print(torch.softmax(x, dim=1).sum().item())\n"
    )
    env = {**os.environ, "OCLTUNE_TORCH_RECORD_SHAPES": str(shapes),
           "PYTHONPATH": str(pathlib.Path(__file__).resolve().parents[2])}
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert float(run.stdout.split()[-1]) == pytest.approx(3.0)
    entries = json.loads(shapes.read_text())
    softmax = [e for e in entries if e["op"] == "softmax"]
    assert len(softmax) == 1 and softmax[0]["recorded"]["calls"] == 1, entries
    assert softmax[0]["dims"][:2] == [3, 4]
    assert not list(tmp_path.glob("at-exit.json.tmp*")), "the temporary file was renamed"


def test_record_shapes_errors_are_clear(tmp_path, monkeypatch):
    monkeypatch.setattr(ocltune_torch.tune_loop, "_record_path", None)
    with pytest.raises(ValueError, match="OCLTUNE_TORCH_RECORD_SHAPES"):
        ocltune_torch.record_shapes()
    torch.ones(1, device=DEVICE).sum()
    with pytest.raises(RuntimeError, match="cannot write shapes file .*no-such-dir"):
        ocltune_torch.record_shapes(tmp_path / "no-such-dir" / "shapes.json")
    monkeypatch.setattr(ocltune_torch.tune_loop, "_record_path", None)  # no write at exit to that path


def test_startup_stats_count_the_first_calls_builds_and_a_second_process_loads_them(tmp_path):
    """startup_stats() (where a first step's time went, bench/first_step.py): a new process with an empty
    binary cache compiles and stores its programs; the next one loads them."""
    script = (
        "import json, torch, ocltune_torch\n"
        f"d = '{DEVICE}'\n"
        "a = torch.arange(12.0).reshape(3, 4).to(d)\n"
        "(a @ a.t()).sum().item(); torch.softmax(a, dim=1).to(torch.int32).cpu()\n"
        "(a @ a.t()).sum().item()\n"
        "print(json.dumps(ocltune_torch.startup_stats()))\n"
    )
    env = {**os.environ, "OCLTUNE_BINARY_CACHE": str(tmp_path / "binaries"), "OCLTUNE_DB": str(tmp_path / "tuned.db"),
           "OCLTUNE_SYSTEM_DB": str(tmp_path / "no-system.db"),  # built-in configurations only: nothing to check
           "PYTHONPATH": str(pathlib.Path(__file__).resolve().parents[2])}

    def stats():
        run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr
        return json.loads(run.stdout.splitlines()[-1])

    first = stats()
    # gemm, reduce and softmax at least, each resolved once however often it ran
    assert first["resolutions"] >= 3 and first["resolve_s"] > 0, first
    assert first["compiled"] >= 3 and first["compile_s"] > 0 and first["loaded"] == 0, first
    assert first["stored"] == first["compiled"], first
    assert first["checks"] == 0 and first["check_s"] == 0, first  # built-in configurations are not checked
    assert first["plain_programs"] >= 1 and first["plain_s"] > 0, first  # the cast to int32
    second = stats()
    assert second["resolutions"] == first["resolutions"], second
    assert second["compiled"] == 0 and second["loaded"] == first["compiled"] and second["stored"] == 0, second


def run_prologues(x, y):
    """What torch.compile's prologue pass dispatches: sum(relu(x - y)) and layer_norm(x + y), each one kernel."""
    xo, yo = x.to(DEVICE), y.to(DEVICE)
    total = torch.ops.ocltune.reduce_prologue(xo, ["sub", "relu"], [yo, None], [0.0, 0.0], [0, 0], "sum", [1], False)
    normed = torch.ops.ocltune.layer_norm_prologue(xo, ["add"], [yo], [0.0], [0], [x.shape[-1]], None, None, 1e-5)[0]
    assert_close(total, (x - y).relu().sum(1), rtol=1e-5, atol=1e-5)
    assert_close(normed, torch.nn.functional.layer_norm(x + y, [x.shape[-1]]), rtol=1e-5, atol=1e-5)


def test_fused_prologue_problems_are_recorded_and_tuned_like_any_other(own_database, tmp_path):
    """A reduction's and a layer norm's prologue are part of their problems: recorded with it, tuned as
    their own rows, and answered at `exact` after reload()."""
    x, y = rand(6, 83), rand(6, 83, seed=1)
    run_prologues(x, y)
    shapes = tmp_path / "shapes.json"
    ocltune_torch.record_shapes(shapes)
    entries = json.loads(shapes.read_text())
    fused = [e for e in entries if "prologue" in e]
    assert {e["op"] for e in fused} == {"reduce", "norm"}, entries
    assert [s["op"] for s in next(e for e in fused if e["op"] == "reduce")["prologue"]] == ["sub", "relu"]
    tune = subprocess.run(
        [CLI, "--device", str(DEVICE.index), "--shapes", str(shapes), "--max-evals", "1", "--final", "0", "--quiet"],
        env={**os.environ, "OCLTUNE_DB": str(own_database)}, capture_output=True, text=True, timeout=300,
    )
    assert tune.returncode == 0, tune.stdout + tune.stderr
    ocltune_torch.reload()
    ocltune_torch.reset_dispatch_stats()
    run_prologues(x, y)
    families = ocltune_torch.dispatch_stats()["families"]
    assert families["reduce"]["exact"] == 1 and families["norm"]["exact"] == 1, families
