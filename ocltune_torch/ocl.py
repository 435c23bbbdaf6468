"""torch.ocl: the device module of the ocl backend (device counts, current device, seeds, memory)."""

import torch

__all__ = [
    "device", "device_count", "current_device", "set_device", "is_available", "is_initialized", "init",
    "synchronize", "get_device_name", "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
    "get_rng_state", "set_rng_state", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "reset_peak_memory_stats", "memory_stats", "empty_cache", "get_amp_supported_dtype",
]

_ops = torch.ops.ocltune


def _index(device=None) -> int:
    """The device index of None (the current device), an int, "ocl:N" or a torch.device."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != "ocl":
        raise ValueError(f"ocltune_torch: expected an ocl device, got {device}")
    return current_device() if device.index is None else device.index


def _as_int64(seed: int) -> int:
    # Seeds are uint64 (torch.manual_seed accepts any int); the custom ops take int64.
    seed = int(seed) & 0xFFFF_FFFF_FFFF_FFFF
    return seed - (1 << 64) if seed >= (1 << 63) else seed


def device_count() -> int:
    return _ops.device_count()


def is_available() -> bool:
    return device_count() > 0


def is_initialized() -> bool:
    return True  # each device's runtime is made on its first use


def init() -> None:
    pass


def _is_in_bad_fork() -> bool:
    return False


def current_device() -> int:
    return _ops.current_device()


def set_device(device) -> None:
    _ops.set_device(_index(device))


class device:
    """Context manager that makes `device` the current ocl device of this thread."""

    def __init__(self, device):
        self.index = _index(device)
        self.previous = -1

    def __enter__(self):
        self.previous = current_device()
        set_device(self.index)

    def __exit__(self, *exc):
        set_device(self.previous)
        return False


def synchronize(device=None) -> None:
    """Waits until every op enqueued on the device has finished."""
    _ops.synchronize(_index(device))


def get_device_name(device=None) -> str:
    return _ops.device_name(_index(device))


def manual_seed(seed: int) -> None:
    _ops.manual_seed(current_device(), _as_int64(seed))


def manual_seed_all(seed: int) -> None:
    for i in range(device_count()):
        _ops.manual_seed(i, _as_int64(seed))


def seed() -> None:
    _ops.seed(current_device())


def seed_all() -> None:
    for i in range(device_count()):
        _ops.seed(i)


def initial_seed() -> int:
    return _ops.initial_seed(current_device()) & 0xFFFF_FFFF_FFFF_FFFF


def get_rng_state(device="ocl") -> torch.Tensor:
    return _ops.get_rng_state(_index(device))


def set_rng_state(new_state: torch.Tensor, device="ocl") -> None:
    _ops.set_rng_state(_index(device), new_state)


def memory_stats(device=None) -> dict:
    allocated, max_allocated, reserved, max_reserved, segments, allocs, frees = _ops.memory_stats(_index(device))
    return {
        "allocated_bytes.all.current": allocated,
        "allocated_bytes.all.peak": max_allocated,
        "reserved_bytes.all.current": reserved,
        "reserved_bytes.all.peak": max_reserved,
        "segment.all.current": segments,
        "num_device_alloc": allocs,  # clCreateBuffer calls since the start
        "num_device_free": frees,
    }


def memory_allocated(device=None) -> int:
    return _ops.memory_stats(_index(device))[0]


def max_memory_allocated(device=None) -> int:
    return _ops.memory_stats(_index(device))[1]


def memory_reserved(device=None) -> int:
    return _ops.memory_stats(_index(device))[2]


def max_memory_reserved(device=None) -> int:
    return _ops.memory_stats(_index(device))[3]


def reset_peak_memory_stats(device=None) -> None:
    _ops.reset_peak_memory_stats(_index(device))


def empty_cache() -> None:
    """Releases the cached segments (no block in use) of every device back to the driver, and the
    cached pinned host memory no copy still uses."""
    for i in range(device_count()):
        _ops.empty_cache(i)
    _ops.empty_pinned_cache()


def get_amp_supported_dtype():
    return [torch.float16, torch.bfloat16]
