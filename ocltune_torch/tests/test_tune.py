"""ocltune_torch.tune(model, example_inputs) (issue 39): one call records what a model's step dispatches,
tunes it with the ocltune CLI into the user database and reloads, so that the step's problems answer
at `exact` with results still equal to the CPU's; a second call starts no CLI. Also: a step that fails
(strict mode) tunes what ran before it and names the op; a missing, failing or killed CLI; bad
budgets; and `python -m ocltune_torch.tune` on a user's module:function. Each test tunes into its own
database with tiny budgets (the default configuration and one more per problem)."""

import json
import os
import pathlib
import stat
import subprocess
import sys

import pytest
import torch

import ocltune_torch
from conftest import DEVICE, assert_close, rand
from ocltune_torch import tune_model

REPO = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("OCLTUNE_CLI") or str(REPO / "build" / "ocltune")
QUICK = ["--max-evals", "1", "--final", "0"]  # what test_tune_loop.py tunes with: default + one candidate


@pytest.fixture
def own_database(tmp_path, monkeypatch):
    """A fresh user database and no shipped rows, read by every runtime of this process from now on."""
    db = tmp_path / "tuned.db"
    monkeypatch.setenv("OCLTUNE_DB", str(db))
    monkeypatch.setenv("OCLTUNE_SYSTEM_DB", str(tmp_path / "no-system.db"))
    monkeypatch.setenv("OCLTUNE_CLI", CLI)
    torch.ones(1, device=DEVICE).sum()  # the device's runtime exists...
    ocltune_torch.reload()  # ...and reads these layers
    yield db
    monkeypatch.undo()
    ocltune_torch.reload()


class ConvLinear(torch.nn.Module):
    """A conv, a ReLU and a linear layer at odd sizes: conv2d, elementwise, gemm and reduce problems."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 4, 3, bias=False)
        self.fc = torch.nn.Linear(4 * 5 * 7, 5, bias=False)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


class ConvThenFloor(torch.nn.Module):
    """A conv, then torch.lgamma, which has no ocl kernel: strict mode fails the step there."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(2, 3, 3, bias=False)

    def forward(self, x):
        return torch.lgamma(self.conv(x))


def levels_of_a_step(model, x):
    """Lookup levels of the calls of the training step tune() runs (the loss is the output's sum),
    and its output."""
    ocltune_torch.reset_dispatch_stats()
    model.zero_grad(set_to_none=True)
    out = model(x.to(DEVICE))
    out.sum().backward()
    levels = {k: n for k, n in ocltune_torch.dispatch_stats()["levels"].items() if n}
    return levels, out


def forbid_subprocesses(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"tune started a process: {args}")

    monkeypatch.setattr(tune_model.subprocess, "Popen", refuse)


def fake_cli(tmp_path, body):
    script = tmp_path / "fake-ocltune"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_tune_makes_the_step_exact_and_a_second_call_tunes_nothing(own_database, monkeypatch):
    model = ConvLinear().to(DEVICE)
    x = rand(2, 3, 7, 9)
    levels, _ = levels_of_a_step(model, x)
    assert "exact" not in levels, levels

    lines = []
    report = ocltune_torch.tune(model, x, budget="2m", progress=lines.append, cli_args=QUICK)
    assert report.cli_status == 0 and report.cost == "measured", report
    assert report.problems >= 6 and report.already_tuned == 0, report
    assert report.tuned == report.problems and report.skipped_for_budget == 0, report
    assert report.database == str(own_database) and own_database.is_file()
    assert any(line.startswith("[conv2d") for line in lines), lines  # the CLI's progress, streamed

    levels, out = levels_of_a_step(model, x)
    assert set(levels) == {"exact"}, f"after tune, calls answered at {levels}"
    cpu = ConvLinear()
    expected = cpu(x)
    expected.sum().backward()
    assert_close(out.detach(), expected.detach(), scale=10)
    assert_close(model.conv.weight.grad, cpu.conv.weight.grad, scale=10)
    assert_close(model.fc.weight.grad, cpu.fc.weight.grad, scale=10)

    forbid_subprocesses(monkeypatch)
    again = ocltune_torch.tune(model, x, budget=30, cli_args=QUICK)
    assert again.cli_status is None and again.tuned == 0, again
    assert again.already_tuned == again.problems == report.problems, again


