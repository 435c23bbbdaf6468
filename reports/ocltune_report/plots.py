"""Charts of a report, drawn with matplotlib (Agg, no pyplot state) and returned as PNG data URIs."""
import base64
import io
import textwrap
from datetime import datetime

import matplotlib

matplotlib.use("Agg")
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter  # noqa: E402  (after the backend)
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

VARIANT_STYLE = {"tuned": ("#1f77b4", "o"), "default": ("#7f7f7f", "s"), "clblast": ("#ff7f0e", "^"),
                 "copy": ("#2ca02c", "v")}
EXTRA_COLOURS = ["#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#d62728"]
DPI = 90


def variant_style(variant, index=0):
    """(colour, marker) of a variant; unknown baselines get colours in order."""
    return VARIANT_STYLE.get(variant, (EXTRA_COLOURS[index % len(EXTRA_COLOURS)], "D"))


def to_data_uri(fig):
    """The figure as a base64 PNG data URI: the HTML needs no other file and no network."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def short_shape(shape, width=30):
    """A shape key wrapped onto lines of `width` characters for axis labels."""
    return "\n".join(textwrap.wrap(shape.replace(",", ", "), width)) or shape


def variants_of(records):
    """Variant names in a stable order: tuned, default, then baselines alphabetically."""
    names = sorted({r.variant for r in records}, key=lambda v: (v != "tuned", v != "default", v))
    return names


def roofline_chart(records, peak_gflops, copy_gbs, title):
    """Every timed benchmark with FLOPs placed at (FLOP/byte, GFLOP/s) under the device's roofline."""
    points = [r for r in records if r.ok and r.values.get("flops", 0) > 0 and r.values.get("bytes", 0) > 0]
    if not points or not peak_gflops or not copy_gbs:
        return None
    fig = Figure(figsize=(8, 5.2))
    ax = fig.subplots()
    intensities = [r.values["flops"] / r.values["bytes"] for r in points]
    ridge = peak_gflops / copy_gbs
    lo, hi = min(min(intensities), ridge) / 4, max(max(intensities), ridge) * 4
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(xs, [min(peak_gflops, copy_gbs * x) for x in xs], color="black", lw=1.5,
            label=f"roofline: {peak_gflops:.4g} GFLOP/s, {copy_gbs:.4g} GB/s")
    ops = sorted({r.op for r in points})
    variants = variants_of(points)
    # One op: colour by variant. Several: colour by op, marker by variant (filled = tuned).
    by_op = len(ops) > 1

    def style(r):
        colour, marker = variant_style(r.variant, variants.index(r.variant))
        return (EXTRA_COLOURS[ops.index(r.op) % len(EXTRA_COLOURS)] if by_op else colour), marker

    for r, ai in zip(points, intensities):
        colour, marker = style(r)
        face = colour if r.variant == "tuned" else "none"
        ax.scatter([ai], [r.values["GFLOP/s"]], marker=marker, s=48, edgecolors=colour, facecolors=face,
                   linewidths=1.3, zorder=3)
    for v in variants:
        colour, marker = variant_style(v, variants.index(v))
        colour = "black" if by_op else colour
        ax.scatter([], [], marker=marker, edgecolors=colour, facecolors=colour if v == "tuned" else "none", label=v)
    for op in ops if by_op else []:
        ax.scatter([], [], marker="o", color=EXTRA_COLOURS[ops.index(op) % len(EXTRA_COLOURS)], label=op)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP / byte of compulsory traffic)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"{title}: roofline ({', '.join(ops)})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return to_data_uri(fig)


