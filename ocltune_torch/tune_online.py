"""Online tuning (issue 39): a training run tunes what it dispatches as it goes, as MIOpen's find mode
tunes a convolution the first time it meets it.

    ocltune_torch.start_online_tuning(budget="10m")     # or OCLTUNE_TORCH_ONLINE_TUNING=10m at import
    for x, y in data:
        loss_fn(model(x), y).backward(); optimizer.step()   # tuning happens here, at some steps
    ocltune_torch.online_tuning()                        # what it did so far (OnlineTuning, or None)
    ocltune_torch.stop_online_tuning()

After an optimizer step (any optimizer: a global post-step hook), every ``every`` steps from the first,
the problems the process has dispatched that no tuned row answers (lookup level other than exact)
and that no earlier slice tuned go to the ocltune CLI, most calls first, for at most ``slice`` of
the remaining ``budget``; the CLI verifies every configuration against float64 and stores the best
(its search starts from the configurations the runtime borrowed, so a stored row is at least as fast
as what ran, as measured by the tuner), and the runtime reloads, so the next calls take the rows.

Why at a step and not in a background process beside the training: the CLI times kernels on the
same device, and a training step running alongside would distort every timing. The run pauses
for the slice instead; the budget bounds the pauses. The order is by calls, not by time: timing
each problem would need the device synchronised around every op, which tune() does once and a
training run should not. tune() (before training) remains the way to spend a budget costliest first.

A failing CLI stops online tuning with a warning (what it committed is kept and loaded); the
training run goes on.
"""

import collections
import json
import os
import sys
import tempfile
import time
import warnings

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

from . import tune_model
from .tune_loop import reload

__all__ = ["OnlineTuning", "start_online_tuning", "stop_online_tuning", "online_tuning", "ONLINE_TUNING_ENV"]

ONLINE_TUNING_ENV = "OCLTUNE_TORCH_ONLINE_TUNING"

_current = None


class OnlineTuning:
    """The state of an online tuning run (read its attributes; start_online_tuning() creates it)."""

    def __init__(self, budget_s, slice_s, every, database, families, cli, cli_args, emit):
        self.budget_s, self.slice_s, self.every = budget_s, slice_s, every
        self.database, self.families, self.cli, self.cli_args = database, families, cli, list(cli_args)
        self._emit = emit
        self.steps = 0          # optimizer steps seen
        self.slices = 0         # CLI runs started
        self.spent_s = 0.0      # wall time of those runs (the pauses)
        self.tuned = 0          # problems whose best row the CLI wrote
        self.attempted = set()  # (device, op, dtype, math, shape key) the CLI finished, written or not
        self.error = None       # why online tuning stopped early, if it did
        self.stopped = False
        self._hook = register_optimizer_step_post_hook(self._after_step)

    def left_s(self) -> float:
        return self.budget_s - self.spent_s

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            self._hook.remove()

    def __repr__(self):
        state = "stopped" if self.stopped else "running"
        return (f"OnlineTuning({state}: {self.steps} steps, {self.slices} slices, {self.tuned} problems tuned, "
                f"{self.spent_s:.1f} of {self.budget_s:.0f} s spent{', ' + self.error if self.error else ''})")

    def _after_step(self, optimizer, args, kwargs) -> None:
        self.steps += 1
        if self.stopped or (self.steps - 1) % self.every:
            return
        if self.left_s() <= 1:
            self._emit(f"ocltune_torch: online tuning's budget is spent: {self}")
            self.stop()
            return
        pending = self._pending()
        if pending:
            self._tune(pending)

    def _pending(self):
        """Untuned problems of every used device not finished by an earlier slice, most calls first,
        grouped by (device, math): the CLI tunes one device and one math mode per run."""
        groups = collections.defaultdict(list)
        for device in torch.ops.ocltune.used_devices():
            problems = json.loads(torch.ops.ocltune.dispatch_stats_json(device))["problems"]
            for p in problems:
                if p["level"] == "exact" or (self.families and p["op"] not in self.families):
                    continue
                if (device,) + tune_model._problem_key(p) in self.attempted:
                    continue
                groups[(device, p["math"])].append(p)
        for group in groups.values():
            group.sort(key=lambda p: -sum(p["calls"].values()))
        return groups

    def _tune(self, groups) -> None:
        tail = collections.deque(maxlen=20)
        deadline = time.monotonic() + min(self.slice_s, self.left_s())
        with tempfile.TemporaryDirectory(prefix="ocltune-online-") as tmp:
            for (device, math), group in groups.items():
                left = deadline - time.monotonic()
                if left <= 1:
                    break
                command = tune_model._cli_command(self.cli, device, group, math, left, self.database, self.families,
                                                  self.cli_args, os.path.join(tmp, f"shapes-{device}-{math}.json"))
                self._emit(f"ocltune_torch: online tuning at step {self.steps}: {len(group)} problem(s) on ocl:{device}"
                           f" ({math}), up to {left:.0f} s")
                start = time.monotonic()
                self.slices += 1
                try:
                    status, result = tune_model._run_cli(command, self._emit, tail)
                finally:
                    self.spent_s += time.monotonic() - start
                done = result.get("problems", []) if isinstance(result, dict) else []
                self.tuned += sum(1 for r in done if r.get("best_written"))
                # What the CLI finished (written or not: it searched) is not tried again.
                finished = {(r.get("op"), r.get("shape_key")) for r in done}
                for p in group:
                    if (p["op"], p["shape_key"]) in finished:
                        self.attempted.add((device,) + tune_model._problem_key(p))
                if status != 0:
                    how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
                    self.error = f"the ocltune CLI {how}"
                    warnings.warn(f"ocltune_torch: online tuning stops: {self.error} ({' '.join(command)}); its "
                                  "last lines:\n" + "\n".join(tail) + "\nwhat it stored is kept; training goes on",
                                  RuntimeWarning, stacklevel=3)
                    self.stop()
                    break
        reload()  # the rows written so far answer from the next call


