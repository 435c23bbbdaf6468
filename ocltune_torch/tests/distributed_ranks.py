"""The program each rank of tests/test_distributed.py runs: `python distributed_ranks.py RANK STORE OUT`.

Rank r joins a 2-rank process group ("cpu:gloo,ocl:ocltune", a FileStore at STORE) on ocl:r, runs
every case below on ocl tensors in one go (one pair of processes for the whole suite: starting
torch and the devices is most of its time) and saves what came out, CPU copies, to OUT/rank{r}.pt;
the test compares them with PyTorch's CPU results of the same inputs, which it builds with the
functions here. Cases that must fail record their error message and how long they took, and the
group goes on: a mismatch raises before any data moves. The last cases break the group on purpose
(a collective only rank 0 calls, on a subgroup with a 2 s timeout; then rank 1 exits in the middle).
"""

import datetime
import os
import sys
import time

import torch

WORLD = 2
R = ("SUM", "AVG", "MAX", "MIN", "PRODUCT")

# all_reduce: (dtype, op, layout). Layouts: a dense [7, 13]; the same shape as a transposed view
# and as every other row of a [14, 13] buffer (non-contiguous both); a 0-d tensor; no elements.
ALL_REDUCE = ([(torch.float32, op, "dense") for op in R]
              + [(torch.float32, "SUM", layout) for layout in ("transposed", "strided", "scalar", "empty")]
              + [(torch.float32, "AVG", "strided"), (torch.float16, "SUM", "dense"), (torch.float16, "AVG", "dense"),
                 (torch.bfloat16, "SUM", "dense"), (torch.bfloat16, "MAX", "transposed"),
                 (torch.float64, "PRODUCT", "dense")]
              + [(torch.int64, op, "dense") for op in ("SUM", "MAX", "MIN", "PRODUCT")]
              + [(torch.int32, "SUM", "transposed"), (torch.uint8, "MAX", "dense"), (torch.int8, "MIN", "dense"),
                 (torch.bool, "MAX", "dense"), (torch.bool, "MIN", "dense")])
SHAPES = {"dense": (7, 13), "transposed": (7, 13), "strided": (7, 13), "scalar": (), "empty": (0, 3)}
# broadcast: (dtype, layout, root)
BROADCAST = [(torch.float32, "transposed", 1), (torch.int64, "dense", 0), (torch.bfloat16, "scalar", 1)]
# reduce_scatter_tensor: (dtype, op); the input is [2 * 5, 3], each rank's output [5, 3]
REDUCE_SCATTER = [(torch.float32, "SUM"), (torch.float32, "AVG"), (torch.float32, "MAX"), (torch.int64, "SUM"),
                  (torch.float16, "SUM")]
# the errors every rank must raise, with what their messages must hold
ERRORS = {
    "shape mismatch": ["all_reduce", "[3]", "[4]"],
    "dtype mismatch": ["broadcast", "float32", "float16"],
    "different collectives": ["different collectives", "all_reduce", "all_gather_into_tensor"],
    "one rank refuses": ["reduce_scatter_tensor"],
    "send/recv mismatch": ["do not match", "[4]", "[5]"],
    "int16": ["int16 is not supported"],
    "BAND": ["BAND is not supported"],
    "integer AVG": ["AVG needs a floating-point dtype"],
    "recv without src": ["src="],
}


def case_name(*parts):
    return " ".join(str(p).replace("torch.", "") for p in parts)


def values(shape, dtype, seed):
    """Rank inputs: normal floats, small integers (products stay exact), random bools."""
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g).to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    low = 0 if dtype == torch.uint8 else -4
    return torch.randint(low, 5, shape, generator=g).to(dtype)