class SmallConvBigLinear(torch.nn.Module):
    """A convolution of 0.5 kFLOP and a matrix product of 134 MFLOP on two inputs."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(1, 2, 3, bias=False)
        self.fc = torch.nn.Linear(512, 512, bias=False)

    def forward(self, image, rows):
        return self.conv(image).sum() + self.fc(rows).sum()


def test_the_costliest_problem_goes_first(own_database, tmp_path, monkeypatch):
    """The shapes file the CLI is given (here a stand-in that keeps it and tunes nothing) starts with
    the big matrix product, although the runtime lists the convolution first."""
    kept = tmp_path / "given-shapes.json"
    keep = f'while [ $# -gt 0 ]; do [ "$1" = --shapes ] && cp "$2" {kept}; shift; done; echo "{{\\"problems\\": []}}"'
    monkeypatch.setenv("OCLTUNE_CLI", fake_cli(tmp_path, keep))
    model = SmallConvBigLinear().to(DEVICE)
    inputs = (rand(1, 1, 5, 4), rand(256, 512, seed=1))
    report = ocltune_torch.tune(model, inputs, budget=10, train=False, progress=False)
    given = json.loads(kept.read_text())
    assert report.cost == "measured" and report.cli_status == 0, report
    assert len(given) == report.problems == report.skipped_for_budget >= 3, (report, given)
    listed = [p["op"] for p in ocltune_torch.dispatch_stats()["devices"][DEVICE.index]["problems"]]
    assert listed[0] == "conv2d", listed
    assert tuple(given[0].get(k) for k in ("op", "m", "n", "k")) == ("gemm", 256, 512, 512), given


def test_ops_and_db_reach_the_cli(own_database, tmp_path, monkeypatch):
    """ops= keeps only those families' problems and passes --ops; db= is what the CLI writes and, as
    $OCLTUNE_DB, what the runtime reads after."""
    kept, args = tmp_path / "given-shapes.json", tmp_path / "args.txt"
    keep = (f'echo "$@" > {args}; while [ $# -gt 0 ]; do [ "$1" = --shapes ] && cp "$2" {kept}; shift; done; '
            'echo "{\\"problems\\": []}"')
    monkeypatch.setenv("OCLTUNE_CLI", fake_cli(tmp_path, keep))
    other = tmp_path / "other.db"
    report = ocltune_torch.tune(SmallConvBigLinear().to(DEVICE), (rand(1, 1, 5, 4), rand(3, 512, seed=1)),
                                budget=10, train=False, progress=False, ops=["gemm"], db=other)
    given = json.loads(kept.read_text())
    assert {p["op"] for p in given} == {"gemm"} and report.problems == len(given), (report, given)
    assert "--ops gemm" in args.read_text() and f"--db {other} " in args.read_text(), args.read_text()
    assert report.database == str(other) == os.environ["OCLTUNE_DB"]


def test_the_steps_leave_the_model_as_it_was(own_database, tmp_path, monkeypatch):
    """Gradients, batch-norm statistics, train/eval mode and the random state are as before tune()."""
    monkeypatch.setenv("OCLTUNE_CLI", fake_cli(tmp_path, 'echo "{\\"problems\\": []}"'))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.BatchNorm1d(8), torch.nn.Dropout(0.5),
                                torch.nn.Linear(8, 2)).to(DEVICE).eval()
    model[0].weight.grad = torch.ones_like(model[0].weight)
    before = {k: v.cpu().clone() for k, v in model.state_dict().items()}
    rng = torch.ocl.get_rng_state(DEVICE)
    report = ocltune_torch.tune(model, rand(5, 6), budget=10, progress=False)
    assert report.problems >= 3 and report.cli_status == 0, report
    assert not model.training and model[3].weight.grad is None
    assert torch.equal(model[0].weight.grad.cpu(), torch.ones(8, 6))
    for name, value in model.state_dict().items():
        assert torch.equal(value.cpu(), before[name]), name
    assert torch.equal(torch.ocl.get_rng_state(DEVICE), rng)


def test_a_failing_step_tunes_what_ran_before_and_names_the_op(own_database, monkeypatch):
    monkeypatch.setenv("OCLTUNE_TORCH_STRICT", "1")
    model = ConvThenFloor().to(DEVICE)
    x = rand(1, 2, 6, 5)
    with pytest.raises(ocltune_torch.TuneStepError, match="aten::lgamma") as failure:
        ocltune_torch.tune(model, x, budget="1m", progress=False, cli_args=QUICK)
    report = failure.value.report
    assert failure.value.op.startswith("aten::lgamma") and report.failed_op == failure.value.op
    assert report.problems >= 1 and report.tuned == report.problems and report.cli_status == 0, report
    assert "OCLTUNE_TORCH_STRICT" in str(failure.value.__cause__)

    ocltune_torch.reset_dispatch_stats()
    out = model.conv(x.to(DEVICE))
    assert ocltune_torch.dispatch_stats()["families"]["conv2d"]["exact"] == 1
    assert_close(out, model.conv.cpu()(x), scale=10)


def test_a_failing_or_killed_cli_raises_with_its_status_and_last_lines(own_database, tmp_path, monkeypatch):
    model = torch.nn.Linear(6, 3).to(DEVICE)
    x = rand(4, 6)
    monkeypatch.setenv("OCLTUNE_CLI", fake_cli(tmp_path, 'echo "[gemm 1/1] started" >&2; echo "no device" >&2; exit 3'))
    with pytest.raises(ocltune_torch.TuneCliError, match="exited with status 3") as failure:
        ocltune_torch.tune(model, x, budget=10, progress=False)
    assert failure.value.returncode == 3 and failure.value.report.cli_status == 3
    assert "no device" in str(failure.value) and "no device" in failure.value.output_tail
    assert failure.value.report.tuned == 0 and not own_database.exists()

    monkeypatch.setenv("OCLTUNE_CLI", fake_cli(tmp_path, 'echo "about to die" >&2; kill -9 $$'))
    with pytest.raises(ocltune_torch.TuneCliError, match="killed by signal 9") as failure:
        ocltune_torch.tune(model, x, budget=10, progress=False)
    assert failure.value.returncode == -9 and "about to die" in failure.value.output_tail


def test_a_missing_cli_is_named(own_database, tmp_path, monkeypatch):
    model = torch.nn.Linear(6, 3).to(DEVICE)
    x = rand(4, 6)
    monkeypatch.setenv("OCLTUNE_CLI", str(tmp_path / "no-such-ocltune"))
    with pytest.raises(FileNotFoundError, match="OCLTUNE_CLI=.*no-such-ocltune"):
        ocltune_torch.tune(model, x, budget=10, progress=False)

    monkeypatch.delenv("OCLTUNE_CLI")
    monkeypatch.setattr(tune_model, "_PACKAGE_DIR", tmp_path / "pkg")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"(?s)OCLTUNE_CLI.*pkg/bin/ocltune.*build/ocltune.*PATH"):
        ocltune_torch.tune(model, x, budget=10, progress=False)


@pytest.mark.parametrize("budget, seconds", [("90s", 90), ("10m", 600), ("1h30m", 5400), ("2.5m", 150), (12, 12),
                                             ("45", 45)])
def test_budgets_the_cli_reads(budget, seconds):
    assert tune_model.parse_budget(budget) == seconds


@pytest.mark.parametrize("budget", ["10x", "", "m", "5mm", "-5s", 0, -1, float("nan"), True, None, "1e3s"])
def test_a_bad_budget_is_refused_before_anything_runs(budget, monkeypatch):
    forbid_subprocesses(monkeypatch)
    model = torch.nn.Linear(6, 3).to(DEVICE)
    ocltune_torch.reset_dispatch_stats()
    with pytest.raises(ValueError, match="budget"):
        ocltune_torch.tune(model, rand(4, 6), budget=budget)
    assert ocltune_torch.dispatch_stats()["calls"] == 0


def test_a_budget_the_steps_spend_leaves_everything_for_a_later_call(own_database, monkeypatch):
    forbid_subprocesses(monkeypatch)
    lines = []
    report = ocltune_torch.tune(torch.nn.Linear(6, 3).to(DEVICE), rand(4, 6), budget=0.5, progress=lines.append)
    assert report.cli_status is None and report.tuned == 0, report
    assert report.skipped_for_budget == report.problems >= 1, report
    assert any("budget is spent" in line for line in lines), lines


def test_bad_arguments_are_clear(monkeypatch):
    forbid_subprocesses(monkeypatch)
    with pytest.raises(ValueError, match="model.to\\('ocl'\\)"):
        ocltune_torch.tune(torch.nn.Linear(2, 2), rand(3, 2), budget=10)
    with pytest.raises(TypeError, match="torch.nn.Module"):
        ocltune_torch.tune(lambda x: x, rand(3, 2), budget=10)
    with pytest.raises(TypeError, match="progress"):
        ocltune_torch.tune(torch.nn.Linear(2, 2).to(DEVICE), rand(3, 2), budget=10, progress="yes")


USER_MODEL = """
import torch

def make():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(11, 6), torch.nn.Tanh()), (torch.randn(3, 11),)
"""


def test_python_m_form_tunes_a_users_module_function(own_database, tmp_path):
    (tmp_path / "user_model.py").write_text(USER_MODEL)
    command = [sys.executable, "-m", "ocltune_torch.tune", "--model", f"{tmp_path / 'user_model.py'}:make",
               "--eval", "--budget", "1m", "--device", str(DEVICE.index), "--json", "--", *QUICK]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "RuntimeWarning" not in run.stderr, run.stderr
    report = json.loads(run.stdout)
    assert report["problems"] >= 1 and report["tuned"] == report["problems"], report
    assert report["database"] == str(own_database) and report["cli_status"] == 0

    bad = subprocess.run([*command[:3], "--model", "no_colon"], env=env, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "torchvision:NAME or module:function" in bad.stderr, bad.stderr
