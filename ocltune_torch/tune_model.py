"""Tune what a model runs, in one call (issue 39): ``ocltune_torch.tune(model, example_inputs, budget="10m")``.

One step of the model (training: forward, loss, backward; or inference) is run on its ocl device
with the dispatch statistics reset; every distinct problem it dispatched that does not already
answer at the ``exact`` level is written, costliest first, to an ``ocltune --shapes`` file and tuned
by the ``ocltune`` CLI in a child process (a crash or hang of a kernel ends that process, not the
caller's), into the user database; then the runtime reloads. A second call finds every problem at
``exact`` and starts no process. The manual loop this replaces is tune_loop.py's.

The command-line form is ``python -m ocltune_torch.tune`` (main() below; tune.py runs it).
"""

import argparse
import collections
import dataclasses
import importlib
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import signal
import tempfile
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .tune_loop import reload, reset_dispatch_stats

__all__ = ["tune", "TuneReport", "TuneError", "TuneStepError", "TuneCliError", "parse_budget", "find_cli", "main"]

CLI_ENV = "OCLTUNE_CLI"
_PACKAGE_DIR = pathlib.Path(__file__).resolve().parent
_TAIL_LINES = 20  # of the CLI's output, in an error


@dataclasses.dataclass
class TuneReport:
    """What one tune() call did. ``cli_status`` is None when no CLI was started (nothing to tune)."""

    problems: int = 0  # distinct problems the step dispatched (of the families asked for)
    already_tuned: int = 0  # of those, answered at `exact` before the call
    tuned: int = 0  # tuned by this call: the CLI wrote their row
    skipped_for_budget: int = 0  # given to the CLI, not reached before the budget ran out
    cli_status: "int | None" = None
    database: str = ""
    seconds: float = 0.0
    cost: str = "measured"  # how the problems were ordered: "measured" time, or "calls" where none was
    failed_op: "str | None" = None  # the op the step failed at (TuneStepError carries this report)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        return (f"{self.problems} problem(s): {self.already_tuned} already tuned, {self.tuned} tuned now, "
                f"{self.skipped_for_budget} left for the budget; database {self.database}; {self.seconds:.1f} s")


class TuneError(RuntimeError):
    """tune() failed; ``report`` says what it did before (rows the CLI wrote stay in the database)."""

    def __init__(self, message: str, report: TuneReport):
        super().__init__(message)
        self.report = report


class TuneStepError(TuneError):
    """The model's step failed (at ``op``, when an aten op raised). The problems it dispatched
    before the failure were tuned; ``__cause__`` is the step's exception."""

    def __init__(self, message: str, report: TuneReport, op):
        super().__init__(message, report)
        self.op = op


class TuneCliError(TuneError):
    """The ocltune CLI exited with a failure or was killed: ``returncode`` (negative: the signal)
    and ``output_tail``, its last lines."""

    def __init__(self, message: str, report: TuneReport, returncode: int, output_tail: str):
        super().__init__(message, report)
        self.returncode = returncode
        self.output_tail = output_tail


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([hms]?)")


