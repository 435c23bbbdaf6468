"""ocltune_torch: PyTorch on OpenCL devices through ocltune's runtime (device "ocl", PyTorch's PrivateUse1).

``import ocltune_torch`` loads libocltune_torch.so (from $OCLTUNE_TORCH_LIBRARY, else next to this file,
else <repo>/build/ocltune_torch/), names the PrivateUse1 backend "ocl", registers ``torch.ocl`` and the
tensor methods (``t.ocl()``, ``t.is_ocl``). ``ocl:N`` is the device ``ocltune devices`` lists as N.
"""

import atexit
import os
import pathlib
import time

import torch

__all__ = [
    "fallback_stats", "reset_fallback_stats", "library_path",
    "record_shapes", "dispatch_stats", "reset_dispatch_stats", "reload", "startup_stats",
    "tune", "TuneReport", "TuneError", "TuneStepError", "TuneCliError",
    "start_online_tuning", "stop_online_tuning", "online_tuning",
]

_LIBRARY_NAME = "libocltune_torch.so"
_HERE = pathlib.Path(__file__).resolve().parent


def library_path() -> pathlib.Path:
    """The backend library this import loads (or would load)."""
    explicit = os.environ.get("OCLTUNE_TORCH_LIBRARY")
    if explicit:
        path = pathlib.Path(explicit)
        if not path.is_file():
            raise ImportError(f"ocltune_torch: OCLTUNE_TORCH_LIBRARY={explicit} is not a file")
        return path
    candidates = [_HERE / _LIBRARY_NAME, _HERE.parent / "build" / "ocltune_torch" / _LIBRARY_NAME]
    for path in candidates:
        if path.is_file():
            return path
    raise ImportError(
        "ocltune_torch: no " + _LIBRARY_NAME + " in " + ", ".join(str(p) for p in candidates)
        + ": build it (cmake --build build --target ocltune_torch) or set OCLTUNE_TORCH_LIBRARY"
    )


# What an installed wheel's libraries need from the system (Debian 12 package names): libocltune.so
# links them, and pip cannot install them.
_SYSTEM_LIBRARIES = {"libOpenCL.so.1": "ocl-icd-libopencl1", "libclblast.so.1": "libclblast1",
                     "libsqlite3.so.0": "libsqlite3-0", "libfmt.so.9": "libfmt9"}


def _release(version: str) -> str:
    return str(version).split("+")[0]


def _check_torch_version() -> None:
    """A wheel's backend library is built against one torch release (libtorch's C++ ABI changes
    between releases): it refuses any other before loading, naming both."""
    try:
        from ._build_info import TORCH_VERSION
    except ImportError:  # a source checkout: its build tree's library is built against this Python's torch
        return
    if _release(TORCH_VERSION) != _release(torch.__version__):
        raise ImportError(
            f"ocltune_torch: this ocltune wheel was built against torch {TORCH_VERSION}, but this Python runs "
            f"torch {torch.__version__}: install the ocltune wheel built for torch {_release(torch.__version__)}, "
            "or build one in this environment (pip wheel . --no-build-isolation in an ocltune checkout)"
        )


def _load_library(path: pathlib.Path) -> None:
    try:
        torch.ops.load_library(str(path))
    except OSError as e:
        missing = [f"{lib} (Debian: {package})" for lib, package in _SYSTEM_LIBRARIES.items() if lib in str(e)]
        if missing:
            what = ", the OpenCL ICD loader; install it and an OpenCL driver" if "OpenCL" in missing[0] else "; install it"
            raise ImportError(f"ocltune_torch: cannot load {path.name}: the system lacks {missing[0]}{what}") from e
        raise ImportError(f"ocltune_torch: cannot load {path}: {e}") from e


def _register() -> None:
    # Idempotent, so that importing twice (the autoload entry point, then the user) changes nothing.
    if not _loaded():
        _check_torch_version()
        _load_library(library_path())
    name = torch._C._get_privateuse1_backend_name()
    if name != "ocl":
        torch.utils.rename_privateuse1_backend("ocl")
    from . import ocl as device_module

    if getattr(torch, "ocl", None) is not device_module:
        torch._register_device_module("ocl", device_module)
    if not hasattr(torch.Tensor, "is_ocl"):
        torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)
    from . import printing

    printing.install()


