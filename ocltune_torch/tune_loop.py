"""The tune-what-you-run loop: record what the process dispatched, tune it with the CLI, reload.

    ocltune_torch.record_shapes("shapes.json")      # or OCLTUNE_TORCH_RECORD_SHAPES=shapes.json
    $ ocltune --device N --shapes shapes.json        # tunes those problems into $OCLTUNE_DB
    ocltune_torch.reload()                           # (or a new process): they answer at `exact`
    ocltune_torch.dispatch_stats()["levels"]         # {"exact": ..., "builtin": ..., ...}

Each device's runtime counts its calls per distinct problem and lookup level from its first use, or
from the last reset_dispatch_stats(); reload() keeps the counts.
"""

import atexit
import json
import os
import sys

import torch

__all__ = ["record_shapes", "dispatch_stats", "reset_dispatch_stats", "reload", "RECORD_SHAPES_ENV"]

RECORD_SHAPES_ENV = "OCLTUNE_TORCH_RECORD_SHAPES"
LEVELS = ("exact", "nearest", "class", "builtin", "library")

_record_path = None
_at_exit_registered = False


def record_shapes(path=None) -> int:
    """Writes every distinct problem the process dispatched on any ocl device (once each, with the
    lookup level that answered and its calls) to ``path`` as an ``ocltune --shapes`` file, now and
    again when the interpreter exits, so that the file also holds what runs later. Returns the number
    of problems written. ``path`` None writes to the path given before (or by $OCLTUNE_TORCH_RECORD_SHAPES).
    The file is replaced atomically: a tuner reading it never sees half of it.
    """
    global _record_path
    if path is None:
        path = _record_path
    if path is None:
        raise ValueError(f"ocltune_torch.record_shapes: no path given, and ${RECORD_SHAPES_ENV} is not set")
    _record_path = os.fspath(path)
    _write_at_exit()
    return torch.ops.ocltune.write_shapes_file(_record_path)


def dispatch_stats() -> dict:
    """Calls through ocltune's runtime by lookup level and by family, summed over the devices used,
    and per device (with its distinct problems):

        {"calls": 12, "levels": {"exact": 9, "builtin": 3, ...}, "families": {"gemm": {"exact": 4, ...}, ...},
         "devices": {0: {"calls", "levels", "families", "problems": [{"op", "dtype", "shape_key",
                                                                      "level", "calls", "shape"}, ...]}},
         "plain_launches": 40}

    "plain_launches" counts the launches of the backend's plain kernels (data movement, casts,
    integer ops, the multi-tensor optimiser steps), which do not go through the runtime.
    """
    total = {"calls": 0, "levels": dict.fromkeys(LEVELS, 0), "families": {}, "devices": {},
             "plain_launches": torch.ops.ocltune.plain_launches()}
    for device in torch.ops.ocltune.used_devices():
        stats = json.loads(torch.ops.ocltune.dispatch_stats_json(device))
        stats["families"] = stats.pop("ops")
        total["devices"][device] = stats
        total["calls"] += stats["calls"]
        for level, n in stats["levels"].items():
            total["levels"][level] += n
        for family, levels in stats["families"].items():
            into = total["families"].setdefault(family, dict.fromkeys(LEVELS, 0))
            for level, n in levels.items():
                into[level] += n
    return total


def reset_dispatch_stats() -> None:
    """Zeroes every device's counts (the cached decisions stay)."""
    torch.ops.ocltune.reset_dispatch_stats()


def reload() -> None:
    """Every used device's runtime reads its databases again ($OCLTUNE_DB as it is now, the system
    database) and forgets its cached decisions, so that rows tuned since answer the next calls."""
    torch.ops.ocltune.reload()


def _write_at_exit() -> None:
    global _at_exit_registered
    if not _at_exit_registered:
        atexit.register(_flush_at_exit)
        _at_exit_registered = True


def _flush_at_exit() -> None:
    if _record_path is None:
        return
    try:
        torch.ops.ocltune.write_shapes_file(_record_path)
    except Exception as e:  # nothing may escape from an exit handler; say why the file is missing
        print(f"ocltune_torch: could not write the shapes file {_record_path}: {e}", file=sys.stderr)


def _record_from_environment() -> None:
    """$OCLTUNE_TORCH_RECORD_SHAPES=path: the shapes file is written at exit (and by record_shapes())."""
    global _record_path
    path = os.environ.get(RECORD_SHAPES_ENV)
    if path:
        _record_path = path
        _write_at_exit()
