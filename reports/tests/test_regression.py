"""Regression detection: an injected 20 % slowdown is flagged, run-to-run noise is not."""
import os
import random
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

from ocltune_report import cli, history  # noqa: E402
from ocltune_report.regression import Point, check_point, describe, series_flags  # noqa: E402
from ocltune_report.results import parse_bench  # noqa: E402
import synthetic  # noqa: E402

FIGURE = "gemm/fp32/batch=1,k=256,layout=NN,m=256,n=256/tuned"


def noisy_series(n, noise, seed, start=100.0):
    """n points of `start` with relative Gaussian noise, one run a day."""
    rng = random.Random(seed)
    return [Point(f"2026-11-{i + 1:02d}T03:00:00Z", start * (1 + rng.gauss(0, noise)), 0.01, {"driver": "3.1"})
            for i in range(n)]


class DetectionTest(unittest.TestCase):
    def test_injected_20_percent_slowdown_is_flagged(self):
        for seed in range(20):
            points = noisy_series(12, 0.02, seed)
            points[-1].value *= 0.8
            flag = check_point(FIGURE, points[:-1], points[-1])
            self.assertIsNotNone(flag, f"seed {seed}: 20 % slowdown not flagged")
            self.assertAlmostEqual(flag.drop, 0.2, delta=0.08)

    def test_noise_alone_is_not_flagged(self):
        for seed in range(200):
            points = noisy_series(12, 0.02, seed)
            self.assertEqual(series_flags(FIGURE, points), [], f"seed {seed}: noise flagged")

    def test_drop_within_large_noise_is_not_flagged(self):
        # A figure that varies by 10 % from run to run cannot show a 20 % drop beyond its noise.
        points = [Point(f"d{i:02d}", v, 0.0, {}) for i, v in enumerate([100, 88, 112, 95, 108, 90, 110, 100])]
        self.assertIsNone(check_point(FIGURE, points, Point("d99", 80.0, 0.0, {})))
        self.assertIsNotNone(check_point(FIGURE, points, Point("d99", 55.0, 0.0, {})))

    def test_improvement_is_not_flagged(self):
        points = noisy_series(8, 0.02, 1)
        self.assertIsNone(check_point(FIGURE, points, Point("later", 150.0, 0.0, {})))

    def test_message_names_op_shape_date_and_driver_change(self):
        points = noisy_series(6, 0.01, 3)
        new = Point("2026-12-01T03:00:00Z", 70.0, 0.01, {"driver": "4.0", "ocltune": "0.1.0"})
        text = describe(check_point(FIGURE, points, new), "GFLOP/s")
        for part in ("gemm", "m=256", "(tuned)", "2026-12-01", "driver 3.1 -> 4.0", "GFLOP/s"):
            self.assertIn(part, text)


class PipelineTest(unittest.TestCase):
    """Through the history files and the command line: exit 3 only for the injected slowdown."""

    def run_nights(self, tmp, slow, command=None):
        """Eight nights of noise, then a ninth (slowed down or not) through `command` or cli.main."""
        hist = os.path.join(tmp, "history")
        for night in range(8):
            data = synthetic.bench_json(f"2026-11-{night + 1:02d}T03:00:00Z", noise=0.02, seed=night)
            history.append(hist, history.make_entry([parse_bench(data)]))
        last = synthetic.bench_json("2026-11-20T03:00:00Z", noise=0.02, seed=99,
                                    slow={f"gemm/fp32/{synthetic.SHAPES[0]}/tuned": 0.8} if slow else None)
        path = synthetic.write(os.path.join(tmp, "last.json"), last)
        args = ["--bench", path, "--out", os.path.join(tmp, "out"), "--history", hist, "--fail-on-regression"]
        if command:
            return subprocess.run(command + args, check=False).returncode
        return cli.main(args)

    def test_slowdown_fails_the_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(self.run_nights(tmp, slow=True), cli.EXIT_REGRESSION)
            with open(os.path.join(tmp, "out", "index.html"), encoding="utf-8") as f:
                page = f.read()
            self.assertIn("1 regression(s)", page)
            self.assertIn("2026-11-20", page)

    def test_noise_passes(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(self.run_nights(tmp, slow=False), cli.EXIT_OK)

    @unittest.skipUnless(os.environ.get("OCLTUNE_BINARY"), "ctest sets OCLTUNE_BINARY to the built ocltune")
    def test_ocltune_report_exits_3_on_regression(self):
        with tempfile.TemporaryDirectory() as tmp:
            code = self.run_nights(tmp, slow=True, command=[os.environ["OCLTUNE_BINARY"], "report"])
            self.assertEqual(code, 3)

    def test_tf32_ceiling_is_listed_only_when_measured(self):
        """ocltune_bench measures the TF32 mma.sync rate for tf32 problems on tensor-core devices."""
        for tf32, listed in ((None, False), ("320000", True)):
            with tempfile.TemporaryDirectory() as tmp:
                data = synthetic.bench_json("2026-11-01T03:00:00Z")
                if tf32:
                    data["context"]["ocltune_tf32_peak_gflops"] = tf32
                path = synthetic.write(os.path.join(tmp, "run.json"), data)
                self.assertEqual(cli.main(["--bench", path, "--out", os.path.join(tmp, "out")]), cli.EXIT_OK)
                with open(os.path.join(tmp, "out", "index.html"), encoding="utf-8") as f:
                    page = f.read()
                self.assertEqual("TF32 mma.sync peak" in page, listed)
                if listed:
                    self.assertIn("3.2e+05 GFLOP/s", page)

    def test_half_precision_ceilings_are_listed_only_when_measured(self):
        """ocltune_bench measures the fp16/bf16 mma.sync rates for 16-bit GEMM problems."""
        with tempfile.TemporaryDirectory() as tmp:
            data = synthetic.bench_json("2026-11-01T03:00:00Z")
            data["context"]["ocltune_fp16_peak_gflops"] = "650000"
            path = synthetic.write(os.path.join(tmp, "run.json"), data)
            self.assertEqual(cli.main(["--bench", path, "--out", os.path.join(tmp, "out")]), cli.EXIT_OK)
            with open(os.path.join(tmp, "out", "index.html"), encoding="utf-8") as f:
                page = f.read()
            self.assertIn("fp16 mma.sync peak", page)
            self.assertIn("6.5e+05 GFLOP/s", page)
            self.assertNotIn("bf16 mma.sync peak", page)

    def test_history_append_is_idempotent(self):
        with tempfile.TemporaryDirectory() as tmp:
            entry = history.make_entry([parse_bench(synthetic.bench_json("2026-11-01T03:00:00Z"))])
            history.append(tmp, entry)
            history.append(tmp, entry)
            self.assertEqual(len(history.load(tmp)), 1)


if __name__ == "__main__":
    unittest.main()
