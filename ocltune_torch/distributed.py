"""torch.distributed for ocl: the c10d backend "ocltune" (docs/decisions/0056).

``import ocltune_torch`` registers it for the devices ``ocl`` and ``cpu``:

    dist.init_process_group("cpu:gloo,ocl:ocltune", ...)   # CPU tensors on gloo, ocl tensors here
    dist.init_process_group("ocltune", ...)                # both here (CPU tensors go to gloo as they are)
    dist.init_process_group(...)                           # no backend: the same as the first line

The collectives run on gloo, which has a transport (TCP, across hosts too) and the reductions; this
backend only stages each ocl tensor through pinned host memory (csrc/device/pinned.cpp) into a
ProcessGroupGloo of its own and copies the result back. Before every collective the ranks exchange a
small record (collective, reduce op, dtype, shape, whether the rank refused its arguments): tensors
that differ across ranks, or different collectives, raise on every rank naming the collective,
instead of hanging or reducing garbage. Everything waits for gloo within the process group's
timeout, and a peer that dies closes its sockets, which gloo reports as an error.

torch 2.15 lets Python subclass c10d's Backend (OcltuneBackend, composed per device with cpu:gloo);
torch 2.11 has no Python constructor for it, and there the same collectives are a whole
ProcessGroup (OcltuneProcessGroup), which takes the group's CPU tensors too.

Each collective completes before it returns (its Work is already done): the copies to and from the
host are short next to gloo's transfers, and one ordered path keeps the ranks' metadata exchanges
matched. DistributedDataParallel therefore does not overlap its all-reduces with the backward.
"""

import datetime
import os

import torch
import torch.distributed as dist
# Not re-exported by torch.distributed: the C++ Backend class a Python backend subclasses (torch's own
# ProcessGroupGloo is one), and the options of its all-gathers.
from torch._C._distributed_c10d import AllgatherOptions as _AllgatherOptions
from torch._C._distributed_c10d import Backend as _C10dBackend

__all__ = ["BACKEND_NAME", "OcltuneBackend", "OcltuneProcessGroup", "SUPPORTED_DTYPES", "SUPPORTED_REDUCE_OPS"]

BACKEND_NAME = "ocltune"

# What gloo reduces and the ocl copies move (int16 and the complex types gloo refuses).
SUPPORTED_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16,
                    torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool)
_FLOAT_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)

_R = dist.ReduceOp
SUPPORTED_REDUCE_OPS = ("SUM", "AVG", "PRODUCT", "MIN", "MAX")

# The metadata record: one int64 row per rank, the same layout for every collective.
_COLLECTIVES = ("all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor",
                "barrier", "send/recv")
_DTYPE_CODES = {dtype: i + 1 for i, dtype in enumerate(SUPPORTED_DTYPES + (torch.int16, torch.complex64,
                                                                             torch.complex128))}
_MAX_DIMS = 8
_RECORD = 7 + _MAX_DIMS  # collective, argument (op or root), dtype, ndim, numel, refused, sequence, shape
_UNKNOWN = 99


def _op_name(op) -> str:
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"):
        if op == getattr(_R, name):
            return name
    return str(op)


def _describe(row: list) -> str:
    """One rank's record in words: 'all_reduce SUM float32 [4, 3]'."""
    collective = _COLLECTIVES[row[0]] if 0 <= row[0] < len(_COLLECTIVES) else f"collective {row[0]}"
    if collective == "barrier":
        return collective
    dtype = next((str(d).replace("torch.", "") for d, c in _DTYPE_CODES.items() if c == row[2]), "other dtype")
    shape = row[7:7 + min(row[3], _MAX_DIMS)] + (["..."] if row[3] > _MAX_DIMS else [])
    text = f"{collective} {dtype} {shape}"
    if row[5]:
        text += " (refused there)"
    return text


