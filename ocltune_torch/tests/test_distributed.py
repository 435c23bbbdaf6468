"""torch.distributed on ocl (issue 40): the c10d backend "ocltune" (ocltune_torch/distributed.py), two
ranks over loopback, each on its own PoCL device (POCL_DEVICES="pthread pthread", rank r on ocl:r).

One pair of processes runs every case (distributed_ranks.py: starting torch and two devices is most of
the time); the tests here compare what each rank got with PyTorch's CPU result of the same inputs:
every collective and reduce op, non-contiguous and odd-sized tensors, DDP training against a
single-process run on the whole batch, and the failures (tensors that differ across ranks, refused
dtypes and ops, the process group's timeout, a rank that dies), which must raise on every rank within
a bounded time instead of hanging."""

import os
import subprocess
import sys
import time

import pytest
import torch

import distributed_ranks as ranks
from conftest import DEVICE, TOLERANCES, assert_close

HERE = os.path.dirname(os.path.abspath(__file__))


# torch 2.15 lets Python subclass c10d's Backend, 2.11 only its ProcessGroup: the backend is one or
# the other (distributed.py); both run here, the second as it would on 2.11.
@pytest.fixture(scope="module", params=["backend", "process_group"])
def results(tmp_path_factory, request):
    """Runs the two ranks; returns their saved results, [rank0, rank1]."""
    tmp = tmp_path_factory.mktemp("distributed")
    env = dict(os.environ, POCL_DEVICES="pthread pthread",
               OCLTUNE_TORCH_DIST_AS_PROCESS_GROUP="1" if request.param == "process_group" else "0")
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")  # gloo's own connections over loopback, whatever the hostname
    env.pop("OCLTUNE_TORCH_STRICT", None)
    started = time.monotonic()
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "distributed_ranks.py"), str(r),
                               str(tmp / "store"), str(tmp)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for r in range(ranks.WORLD)]
    logs = []
    for proc in procs:
        try:
            logs.append(proc.communicate(timeout=240)[0])
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            pytest.fail("the ranks did not finish within 240 s:\n" + "\n".join(p.communicate()[0][-3000:]
                                                                              for p in procs))
    for r, (proc, log) in enumerate(zip(procs, logs)):
        assert proc.returncode == 0 and (tmp / f"rank{r}.pt").is_file(), \
            f"rank {r} exited {proc.returncode}:\n{log[-6000:]}"
    print(f"two ranks: {time.monotonic() - started:.1f} s")
    saved = [torch.load(tmp / f"rank{r}.pt", weights_only=False) for r in range(ranks.WORLD)]
    wanted = "OcltuneProcessGroup" if request.param == "process_group" else "OcltuneBackend"
    assert [s["class"] for s in saved] == [wanted] * ranks.WORLD
    return saved


