"""Nightly history: one JSON file of key figures per run, appended once, read back as series."""
import glob
import hashlib
import json
import os

from ocltune_report.regression import Point

FORMAT = "ocltune-history-1"


def run_versions(run):
    """The versions of a BenchRun a regression may be attributed to."""
    return {"driver": run.ctx("driver_version"), "platform": run.ctx("platform_version"),
            "ocltune": run.ctx("version"), "clblast": run.ctx("clblast_version"), "commit": run.ctx("commit")}


def run_figures(run):
    """Key figures of a BenchRun: throughput of every timed benchmark and the two ceilings."""
    figures = {}
    for r in run.records:
        if r.ok and r.throughput:
            figures[r.name] = {"value": r.throughput, "unit": r.unit, "spread": r.noise}
    for key, name, unit in (("copy_gbs", "ceiling/copy bandwidth", "GB/s"),
                            ("peak_gflops", "ceiling/fp32 FMA peak", "GFLOP/s")):
        value = run.ctx_float(key)
        if value:
            spread = run.ctx_float(key.split("_")[0] + "_spread") or 0.0
            figures[name] = {"value": value, "unit": unit, "spread": spread}
    return figures


def make_entry(runs):
    """A history entry of the BenchRuns of one device from one nightly run."""
    first = min(runs, key=lambda r: r.date)
    figures = {}
    for run in runs:
        figures.update(run_figures(run))
    entry = {"format": FORMAT, "date": first.date, "device": first.device_identity,
             "device_key": first.ctx("device_key"), "versions": run_versions(first), "figures": figures}
    digest = hashlib.sha256(json.dumps(entry, sort_keys=True).encode()).hexdigest()[:12]
    entry["id"] = digest
    return entry


def append(directory, entry):
    """Writes `entry` to `directory` unless the same entry is there already; returns its path."""
    os.makedirs(directory, exist_ok=True)
    stamp = "".join(c for c in entry["date"] if c.isalnum()) or "undated"
    path = os.path.join(directory, f"{stamp}-{entry['id']}.json")
    if not os.path.exists(path):
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(entry, f, indent=1, sort_keys=True)
        os.replace(tmp, path)  # a reader never sees half an entry
    return path


def load(directory, device=None):
    """Entries of `directory` (of one device identity when given), oldest first; bad files are skipped."""
    entries = []
    for path in glob.glob(os.path.join(directory, "*.json")):
        try:
            with open(path, encoding="utf-8") as f:
                entry = json.load(f)
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(entry, dict) and entry.get("format") == FORMAT and isinstance(entry.get("figures"), dict):
            if device is None or entry.get("device") == device:
                entries.append(entry)
    entries.sort(key=lambda e: (e.get("date", ""), e.get("id", "")))
    return entries


def series(entries):
    """{figure: (unit, [Point, ...])} over the entries, oldest first."""
    out = {}
    for e in entries:
        for name, fig in e["figures"].items():
            value = fig.get("value")
            if not isinstance(value, (int, float)) or value <= 0:
                continue
            unit, points = out.setdefault(name, (fig.get("unit", ""), []))
            points.append(Point(e.get("date", ""), float(value), float(fig.get("spread") or 0.0),
                                e.get("versions", {})))
    return out