class _Collectives:
    """The collectives of ocl (and CPU) tensors, run on a ProcessGroupGloo through host memory; mixed
    into a c10d Backend (OcltuneBackend) or, where torch has no Python Backend, a ProcessGroup."""

    def _start(self, store, rank: int, size: int, timeout: datetime.timedelta):
        self._rank, self._size, self._timeout = rank, size, timeout
        # Its own gloo group on the store c10d prefixed for this device ("ocl/"), so that its
        # connections and keys are apart from the cpu:gloo backend of the same process group.
        self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)
        self._sequence = 0  # collectives so far; a rank out of step shows in the records

    def getBackendName(self) -> str:  # noqa: N802 (c10d's virtual method)
        return BACKEND_NAME

    # ---- collectives -------------------------------------------------------------------------------

    def allreduce(self, tensors, opts):
        (tensor,) = self._single("all_reduce", tensors)
        refusal = self._refuse_dtype(tensor) or self._refuse_op(opts.reduceOp, tensor.dtype)
        self._agree("all_reduce", tensor, _reduce_code(opts.reduceOp), refusal, opts.timeout)
        host = _to_host(tensor)
        self._run("all_reduce", self._gloo.allreduce([host], self._reduce_options(
            dist.AllreduceOptions(), opts.reduceOp, opts.timeout)))
        if opts.reduceOp == _R.AVG:
            host.div_(self._size)
        _from_host(host, tensor)
        return _done(tensors)

    def broadcast(self, tensors, opts):
        (tensor,) = self._single("broadcast", tensors)
        refusal = self._refuse_dtype(tensor)
        self._agree("broadcast", tensor, opts.rootRank, refusal, opts.timeout)
        host = _to_host(tensor) if self._rank == opts.rootRank else _host_like(tensor)
        gloo_opts = dist.BroadcastOptions()
        gloo_opts.rootRank, gloo_opts.rootTensor = opts.rootRank, 0
        _set_timeout(gloo_opts, opts.timeout)
        self._run("broadcast", self._gloo.broadcast([host], gloo_opts))
        if self._rank != opts.rootRank:
            _from_host(host, tensor)
        return _done(tensors)

    def allgather(self, output_tensors, input_tensors, opts):
        (tensor,) = self._single("all_gather", input_tensors)
        (outputs,) = self._single("all_gather", output_tensors)
        refusal = self._refuse_dtype(tensor)
        if not refusal and (len(outputs) != self._size
                            or any(o.shape != tensor.shape or o.dtype != tensor.dtype for o in outputs)):
            refusal = (f"all_gather needs {self._size} outputs of the input's shape {list(tensor.shape)} and dtype "
                       f"{tensor.dtype}, got {[(list(o.shape), o.dtype) for o in outputs]}")
        self._agree("all_gather", tensor, 0, refusal, opts.timeout)
        # gloo's all-gather into one tensor wants flat tensors
        gathered = _host_like(tensor, (self._size * tensor.numel(),))
        self._run("all_gather", self._gloo._allgather_base(gathered, _to_host(tensor).reshape(-1),
                                                           _gather_options(opts)))
        for i, output in enumerate(outputs):
            _from_host(gathered.view((self._size,) + tuple(tensor.shape))[i], output)
        return _done(output_tensors)

    def _allgather_base(self, output, input, opts):  # noqa: A002 (c10d's names)
        refusal = self._refuse_dtype(input)
        if not refusal and (output.numel() != self._size * input.numel() or output.dtype != input.dtype):
            refusal = (f"all_gather_into_tensor needs an output of {self._size} x {input.numel()} elements of "
                       f"{input.dtype}, got {list(output.shape)} {output.dtype}")
        self._agree("all_gather_into_tensor", input, 0, refusal, opts.timeout)
        gathered = _host_like(input, (self._size * input.numel(),))
        self._run("all_gather_into_tensor",
                  self._gloo._allgather_base(gathered, _to_host(input).reshape(-1), _gather_options(opts)))
        _from_host(gathered.view(output.shape), output)
        return _done([output])

    def _reduce_scatter_base(self, output, input, opts):  # noqa: A002
        refusal = self._refuse_dtype(input) or self._refuse_op(opts.reduceOp, input.dtype)
        if not refusal and (input.numel() != self._size * output.numel() or output.dtype != input.dtype):
            refusal = (f"reduce_scatter_tensor needs an input of {self._size} x {output.numel()} elements of "
                       f"{output.dtype}, got {list(input.shape)} {input.dtype}")
        self._agree("reduce_scatter_tensor", input, _reduce_code(opts.reduceOp), refusal, opts.timeout)
        # An all-reduce of the whole input, of which each rank keeps its slice: gloo's own
        # reduce-scatter of a single tensor is not in every torch this backend builds against.
        host = _to_host(input).reshape(-1)
        if host.data_ptr() == input.data_ptr():
            host = host.clone()  # a CPU input is read, not reduced in place
        self._run("reduce_scatter_tensor", self._gloo.allreduce([host], self._reduce_options(
            dist.AllreduceOptions(), opts.reduceOp, opts.timeout)))
        mine = host[self._rank * output.numel():(self._rank + 1) * output.numel()]
        if opts.reduceOp == _R.AVG:
            mine.div_(self._size)
        _from_host(mine.view(output.shape), output)
        return _done([output])

    # torch 2.15's names of the two (all_gather_into_tensor and reduce_scatter_tensor call them);
    # older torch (2.11) calls the underscored ones.
    def all_gather_single(self, output, input, opts):  # noqa: A002
        return self._allgather_base(output, input, opts)

    def reduce_scatter_single(self, output, input, opts):  # noqa: A002
        return self._reduce_scatter_base(output, input, opts)

    def barrier(self, opts):
        # The metadata exchange is an all-gather: no rank leaves it before every rank has come.
        self._agree("barrier", None, 0, None, opts.timeout)
        return _done([])

    def send(self, tensors, dst: int, tag: int):
        (tensor,) = self._single("send", tensors)
        self._handshake("send", tensor, dst, tag)
        self._run("send", self._gloo.send([_to_host(tensor)], dst, tag), wait_timeout=True)
        return _done(tensors)

    def recv(self, tensors, src: int, tag: int):
        (tensor,) = self._single("recv", tensors)
        self._handshake("recv", tensor, src, tag)
        host = _host_like(tensor)
        self._run("recv", self._gloo.recv([host], src, tag), wait_timeout=True)
        _from_host(host, tensor)
        return _done(tensors)

    def recv_anysource(self, tensors, tag: int):
        raise RuntimeError("ocltune: recv without a source rank is not supported; pass src=")

    # ---- checks ------------------------------------------------------------------------------------

    def _single(self, collective, tensors):
        if len(tensors) != 1:
            raise RuntimeError(f"ocltune: {collective} takes one tensor per rank, got a list of {len(tensors)}")
        return tensors

    def _refuse_dtype(self, tensor):
        if tensor.dtype not in SUPPORTED_DTYPES:
            return (f"dtype {tensor.dtype} is not supported (gloo reduces "
                    f"{', '.join(str(d).replace('torch.', '') for d in SUPPORTED_DTYPES)})")
        if tensor.device.type not in ("ocl", "cpu"):
            return f"tensors on {tensor.device} are not supported (ocl and cpu are)"
        return None

    def _refuse_op(self, op, dtype):
        name = _op_name(op)
        if name not in SUPPORTED_REDUCE_OPS:
            return f"reduce op {name} is not supported ({', '.join(SUPPORTED_REDUCE_OPS)} are)"
        if name == "AVG" and dtype not in _FLOAT_DTYPES:
            return f"reduce op AVG needs a floating-point dtype, got {dtype}"
        return None

    def _agree(self, collective, tensor, argument, refusal, timeout):
        """Exchanges this rank's record with every rank's; raises on every rank unless all agree.
        A rank that refuses its own arguments still takes part, so that the others raise too
        instead of waiting for it until the timeout."""
        record = torch.zeros(_RECORD, dtype=torch.int64)
        record[0], record[1], record[5], record[6] = _COLLECTIVES.index(collective), argument, bool(refusal), \
            self._sequence
        if tensor is not None:
            record[2] = _DTYPE_CODES.get(tensor.dtype, _UNKNOWN)
            record[3], record[4] = tensor.dim(), tensor.numel()
            dims = list(tensor.shape)
            if len(dims) > _MAX_DIMS:
                dims = dims[:_MAX_DIMS - 1] + [torch.Size(dims[_MAX_DIMS - 1:]).numel()]
            record[7:7 + len(dims)] = torch.tensor(dims, dtype=torch.int64)
        self._sequence += 1
        rows = torch.empty(self._size * _RECORD, dtype=torch.int64)
        self._run(collective, self._gloo._allgather_base(rows, record, _gather_options(timeout=timeout)))
        rows = rows.view(self._size, _RECORD).tolist()
        if refusal:
            raise RuntimeError(f"ocltune: {collective} on rank {self._rank}: {refusal}")
        if any(row != rows[0] for row in rows):
            ranks = "; ".join(f"rank {r}: {_describe(row)}" for r, row in enumerate(rows))
            if any(row[0] != rows[0][0] or row[6] != rows[0][6] for row in rows):
                problem = "the ranks called different collectives (or a different number of them)"
            elif any(row[5] for row in rows):
                problem = "a rank refused its arguments"
            else:
                problem = "the ranks' tensors or arguments differ"
            raise RuntimeError(f"ocltune: {collective} on rank {self._rank}: {problem}: {ranks}")

    def _handshake(self, side, tensor, peer, tag):
        """send/recv: the two ranks swap records (on the pair's tag, before the data) and both raise
        when the shapes or dtypes differ, or when both sent or both received."""
        refusal = self._refuse_dtype(tensor)
        record = torch.tensor([1 if side == "send" else 2, _DTYPE_CODES.get(tensor.dtype, _UNKNOWN),
                               tensor.numel(), int(bool(refusal))] + list(tensor.shape), dtype=torch.int64)
        header = torch.tensor([record.numel()], dtype=torch.int64)
        peer_header = torch.empty(1, dtype=torch.int64)
        sent = self._gloo.send([header], peer, tag)
        self._run(side, self._gloo.recv([peer_header], peer, tag), wait_timeout=True)
        self._run(side, sent, wait_timeout=True)
        peer_record = torch.empty(int(peer_header.item()), dtype=torch.int64)
        sent = self._gloo.send([record], peer, tag)
        self._run(side, self._gloo.recv([peer_record], peer, tag), wait_timeout=True)
        self._run(side, sent, wait_timeout=True)
        if refusal:
            raise RuntimeError(f"ocltune: {side} on rank {self._rank}: {refusal}")
        mine, theirs = record.tolist(), peer_record.tolist()
        if theirs[0] == mine[0] or theirs[1:] != mine[1:]:
            def words(r):
                dtype = next((str(d).replace("torch.", "") for d, c in _DTYPE_CODES.items() if c == r[1]), "other")
                return f"{'send' if r[0] == 1 else 'recv'} {dtype} {r[4:]}" + (" (refused there)" if r[3] else "")
            raise RuntimeError(f"ocltune: {side} on rank {self._rank} with rank {peer}: the two sides do not match: "
                               f"rank {self._rank}: {words(mine)}; rank {peer}: {words(theirs)}")

    # ---- gloo --------------------------------------------------------------------------------------

    def _reduce_options(self, options, op, timeout):
        # gloo's AVG is not in every torch this backend builds against: a SUM, divided afterwards.
        options.reduceOp = _R.SUM if op == _R.AVG else op
        _set_timeout(options, timeout)
        return options

    def _run(self, collective, work, wait_timeout=False):
        """Waits for gloo's work; its errors (a timeout, a closed connection) are re-raised naming the collective."""
        try:
            if wait_timeout:  # send/recv have no options: the process group's timeout
                work.wait(self._timeout)
            else:
                work.wait()
        except Exception as error:  # gloo raises RuntimeError or DistBackendError
            raise type(error)(f"ocltune: {collective} on rank {self._rank} failed in gloo: {error}") from error


