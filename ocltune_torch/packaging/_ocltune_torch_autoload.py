"""The `torch.backends` entry point of the ocltune wheel (pyproject.toml): `import torch` loads the
backend, so `torch.zeros(1, device="ocl")` works with no import of ours.

A top-level module, not part of the ocltune_torch package: importing anything inside the package runs
its __init__, which is what may fail. PyTorch turns any exception of an entry point into a failed
`import torch`; a backend that cannot load (no OpenCL loader on the machine, a wheel built for another
torch) must not take torch down with it, CPU and CUDA included. Its reason becomes a warning, and
`import ocltune_torch` raises it in full.
"""

import warnings


def load() -> None:
    try:
        import ocltune_torch  # noqa: F401  (importing registers the device)
    except ImportError as e:
        warnings.warn(f"the ocl device is not available: {e}", RuntimeWarning, stacklevel=2)
