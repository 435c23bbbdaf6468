"""Regression detection: a figure that drops by more than max(threshold, k x its run-to-run noise)."""
import statistics
from dataclasses import dataclass, field

# Versions a regression may be attributed to, with the words the message uses for them.
VERSION_NAMES = {"driver": "driver", "platform": "platform", "ocltune": "ocltune", "clblast": "CLBlast",
                 "commit": "commit"}


@dataclass
class Point:
    """One run's value of one figure (higher is better), with the versions it was measured under."""

    date: str
    value: float
    spread: float = 0.0  # robust relative spread of the iterations within that run
    versions: dict = field(default_factory=dict)


@dataclass
class Flag:
    """A regression: `point` is below the reference of the runs before it by more than `limit`."""

    figure: str
    date: str
    value: float
    reference: float
    drop: float           # relative: 0.2 = 20 % slower
    limit: float          # the drop that was needed to flag
    noise: float          # run-to-run noise estimate used for the limit
    changes: list = field(default_factory=list)  # e.g. ["driver 3.1 -> 4.0"]


def relative_noise(values):
    """Robust relative run-to-run spread of `values`: 1.4826 x MAD / median (0 when undefined)."""
    if len(values) < 2:
        return 0.0
    median = statistics.median(values)
    if median <= 0:
        return 0.0
    mad = statistics.median(abs(v - median) for v in values)
    return 1.4826 * mad / median


def noise_estimate(previous):
    """Run-to-run noise from earlier points; with fewer than three, the largest within-run spread."""
    values = [p.value for p in previous]
    if len(values) >= 3:
        return max(relative_noise(values), max((p.spread for p in previous), default=0.0))
    return max((p.spread for p in previous), default=0.0)


def version_changes(before, after):
    """Human-readable differences between two version dicts, e.g. ['driver 3.1 -> 4.0']."""
    changes = []
    for key, name in VERSION_NAMES.items():
        old, new = before.get(key, ""), after.get(key, "")
        if old and new and old != new:
            changes.append(f"{name} {old} -> {new}")
    return changes


def check_point(figure, previous, point, threshold=0.10, noise_k=3.0, window=10):
    """A Flag when `point` regressed against the median of the last `window` earlier points, else None."""
    recent = [p for p in previous if p.value and p.value > 0][-window:]
    if not recent or point.value is None:
        return None
    reference = statistics.median(p.value for p in recent)
    noise = noise_estimate(recent)
    limit = max(threshold, noise_k * noise)
    drop = (reference - point.value) / reference
    if drop <= limit:
        return None
    return Flag(figure, point.date, point.value, reference, drop, limit, noise,
                version_changes(recent[-1].versions, point.versions))


def series_flags(figure, points, threshold=0.10, noise_k=3.0, window=10):
    """Flags of every point of a series (oldest first) against the points before it."""
    flags = []
    for i in range(1, len(points)):
        flag = check_point(figure, points[:i], points[i], threshold, noise_k, window)
        if flag:
            flags.append(flag)
    return flags


def describe(flag, unit=""):
    """One line naming the op, shape and variant, the date, the change and any version change."""
    parts = flag.figure.split("/")
    what = f"{parts[0]} {'/'.join(parts[2:-1])} ({parts[-1]})" if len(parts) >= 4 else flag.figure
    text = (f"{what}: {flag.reference:.4g} -> {flag.value:.4g} {unit}".rstrip() +
            f" ({-100 * flag.drop:.1f} %, limit {100 * flag.limit:.1f} %, noise {100 * flag.noise:.1f} %) "
            f"on {flag.date}")
    if flag.changes:
        text += "; changed since the previous run: " + ", ".join(flag.changes)
    return text