def bars_chart(records, op):
    """Throughput of every variant per shape of one op, as horizontal grouped bars."""
    rows = [r for r in records if r.op == op]
    problems = sorted({(r.dtype, r.shape) for r in rows})
    if not problems:
        return None
    variants = variants_of(rows)
    by_key = {(r.dtype, r.shape, r.variant): r for r in rows}
    unit = next((r.unit for r in rows if r.ok), "GFLOP/s")
    height = 0.8 / max(1, len(variants))
    fig = Figure(figsize=(8, 1.0 + 0.32 * len(problems) * len(variants)))
    ax = fig.subplots()
    for vi, v in enumerate(variants):
        colour, _ = variant_style(v, vi)
        ys, ws = [], []
        for pi, (dtype, shape) in enumerate(problems):
            r = by_key.get((dtype, shape, v))
            if r and r.ok:
                ys.append(pi + vi * height)
                ws.append(r.throughput)
        ax.barh(ys, ws, height=height, color=colour, label=v)
    ax.set_yticks([i + height * (len(variants) - 1) / 2 for i in range(len(problems))])
    ax.set_yticklabels([short_shape(s) + ("" if d == "fp32" else f" [{d}]") for d, s in problems], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(unit)
    ax.set_title(f"{op}: tuned vs default vs baselines")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return to_data_uri(fig)


def size_chart(records, op):
    """Throughput against problem size (FLOPs, or bytes for memory-bound ops) per variant of one op."""
    rows = [r for r in records if r.op == op and r.ok]
    if not rows:
        return None
    memory = rows[0].memory_bound
    size_key = "bytes" if memory else "flops"
    rows = [r for r in rows if size_key in r.values]  # a model's step has no problem size
    if not rows:
        return None
    fig = Figure(figsize=(8, 4.2))
    ax = fig.subplots()
    variants = variants_of(rows)
    for vi, v in enumerate(variants):
        pts = sorted((r.values[size_key], r.throughput) for r in rows if r.variant == v)
        colour, marker = variant_style(v, vi)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=colour, label=v, lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("bytes moved per call" if memory else "FLOPs per call")
    ax.set_ylabel(rows[0].unit)
    ax.set_title(f"{op}: {rows[0].unit} against problem size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return to_data_uri(fig)


def convergence_chart(series, max_panels=12):
    """Best-so-far throughput against evaluations, one panel per problem, one line per strategy."""
    problems = sorted({c.problem for c in series}, key=lambda p: -max(len(c.best_so_far) for c in series
                                                                       if c.problem == p))[:max_panels]
    if not problems:
        return None
    cols = min(3, len(problems))
    rows = (len(problems) + cols - 1) // cols
    fig = Figure(figsize=(4.0 * cols, 2.9 * rows))
    axes = fig.subplots(rows, cols, squeeze=False)
    strategies = sorted({c.strategy for c in series})
    for i, problem in enumerate(problems):
        ax = axes[i // cols][i % cols]
        for c in series:
            if c.problem != problem:
                continue
            colour = EXTRA_COLOURS[strategies.index(c.strategy) % len(EXTRA_COLOURS)]
            xs = [j + 1 for j, v in enumerate(c.best_so_far) if v is not None]
            ys = [v for v in c.best_so_far if v is not None]
            ax.step(xs, ys, where="post", color=colour, label=c.strategy)
            if c.default:
                ax.axhline(c.default, color=colour, ls=":", lw=1)
        ax.set_title(f"{problem[0]} {short_shape(problem[2], 40)}", fontsize=7)
        ax.set_xlabel("evaluations", fontsize=7)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("best so far", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6, loc="lower right")
    for j in range(len(problems), rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    fig.suptitle("tuning convergence (dotted: untuned default)", fontsize=10)
    fig.tight_layout()
    return to_data_uri(fig)


def parse_date(text):
    """An ISO 8601 date (with a trailing Z) as a datetime; None when unparsable."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None


def history_chart(figures, flags, max_panels=16, labels=None,
                  title="history of key figures", order="regressions first, then tuned kernels and ceilings",
                  legend=" (red x: regression)", by_order=False):
    """Each key figure over time, one panel per figure; regressions marked with a red cross.

    `figures` is a list of (name, unit, [Point]); `flags` a list of regression Flags; `labels` an
    optional {name: panel title}; `order` says which figures come first when not all are shown.
    `by_order` puts the points side by side in their order, the day under its first point (several
    measurements of one day stay apart), instead of on a time axis.
    """
    figures = [f for f in figures if f[2]]
    total = len(figures)
    figures = figures[:max_panels]
    if not figures:
        return None
    flagged = {(f.figure, f.date) for f in flags}
    cols = min(4, len(figures))
    rows = (len(figures) + cols - 1) // cols
    fig = Figure(figsize=(3.6 * cols, 2.6 * rows))
    axes = fig.subplots(rows, cols, squeeze=False)
    for i, (name, unit, points) in enumerate(figures):
        ax = axes[i // cols][i % cols]
        dates = [parse_date(p.date) for p in points]
        use_dates = not by_order and all(dates) and len(set(dates)) > 1  # a date axis needs a range
        xs = dates if use_dates else list(range(len(points)))
        ax.plot(xs, [p.value for p in points], marker="o", ms=3, lw=1, color="#1f77b4")
        bad = [(x, p.value) for x, p in zip(xs, points) if (name, p.date) in flagged]
        if bad:
            ax.scatter([b[0] for b in bad], [b[1] for b in bad], marker="x", s=60, color="#d62728", zorder=3,
                       linewidths=2)
        parts = name.split("/")
        label = f"{parts[0]} {'/'.join(parts[2:-1])} ({parts[-1]})" if len(parts) >= 4 else name
        label = (labels or {}).get(name, label)
        ax.set_title(short_shape(label, 44), fontsize=7, color="#d62728" if bad else "black")
        ax.set_ylabel(unit, fontsize=7)
        ax.set_ylim(bottom=0)
        ax.tick_params(labelsize=6)
        if use_dates:
            locator = AutoDateLocator(minticks=2, maxticks=5)  # a few days of history: daily ticks
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
        elif by_order:
            firsts = [i for i, p in enumerate(points) if i == 0 or p.date[:10] != points[i - 1].date[:10]]
            ax.set_xticks(firsts)
            ax.set_xticklabels([points[i].date[5:10] for i in firsts])
        else:
            ax.set_xticks(xs)
            ax.set_xticklabels([p.date[:10] for p in points])
        ax.grid(True, alpha=0.3)
    for j in range(len(figures), rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    shown = f"{len(figures)} of {total} figures: {order}" if total > len(figures) else f"{total} figures"
    fig.suptitle(f"{title}, {shown}{legend}", fontsize=10)
    fig.tight_layout()
    return to_data_uri(fig)
