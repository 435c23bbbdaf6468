"""The report as one self-contained HTML page: tables as HTML, charts as embedded PNG data URIs."""
import html
from dataclasses import dataclass, field

from ocltune_report.plots import variants_of
from ocltune_report.regression import describe

# Nothing may be fetched: images are data: URIs, styles inline, no scripts. A reference to anything
# else is blocked and reported as a console error, which the Chromium test catches.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .6em 0; font-size: .85em; }
th, td { border: 1px solid #ddd; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; white-space: nowrap; }
td.err { color: #a33; max-width: 22em; } code { font-size: .9em; word-break: break-all; }
.regress { background: #fde8e8; border: 1px solid #d62728; padding: .6em 1em; }
.clean { background: #e8f5e9; border: 1px solid #2ca02c; padding: .6em 1em; }
.note { color: #666; font-size: .85em; } img.chart { max-width: 100%; display: block; margin: .8em 0; }
.good { color: #1a7f37; font-weight: 600; } .bad { color: #b42318; font-weight: 600; }
"""


@dataclass
class DeviceSection:
    """Everything the report shows about one device."""

    identity: str
    runs: list                      # BenchRun objects of this device
    records: list                   # Record objects, one per benchmark name
    device_row: dict = field(default_factory=dict)
    best: dict = field(default_factory=dict)
    status: dict = field(default_factory=dict)
    charts: dict = field(default_factory=dict)   # name -> data URI (or None)
    op_charts: dict = field(default_factory=dict)  # op -> [data URI, ...]
    flags: list = field(default_factory=list)      # regressions of this run
    history_flags: list = field(default_factory=list)  # every regression in the history
    history_runs: int = 0
    units: dict = field(default_factory=dict)      # figure -> unit
    notes: list = field(default_factory=list)


@dataclass
class RecordedSection:
    """A performance history file (--history-file): its latest figures and their history charts."""

    path: str
    measurements: list             # recorded.Measurement objects, oldest first
    latest: dict                   # (device, figure) -> its latest Measurement
    counts: dict                   # (device, figure) -> number of measurements
    charts: dict = field(default_factory=dict)  # device -> data URI (or None)


def esc(value):
    """HTML-escaped text of any value."""
    return html.escape(str(value), quote=True)


def fmt_rate(record):
    """'812 GFLOP/s' with the median time below, or the reason it has no figure."""
    if record is None:
        return '<td class="note">-</td>'
    if not record.ok:
        text = record.error or "not timed"
        return f'<td class="err" title="{esc(text)}">{esc(text[:90])}</td>'
    return (f'<td class="num">{record.throughput:.4g} {record.unit}<br>'
            f'<span class="note">{record.values["median_us"]:.4g} &micro;s</span></td>')


def ratio_cell(num, den):
    """A speedup cell: num / den, green when > 1."""
    if not num or not den or not num.ok or not den.ok:
        return '<td class="note">-</td>'
    r = num.throughput / den.throughput
    cls = "good" if r >= 1.0 else "bad"
    return f'<td class="num {cls}">{r:.2f}x</td>'


def frac_cell(record, key):
    """A fraction of peak or roofline as a percentage."""
    if not record or not record.ok or key not in record.values:
        return '<td class="note">-</td>'
    return f'<td class="num">{100 * record.values[key]:.1f} %</td>'


def table(headers, rows):
    """An HTML table from header strings and rows of ready-made <td> cells."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(f"<tr>{''.join(r)}</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def image(uri, alt):
    """An embedded chart, or a note when there was nothing to draw."""
    if not uri:
        return f'<p class="note">{esc(alt)}: no data to plot.</p>'
    return f'<img class="chart" alt="{esc(alt)}" src="{uri}">'


def device_table(section):
    """Device, driver and tool versions, ceilings measured in this run and stored by the tuner."""
    run = section.runs[0]
    c, d = run.ctx, section.device_row
    rows = [("device", f"{c('device_name')} ({c('device_type')}, {c('compute_units')} compute units, "
                       f"{c('clock_mhz')} MHz)"),
            ("vendor / platform", f"{c('device_vendor')} / {c('platform_name')} {c('platform_version')}"),
            ("driver", c("driver_version")), ("device key", c("device_key")),
            ("copy bandwidth (this run)", f"{run.ctx_float('copy_gbs') or 0:.4g} GB/s "
                                          f"(spread {100 * (run.ctx_float('copy_spread') or 0):.1f} %)"),
            ("fp32 FMA peak (this run)", f"{run.ctx_float('peak_gflops') or 0:.4g} GFLOP/s "
                                         f"(spread {100 * (run.ctx_float('peak_spread') or 0):.1f} %)")]
    for inputs, label in (("tf32", "TF32 mma.sync peak (this run; ceiling of tf32 rows)"),
                          ("fp16", "fp16 mma.sync peak (this run; ceiling of fp16 GEMM rows)"),
                          ("bf16", "bf16 mma.sync peak (this run; ceiling of bf16 GEMM rows)")):
        # Those rows' "% of peak" and "% of roofline" are against this ceiling (bench/roofline.h).
        if run.ctx_float(f"{inputs}_peak_gflops"):
            rows.append((label, f"{run.ctx_float(f'{inputs}_peak_gflops'):.4g} GFLOP/s "
                                f"(spread {100 * (run.ctx_float(f'{inputs}_peak_spread') or 0):.1f} %)"))
    if d:
        rows.append(("ceilings stored by the tuner", f"{d.get('copy_bandwidth_gbs') or 0:.4g} GB/s, "
                                                     f"{d.get('peak_gflops') or 0:.4g} GFLOP/s"))
    rows += [("ocltune / CLBlast", f"{c('version')} / {c('clblast_version')}" +
              (f", commit {c('commit')}" if c("commit") else "")),
             ("run started", c("started_at")), ("shapes", c("shapes")), ("tuning database", c("database")),
             ("host / load average", f"{run.context.get('host_name', '')} / {run.context.get('load_avg', '')}"),
             ("result files", ", ".join(r.path for r in section.runs))]
    return table(["", ""], [[f"<th>{esc(k)}</th>", f"<td>{esc(v)}</td>"] for k, v in rows])


def op_table(section, op):
    """Per shape: tuned, default and baselines, speedups, fractions of peak and roofline, configuration."""
    rows = [r for r in section.records if r.op == op]
    variants = variants_of(rows)
    baselines = [v for v in variants if v not in ("tuned", "default")]
    by_key = {(r.dtype, r.shape, r.variant): r for r in rows}
    headers = ["shape", "dtype", "tuned", "default"] + baselines + ["tuned / default"]
    headers += [f"tuned / {b}" for b in baselines] + ["% of peak", "% of roofline", "tuned configuration",
                                                      "evaluations (failed)"]
    out = []
    for dtype, shape in sorted({(r.dtype, r.shape) for r in rows}):
        get = lambda v: by_key.get((dtype, shape, v))  # noqa: E731
        tuned, default = get("tuned"), get("default")
        counts = section.status.get((op, dtype, shape), {})
        failed = sum(n for s, n in counts.items() if s != "ok")
        config = esc(tuned.label) if tuned and tuned.ok else ""
        best = section.best.get((op, dtype, shape))
        if config and best:
            config += (f'<br><span class="note">run {esc(best.get("run_id"))} ({esc(best.get("strategy") or "?")}), '
                       f'{esc(best.get("updated_at", ""))}</span>')
        cells = [f"<td><code>{esc(shape)}</code></td>", f"<td>{esc(dtype)}</td>", fmt_rate(tuned), fmt_rate(default)]
        cells += [fmt_rate(get(b)) for b in baselines] + [ratio_cell(tuned, default)]
        cells += [ratio_cell(tuned, get(b)) for b in baselines]
        cells += [frac_cell(tuned, "peak_frac"), frac_cell(tuned, "roofline_frac"),
                  f"<td><code>{config}</code></td>",
                  f'<td class="num">{sum(counts.values())} ({failed})</td>' if counts else '<td class="note">-</td>']
        out.append(cells)
    return table(headers, out)


def regression_block(section, history_dir, threshold, noise_k):
    """This run's regressions, or why there are none."""
    if not history_dir:
        return '<p class="note">No history directory given (--history): nothing to compare with.</p>'
    rule = (f"a figure regresses when it drops below the median of the previous runs by more than "
            f"max({100 * threshold:.0f} %, {noise_k:g} x its run-to-run noise)")
    if section.history_runs < 2:
        return f'<div class="clean">First run of this device in the history; {esc(rule)}.</div>'
    if not section.flags:
        return (f'<div class="clean">No regression against {section.history_runs - 1} earlier run(s); '
                f'{esc(rule)}.</div>')
    items = "".join(f"<li>{esc(describe(f, section.units.get(f.figure, '')))}</li>" for f in section.flags)
    return f'<div class="regress"><b>{len(section.flags)} regression(s)</b> ({esc(rule)}):<ul>{items}</ul></div>'


def errors_block(section):
    """Benchmarks that produced no figure, with the reason (failures are shown, not hidden)."""
    bad = [r for r in section.records if not r.ok]
    if not bad:
        return ""
    rows = [[f"<td><code>{esc(r.name)}</code></td>", f'<td class="err">{esc(r.error or "not timed")}</td>']
            for r in bad]
    return "<h3>Benchmarks without a figure</h3>" + table(["benchmark", "reason"], rows)


def device_html(section, history_dir, threshold, noise_k):
    """One device's part of the report."""
    parts = [f"<h2>{esc(section.identity)}</h2>", device_table(section),
             "<h3>Regressions</h3>", regression_block(section, history_dir, threshold, noise_k)]
    parts += [f'<p class="note">{esc(n)}</p>' for n in section.notes]
    parts += ["<h3>Roofline</h3>", image(section.charts.get("roofline"), "roofline chart")]
    for op in sorted({r.op for r in section.records}):
        parts += [f"<h3>{esc(op)}</h3>", op_table(section, op)]
        parts += [image(uri, f"{op} chart") for uri in section.op_charts.get(op, [])]
    parts += [errors_block(section), "<h3>Tuning convergence</h3>",
              image(section.charts.get("convergence"), "tuning convergence")]
    parts += ["<h3>History</h3>", image(section.charts.get("history"), "history of key figures")]
    if section.history_flags:
        rows = [[f"<td>{esc(f.date)}</td>", f"<td>{esc(describe(f, section.units.get(f.figure, '')))}</td>"]
                for f in section.history_flags]
        parts += ["<h4>Every regression in the history</h4>", table(["run", "regression"], rows)]
    return "\n".join(parts)


def recorded_html(section):
    """A history file's part of the report: per device, the latest measurement of every figure."""
    ms = section.measurements
    devices = sorted({m.device for m in ms})
    first, last = (ms[0].date, ms[-1].date) if ms else ("-", "-")
    parts = [f"<h2>Recorded figures: {esc(section.path)}</h2>",
             f'<p class="note">{len(ms)} measurements of {len(section.latest)} figures on {esc(", ".join(devices))}, '
             f"{esc(first)} to {esc(last)}. The latest measurement of each figure, with its same-run baselines "
             f"(a ratio above 1: ocltune, or the newer code, is faster), the command that measured it and how "
             f"many measurements the file holds.</p>"]
    for device in devices:
        rows = []
        for (d, figure), m in sorted(section.latest.items()):
            if d != device:
                continue
            detail = (f'<br><span class="note">{esc(m.note)}</span>' if m.note else "")
            where = " ".join(x for x in (f"commit {m.commit}" if m.commit else "", m.source) if x)
            rows.append([f"<td><code>{esc(figure)}</code></td>", f'<td class="num">{esc(m.text())}</td>',
                         f"<td>{esc(m.against())}{detail}</td>", f"<td>{esc(m.date)}</td>",
                         f"<td><code>{esc(m.command)}</code>" +
                         (f'<br><span class="note">{esc(where)}</span>' if where else "") + "</td>",
                         f'<td class="num">{section.counts[(d, figure)]}</td>'])
        parts += [f"<h3>{esc(device)}</h3>",
                  table(["figure", "latest", "against", "date", "command (source)", "measurements"], rows),
                  image(section.charts.get(device), f"history of the recorded figures on {device}")]
    return "\n".join(parts)


def page(title, sections, generated, history_dir, threshold, noise_k, recorded=()):
    """The whole HTML document."""
    body = "\n".join([device_html(s, history_dir, threshold, noise_k) for s in sections] +
                     [recorded_html(r) for r in recorded])
    total = sum(len(s.flags) for s in sections)
    summary = (f'<p class="{"bad" if total else "good"}">{total} regression(s) in this run.</p>'
               if history_dir and sections else "")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>{esc(title)}</h1><p class=\"note\">Generated {esc(generated)} by ocltune report. Throughput is "
            f"GFLOP/s for compute-bound ops and GB/s for memory-bound ones, from the median iteration; every "
            f"configuration was verified against a float64 reference before it was timed.</p>{summary}"
            f"{body}</body></html>\n")
