"""The committed performance history (docs/performance_history.jsonl): every record parses, and the
report renders it (--history-file), alone and beside a benchmark run."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from datetime import date

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from ocltune_report import cli, recorded  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HISTORY = os.path.join(ROOT, "docs", "performance_history.jsonl")
BENCH = os.path.join(ROOT, "docs", "results", "nightly", "h200-bench.json")


def record(**changes):
    """A valid record with `changes` applied (a value of None removes the field)."""
    r = {"date": "2026-12-01", "device": "H200", "figure": "gemm/fp32/m=64,n=64,k=64,NN/tuned", "value": 1.5,
         "unit": "TFLOP/s", "command": "ocltune_bench --device 1"}
    r.update(changes)
    return {k: v for k, v in r.items() if v is not None or k == "value"}


def lines(*records):
    header = {"format": recorded.FORMAT, "version": recorded.VERSION}
    return [json.dumps(header)] + [json.dumps(r) for r in records]


class CommittedFileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.header, cls.measurements = recorded.load(HISTORY)

    def test_every_record_parses_with_its_required_fields(self):
        with open(HISTORY, encoding="utf-8") as f:
            raw = [json.loads(line) for line in f if line.strip()][1:]
        self.assertGreater(len(raw), 400)
        self.assertEqual(len(raw), len(self.measurements))
        for number, r in enumerate(raw, 2):
            self.assertEqual(recorded.check(r), [], f"line {number}")
            for key in recorded.REQUIRED:
                self.assertIn(key, r, f"line {number}")
            date.fromisoformat(r["date"])  # a real day
        self.assertEqual(set(self.header["fields"]), set(recorded.REQUIRED + recorded.OPTIONAL))

    def test_dates_are_valid_and_oldest_first(self):
        dates = [m.date for m in self.measurements]
        self.assertEqual(dates, sorted(dates))
        self.assertGreaterEqual(dates[0], "2026-11-30")  # the repository's first measurements
        self.assertLessEqual(dates[-1], date.today().isoformat())

    def test_sources_in_the_tree_exist(self):
        for m in self.measurements:
            if m.source and ":" not in m.source:
                self.assertTrue(os.path.isfile(os.path.join(ROOT, m.source)), f"line {m.line}: {m.source}")

    @unittest.skipUnless(shutil.which("git") and os.path.exists(os.path.join(ROOT, ".git")), "needs a git checkout")
    def test_sources_in_git_history_exist(self):
        shallow = subprocess.run(["git", "-C", ROOT, "rev-parse", "--is-shallow-repository"], capture_output=True,
                                 text=True, check=False).stdout.strip()
        if shallow != "false":
            self.skipTest("a shallow clone lacks the older commits")
        objects = sorted({m.source for m in self.measurements if ":" in m.source})
        done = subprocess.run(["git", "-C", ROOT, "cat-file", "--batch-check"], input="\n".join(objects) + "\n",
                              capture_output=True, text=True, check=True)
        self.assertEqual([line for line in done.stdout.splitlines() if line.endswith(" missing")], [])

    def test_the_latest_figures_are_the_ones_the_docs_quote(self):
        latest = recorded.latest(self.measurements)
        encoder = latest[("H200", "model/fp32/encoder-training-b8/ocl")]
        self.assertEqual((encoder.date, encoder.value, encoder.baselines[0]["ratio"]), ("2026-12-03", 83.23, 0.806))
        gemm = latest[("H200", "gemm/fp32/m=4096,n=4096,k=4096,NN/tuned")]
        self.assertEqual((gemm.value, gemm.source), (45.68, "docs/results/nightly/h200-bench.json"))
        with open(os.path.join(ROOT, "docs", "PERFORMANCE.md"), encoding="utf-8") as f:
            performance = f.read()
        for figure in ("83.23", "45.7", "0.806"):
            self.assertIn(figure, performance)


class RenderTest(unittest.TestCase):
    def render(self, args):
        with tempfile.TemporaryDirectory() as tmp:
            code = cli.main(args + ["--out", tmp])
            with open(os.path.join(tmp, "index.html"), encoding="utf-8") as f:
                return code, f.read()

    def test_the_committed_history_renders_alone(self):
        code, page = self.render(["--history-file", HISTORY])
        self.assertEqual(code, cli.EXIT_OK)
        self.assertIn("Recorded figures: " + HISTORY, page)
        self.assertIn("<h3>H200</h3>", page)
        self.assertIn("<h3>PoCL</h3>", page)
        self.assertIn("model/fp32/encoder-training-b8/ocl", page)
        self.assertIn("0.806x cuda (67.11)", page)
        self.assertIn("4194-4200 GB/s", page)  # a figure quoted as a range
        self.assertGreaterEqual(page.count('<img class="chart"'), 2)  # a history chart per device

    def test_the_committed_history_renders_beside_a_benchmark_run(self):
        code, page = self.render(["--bench", BENCH, "--history-file", HISTORY])
        self.assertEqual(code, cli.EXIT_OK)
        self.assertIn("NVIDIA CUDA / NVIDIA H200 / 132 CU", page)  # the run's device section
        self.assertIn("Recorded figures", page)

    def test_bad_records_are_named_by_line(self):
        bad = lines(record(), record(date="2026-02-30"), record(value=None), record(unit=""),
                    record(baselines=[{"name": "cuda"}]), record(date="2026-11-01"), record(extra=1))
        with self.assertRaises(ValueError) as caught:
            recorded.parse(bad, "h.jsonl")
        text = str(caught.exception)
        for expected in ("h.jsonl:3: date '2026-02-30'", "h.jsonl:4: value is null and there is no range",
                         "h.jsonl:5: 'unit'", "h.jsonl:6: baseline", "h.jsonl:7: date 2026-11-01 is before",
                         "h.jsonl:8: unknown field 'extra'"):
            self.assertIn(expected, text)
        self.assertNotIn("h.jsonl:2:", text)

    def test_a_file_without_the_header_is_refused(self):
        with self.assertRaises(ValueError):
            recorded.parse([json.dumps(record())], "h.jsonl")

    def test_a_bad_file_fails_the_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "h.jsonl")
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines(record(date="yesterday"))) + "\n")
            self.assertEqual(cli.main(["--history-file", path, "--out", tmp]), cli.EXIT_FAILURE)

    @unittest.skipUnless(os.environ.get("OCLTUNE_BINARY"), "ctest sets OCLTUNE_BINARY to the built ocltune")
    def test_ocltune_report_passes_the_history_file(self):
        binary = os.environ["OCLTUNE_BINARY"]
        with tempfile.TemporaryDirectory() as tmp:
            done = subprocess.run([binary, "report", "--history-file", HISTORY, "--out", tmp], check=False)
            self.assertEqual(done.returncode, 0)
            with open(os.path.join(tmp, "index.html"), encoding="utf-8") as f:
                self.assertIn("Recorded figures", f.read())
            self.assertEqual(subprocess.run([binary, "report", "--out", tmp], check=False).returncode, 2)

    def test_bench_or_history_file_is_required(self):
        with self.assertRaises(SystemExit) as caught:
            cli.main(["--out", "/tmp/unused"])
        self.assertEqual(caught.exception.code, cli.EXIT_USAGE)


if __name__ == "__main__":
    unittest.main()