def close(actual, expected, **kwargs):
    """CPU results of a rank against the CPU reference at the suite's tolerances."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual.dtype, actual.shape,
                                                                                 expected.dtype, expected.shape)
    tol = TOLERANCES.get(expected.dtype, dict(rtol=0, atol=0))
    torch.testing.assert_close(actual, expected, **tol)


@pytest.mark.parametrize("index", range(len(ranks.ALL_REDUCE)),
                         ids=[ranks.case_name(*c) for c in ranks.ALL_REDUCE])
def test_all_reduce(results, index):
    dtype, op, layout = ranks.ALL_REDUCE[index]
    inputs = [ranks.values(ranks.SHAPES[layout], dtype, seed=100 * index + r) for r in range(ranks.WORLD)]
    expected = ranks.reduce_cpu(op, inputs)
    for r in range(ranks.WORLD):
        result, base = results[r][ranks.case_name("all_reduce", dtype, op, layout)]
        close(result, expected)
        if layout == "strided":  # the rows between the view's rows are untouched
            assert torch.equal(base[1::2], torch.zeros_like(base[1::2]))


@pytest.mark.parametrize("index", range(len(ranks.BROADCAST)), ids=[ranks.case_name(*c) for c in ranks.BROADCAST])
def test_broadcast(results, index):
    dtype, layout, root = ranks.BROADCAST[index]
    expected = ranks.values(ranks.SHAPES[layout], dtype, seed=200 * index + root)
    for r in range(ranks.WORLD):
        assert torch.equal(results[r][ranks.case_name("broadcast", dtype, layout, root)], expected)


def test_all_gather_and_all_gather_into_tensor(results):
    gathered = [ranks.values((3, 5), torch.float16, seed=300 + r) for r in range(ranks.WORLD)]
    concat = torch.cat([ranks.values((7,), torch.float32, seed=310 + r) for r in range(ranks.WORLD)])
    stacked = torch.stack([ranks.values((3, 5), torch.float32, seed=320 + r) for r in range(ranks.WORLD)])
    for r in range(ranks.WORLD):
        assert all(torch.equal(a, b) for a, b in zip(results[r]["all_gather"], gathered, strict=True))
        assert torch.equal(results[r]["all_gather_into_tensor concat"], concat)
        assert torch.equal(results[r]["all_gather_into_tensor stack"], stacked)


@pytest.mark.parametrize("index", range(len(ranks.REDUCE_SCATTER)),
                         ids=[ranks.case_name(*c) for c in ranks.REDUCE_SCATTER])
def test_reduce_scatter_tensor(results, index):
    dtype, op = ranks.REDUCE_SCATTER[index]
    inputs = [ranks.values((ranks.WORLD * 5, 3), dtype, seed=400 * index + r) for r in range(ranks.WORLD)]
    reduced = ranks.reduce_cpu(op, inputs)
    for r in range(ranks.WORLD):
        close(results[r][ranks.case_name("reduce_scatter_tensor", dtype, op)], reduced[5 * r:5 * r + 5])


def test_send_recv_async_and_cpu_tensors(results):
    assert torch.equal(results[1]["send/recv"], ranks.values((4, 6), torch.float32, seed=500))
    assert torch.equal(results[0]["send/recv"], ranks.values((5,), torch.int64, seed=501))
    summed = ranks.reduce_cpu("SUM", [ranks.values((6,), torch.float32, seed=600 + r) for r in range(ranks.WORLD)])
    cpu = ranks.reduce_cpu("SUM", [ranks.values((6,), torch.float32, seed=610 + r) for r in range(ranks.WORLD)])
    for r in range(ranks.WORLD):
        tensor, future_value = results[r]["async all_reduce"]
        close(tensor, summed)
        assert torch.equal(future_value, tensor)  # what DDP's comm hooks read
        close(results[r]["cpu all_reduce"], cpu)


@pytest.mark.parametrize("case", list(ranks.ERRORS))
def test_bad_input_raises_on_every_rank(results, case):
    for r in range(ranks.WORLD):
        message, seconds = results[r][case]
        assert message != "no error", f"rank {r}: {case} did not raise"
        for part in ranks.ERRORS[case]:
            assert part in message, f"rank {r}: {part!r} not in {message!r}"
        assert seconds < 10, f"rank {r}: {case} took {seconds:.1f} s to raise"
    # nothing moved: the group was still in step for the next collective
    for r in range(ranks.WORLD):
        assert torch.equal(results[r]["all_reduce after the errors"], torch.full((4,), 3.0))


def test_ddp_training_equals_single_process_training_on_the_mean_gradient(results):
    # Each rank's mean loss on half the batch, gradients averaged by DDP: the gradient of the mean
    # loss on the whole batch, here on the CPU and in one process on the test device.
    x, y = ranks.ddp_data()
    cpu = ranks.train(ranks.ddp_model(seed=0), lambda step: (x * (step + 1), y)).state_dict()
    ocl = ranks.train(ranks.ddp_model(seed=0).to(DEVICE), lambda step: ((x * (step + 1)).to(DEVICE),
                                                                        y.to(DEVICE))).state_dict()
    for name, expected in cpu.items():
        assert_close(ocl[name], expected, scale=10)
        for r in range(ranks.WORLD):
            close(results[r]["ddp"][name], ocl[name].cpu())
    assert ranks.WORLD == 2 and not torch.equal(ranks.ddp_model(seed=1)[0].weight, cpu["0.weight"])


def test_the_process_group_timeout_is_honoured(results):
    message, seconds = results[0]["timeout"]
    assert "all_reduce" in message and "timed out" in message.lower(), message
    assert 1.5 < seconds < 15, f"the 2 s timeout took {seconds:.1f} s"


def test_a_dead_rank_makes_the_other_fail_instead_of_hanging(results):
    message, seconds = results[0]["dead rank"]
    assert message != "no error" and "all_reduce" in message, message
    assert seconds < 20, f"took {seconds:.1f} s (the group's timeout is 60 s)"