def _reduce_code(op) -> int:
    name = _op_name(op)
    return SUPPORTED_REDUCE_OPS.index(name) + 1 if name in SUPPORTED_REDUCE_OPS else _UNKNOWN


def _set_timeout(options, timeout):
    # An unset timeout (negative) leaves gloo's own: the process group's.
    if timeout is not None and timeout >= datetime.timedelta(0):
        options.timeout = timeout


def _gather_options(opts=None, timeout=None):
    options = _AllgatherOptions()
    _set_timeout(options, opts.timeout if opts is not None else timeout)
    return options


def _host_like(tensor, shape=None):
    """An uninitialised contiguous host tensor of tensor's dtype, pinned when tensor is on ocl."""
    shape = tuple(tensor.shape) if shape is None else shape
    if tensor.device.type != "ocl":
        return torch.empty(shape, dtype=tensor.dtype)
    # Pinned blocks are buffers of the current device's context (csrc/device/pinned.cpp): the tensor's.
    with torch.ocl.device(tensor.device):
        return torch.empty(shape, dtype=tensor.dtype, pin_memory=True)


def _to_host(tensor):
    """tensor's values in contiguous host memory (the tensor itself when it is a contiguous CPU tensor).
    The copy from ocl waits for the device, so gloo reads finished values."""
    if tensor.device.type != "ocl":
        return tensor if tensor.is_contiguous() else tensor.contiguous()
    host = _host_like(tensor)
    host.copy_(tensor)
    return host


