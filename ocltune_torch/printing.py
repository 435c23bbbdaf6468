"""Printing ocl tensors: their values are formatted on the host.

torch's repr formats a tensor with operations on its own device (abs, min and max in float64, then a
comparison per element), as it does for CUDA; it copies XLA and lazy tensors to the CPU first instead.
On ocl that path needs float64 kernels the backend does not have, so printing fell back to the CPU op
by op (and raised in strict mode: OCLTUNE_TORCH_STRICT=1). The values are copied to the host once
here, after torch has chosen the suffixes (device='ocl:N' stays in the text), like XLA's.
"""

import torch._tensor_str as _tensor_str_module


def install() -> None:
    """Wraps torch._tensor_str._tensor_str (the part that formats the values; stable since torch 1.x)
    once; a torch without it prints as before."""
    original = getattr(_tensor_str_module, "_tensor_str", None)
    if original is None or getattr(original, "_ocl_on_host", False):
        return

    def _tensor_str_on_host(self, indent):
        if self.device.type == "ocl":
            self = self.cpu()
        return original(self, indent)

    _tensor_str_on_host._ocl_on_host = True
    _tensor_str_module._tensor_str = _tensor_str_on_host
