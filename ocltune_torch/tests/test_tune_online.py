"""Online tuning (issue 39, tune_online.py): a training loop's optimizer steps tune what it dispatches,
in slices of a budget, and the next calls answer at `exact`; the results stay the CPU's. Also: the
budget stops it, stop_online_tuning() removes the hook, a failing CLI stops it with a warning and
the training goes on, bad arguments and a bad environment value. Each test tunes into its own
database with tiny budgets (test_tune.py's own_database and QUICK)."""

import pytest
import torch

import ocltune_torch
from conftest import DEVICE, assert_close, rand
from test_tune import QUICK, ConvLinear, fake_cli, own_database  # noqa: F401  (a fixture)


def train(model, x, steps, optimizer):
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        model(x).sum().backward()
        optimizer.step()


def levels_now(model, x):
    """Lookup levels of a step's forward and backward (as train() runs them: gradients set to None)."""
    model.zero_grad(set_to_none=True)
    ocltune_torch.reset_dispatch_stats()
    model(x).sum().backward()
    return {k: n for k, n in ocltune_torch.dispatch_stats()["levels"].items() if n}


@pytest.fixture
def stopped():
    yield
    ocltune_torch.stop_online_tuning()


def test_steps_tune_what_they_dispatch_and_later_calls_take_the_rows(own_database, stopped):
    model = ConvLinear().to(DEVICE)
    x = rand(2, 3, 7, 9).to(DEVICE)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    lines = []
    state = ocltune_torch.start_online_tuning("2m", every=2, progress=lines.append, cli_args=QUICK)
    assert ocltune_torch.online_tuning() is state and not state.stopped
    train(model, x, 1, optimizer)  # the first step's problems are tuned after it
    assert state.slices == 1 and state.tuned >= 4 and state.error is None, state
    assert own_database.is_file() and any(line.startswith("[conv2d") for line in lines), lines
    assert set(levels_now(model, x)) == {"exact"}
    # Later steps tune nothing (every=2, and nothing new); the model still trains like the CPU's. The
    # hook is every optimizer's: the CPU's two steps count too (steps 3 and 5 find nothing to tune).
    cpu = ConvLinear()
    cpu.load_state_dict({k: v.cpu() for k, v in model.state_dict().items()})
    cpu_optimizer = torch.optim.SGD(cpu.parameters(), lr=0.01)
    train(model, x, 2, optimizer)
    train(cpu, x.cpu(), 2, cpu_optimizer)
    assert state.steps == 5 and state.slices == 1, state
    assert_close(model.conv.weight.detach(), cpu.conv.weight.detach(), scale=10)
    assert_close(model.fc.weight.detach(), cpu.fc.weight.detach(), scale=10)
    ocltune_torch.stop_online_tuning()
    train(model, x, 1, optimizer)
    assert state.stopped and state.steps == 5  # the hook is gone


def test_a_spent_budget_and_a_failing_cli_stop_it(own_database, stopped, tmp_path, monkeypatch):
    model = ConvLinear().to(DEVICE)
    x = rand(2, 3, 7, 9).to(DEVICE)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    # A CLI that fails: a warning names it, online tuning stops, the training step completes.
    monkeypatch.setenv("OCLTUNE_CLI", fake_cli(tmp_path, 'echo "device on fire" >&2; exit 3'))
    state = ocltune_torch.start_online_tuning("1m", progress=False)
    with pytest.warns(RuntimeWarning, match="exited with status 3(.|\n)*device on fire"):
        train(model, x, 1, optimizer)
    assert state.stopped and state.error and state.slices == 1
    train(model, x, 1, optimizer)
    assert state.slices == 1
    # A budget the first slice spends (a CLI that takes 2.5 s of a 3 s budget): stopped at the next
    # step that would tune, without starting the CLI.
    monkeypatch.setenv("OCLTUNE_CLI", fake_cli(tmp_path, 'sleep 2.5; echo "{\\"problems\\": []}"'))
    state = ocltune_torch.start_online_tuning(3, progress=False)
    train(model, x, 2, optimizer)
    assert state.slices == 1 and state.stopped and state.error is None, state


def test_bad_arguments_and_environment(own_database, stopped, monkeypatch, capsys):
    for bad in (dict(budget="soon"), dict(budget=-1), dict(every=0), dict(every=1.5), dict(slice="0s"),
                dict(ops=[])):
        with pytest.raises(ValueError):
            ocltune_torch.start_online_tuning(**{"budget": "1m", **bad})
    monkeypatch.setenv("OCLTUNE_CLI", "/nonexistent/ocltune")
    with pytest.raises(FileNotFoundError):
        ocltune_torch.start_online_tuning("1m")
    # $OCLTUNE_TORCH_ONLINE_TUNING with a bad value: a message, no exception, nothing started.
    before = ocltune_torch.online_tuning()
    monkeypatch.setenv(ocltune_torch.tune_online.ONLINE_TUNING_ENV, "soon")
    ocltune_torch.tune_online._start_from_environment()
    assert "online tuning not started" in capsys.readouterr().err
    assert ocltune_torch.online_tuning() is before
