"""Recorded figures: a performance history file (docs/performance_history.jsonl), one measurement a line.

The first line is a header ({"format": FORMAT, "version": 1, ...}); every other line is one measurement
of one figure, oldest first. docs/PERFORMANCE.md quotes the latest measurement of each figure.
"""
import json
import re
from dataclasses import dataclass, field
from datetime import date as Date

FORMAT = "ocltune-performance-history"
VERSION = 1
REQUIRED = ("date", "device", "figure", "value", "unit", "command")
OPTIONAL = ("range", "baselines", "commit", "source", "note")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
COMMIT = re.compile(r"^[0-9a-f]{7,40}$")


@dataclass
class Measurement:
    """One measurement of one figure on one device."""

    date: str
    device: str
    figure: str
    value: object  # float, or None when only a range was quoted
    unit: str
    command: str
    range: tuple = ()
    baselines: list = field(default_factory=list)  # [{"name", "value"?, "ratio"?}]
    commit: str = ""
    source: str = ""
    note: str = ""
    line: int = 0

    def text(self):
        """'45.7 TFLOP/s', or '4194-4200 GB/s' for a range."""
        if self.value is None:
            return f"{self.range[0]:g}-{self.range[1]:g} {self.unit}"
        extra = f" ({self.range[0]:g}-{self.range[1]:g})" if self.range else ""
        return f"{self.value:g} {self.unit}{extra}"

    def against(self):
        """'0.93x cuBLAS (49.9); 1.49x CLBlast (31.2)': the same-run baselines."""
        parts = []
        for b in self.baselines:
            ratio = f"{b['ratio']:g}x " if "ratio" in b else ""
            value = f" ({b['value']:g})" if "value" in b else ""
            parts.append(f"{ratio}{b['name']}{value}")
        return "; ".join(parts)


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def check(obj):
    """The problems of one parsed record (an empty list when it is valid)."""
    if not isinstance(obj, dict):
        return ["not a JSON object"]
    problems = [f"no '{k}'" for k in REQUIRED if k not in obj]
    problems += [f"unknown field '{k}'" for k in obj if k not in REQUIRED + OPTIONAL]
    d = obj.get("date")
    if "date" in obj:
        try:
            if not isinstance(d, str) or not DATE.match(d):
                raise ValueError
            Date.fromisoformat(d)
        except ValueError:
            problems.append(f"date {d!r} is not a valid YYYY-MM-DD day")
    for key in ("device", "figure", "unit", "command"):
        if key in obj and (not isinstance(obj[key], str) or not obj[key].strip()):
            problems.append(f"'{key}' is not a non-empty string")
    if isinstance(obj.get("figure"), str) and len(obj["figure"].split("/")) < 4:
        problems.append(f"figure {obj['figure']!r} is not op/dtype/problem/variant")
    rng = obj.get("range")
    if "range" in obj and not (isinstance(rng, list) and len(rng) == 2 and all(map(_number, rng)) and rng[0] <= rng[1]):
        problems.append(f"range {rng!r} is not [low, high]")
    if "value" in obj:
        value = obj["value"]
        if value is None:
            if "range" not in obj:
                problems.append("value is null and there is no range")
        elif not _number(value) or value < 0:
            problems.append(f"value {value!r} is not a number >= 0")
    baselines = obj.get("baselines", [])
    if not isinstance(baselines, list):
        problems.append("baselines is not a list")
        baselines = []
    for b in baselines:
        if not (isinstance(b, dict) and isinstance(b.get("name"), str) and b["name"]
                and set(b) <= {"name", "value", "ratio"} and ("value" in b or "ratio" in b)
                and all(_number(b[k]) for k in ("value", "ratio") if k in b)):
            problems.append(f"baseline {b!r} is not {{name, value and/or ratio}}")
    if "commit" in obj and not (isinstance(obj["commit"], str) and COMMIT.match(obj["commit"])):
        problems.append(f"commit {obj['commit']!r} is not an abbreviated hash")
    for key in ("source", "note"):
        if key in obj and not isinstance(obj[key], str):
            problems.append(f"'{key}' is not a string")
    return problems


def parse(lines, path="<memory>"):
    """(header, [Measurement]) from the lines of a history file; ValueError naming every bad line."""
    header, measurements, errors, last_date = None, [], [], ""
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            errors.append(f"{path}:{number}: not JSON ({e.msg})")
            continue
        if header is None:
            if not (isinstance(obj, dict) and obj.get("format") == FORMAT and obj.get("version") == VERSION):
                raise ValueError(f"{path}:{number}: not a performance history (the first line is not "
                                 f'{{"format": "{FORMAT}", "version": {VERSION}, ...}})')
            header = obj
            continue
        problems = check(obj)
        if not problems and obj["date"] < last_date:
            problems.append(f"date {obj['date']} is before the line above's {last_date} (oldest first)")
        if problems:
            errors.append(f"{path}:{number}: " + "; ".join(problems))
            continue
        last_date = obj["date"]
        measurements.append(Measurement(obj["date"], obj["device"], obj["figure"],
                                        None if obj["value"] is None else float(obj["value"]), obj["unit"],
                                        obj["command"], tuple(obj.get("range", ())), obj.get("baselines", []),
                                        obj.get("commit", ""), obj.get("source", ""), obj.get("note", ""), number))
    if header is None:
        raise ValueError(f"{path}: empty, not a performance history")
    if errors:
        raise ValueError(f"{len(errors)} bad record(s):\n" + "\n".join(errors))
    return header, measurements


def load(path):
    """(header, [Measurement]) of a history file; raises ValueError (OSError when unreadable)."""
    with open(path, encoding="utf-8") as f:
        return parse(f.read().splitlines(), path)


def by_figure(measurements):
    """{(device, figure): [Measurement, ...]} in file order (oldest first)."""
    out = {}
    for m in measurements:
        out.setdefault((m.device, m.figure), []).append(m)
    return out


def latest(measurements):
    """{(device, figure): its latest Measurement}: the last line of that figure."""
    return {key: ms[-1] for key, ms in by_figure(measurements).items()}


def chart_series(ms, least=3):
    """(unit, [(date, value, commit)]) to plot for one figure's measurements, or None (fewer than
    `least` points).

    The ratio against the first baseline where the measurements that have one share its name and
    give a ratio, and that baseline is a fixed reference (cuda, a copy; not "the row before"): a ratio
    is comparable across a changed batch or machine load; measurements without one are left out.
    Else the value itself.
    """
    first = [(m, m.baselines[0]) for m in ms if m.baselines]
    names = {b["name"] for _, b in first}
    # "the row before", "before c65d6f8": a step against the previous code, not a fixed reference.
    fixed = not any("before" in name for name in names)
    if len(first) >= least and len(names) == 1 and fixed and all("ratio" in b for _, b in first):
        return f"x {first[0][1]['name']}", [(m.date, b["ratio"], m.commit) for m, b in first]
    points = [(m.date, m.value, m.commit) for m in ms if m.value is not None]
    return (ms[0].unit, points) if len(points) >= least else None