def start_online_tuning(budget="10m", *, every=1, slice="60s", db=None, ops=None, cli_args=(),
                        progress=True) -> OnlineTuning:
    """Starts online tuning in this process (replacing one already running) and returns its state.

    budget: the total pause it may take from the training run ("90s", "10m", seconds). slice: the most
    one pause takes. every: tune after the 1st, (1 + every)th, ... optimizer step (new problems met
    later, say by an evaluation pass, are tuned at the next such step). db: the database the CLI writes
    and the runtime reads (default: $OCLTUNE_DB, else the user database). ops: op families to tune
    (default all). cli_args: more `ocltune` options. progress: True (the CLI's lines to stderr), False,
    or a callable taking each line. Raises ValueError on a bad argument, FileNotFoundError when no
    ocltune CLI exists (tune_model.find_cli)."""
    global _current
    budget_s = tune_model.parse_budget(budget)
    slice_s = tune_model.parse_budget(slice)
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f"ocltune_torch.start_online_tuning: every must be a positive number of steps, not {every!r}")
    families = tune_model._families(ops, "ocltune_torch.start_online_tuning")
    cli = tune_model.find_cli()
    database = tune_model._use_database(db)
    stop_online_tuning()
    _current = OnlineTuning(budget_s, slice_s, every, database, families, cli, [str(a) for a in cli_args],
                            tune_model._emit(progress))
    return _current


def stop_online_tuning() -> None:
    """Stops online tuning (rows already written stay in use)."""
    if _current is not None:
        _current.stop()


def online_tuning():
    """The online tuning of this process (running or stopped), or None when none was started."""
    return _current


def _start_from_environment() -> None:
    """$OCLTUNE_TORCH_ONLINE_TUNING=<budget> starts online tuning with the defaults at import. A bad
    value or a missing CLI is a warning: the import, and the training, go on without it."""
    value = os.environ.get(ONLINE_TUNING_ENV)
    if not value:
        return
    try:
        start_online_tuning(value)
    except (ValueError, FileNotFoundError) as e:
        print(f"ocltune_torch: ${ONLINE_TUNING_ENV}={value!r}: online tuning not started: {e}", file=sys.stderr)