def placed(x, layout, device):
    """x copied to `device` in `layout`; returns (tensor, the buffer it is a view of)."""
    if layout == "transposed":
        base = torch.zeros(tuple(reversed(x.shape)), dtype=x.dtype, device=device)
        view = base.t()
    elif layout == "strided":
        base = torch.zeros((2 * x.shape[0],) + tuple(x.shape[1:]), dtype=x.dtype, device=device)
        view = base[::2]
    else:
        base = torch.zeros(x.shape, dtype=x.dtype, device=device)
        view = base
    view.copy_(x)
    return view, base


def reduce_cpu(op, tensors):
    """PyTorch's CPU result of reducing the ranks' tensors with op."""
    a, b = tensors
    if op == "SUM":
        return a + b if a.dtype != torch.bool else a | b
    if op == "AVG":
        return (a + b) / 2
    if op == "PRODUCT":
        return a * b
    return torch.maximum(a, b) if op == "MAX" else torch.minimum(a, b)


def ddp_data():
    g = torch.Generator().manual_seed(7)
    return torch.randn(8, 8, generator=g), torch.randn(8, 4, generator=g)


def ddp_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))


def train(model, batches, steps=3):
    """SGD with momentum on mse_loss; batches(step) gives (x, y)."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(steps):
        x, y = batches(step)
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return model


def main(rank, store_path, out_dir):
    import torch.distributed as dist

    import ocltune_torch  # noqa: F401  (registers ocl and the backend)

    dev = torch.device("ocl", rank)
    torch.ocl.set_device(rank)
    store = dist.FileStore(store_path, WORLD)
    dist.init_process_group("cpu:gloo,ocl:ocltune", store=store, rank=rank, world_size=WORLD,
                            timeout=datetime.timedelta(seconds=60))
    out = {}
    world = dist.group.WORLD
    out["class"] = type(world).__name__ if type(world) is not dist.ProcessGroup else \
        type(world._get_backend(dev)).__name__

    def attempt(name, fn):
        started = time.monotonic()
        try:
            fn()
            out[name] = ("no error", time.monotonic() - started)
        except Exception as error:  # noqa: BLE001  (the test reads the message)
            out[name] = (str(error), time.monotonic() - started)

    for i, (dtype, op, layout) in enumerate(ALL_REDUCE):
        t, base = placed(values(SHAPES[layout], dtype, seed=100 * i + rank), layout, dev)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        out[case_name("all_reduce", dtype, op, layout)] = (t.cpu(), base.cpu())

    for i, (dtype, layout, root) in enumerate(BROADCAST):
        t, _ = placed(values(SHAPES[layout], dtype, seed=200 * i + rank), layout, dev)
        dist.broadcast(t, src=root)
        out[case_name("broadcast", dtype, layout, root)] = t.cpu()

    # all_gather into a list of outputs that are transposed views; all_gather_into_tensor into a
    # concatenation and into a stack, from a transposed input
    x = values((3, 5), torch.float16, seed=300 + rank)
    outputs = [torch.zeros(5, 3, dtype=torch.float16, device=dev).t() for _ in range(WORLD)]
    dist.all_gather(outputs, x.to(dev))
    out["all_gather"] = [o.cpu() for o in outputs]
    concat = torch.empty(WORLD * 7, device=dev)
    dist.all_gather_into_tensor(concat, values((7,), torch.float32, seed=310 + rank).to(dev))
    out["all_gather_into_tensor concat"] = concat.cpu()
    stacked = torch.empty(WORLD, 3, 5, device=dev)
    dist.all_gather_into_tensor(stacked, placed(values((3, 5), torch.float32, seed=320 + rank), "transposed", dev)[0])
    out["all_gather_into_tensor stack"] = stacked.cpu()

    for i, (dtype, op) in enumerate(REDUCE_SCATTER):
        result = torch.empty(5, 3, dtype=dtype, device=dev)
        dist.reduce_scatter_tensor(result, values((WORLD * 5, 3), dtype, seed=400 * i + rank).to(dev),
                                   op=getattr(dist.ReduceOp, op))
        out[case_name("reduce_scatter_tensor", dtype, op)] = result.cpu()

    dist.barrier()
    # point to point, both ways: rank 0 sends a non-contiguous float32 view, rank 1 int64
    if rank == 0:
        dist.send(placed(values((4, 6), torch.float32, seed=500), "strided", dev)[0], dst=1)
        got = torch.zeros(5, dtype=torch.int64, device=dev)
        dist.recv(got, src=1)
    else:
        got = torch.zeros(8, 6, device=dev)[::2]
        dist.recv(got, src=0)
        dist.send(values((5,), torch.int64, seed=501).to(dev), dst=0)
    out["send/recv"] = got.cpu()

    t = values((6,), torch.float32, seed=600 + rank).to(dev)
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    out["async all_reduce"] = (t.cpu(), work.get_future().wait()[0].cpu())
    c = values((6,), torch.float32, seed=610 + rank)  # a CPU tensor: the group's gloo backend
    dist.all_reduce(c)
    out["cpu all_reduce"] = c

    # the errors: every rank raises, and the group stays in step
    attempt("shape mismatch", lambda: dist.all_reduce(torch.ones(3 + rank, device=dev)))
    attempt("dtype mismatch", lambda: dist.broadcast(
        torch.ones(4, dtype=(torch.float32, torch.float16)[rank], device=dev), src=0))
    attempt("different collectives", lambda: dist.all_reduce(torch.ones(4, device=dev)) if rank == 0 else
            dist.all_gather_into_tensor(torch.empty(8, device=dev), torch.ones(4, device=dev)))
    attempt("one rank refuses", lambda: dist.reduce_scatter_tensor(
        torch.empty(3 + rank, device=dev), torch.ones(6, device=dev)))
    attempt("send/recv mismatch", lambda: dist.send(torch.ones(4, device=dev), dst=1) if rank == 0 else
            dist.recv(torch.empty(5, device=dev), src=0))
    attempt("int16", lambda: dist.all_reduce(torch.ones(4, dtype=torch.int16, device=dev)))
    attempt("BAND", lambda: dist.all_reduce(torch.ones(4, dtype=torch.int32, device=dev), op=dist.ReduceOp.BAND))
    attempt("integer AVG", lambda: dist.all_reduce(torch.ones(4, dtype=torch.int64, device=dev),
                                                   op=dist.ReduceOp.AVG))
    attempt("recv without src", lambda: dist.recv(torch.empty(4, device=dev)))
    t = torch.full((4,), float(rank + 1), device=dev)
    dist.all_reduce(t)
    out["all_reduce after the errors"] = t.cpu()

    # DistributedDataParallel: rank 1 starts from other weights (DDP broadcasts rank 0's); each rank
    # trains on its half of the batch; a bucket per parameter
    x, y = ddp_data()
    model = torch.nn.parallel.DistributedDataParallel(ddp_model(seed=rank).to(dev), bucket_cap_mb=1e-4)
    half = slice(4 * rank, 4 * rank + 4)
    train(model, lambda step: ((x[half] * (step + 1)).to(dev), y[half].to(dev)))
    out["ddp"] = {k: v.cpu() for k, v in model.module.state_dict().items()}

    # the process group's timeout: a subgroup with 2 s, whose collective only rank 0 calls
    short = dist.new_group([0, 1], timeout=datetime.timedelta(seconds=2), backend="ocltune")
    if rank == 0:
        attempt("timeout", lambda: dist.all_reduce(torch.ones(4, device=dev), group=short))
        store.set("timed out", "1")
    else:
        store.wait(["timed out"])

    # a rank that dies: rank 1 leaves without a word; rank 0's next collective fails
    torch.ocl.synchronize()
    if rank == 1:
        torch.save(out, os.path.join(out_dir, "rank1.pt"))
        os._exit(0)
    attempt("dead rank", lambda: dist.all_reduce(torch.ones(4, device=dev)))
    torch.save(out, os.path.join(out_dir, "rank0.pt"))
    torch.ocl.synchronize()
    os._exit(0)  # not destroy_process_group: its peer is gone


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3])