def _from_host(host, tensor):
    """Writes host's values into tensor (any strides). From pinned memory into a dense ocl tensor the
    copy is only enqueued: the pinned block is not reused before it has been read, and ops on tensor
    come after it on the device's in-order queue."""
    if tensor.data_ptr() == host.data_ptr() and tensor.device == host.device:
        return
    tensor.copy_(host, non_blocking=tensor.device.type == "ocl")


def _done(result):
    """A Work that is already complete, its future holding the result (what DDP's comm hooks read).
    torch's own Python process groups make theirs with the private _create_work_from_future; a
    subclass of the public dist.Work does the same."""
    return _DoneWork(result)


class _DoneWork(dist.Work):
    def __init__(self, result):
        super().__init__()
        self._result = result
        self._future = torch.futures.Future()
        self._future.set_result(result)

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True

    def result(self):
        return self._result

    def get_future(self):
        return self._future

    def synchronize(self):
        pass


class OcltuneBackend(_Collectives, _C10dBackend):
    """The c10d Backend of ocl tensors (torch 2.15): the process group sends it ocl tensors, and CPU
    tensors to the backend registered for cpu ("cpu:gloo,ocl:ocltune"), or to it ("ocltune")."""

    def __init__(self, store, rank: int, size: int, timeout: datetime.timedelta):
        _C10dBackend.__init__(self, rank, size)
        self._start(store, rank, size, timeout)


