"""Ops from several Python threads at once (issue 41): every op of a device goes on its one in-order
queue, so the kernels of the threads' ops interleave there. A split reduction's two passes shared
the runtime's one workspace per queue, and the second pass read another thread's partial sums:
`(x @ w).relu().sum(0)` off by hundreds in 1-2 calls of 100, or PoCL aborting on a workspace buffer
another thread had grown and released. The threads run in a child process, so that an abort fails
this test instead of ending the suite, and start on a runtime with no decision cached yet."""

import json
import subprocess
import sys
import textwrap

from conftest import DEVICE

CHILD = textwrap.dedent("""
    import json, sys, threading
    import torch
    import ocltune_torch  # noqa: F401

    dev, threads, shapes, repeats = sys.argv[1], 4, 25, 8
    wrong, errors, lock = [], [], threading.Lock()

    def work(t):
        g = torch.Generator().manual_seed(41 + t)
        try:
            for i in range(shapes):
                # Distinct shapes in every call of every thread: sum(0) over 16 to 250 rows of a few
                # columns is split in two passes on the CPU (and first resolved on a cold cache).
                m, k, n = 16 + (37 * i + 53 * t) % 235, 4 + (i + t) % 20, 1 + t + threads * i
                x, w = torch.randn(m, k, generator=g), torch.randn(k, n, generator=g)
                expected = (x @ w).relu().sum(0)
                bound = 1e-5 * (x.abs() @ w.abs()).sum(0) + 1e-5
                y = (x.to(dev) @ w.to(dev)).relu()
                for r in range(repeats):
                    got = (x.to(dev) @ w.to(dev)).relu().sum(0).cpu() if r == 0 else y.sum(0).cpu()
                    error = (got - expected).abs()
                    if not bool((error <= bound).all()):
                        with lock:
                            wrong.append([t, i, r, [m, k, n], float(error.max()), float(expected.abs().max())])
        except Exception as e:  # noqa: BLE001  (reported by the test)
            with lock:
                errors.append(f"thread {t}: {type(e).__name__}: {e}")

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print(json.dumps({"calls": threads * shapes * repeats, "wrong": wrong, "errors": errors}))
""")


def test_threads_of_distinct_shapes_get_the_cpus_results():
    done = subprocess.run([sys.executable, "-c", CHILD, f"ocl:{DEVICE.index}"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"the threads' process exited {done.returncode}:\n{done.stderr[-3000:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["errors"] == []
    assert result["wrong"] == [], (
        f"{len(result['wrong'])} of {result['calls']} sums wrong "
        "(thread, shape, repeat, [m, k, n], max error, max |expected|): " + repr(result["wrong"][:5]))