def parse_budget(budget) -> float:
    """Seconds from a number of seconds or a duration the CLI reads: "90s", "10m", "1h30m", "2.5m"."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float, str)):
        raise ValueError(f"ocltune_torch.tune: budget must be seconds or a duration such as '90s', '10m', "
                         f"'1h30m', not {type(budget).__name__}")
    if isinstance(budget, str):
        text = budget.strip()
        pos, seconds, units = 0, 0.0, {"h": 3600, "m": 60, "s": 1, "": 1}
        while pos < len(text):
            match = _DURATION.match(text, pos)
            if not match or (match.group(2) == "" and match.end() != len(text)):
                raise ValueError(f"ocltune_torch.tune: bad budget {budget!r} (e.g. '90s', '10m', '1h30m', or seconds)")
            seconds += float(match.group(1)) * units[match.group(2)]
            pos = match.end()
        if not text:
            raise ValueError("ocltune_torch.tune: empty budget (e.g. '90s', '10m', '1h30m', or seconds)")
    else:
        seconds = float(budget)
    if not (seconds > 0 and seconds < float("inf")):
        raise ValueError(f"ocltune_torch.tune: the budget must be a positive, finite time, not {budget!r}")
    return seconds


def find_cli() -> str:
    """The ocltune CLI: $OCLTUNE_CLI, else <package>/bin/ocltune (the wheel's), else <repo>/build/ocltune,
    else `ocltune` on PATH."""
    explicit = os.environ.get(CLI_ENV)
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise FileNotFoundError(f"ocltune_torch.tune: ${CLI_ENV}={explicit} is not an executable file")
        return explicit
    candidates = [_PACKAGE_DIR / "bin" / "ocltune", _PACKAGE_DIR.parent / "build" / "ocltune"]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    on_path = shutil.which("ocltune")
    if on_path:
        return on_path
    raise FileNotFoundError(
        "ocltune_torch.tune: no ocltune CLI found: $" + CLI_ENV + " is not set, and neither "
        + " nor ".join(str(p) for p in candidates) + " nor `ocltune` on PATH exists; build it "
        "(cmake --build build --target ocltune) or set $" + CLI_ENV)


def _problem_key(p) -> tuple:
    return (p["op"], p["dtype"], p["math"], p["shape_key"])


def _calls_by_problem(device: int) -> dict:
    problems = json.loads(torch.ops.ocltune.dispatch_stats_json(device))["problems"]
    return {_problem_key(p): sum(p["calls"].values()) for p in problems}


class _StepWatch(TorchDispatchMode):
    """Sees every aten op of the step (the backward's too: the mode follows autograd onto the
    device's thread). Names the op that raised; with ``timed``, synchronises the device around each
    op and hands its wall time to the problems it dispatched, split by their calls."""

    def __init__(self, device: int, timed: bool):
        super().__init__()
        self.device, self.timed = device, timed
        self.failed_op = None
        self.seconds = collections.defaultdict(float)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if not self.timed:
            return self._run(func, args, kwargs)
        torch.ops.ocltune.synchronize(self.device)
        before = _calls_by_problem(self.device)
        start = time.perf_counter()
        try:
            return self._run(func, args, kwargs)
        finally:
            torch.ops.ocltune.synchronize(self.device)
            elapsed = time.perf_counter() - start
            delta = {k: n - before.get(k, 0) for k, n in _calls_by_problem(self.device).items()}
            delta = {k: n for k, n in delta.items() if n > 0}
            total = sum(delta.values())
            for key, n in delta.items():
                self.seconds[key] += elapsed * n / total

    def _run(self, func, args, kwargs):
        try:
            return func(*args, **(kwargs or {}))
        except Exception:
            if self.failed_op is None:
                schema = func._schema
                self.failed_op = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
            raise


def _device_of(model, inputs, device) -> torch.device:
    found = next((t.device for t in list(model.parameters()) + list(model.buffers())), None)
    if device is not None:
        device = torch.device(device)
        if device.type != "ocl":
            raise ValueError(f"ocltune_torch.tune: device must be an ocl device, not {device}")
        if device.index is None:
            device = torch.device("ocl", torch.ocl.current_device())
        if found is not None and found != device:
            raise ValueError(f"ocltune_torch.tune: the model is on {found}, not on device={device}; move it first")
        return device
    if found is None:
        found = next((t.device for t in _tensors(inputs)), None)
    if found is None or found.type != "ocl":
        raise ValueError(f"ocltune_torch.tune: the model is on {found or 'no device (no parameters, no tensor inputs)'}; "
                         "move it to an ocl device first (model.to('ocl')), or pass device=")
    return found if found.index is not None else torch.device("ocl", torch.ocl.current_device())


def _tensors(tree):
    return [t for t in torch.utils._pytree.tree_leaves(tree) if isinstance(t, torch.Tensor)]


def _step(model, inputs, kwargs, train: bool, loss_fn) -> None:
    if not train:
        with torch.no_grad():
            model(*inputs, **kwargs)
        return
    out = model(*inputs, **kwargs)
    if loss_fn is not None:
        loss = loss_fn(out)
    else:
        floats = [t for t in _tensors(out) if t.is_floating_point()]
        if not floats:
            raise ValueError("ocltune_torch.tune: the model's output has no floating-point tensor to sum into "
                             "a loss; pass loss_fn= or train=False")
        loss = sum(t.float().sum() for t in floats)
    wrt = [p for p in model.parameters() if p.requires_grad] + [t for t in _tensors(inputs) if t.requires_grad]
    if wrt and loss.requires_grad:
        # autograd.grad, not backward(): the model's .grad fields stay as they were.
        torch.autograd.grad(loss, wrt, allow_unused=True)


def _run_step(model, inputs, kwargs, train, loss_fn, device: int, timed: bool):
    """One step under a _StepWatch, the model's mode, buffers (batch-norm statistics) and random
    state (dropout) restored after: the step is a measurement, not training. Returns (watch,
    exception or None)."""
    was_training = model.training
    buffers = [(b, b.detach().clone()) for b in model.buffers()]
    watch = _StepWatch(device, timed)
    error = None
    try:
        model.train(train)
        with torch.random.fork_rng(devices=[device], device_type="ocl"), watch:
            _step(model, inputs, kwargs, train, loss_fn)
        torch.ops.ocltune.synchronize(device)
    except Exception as e:  # noqa: BLE001  (reported after the problems before it are tuned)
        error = e
    finally:
        model.train(was_training)
        with torch.no_grad():
            for b, saved in buffers:
                b.copy_(saved)
    return watch, error


def _emit(progress):
    if progress is True:
        return lambda line: print(line, file=sys.stderr, flush=True)
    if progress is False or progress is None:
        return lambda line: None
    if callable(progress):
        return progress
    raise TypeError(f"ocltune_torch.tune: progress must be True, False or a callable taking a line, not {progress!r}")


def _run_cli(command, emit, tail) -> "tuple[int, dict | None]":
    """Runs the CLI, each line of its stderr (the progress) to emit as it comes; returns its status
    and its --json result (None when stdout held none). On KeyboardInterrupt the CLI is interrupted
    too (it stops, keeping every finished evaluation)."""
    with tempfile.TemporaryFile("w+") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, text=True, errors="replace")
        try:
            for line in process.stderr:
                line = line.rstrip("\n")
                tail.append(line)
                emit(line)
            status = process.wait()
        except BaseException:
            process.send_signal(signal.SIGINT)  # the CLI stops after the evaluation in flight, rows kept
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            raise
        out.seek(0)
        text = out.read()
    try:
        return status, json.loads(text)
    except ValueError:
        tail.extend(text.splitlines()[-_TAIL_LINES:])
        return status, None


def _families(ops, caller: str):
    """The op families `ops` names (a name or a list of them), or None for all; ValueError otherwise."""
    if ops is None:
        return None
    families = [ops] if isinstance(ops, str) else list(ops)
    if not families or not all(isinstance(f, str) and f for f in families):
        raise ValueError(f"{caller}: ops must name op families (e.g. ['conv2d', 'gemm']), not {ops!r}")
    return families


def _use_database(db) -> str:
    """The database the CLI writes: `db` (then also $OCLTUNE_DB for this process, reloaded, so that the
    runtime reads the layers the CLI writes), else $OCLTUNE_DB or the user database."""
    if db is None:
        return _default_database()
    db = os.path.abspath(os.fspath(db))
    if os.environ.get("OCLTUNE_DB") != db:
        os.environ["OCLTUNE_DB"] = db
        reload()
    return db


def _cli_command(cli, device, group, math, seconds, database, families, cli_args, shapes) -> list:
    """Writes `group`'s problems to the shapes file `shapes` and returns the CLI command tuning them on
    `device` in math mode `math` within `seconds`, into `database`, with a --json result."""
    with open(shapes, "w") as f:
        json.dump([{"op": p["op"], **{k: v for k, v in p["shape"].items() if k != "op"}} for p in group], f)
    command = [cli, "--device", str(device), "--shapes", shapes, "--time-budget", f"{seconds:.3f}s",
               "--db", database, "--json"]
    if math != "exact":
        command += ["--math", math]
    if families:
        command += ["--ops", ",".join(families)]
    return command + list(cli_args)


def tune(model, example_inputs, *, budget="10m", train=True, loss_fn=None, device=None, db=None, ops=None,
         progress=True, cli_args=()) -> TuneReport:
    """Tunes the problems one step of ``model`` dispatches on its ocl device, costliest first,
    within ``budget``, into the user database, and reloads the runtime so that they answer at
    ``exact``. Problems already at ``exact`` are not tuned again: a second call starts no process.

    example_inputs: a tensor, a tuple of positional arguments, or a dict of keyword arguments
        (tensors on the CPU are moved to the device).
    budget: the call's wall time ("90s", "10m", "1h30m", or seconds); the CLI gets what the steps
        left of it (it finishes the problem in flight, so a call can run over by one problem's search).
        Problems it does not reach are counted in ``skipped_for_budget``; a later call tunes them.
    train: one training step (forward, ``loss_fn(output)`` or the sum of the output, backward through
        autograd.grad, so the parameters' .grad stay as they were) or, False, inference under no_grad
        in eval mode. The model's mode, buffers and the random state are restored after.
    device: the ocl device (default: the model's). db: the database the CLI writes (default: $OCLTUNE_DB,
        else ~/.cache/ocltune/tuned.db as the runtime reads it); another path is also set as
        $OCLTUNE_DB for this process, so the runtime reads it after. ops: families to tune (e.g.
        ["conv2d", "gemm"]; default all). progress: True (the CLI's lines to stderr), False, or a
        callable taking each line. cli_args: more `ocltune` options (e.g. ["--max-evals", "4"]).

    Cost: measured. Two more, warm steps (programs already built) synchronise the device around
    each aten op and give the op's wall time to the problems it dispatched, split by their calls
    (an op that dispatched conv2d's bwd_data, bwd_weight and a bias reduce gives each a third). It
    includes each op's launch cost; a per-problem device time would need the runtime's kernel
    observer to carry the problem, a C ABI change. A problem's cost is the smaller of its two
    steps' times; problems the warm steps did not time are ordered after, by calls.

    Raises TuneStepError when the step fails (after tuning what it dispatched before), TuneCliError
    when the CLI fails or is killed (its rows so far are kept), ValueError on a bad argument,
    FileNotFoundError when no CLI exists (see find_cli). Returns a TuneReport.
    """
    start = time.monotonic()
    seconds = parse_budget(budget)
    emit = _emit(progress)
    if loss_fn is not None and not callable(loss_fn):
        raise TypeError("ocltune_torch.tune: loss_fn must be a callable taking the model's output")
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"ocltune_torch.tune: model must be a torch.nn.Module, not {type(model).__name__}")
    families = _families(ops, "ocltune_torch.tune")
    cli_args = [str(a) for a in cli_args]
    database = _use_database(db)

    dev = _device_of(model, example_inputs, device)
    if isinstance(example_inputs, dict):
        args, kwargs = (), example_inputs
    else:
        args, kwargs = (example_inputs if isinstance(example_inputs, (tuple, list)) else (example_inputs,)), {}
    move = lambda t: t.to(dev) if isinstance(t, torch.Tensor) and t.device != dev else t  # noqa: E731
    args, kwargs = torch.utils._pytree.tree_map(move, (tuple(args), kwargs))

    report = TuneReport(database=database)
    reset_dispatch_stats()
    watch, error = _run_step(model, args, kwargs, train, loss_fn, dev.index, timed=False)
    problems = json.loads(torch.ops.ocltune.dispatch_stats_json(dev.index))["problems"] \
        if dev.index in torch.ops.ocltune.used_devices() else []
    problems = [p for p in problems if families is None or p["op"] in families]
    pending = [p for p in problems if p["level"] != "exact"]
    report.problems, report.already_tuned = len(problems), len(problems) - len(pending)
    report.failed_op = watch.failed_op if error is not None else None

    if pending:
        cli = find_cli()
        # The smaller of two timed steps: a busy host's stalls land on one op of one step.
        steps = [_run_step(model, args, kwargs, train, loss_fn, dev.index, timed=True)[0] for _ in range(2)]
        cost = {key: min(s.seconds.get(key, 0.0) for s in steps) for key in map(_problem_key, pending)}
        if not any(cost.values()):
            report.cost = "calls"
        pending.sort(key=lambda p: (-cost[_problem_key(p)], -sum(p["calls"].values())))
        _tune_pending(cli, pending, dev.index, start + seconds, database, families, cli_args, emit, report, start)
    report.seconds = time.monotonic() - start

    if error is not None:
        where = f"at {report.failed_op}" if report.failed_op else f"({type(error).__name__})"
        raise TuneStepError(f"ocltune_torch.tune: the model's step failed {where}: {error}\n"
                            f"what it dispatched before was tuned: {report}", report,
                            report.failed_op) from error
    return report


def _default_database() -> str:
    env = os.environ.get("OCLTUNE_DB")
    if env:
        return env
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.environ.get("HOME") or ".", ".cache")
    return os.path.join(cache, "ocltune", "tuned.db")


def _tune_pending(cli, pending, device, deadline, database, families, cli_args, emit, report, start) -> None:
    """One CLI run per math mode (--math applies to a whole run), in cost order, each given the time
    left before ``deadline`` (time.monotonic()); then reload(). Raises TuneCliError on a failed run,
    after reloading what it committed."""
    by_math = collections.defaultdict(list)
    for p in pending:
        by_math[p["math"]].append(p)
    tail = collections.deque(maxlen=_TAIL_LINES)
    with tempfile.TemporaryDirectory(prefix="ocltune-tune-") as tmp:
        for math, group in by_math.items():
            left = deadline - time.monotonic()
            if left <= 1:  # the steps spent the budget: no CLI for less than a second
                emit(f"ocltune_torch.tune: the budget is spent; {len(group)} problem(s) ({math}) left untuned")
                report.skipped_for_budget += len(group)
                continue
            command = _cli_command(cli, device, group, math, left, database, families, cli_args,
                                   os.path.join(tmp, f"shapes-{math}.json"))
            emit(f"ocltune_torch.tune: tuning {len(group)} problem(s) ({math}) of {report.problems}: "
                 + " ".join(command))
            try:
                status, result = _run_cli(command, emit, tail)
            except KeyboardInterrupt:
                reload()  # the rows the interrupted CLI committed answer from now on
                raise
            report.cli_status = status
            done = result.get("problems", []) if isinstance(result, dict) else []
            report.tuned += sum(1 for r in done if r.get("best_written"))
            report.skipped_for_budget += len(group) - len(done)
            if status != 0:
                reload()  # what the CLI committed before it failed
                report.seconds = time.monotonic() - start
                how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
                output = "\n".join(tail)
                raise TuneCliError(f"ocltune_torch.tune: the ocltune CLI {how} ({' '.join(command)}); "
                                   f"its last lines:\n{output}", report, status, output)
    reload()
    report.seconds = time.monotonic() - start
    emit(f"ocltune_torch.tune: {report}")


def _load_model(spec: str, input_shapes, device):
    """(model, example_inputs) from torchvision:NAME (random inputs of --input's shapes) or
    module:function (or path/to/file.py:function), whose function returns them."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name:
        raise ValueError(f"--model {spec!r}: expected torchvision:NAME or module:function")
    if where == "torchvision":
        import torchvision

        if not input_shapes:
            raise ValueError("--model torchvision:...: give the input's shape, e.g. --input 2,3,64,64")
        model = torchvision.models.get_model(name, weights=None)
        inputs = tuple(torch.randn(shape) for shape in input_shapes)
    else:
        if where.endswith(".py"):
            spec_ = importlib.util.spec_from_file_location(pathlib.Path(where).stem, where)
            if spec_ is None:
                raise ValueError(f"--model {spec!r}: cannot load {where}")
            module = importlib.util.module_from_spec(spec_)
            spec_.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
        made = getattr(module, name)()
        if not (isinstance(made, (tuple, list)) and len(made) == 2):
            raise ValueError(f"--model {spec!r}: {name}() must return (model, example_inputs)")
        model, inputs = made
    return model.to(device), inputs


def _shape(text: str):
    try:
        dims = tuple(int(d) for d in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected sizes such as 2,3,64,64") from None
    if not dims or any(d <= 0 for d in dims):
        raise argparse.ArgumentTypeError(f"{text!r}: expected positive sizes such as 2,3,64,64")
    return dims


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ocltune_torch.tune",
        description="Tune the problems one step of a model dispatches on an ocl device, costliest first, "
                    "into the user database (ocltune_torch.tune).")
    parser.add_argument("--model", required=True,
                        help="torchvision:NAME (e.g. torchvision:resnet18), or module:function / file.py:function "
                             "returning (model, example_inputs)")
    parser.add_argument("--input", type=_shape, action="append", default=[],
                        help="an input's shape for torchvision models, e.g. 2,3,64,64 (repeat for more inputs)")
    parser.add_argument("--budget", default="10m", help="tuning wall-time budget: 90s, 10m, 1h30m or seconds")
    parser.add_argument("--eval", action="store_true", help="an inference step (no_grad, eval mode), not training")
    parser.add_argument("--device", type=int, default=0, help="the ocl device index (as `ocltune devices` lists)")
    parser.add_argument("--db", help="database to write (default: $OCLTUNE_DB, else ~/.cache/ocltune/tuned.db)")
    parser.add_argument("--ops", help="op families to tune, comma-separated (default: all)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.add_argument("cli_args", nargs="*", help="after --: more ocltune options, e.g. -- --max-evals 4")
    options = parser.parse_args(argv)
    try:
        budget = parse_budget(options.budget)
        device = torch.device("ocl", options.device)
        if not 0 <= options.device < torch.ocl.device_count():
            raise ValueError(f"--device {options.device}: there are {torch.ocl.device_count()} ocl device(s)")
        model, inputs = _load_model(options.model, options.input, device)
    except (ValueError, ImportError, AttributeError) as e:
        parser.error(str(e))
    try:
        report = tune(model, inputs, budget=budget, train=not options.eval, device=device, db=options.db,
                      ops=options.ops.split(",") if options.ops else None, progress=not options.quiet,
                      cli_args=options.cli_args)
    except TuneError as e:
        print(e, file=sys.stderr)
        if options.json:
            print(json.dumps(e.report.as_dict(), indent=1))
        return 1
    except (ValueError, FileNotFoundError, TypeError) as e:
        print(e, file=sys.stderr)
        return 2
    print(json.dumps(report.as_dict(), indent=1) if options.json else report)
    return 0
