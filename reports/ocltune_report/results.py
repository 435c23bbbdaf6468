"""Reading ocltune_bench output (Google Benchmark JSON) into one record per benchmark."""
import json
import statistics
from dataclasses import dataclass, field

# Counters ocltune_bench sets on every timed benchmark (bench/suite.cpp).
NUMERIC_FIELDS = ("GFLOP/s", "GB/s", "peak_frac", "roofline_frac", "median_us", "spread", "flops", "bytes",
                  "memory_bound", "real_time", "steps/s")


@dataclass
class Record:
    """One benchmark of one run: an op at one shape in one variant (tuned, default or a baseline)."""

    name: str
    op: str
    dtype: str
    shape: str
    variant: str
    label: str = ""
    error: str = ""
    values: dict = field(default_factory=dict)

    @property
    def ok(self):
        """Whether the benchmark was verified and timed."""
        return not self.error and "median_us" in self.values

    @property
    def memory_bound(self):
        """Memory-bound problems are reported in GB/s, the others in GFLOP/s."""
        return bool(self.values.get("memory_bound", 0))

    @property
    def unit(self):
        """The unit of throughput(): steps/s for a model's step (ocltune_torch/bench/models.py)."""
        if "steps/s" in self.values:
            return "steps/s"
        return "GB/s" if self.memory_bound else "GFLOP/s"

    @property
    def throughput(self):
        """GB/s for memory-bound problems, GFLOP/s otherwise; None when not timed."""
        return self.values.get(self.unit) if self.ok else None

    @property
    def noise(self):
        """Relative noise of this figure within its run: iteration spread or repetition variation."""
        return max(self.values.get("spread", 0.0), self.values.get("repetition_cv", 0.0))

    @property
    def problem(self):
        """The problem this record measured: (op, dtype, shape)."""
        return (self.op, self.dtype, self.shape)


@dataclass
class BenchRun:
    """One ocltune_bench output file: its context (device, versions, ceilings) and records."""

    path: str
    context: dict
    records: list

    def ctx(self, key, default=""):
        """An ocltune_* context value as a string."""
        return self.context.get("ocltune_" + key, default)

    def ctx_float(self, key):
        """An ocltune_* context value as a float, or None."""
        try:
            return float(self.context["ocltune_" + key])
        except (KeyError, ValueError):
            return None

    @property
    def device_identity(self):
        """What a history series follows across driver updates: platform and device name.

        The device key changes with the driver version, which is exactly what a regression should be
        attributed to, so history is not keyed by it.
        """
        return f"{self.ctx('platform_name')} / {self.ctx('device_name')} / {self.ctx('compute_units')} CU"

    @property
    def date(self):
        """When the run started (UTC ISO 8601)."""
        return self.ctx("started_at") or self.context.get("date", "")


# Suffixes Google Benchmark appends to a run name (UseManualTime, UseRealTime).
TIME_SUFFIXES = ("manual_time", "real_time")


def base_name(name):
    """The registered benchmark name without Google Benchmark's timing suffix."""
    parts = name.split("/")
    while parts and parts[-1] in TIME_SUFFIXES:
        parts.pop()
    return "/".join(parts)


def split_name(name):
    """'op/dtype/shape key/variant' -> (op, dtype, shape, variant); the shape may hold '/'."""
    parts = base_name(name).split("/")
    if len(parts) < 4:
        raise ValueError(f"benchmark name {name!r} is not op/dtype/shape/variant")
    return parts[0], parts[1], "/".join(parts[2:-1]), parts[-1]


def _merge(rows):
    """One record's values from its rows: the 'median' aggregate when repeated, else the median."""
    aggregates = [r for r in rows if r.get("run_type") == "aggregate" and r.get("aggregate_name") == "median"]
    iterations = [r for r in rows if r.get("run_type", "iteration") == "iteration"]
    if aggregates:
        values = {k: aggregates[0][k] for k in NUMERIC_FIELDS if k in aggregates[0]}
        cv = [r for r in rows if r.get("run_type") == "aggregate" and r.get("aggregate_name") == "cv"]
        unit = "GB/s" if values.get("memory_bound") else "GFLOP/s"
        if cv and isinstance(cv[0].get(unit), (int, float)):
            values["repetition_cv"] = cv[0][unit]  # run-to-run variation within this run
        return values
    values = {}
    for key in NUMERIC_FIELDS:
        xs = [r[key] for r in iterations if isinstance(r.get(key), (int, float))]
        if xs:
            values[key] = statistics.median(xs)
    return values


def parse_bench(data, path="<memory>"):
    """A BenchRun from parsed Google Benchmark JSON; benchmarks not named op/dtype/shape/variant are skipped."""
    groups = {}
    for row in data.get("benchmarks", []):
        name = base_name(row.get("run_name") or row.get("name", ""))
        groups.setdefault(name, []).append(row)
    records = []
    for name, rows in groups.items():
        try:
            op, dtype, shape, variant = split_name(name)
        except ValueError:
            continue
        error = next((r.get("error_message", "error") for r in rows if r.get("error_occurred")), "")
        label = next((r["label"] for r in rows if r.get("label")), "")
        records.append(Record(name, op, dtype, shape, variant, label, error, {} if error else _merge(rows)))
    return BenchRun(path, data.get("context", {}), records)


def load_bench(path):
    """A BenchRun from a Google Benchmark JSON file; raises ValueError on anything else."""
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON ({e})") from e
    if not isinstance(data, dict) or "benchmarks" not in data:
        raise ValueError(f"{path}: not Google Benchmark JSON output (no 'benchmarks')")
    return parse_bench(data, path)
