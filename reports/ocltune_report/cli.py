"""Command line of the report generator: load, compare with history, draw, write index.html."""
import argparse
import os
import sys
from datetime import datetime, timezone

from ocltune_report import database, history, plots, recorded, render
from ocltune_report.regression import Point, describe, series_flags
from ocltune_report.results import load_bench

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_REGRESSION = 0, 1, 2, 3


def parse_args(argv):
    """Flags as `ocltune report` passes them (argparse exits 2 on a usage error)."""
    p = argparse.ArgumentParser(prog="ocltune report", description=__doc__)
    p.add_argument("--bench", nargs="+", default=[], help="ocltune_bench JSON output file(s)")
    p.add_argument("--history-file", action="append", default=[], metavar="FILE",
                   help="a performance history file (docs/performance_history.jsonl): its latest figures and "
                        "their history join the report; repeatable")
    p.add_argument("--db", default="", help="tuning database (best configurations, convergence)")
    p.add_argument("--out", required=True, help="output directory; the report is OUT/index.html")
    p.add_argument("--history", default="", help="history directory: this run is appended, then compared")
    p.add_argument("--fail-on-regression", action="store_true", help="exit 3 when this run regressed")
    p.add_argument("--threshold", type=float, default=0.10, help="smallest relative drop flagged")
    p.add_argument("--noise-k", type=float, default=3.0, help="a drop must exceed k x run-to-run noise")
    p.add_argument("--title", default="ocltune benchmark report")
    args = p.parse_args(argv)
    if not args.bench and not args.history_file:
        p.error("give --bench, --history-file or both")
    return args


def merge_records(runs):
    """One record per benchmark name over several result files (a later file wins)."""
    merged = {}
    for run in runs:
        for r in run.records:
            merged[r.name] = r
    return list(merged.values())


def history_part(section, runs, args):
    """Appends this run to the history and fills the section's regressions and history chart."""
    entry = history.make_entry(runs)
    history.append(args.history, entry)
    entries = history.load(args.history, section.identity)
    section.history_runs = len(entries)
    series = history.series(entries)
    figures = []
    for name, (unit, points) in sorted(series.items()):
        section.units[name] = unit
        flags = series_flags(name, points, args.threshold, args.noise_k)
        section.history_flags += flags
        section.flags += [f for f in flags if f.date == entry["date"]]
        figures.append((name, unit, points, bool(flags)))
    # Flagged figures first, then our tuned kernels, then the ceilings, then the rest.
    figures.sort(key=lambda f: (not f[3], not f[0].endswith("/tuned"), not f[0].startswith("ceiling/"), f[0]))
    section.history_flags.sort(key=lambda f: f.date, reverse=True)
    section.charts["history"] = plots.history_chart([f[:3] for f in figures], section.history_flags)


def database_part(section, con):
    """Device row, best configurations, evaluation counts and convergence from the tuning database."""
    key = section.runs[0].ctx("device_key")
    section.device_row = database.device_row(con, key)
    section.best = database.best_rows(con, key)
    section.status = database.status_counts(con, key)
    section.charts["convergence"] = plots.convergence_chart(database.convergence(con, key))


def build_section(identity, runs, con, args):
    """Everything about one device: tables' data and charts."""
    section = render.DeviceSection(identity, runs, merge_records(runs))
    run = runs[0]
    section.charts["roofline"] = plots.roofline_chart(section.records, run.ctx_float("peak_gflops"),
                                                      run.ctx_float("copy_gbs"), run.ctx("device_name"))
    for op in sorted({r.op for r in section.records}):
        section.op_charts[op] = [plots.bars_chart(section.records, op), plots.size_chart(section.records, op)]
    if con is not None:
        database_part(section, con)
    else:
        section.notes.append(f"No tuning database at {args.db or '(none given)'}: no convergence or evaluation counts.")
    if args.history:
        history_part(section, runs, args)
    return section


def recorded_part(path, max_panels=16):
    """A history file's section: the latest measurement of each figure and, per device, the figures
    measured most often over time (a ratio to their baseline where each measurement has one)."""
    _, ms = recorded.load(path)
    groups = recorded.by_figure(ms)
    section = render.RecordedSection(path, ms, recorded.latest(ms), {k: len(v) for k, v in groups.items()})
    for device in sorted({m.device for m in ms}):
        figures, labels = [], {}
        for (d, figure), series in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0][1])):
            plotted = recorded.chart_series(series) if d == device else None
            if plotted:
                unit, points = plotted
                figures.append((figure, unit, [Point(date, value, 0.0, {"commit": commit}) for date, value, commit in points]))
                parts = figure.split("/")
                labels[figure] = f"{parts[0]} {'/'.join(parts[2:-1])} ({parts[1]}; {parts[-1]})"
        section.charts[device] = plots.history_chart(figures, [], max_panels, labels,
                                                     title=f"{device}: recorded figures", order="the most measured",
                                                     legend="", by_order=True)
    return section


def main(argv):
    """Writes OUT/index.html; returns the process exit status."""
    args = parse_args(argv)
    try:
        runs = [load_bench(p) for p in args.bench]
        recorded_sections = [recorded_part(p) for p in args.history_file]
    except (OSError, ValueError) as e:
        print(f"ocltune report: error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    by_device = {}
    for run in runs:
        by_device.setdefault(run.device_identity, []).append(run)
    con = database.connect(args.db)
    sections = [build_section(identity, rs, con, args) for identity, rs in by_device.items()]
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = render.page(args.title, sections, generated, args.history, args.threshold, args.noise_k,
                       recorded_sections)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "index.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    flags = [(s, f) for s in sections for f in s.flags]
    recorded_text = "".join(f", {len(r.measurements)} recorded measurements from {r.path}" for r in recorded_sections)
    print(f"ocltune report: {path} ({len(text) // 1024} KiB, {sum(len(s.records) for s in sections)} benchmarks"
          f"{recorded_text})")
    for s, f in flags:
        print(f"ocltune report: REGRESSION {describe(f, s.units.get(f.figure, ''))}")
    return EXIT_REGRESSION if flags and args.fail_on_regression else EXIT_OK
