"""Read-only queries on an ocltune tuning database (db/schema.sql): device, best rows, convergence."""
import json
import os
import sqlite3
from dataclasses import dataclass, field


@dataclass
class Convergence:
    """Best-so-far throughput against evaluations of one problem under one search strategy."""

    problem: tuple                 # (op, dtype, shape_key)
    strategy: str
    best_so_far: list = field(default_factory=list)  # one value per evaluation, None before the first success
    default: float = None          # throughput of the untuned default configuration
    runs: list = field(default_factory=list)


def connect(path):
    """A read-only connection, or None when `path` does not exist or is not an SQLite database."""
    if not path or not os.path.exists(path):
        return None
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        con.execute("SELECT count(*) FROM best").fetchone()
        return con
    except sqlite3.Error:
        return None


def device_row(con, device_key):
    """The devices row of `device_key` as a dict ({} when absent)."""
    con.row_factory = sqlite3.Row
    row = con.execute("SELECT * FROM devices WHERE device_key = ?", (device_key,)).fetchone()
    con.row_factory = None
    return dict(row) if row else {}


def best_rows(con, device_key):
    """{(op, dtype, shape_key): best row dict} of one device; 'params' decoded from JSON."""
    con.row_factory = sqlite3.Row
    rows = con.execute("SELECT b.*, r.strategy, r.started_at AS run_started FROM best b "
                       "LEFT JOIN runs r ON r.run_id = b.run_id WHERE b.device_key = ?", (device_key,)).fetchall()
    con.row_factory = None
    out = {}
    for row in rows:
        d = dict(row)
        try:
            d["params"] = json.loads(d["params_json"])
        except (TypeError, json.JSONDecodeError):
            d["params"] = {}
        dtype = d["dtype"] if d.get("math", "exact") == "exact" else f"{d['dtype']}-{d['math']}"
        out[(d["op"], dtype, d["shape_key"])] = d
    return out


def status_counts(con, device_key):
    """{(op, dtype, shape_key): {status: count}} over every measurement of one device."""
    out = {}
    for op, dtype, math, shape, status, n in con.execute(
            # pending: an evaluation in flight (or of a dead run, until the next run records it
            # as a crash); neither a result nor a failure yet.
            "SELECT op, dtype, math, shape_key, status, count(*) FROM measurements "
            "WHERE device_key = ? AND status <> 'pending' "
            "GROUP BY op, dtype, math, shape_key, status", (device_key,)):
        dtype = dtype if math == "exact" else f"{dtype}-{math}"
        out.setdefault((op, dtype, shape), {})[status] = n
    return out


def convergence(con, device_key):
    """Convergence series of one device: measurements in id order, grouped by problem and runs.strategy.

    Runs of the same strategy are concatenated: a resumed run continues the earlier search.
    """
    series = {}
    rows = con.execute(
        "SELECT m.op, m.dtype, m.math, m.shape_key, r.strategy, m.run_id, m.role, m.status, m.gflops, m.gbs "
        "FROM measurements m JOIN runs r ON r.run_id = m.run_id WHERE m.device_key = ? "
        "ORDER BY m.measurement_id", (device_key,))
    for op, dtype, math, shape, strategy, run_id, role, status, gflops, gbs in rows:
        dtype = dtype if math == "exact" else f"{dtype}-{math}"
        key = ((op, dtype, shape), strategy or "unknown")
        c = series.setdefault(key, Convergence(key[0], key[1]))
        if run_id not in c.runs:
            c.runs.append(run_id)
        value = (gflops if gflops is not None else gbs) if status == "ok" else None
        if role == "default" and value is not None and c.default is None:
            c.default = value
        previous = c.best_so_far[-1] if c.best_so_far else None
        if value is not None and (previous is None or value > previous):
            previous = value
        c.best_so_far.append(previous)
    return list(series.values())
