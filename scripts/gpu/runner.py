#!/usr/bin/env python3
"""Runs one GPU experiment described as data (scripts/gpu/experiments/<name>.json), or prints it.

Started by scripts/gpu/run.sh, which on the device sources scripts/gpu/env.sh first (ICD, carried
libraries, OCLTUNE_GPU). Every step becomes plain shell commands that reference $OUT, $BIN and
$OCLTUNE_GPU: --dry-run prints exactly what a run executes, and a run writes them to
$OUT/commands.sh next to the results. Standard library only. Exit: 0 ran (a step's own failure is
reported in its summary, not in the exit code), 1 setup failure, 2 usage error.
"""
import argparse
import collections
import glob
import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXPERIMENTS = os.path.join(HERE, "experiments")
TORCH_BASELINE = "bench/baselines/cuda_torch_baseline.py"  # carried with the tree; needs torch on the host
LIVE_VARS = ("OUT", "BIN", "OCLTUNE_GPU")
DEFAULT_LIMIT = 580  # the device tool stops a command at 600 s; finish (and write summaries) before it


class UsageError(Exception):
    pass


# ---------------------------------------------------------------- shell text

def q(value):
    """One shell word: literal text single-quoted, text naming $OUT/$BIN/$OCLTUNE_GPU double-quoted."""
    s = str(value)
    if not re.search(r"\$(%s)\b" % "|".join(LIVE_VARS), s):
        return shlex.quote(s)
    s = s.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`")
    s = re.sub(r"\$(?!(?:%s)\b)" % "|".join(LIVE_VARS), r"\\$", s)
    return '"' + s + '"'


class Cmd:
    """One shell command of a step, and what to print about it once it has run."""

    def __init__(self, label, argv=None, env=None, timeout=None, out=None, shell=None, main=False, after=None):
        self.label, self.argv, self.env, self.timeout = label, argv or [], env or {}, timeout
        self.out, self.shell, self.main, self.after = out, shell, main, after

    def render(self, timeout=None):
        if self.shell is not None:
            return self.shell
        words = [f"{k}={q(v)}" for k, v in self.env.items()]
        t = timeout if timeout is not None else self.timeout
        if t:
            words += ["timeout", str(int(t))]
        words += [q(a) for a in self.argv]
        if self.out:
            words += [">", q(self.out), "2>&1"]
        return " ".join(words)


def out_path(name):
    return "$OUT/" + name


def local(path, ctx):
    """A rendered path as this process sees it ($OUT etc. replaced)."""
    for var in LIVE_VARS:
        path = re.sub(r"\$%s\b" % var, ctx.get(var, "$" + var).replace("\\", "\\\\"), path)
    return path


def read(path, ctx):
    try:
        with open(local(path, ctx), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def cut(lines, width=220):
    return [line[:width] for line in lines]


# ---------------------------------------------------------------- step kinds
# Each kind: the fields it accepts (with defaults) and a function step -> [Cmd].

def summary_tests(binary, flt, path):
    def after(rc, secs, ctx):
        text = read(path, ctx).splitlines()
        counts = " ".join(l.strip() for l in text if re.match(r"^\[  (PASSED|FAILED|SKIPPED) ", l))
        print(f"{binary} {flt} rc={rc} {secs:.0f}s {counts}")
        for line in cut([l for l in text if re.search(r"Failure|FAILED  \]|error:|status", l)][:8], 300):
            print("  " + line)
    return after


def kind_tests(step):
    cmds = []
    for suite in step["suites"]:
        if isinstance(suite, list):
            binary, flt, timeout = (suite + ["*", 120])[:3]
        else:
            binary, flt, timeout = suite["binary"], suite.get("filter", "*"), suite.get("timeout", 120)
        tag = "" if flt == "*" else "-" + re.sub(r"[^A-Za-z0-9]+", "_", flt).strip("_")[:40]
        path = out_path(f"{binary}{tag}.txt")
        env = {"OCLTUNE_TEST_DEVICE": "$OCLTUNE_GPU", **step["env"]}
        argv = [f"$BIN/{binary}", *step["gtest_args"], f"--gtest_filter={flt}", *step["extra"]]
        cmds.append(Cmd(f"{binary} {flt}", argv, env, timeout, path, main=True,
                        after=summary_tests(binary, flt, path)))
    return cmds


STATUS = re.compile(r"^(ok|wrong_result|wrong|compile_error|launch_error|error|fail\w*|timeout|skipped|skipping)\b")


def summary_eval(label, path):
    def after(rc, secs, ctx):
        text = read(path, ctx).splitlines()
        print(f"eval {label} rc={rc} {secs:.0f}s")
        if len(text) <= 24:  # short enough to read whole
            for line in cut(text):
                print("  " + line)
            return
        statuses = collections.Counter(STATUS.match(l).group(1) for l in text if STATUS.match(l))
        skipped = [l for l in text if "skipping --config" in l]
        if skipped:
            statuses["skipped --config"] = len(skipped)
        print("  statuses: " + ", ".join(f"{k} {v}" for k, v in statuses.most_common()))
        for line in cut([l for l in text if l.startswith(("[", "clblast")) or "best /" in l] + skipped[:3], 200):
            print("  " + line)
        for i, line in enumerate(text):
            if line.startswith("fastest"):
                for l in cut(text[i:i + 11]):
                    print("  " + l)
                break
    return after


def kind_eval(step):
    shapes = step["shapes"] or {"": step["shape"]}
    if not shapes or shapes == {"": None}:
        raise UsageError("an eval step needs 'shape' or 'shapes'")
    configs = []
    for c in step["configs"]:
        for var, value in step["vars"].items():
            c = c.replace("{" + var + "}", value)
        configs += ["--config", c]
    cmds = []
    for label, shape in shapes.items():
        name = step["name"] + (f"-{label}" if label else "")
        argv = ["$BIN/ocltune", "--device", "$OCLTUNE_GPU", "eval", "--op", step["op"],
                "--shape", shape if isinstance(shape, str) else json.dumps(shape, separators=(",", ":"))]
        if step["baseline"]:
            argv.append("--baseline")
        for flag in ("sample", "seed", "restrict"):
            if step[flag] is not None:
                argv += [f"--{flag}", str(step[flag])]
        argv += configs + ["--out", out_path(name + ".json")] + step["extra"]
        path = out_path(name + ".txt")
        cmds.append(Cmd(f"eval {label or step['op']}", argv, step["env"], step["timeout"], path, main=True,
                        after=summary_eval(label or step["op"], path)))
    return cmds


def summary_nightly(name, prefix):
    def after(rc, secs, ctx):
        print(f"{name} rc={rc} {secs:.0f}s")
        for line in read(out_path(name + ".txt"), ctx).splitlines()[-3:]:
            print("  " + line[:220])
        log = read(out_path(prefix + "tune.log"), ctx).splitlines()
        shown = []
        for i, line in enumerate(log):
            if line.startswith("op "):
                shown += log[i:i + 15]
        for line in cut(shown[:45], 260):
            print("  " + line)
    return after


def kind_nightly(step):
    name = step["name"]
    prefix = "" if name == "nightly" else name + "-"
    runs = out_path(name + "-runs")
    argv = ["scripts/nightly.sh", "--device", "$OCLTUNE_GPU", "--bin", "$BIN", "--out", runs,
            "--shapes", step["shapes"], "--tune-budget", step["tune_budget"],
            "--repetitions", str(step["repetitions"]), "--min-time", str(step["min_time"])]
    if step["ops"]:
        argv += ["--ops", step["ops"]]
    if step["db"]:
        argv += ["--db", step["db"]]
    argv += step["extra"]
    env = {"OCLTUNE_PYTHON": "python3", **step["env"]}  # the report (matplotlib) runs on the host
    cmds = [Cmd(name, argv, env, step["timeout"], out_path(name + ".txt"), main=True)]
    latest = runs + "/latest"
    copies = [(latest + "/bench.json", prefix + "bench.json"), (latest + "/tune.log", prefix + "tune.log"),
              (latest + "/bench.log", prefix + "bench.log"), (latest + "/report/index.html", prefix + "index.html")]
    if step["keep_db"] and not step["db"]:
        copies.append((runs + "/tuned.db", step["keep_db"]))
    shell = "; ".join(f"cp {q(a)} {q(out_path(b))} 2>/dev/null" for a, b in copies) + f"; rm -rf {q(runs)}"
    cmds.append(Cmd(f"{name}: collect", shell=shell, after=summary_nightly(name, prefix)))
    return cmds


def db_from(step, default_name):
    """Commands that put step['db_from'] (a .jsonl or .db in the tree) into $OUT as a database."""
    if not step["db_from"]:
        return [], None
    db = out_path(step["db"] or default_name)
    if step["db_from"].endswith(".jsonl"):
        return [Cmd("db merge", ["$BIN/ocltune", "db", "merge", step["db_from"], "-o", db, "--force"], {}, 60,
                    out_path("db-merge.txt"))], db
    return [Cmd("db copy", shell=f"cp {q(step['db_from'])} {q(db)}")], db


def summary_bench(name, path):
    def after(rc, secs, ctx):
        print(f"{name} rc={rc} {secs:.0f}s")
        try:
            with open(local(path, ctx)) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print(f"  no benchmark JSON ({e})")
            return
        peaks = {k: v for k, v in data.get("context", {}).items() if k.endswith("peak_gflops")}
        print("  " + ", ".join(f"{k} {v}" for k, v in peaks.items()))
        for x in data.get("benchmarks", []):
            if (x["name"].endswith("_median") and "/tuned/" in x["name"]) or x.get("error_occurred"):
                print("  " + " ".join(str(v) for v in (
                    x["name"][:90], round(x.get("median_us", 0), 1), "us", round(x.get("GFLOP/s", 0) / 1000, 1),
                    "TFLOP/s peak", round(100 * x.get("peak_frac", 0), 1), "%", x.get("label", "")[:60],
                    x.get("error_message", ""))))
    return after


def kind_bench(step):
    cmds, db = db_from(step, "shipped.db")
    db = db or step["db"]  # without db_from: a path in the tree (or none: the default database)
    name = step["name"]
    argv = ["$BIN/ocltune_bench", "--device", "$OCLTUNE_GPU", "--shapes", step["shapes"]]
    if step["ops"]:
        argv += ["--ops", step["ops"]]
    if db:
        argv += ["--db", db]
    argv += [f"--benchmark_repetitions={step['repetitions']}", f"--benchmark_min_time={step['min_time']}",
             f"--benchmark_out={out_path(name + '.json')}", "--benchmark_out_format=json"] + step["extra"]
    cmds.append(Cmd(name, argv, step["env"], step["timeout"], out_path(name + ".txt"), main=True,
                    after=summary_bench(name, out_path(name + ".json"))))
    return cmds


def summary_tune(name, db):
    def after(rc, secs, ctx):
        print(f"{name} rc={rc} {secs:.0f}s")
        for line in read(out_path(name + ".txt"), ctx).splitlines()[-4:]:
            print("  " + line[:250])
        path = local(db, ctx)
        if os.path.exists(path):
            con = sqlite3.connect(path)
            print("  best rows by op:", con.execute("select op, count(*) from best group by op").fetchall())
            print("  evaluations by status:",
                  con.execute("select status, count(*) from measurements group by status").fetchall())
    return after


def kind_tune(step):
    cmds, db = db_from(step, step["db"])
    db = db or out_path(step["db"])  # a file name under $OUT
    name = step["name"]
    argv = ["$BIN/ocltune", "--device", "$OCLTUNE_GPU"]
    if step["ops"]:
        argv += ["--ops", step["ops"]]
    if step["shapes"]:
        argv += ["--shapes", step["shapes"]]
    argv += ["--db", db]
    if step["time_budget"]:
        argv += ["--time-budget", step["time_budget"]]
    if step["max_evals"]:
        argv += ["--max-evals", str(step["max_evals"])]
    argv += step["extra"]
    cmds.append(Cmd(name, argv, step["env"], step["timeout"], out_path(name + ".txt"), main=True,
                    after=summary_tune(name, db)))
    if step["export"]:
        cmds.append(Cmd("db export", ["$BIN/ocltune", "db", "export", "--db", db, "--best-only", "-o",
                                      out_path(step["export"]), "--force"], {}, 60, out_path("db-export.txt")))
    return cmds


def summary_program(label, path, show, context, limit):
    def after(rc, secs, ctx):
        print(f"{label} rc={rc} {secs:.0f}s")
        text = read(path, ctx).splitlines()
        if show:
            picked = []
            for i, line in enumerate(text):
                if re.search(show, line):
                    picked += text[i:i + 1 + context]
            text = picked if picked and rc == 0 else text[-6:]  # nothing to show, or a failure: its end
        for line in cut(text[:limit]):
            print("  " + line)
    return after


def kind_program(step):
    if bool(step["binary"]) == bool(step["script"]):
        raise UsageError("a program step names exactly one of 'binary' (in $BIN) or 'script' (python3, in the tree)")
    head = [f"$BIN/{step['binary']}"] if step["binary"] else ["python3", step["script"]]
    base = step["out"] or os.path.splitext(os.path.basename(step["binary"] or step["script"]))[0]
    cmds = []
    for i in range(step["repeat"]):
        name = base if step["repeat"] == 1 else f"{base}-{i + 1}"
        path = out_path(name + ".txt")
        cmds.append(Cmd(name, head + step["args"] + step["extra"], step["env"], step["timeout"], path, main=True,
                        after=summary_program(name, path, step["show"], step["context"], step["lines"])))
    return cmds


def kind_torch(step):
    step = dict(step, binary="", script=step["script"] or TORCH_BASELINE, out=step["out"] or "torch_baseline")
    return kind_program(step)


COMMON = {"kind": None, "title": "", "env": {}, "extra": [], "timeout": 120, "budget": None}
PROGRAM = {"binary": "", "script": "", "args": [], "out": "", "repeat": 1, "show": "", "context": 0, "lines": 80}
KINDS = {
    "tests": (kind_tests, {"suites": [], "gtest_args": ["--gtest_brief=1"]}),
    "eval": (kind_eval, {"op": "gemm", "shape": None, "shapes": {}, "configs": [], "vars": {}, "baseline": False,
                         "sample": None, "seed": None, "restrict": None, "name": "eval"}),
    "nightly": (kind_nightly, {"shapes": "", "ops": "", "tune_budget": "300s", "repetitions": 3, "min_time": 0.3,
                               "db": "", "keep_db": "", "name": "nightly"}),
    "bench": (kind_bench, {"shapes": "", "ops": "", "db": "", "db_from": "", "repetitions": 3, "min_time": 0.3,
                           "name": "bench"}),
    "tune": (kind_tune, {"ops": "", "shapes": "", "db": "tune.db", "db_from": "", "time_budget": "",
                         "max_evals": None, "export": "", "name": "tune"}),
    "program": (kind_program, dict(PROGRAM)),
    "torch": (kind_torch, dict(PROGRAM, timeout=150)),
}
REQUIRED = {"tests": ["suites"], "nightly": ["shapes"], "bench": ["shapes"], "eval": ["op"]}


def normalise(step, where):
    """The step with every field of its kind filled in; unknown fields are usage errors (typos)."""
    kind = step.get("kind")
    if kind not in KINDS:
        raise UsageError(f"{where}: kind must be one of {', '.join(KINDS)}, not {kind!r}")
    fields = dict(COMMON, **KINDS[kind][1])
    unknown = sorted(set(step) - set(fields))
    if unknown:
        raise UsageError(f"{where}: unknown field(s) {', '.join(unknown)} for a {kind} step")
    for f in REQUIRED.get(kind, []):
        if not step.get(f):
            raise UsageError(f"{where}: a {kind} step needs '{f}'")
    return {**json.loads(json.dumps(fields)), **step}


# ---------------------------------------------------------------- experiments

def load_all():
    experiments, aliases = {}, {}
    for path in sorted(glob.glob(os.path.join(EXPERIMENTS, "*.json"))):
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            with open(path) as f:
                exp = json.load(f)
        except ValueError as e:
            raise UsageError(f"{path}: {e}")
        for key in ("description", "steps"):
            if not exp.get(key):
                raise UsageError(f"{path}: needs '{key}'")
        for key in set(exp) - {"description", "notes", "cites", "aliases", "needs", "steps"}:
            raise UsageError(f"{path}: unknown field '{key}'")
        exp["name"], exp["path"] = name, path
        exp["steps"] = [normalise(s, f"{name} step {i + 1}") for i, s in enumerate(exp["steps"])]
        experiments[name] = exp
        for alias, overrides in exp.get("aliases", {}).items():
            if alias in aliases or alias in experiments:
                raise UsageError(f"{path}: alias {alias} is already taken")
            aliases[alias] = (name, overrides)
    return experiments, aliases


def parse_value(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


def apply_set(exp, key, value, origin):
    """Sets field `key` ('N.key' for step N only) in every step that has it."""
    index = None
    if re.match(r"^\d+\.", key):
        index, key = key.split(".", 1)
        index = int(index) - 1
        if not 0 <= index < len(exp["steps"]):
            raise UsageError(f"{origin}: {exp['name']} has no step {index + 1}")
    hit = False
    for i, step in enumerate(exp["steps"]):
        if (index is None or i == index) and key in step and key != "kind":
            step[key] = value
            hit = True
    if not hit:
        raise UsageError(f"{origin}: no step of {exp['name']} has a field '{key}'")


def resolve(name, sets):
    experiments, aliases = load_all()
    alias = None
    if name in experiments:
        exp = experiments[name]
    elif name in aliases:
        alias = name
        exp = experiments[aliases[name][0]]
        for key, value in aliases[name][1].items():
            apply_set(exp, key, value, f"alias {name}")
    elif os.path.isfile(name):  # a JSON file outside the folder: an experiment being written
        with open(name) as f:
            exp = json.load(f)
        exp.setdefault("description", name)
        exp["name"], exp["path"] = os.path.splitext(os.path.basename(name))[0], name
        exp["steps"] = [normalise(s, f"{name} step {i + 1}") for i, s in enumerate(exp["steps"])]
    else:
        raise UsageError(f"unknown experiment '{name}' (scripts/gpu/run.sh --list names them)")
    for item in sets:
        if "=" not in item:
            raise UsageError(f"--set takes KEY=VALUE, not '{item}'")
        key, value = item.split("=", 1)
        apply_set(exp, key, parse_value(value), "--set")
    exp["alias"] = alias
    return exp


def plan(exp, only, extra):
    """[(step number, step, [Cmd])] of the chosen steps."""
    steps = []
    for i, step in enumerate(exp["steps"]):
        if only and i + 1 not in only:
            continue
        step = dict(step, extra=step["extra"] + extra)
        steps.append((i + 1, step, KINDS[step["kind"]][0](step)))
    return steps


def binaries(steps):
    """The programs in $BIN the steps run (what scripts/gpu/prepare.sh must build and stage)."""
    names = []
    for _, step, cmds in steps:
        if step["kind"] == "nightly":
            names += ["ocltune", "ocltune_bench"]
        for c in cmds:
            words = c.argv[:1] + ["$BIN/" + w for w in re.findall(r"\$BIN/(\w+)", c.shell or "")]
            names += [w[len("$BIN/"):] for w in words if w.startswith("$BIN/")]
    return list(dict.fromkeys(names))


def needs(exp, steps):
    """Files the steps read besides the tree and $BIN: 'needs' plus every db_from outside the tree."""
    paths = list(exp.get("needs", []))
    paths += [s["db_from"] for _, s, _ in steps if s.get("db_from") and s["db_from"].startswith(".gpu/")]
    return list(dict.fromkeys(paths))


def nominal_seconds(steps):
    total = 0
    for _, step, cmds in steps:
        t = sum(c.timeout or 0 for c in cmds)
        total += min(t, step["budget"]) if step["budget"] else t
    return total


def header(exp, steps, bin_dir):
    alias = f" (alias {exp['alias']})" if exp["alias"] else ""
    lines = [f"# {exp['name']}{alias}: {exp['description']}"]
    if exp.get("notes"):
        lines += ["# " + l for l in wrap(exp["notes"], 96)]
    if exp.get("cites"):
        lines.append("# cited by: " + "; ".join(exp["cites"]))
    lines.append(f"# needs in {bin_dir}: " + " ".join(binaries(steps)))
    for path in needs(exp, steps):
        lines.append(f"# needs carried: {path}")
    lines.append(f"# step timeouts add up to {nominal_seconds(steps)} s; a run stops starting commands near --limit")
    return lines


def wrap(text, width):
    out, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return out + ([line] if line else [])


def script_text(exp, steps, bin_dir):
    lines = ["#!/usr/bin/env bash"] + header(exp, steps, bin_dir)
    lines += [f"BIN={q(bin_dir)}", ': "${OUT:?OUT must name the results folder}"',
              f"OCLTUNE=\"$BIN/ocltune\" . scripts/gpu/env.sh"]
    for number, step, cmds in steps:
        title = f": {step['title']}" if step["title"] else ""
        lines.append(f"# step {number} ({step['kind']}){title}")
        lines += [c.render() for c in cmds]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- commands

def cmd_list():
    experiments, _ = load_all()
    rows = [(name, ", ".join(exp.get("aliases", {})), exp["description"]) for name, exp in sorted(experiments.items())]
    w0, w1 = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows)
    for name, aliases, description in rows:
        print(f"{name:<{w0}}  {aliases:<{w1}}  {description}")
    return 0


def run(exp, steps, bin_dir, limit):
    out = os.environ.get("OUT", "")
    device = os.environ.get("OCLTUNE_GPU", "")
    if not out or not device:
        raise UsageError("a run needs OUT and OCLTUNE_GPU (scripts/gpu/run.sh sources env.sh for the latter)")
    os.makedirs(out, exist_ok=True)
    missing = [b for b in binaries(steps) if not os.access(os.path.join(bin_dir, b), os.X_OK)]
    missing += [p for p in needs(exp, steps) if not os.path.exists(p)]
    if missing:
        print(f"run: missing on this machine: {', '.join(missing)} (scripts/gpu/prepare.sh; carry .gpu)",
              file=sys.stderr)
        return 1
    with open(os.path.join(out, "commands.sh"), "w") as f:
        f.write(script_text(exp, steps, bin_dir))
    ctx = {"OUT": out, "BIN": bin_dir, "OCLTUNE_GPU": device}
    env = dict(os.environ, **ctx)
    start = time.monotonic()
    alias = f" (alias {exp['alias']})" if exp["alias"] else ""
    print(f"== {exp['name']}{alias}: {exp['description']}", flush=True)
    for number, step, cmds in steps:
        step_start = time.monotonic()
        print(f"-- step {number} ({step['kind']}){': ' + step['title'] if step['title'] else ''}", flush=True)
        for c in cmds:
            left = limit - (time.monotonic() - start)
            if step["budget"]:
                left = min(left, step["budget"] - (time.monotonic() - step_start))
            if left < 5:
                print(f"{c.label}: not run (time)", flush=True)
                continue
            timeout = min(c.timeout, int(left)) if c.timeout else None
            t0 = time.monotonic()
            rc = subprocess.run(["bash", "-c", c.render(timeout)], env=env, cwd=os.getcwd()).returncode
            if c.after:
                c.after(rc, time.monotonic() - t0, ctx)
            elif rc != 0:
                print(f"{c.label} rc={rc}")
            sys.stdout.flush()
    print(f"== {exp['name']} done in {time.monotonic() - start:.0f} s; results in {out}")
    return 0


def main(argv):
    p = argparse.ArgumentParser(prog="scripts/gpu/run.sh", description=__doc__.split("\n\n")[0],
                                epilog="Anything after `--` is appended to every step's main command.")
    p.add_argument("experiment", nargs="?", help="a name or alias from --list, or the path of a JSON file")
    p.add_argument("--list", action="store_true", help="list the experiments with one-line descriptions")
    p.add_argument("--dry-run", "-n", action="store_true", help="print the commands a run would execute")
    p.add_argument("--binaries", action="store_true", help="print the programs in BIN the experiment(s) need")
    p.add_argument("--bin", default=os.environ.get("OCLTUNE_BIN", ".gpu/bin"),
                   help="folder of the stripped binaries on the device (default $OCLTUNE_BIN, else .gpu/bin)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a field in every step that has it (N.KEY: step N only); VALUE is JSON or text")
    p.add_argument("--only", default="", metavar="N,M", help="run only these steps (1-based)")
    p.add_argument("--limit", type=int, default=DEFAULT_LIMIT,
                   help=f"seconds after which no command starts, timeouts shortened to fit (default {DEFAULT_LIMIT})")
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    else:
        extra = []
    args = p.parse_args(argv)
    try:
        if args.list:
            return cmd_list()
        if args.binaries and not args.experiment:
            experiments, _ = load_all()
            names = []
            for exp in experiments.values():
                names += binaries(plan(exp, None, []))
            print(" ".join(dict.fromkeys(names)))
            return 0
        if not args.experiment:
            p.print_usage(sys.stderr)
            return 2
        only = {int(n) for n in args.only.split(",") if n.strip()} if args.only else set()
        exp = resolve(args.experiment, args.set)
        bad = sorted(n for n in only if not 1 <= n <= len(exp["steps"]))
        if bad:
            raise UsageError(f"--only: {exp['name']} has steps 1..{len(exp['steps'])}, not {bad}")
        steps = plan(exp, only, extra)
        if args.binaries:
            print(" ".join(binaries(steps)))
            return 0
        if args.dry_run:
            sys.stdout.write(script_text(exp, steps, args.bin))
            return 0
        return run(exp, steps, args.bin, args.limit)
    except UsageError as e:
        print(f"run: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