class OcltuneProcessGroup(_Collectives, dist.ProcessGroup):
    """The same as a whole ProcessGroup, for torch whose c10d Backend has no Python constructor (2.11:
    "No constructor defined!"). c10d then uses it for every device of the group: CPU tensors go to its
    gloo as they are, so "cpu:gloo,ocl:ocltune" still works (the cpu:gloo backend made first is unused)."""

    def __init__(self, store, rank: int, size: int, timeout: datetime.timedelta):
        dist.ProcessGroup.__init__(self, rank, size)
        self._start(store, rank, size, timeout)

    def name(self) -> str:
        return BACKEND_NAME


def _backend_subclassable() -> bool:
    try:
        _Probe(0, 1)
        return True
    except TypeError:  # "No constructor defined!"
        return False


class _Probe(_C10dBackend):
    pass


def _create(store, rank, size, timeout):
    # OCLTUNE_TORCH_DIST_AS_PROCESS_GROUP=1 takes 2.11's path on 2.15 too (tests/test_distributed.py runs both).
    as_group = os.environ.get("OCLTUNE_TORCH_DIST_AS_PROCESS_GROUP") == "1" or not _backend_subclassable()
    return (OcltuneProcessGroup if as_group else OcltuneBackend)(store, rank, size, timeout)


def register() -> None:
    """Registers the backend with torch.distributed (idempotent; import ocltune_torch calls it)."""
    if not dist.is_available() or BACKEND_NAME in dist.Backend.backend_list:
        return
    # cpu too: init_process_group("ocltune") then takes CPU tensors as well (straight to gloo). Listing
    # it changes no default: cpu stays gloo's; ocl's default becomes this backend.
    dist.Backend.register_backend(BACKEND_NAME, _create, devices=["ocl", "cpu"])