def _loaded() -> bool:
    try:
        torch.ops.ocltune.device_count.default
        return True
    except (AttributeError, RuntimeError):
        return False


def fallback_stats() -> dict:
    """Calls of the CPU fallback by op name ({"aten::abs": 3, ...}) since the start or the last reset."""
    names, counts = torch.ops.ocltune.fallback_stats()
    return dict(zip(names, counts))


def reset_fallback_stats() -> None:
    torch.ops.ocltune.reset_fallback_stats()


def _finish_queues_at_exit() -> None:
    """Waits for every used device's queue before the process's static destructors run. PoCL
    generates a kernel's code on its worker thread when the kernel first runs; a process that ended
    with such kernels queued (a strict-mode refusal raised before anything was read back, then a
    clean exit: issue 41) crashed in LLVM, whose globals the exit was destroying. A C++ atexit
    handler runs too late: LLVM's statics made at the first code generation are destroyed first."""
    devices = torch.ops.ocltune.used_devices()
    for device in devices:
        torch.ops.ocltune.synchronize(device)
    for device in devices:
        _drain_autograd_thread(device)


class _PassThrough(torch.autograd.Function):
    """The identity, so that a backward through it runs on the device's autograd thread, no kernel."""

    @staticmethod
    def forward(ctx, t):
        return t.view_as(t)

    @staticmethod
    def backward(ctx, grad):
        return grad


def _drain_autograd_thread(device: int) -> None:
    """Lets the autograd engine's thread for `device` drop its last graph task before finalization.
    A graph task holds the Python context of its backward; the device thread that runs it releases it
    just after backward() has returned, taking the GIL to do so, and a thread that takes the GIL once
    the interpreter is finalizing is ended with pthread_exit, which aborts the process through a C++
    noexcept frame (terminate called without an active exception: 1 in 5 to 1 in 20 script exits
    after a backward under load, test_exit.py). A backward through that same thread now makes it
    finish with every earlier task first; its own task is released microseconds later, while this
    handler still waits, before finalization begins."""
    try:
        with torch.enable_grad():
            leaf = torch.empty(1, device=torch.device("ocl", device), requires_grad=True)
            torch.autograd.backward(_PassThrough.apply(leaf), grad_tensors=torch.empty_like(leaf))
        time.sleep(0.01)
    except Exception:  # noqa: BLE001  (an exit handler must not fail the exit)
        pass


_register()
atexit.register(_finish_queues_at_exit)
# A forked child has no queues of its own to finish (the device is refused there: device.cpp).
os.register_at_fork(after_in_child=lambda: atexit.unregister(_finish_queues_at_exit))

from . import tune_loop  # noqa: E402  (its functions call the library's ops)
from .tune_loop import dispatch_stats, record_shapes, reload, reset_dispatch_stats  # noqa: E402,F401

tune_loop._record_from_environment()

from .startup import startup_stats  # noqa: E402,F401  (where the first steps' time went)

# tune(model, example_inputs): the loop above in one call (tune_model.py; `python -m ocltune_torch.tune`).
from .tune_model import TuneCliError, TuneError, TuneReport, TuneStepError, tune  # noqa: E402,F401

# Tuning during training, at optimizer steps: start_online_tuning() or $OCLTUNE_TORCH_ONLINE_TUNING.
from . import tune_online  # noqa: E402
from .tune_online import online_tuning, start_online_tuning, stop_online_tuning  # noqa: E402,F401

tune_online._start_from_environment()

if torch.distributed.is_available():  # the c10d backend "ocltune" for ocl tensors (distributed.py)
    from . import distributed  # noqa: E402

    distributed.register()

# torch.compile(model, backend="ocltune"), registered when torch.compile first imports Dynamo
# (compiler.py; importing Dynamo here would cost seconds).
from . import compiler  # noqa: E402

compiler.install()
