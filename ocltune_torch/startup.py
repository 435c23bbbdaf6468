"""Where a process's first steps spent their time: the cold path of every ocl device used so far.

    ocltune_torch.startup_stats()   # {"resolutions": 76, "resolve_s": 3.8, "compiled": 40, ...}

A model's first step resolves each new problem (the lookup chain, the first-dispatch check of a
borrowed configuration, its programs) and builds the backend's plain programs it touches; later steps
find all of them cached. bench/first_step.py prints these beside the first step's time
(docs/decisions/0065-cold-start.md).
"""

import json

import torch

__all__ = ["startup_stats"]

# The runtime's "cold_path" counters (include/ocltune/ocltune.h), summed over the devices used.
_COLD_PATH = ("resolutions", "resolve_s", "checks", "check_s", "checks_remembered", "compiled", "compile_s", "loaded",
              "load_s", "stored", "store_s", "provisional", "upgrades")


def startup_stats() -> dict:
    """Since the process started, over every ocl device used (seconds summed over threads):

        resolutions, resolve_s   new problems resolved by ocltune's runtime (all below that they need included)
        checks, check_s          first-dispatch checks of configurations borrowed from other shapes or devices
        checks_remembered        borrowed configurations run unchecked: an earlier process checked the same
                                 kernels on this device (kept beside ocltune's binary cache)
        compiled, compile_s      programs compiled from source by the runtime's program cache
        loaded, load_s           programs loaded from ocltune's on-disk binary cache (misses included in load_s)
        stored, store_s          binaries written to that cache (a driver may compile every kernel to give one)
        provisional, upgrades    with OCLTUNE_FAST_START=1: problems that ran their built-in configuration while
                                 a better one was built (and checked) in the background, and those switched since
        plain_programs, plain_s  the backend's own plain programs built (casts, indexing, optimisers, ...);
                                 on GPUs they build through the runtime's cache, so compiled/loaded count them too

    A driver that compiles a kernel when it is first enqueued (PoCL) spends that time in the queue,
    outside these figures: in the step's synchronisation. OCLTUNE_TORCH_LOG_BUILDS=1 names each plain
    program on stderr as it is built, with its type slots and build time.
    """
    total = dict.fromkeys(_COLD_PATH, 0)
    for device in torch.ops.ocltune.used_devices():
        cold = json.loads(torch.ops.ocltune.dispatch_stats_json(device))["cold_path"]
        for key in _COLD_PATH:
            total[key] += cold[key]
    programs, seconds = torch.ops.ocltune.plain_builds()
    total["plain_programs"], total["plain_s"] = int(programs), seconds
    return total
