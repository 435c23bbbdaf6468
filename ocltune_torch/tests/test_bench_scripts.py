"""The benchmark scripts of ocltune_torch/bench run end to end on the test device at their smallest
sizes: a script that breaks is found here, not in a device session whose minutes are counted. The
figures are not checked (speed is measured on the GPU host, docs/PERFORMANCE.md), their shape is."""

import json
import math
import pathlib
import subprocess
import sys

from conftest import DEVICE

BENCH = pathlib.Path(__file__).resolve().parents[1] / "bench"
# Small excerpts of H200 results (docs/results/models/): resnet18's batch-32 convolutions as that run
# recorded them, and model step times.
DATA = pathlib.Path(__file__).resolve().parent / "data"
RECORDED_SHAPES = DATA / "h200-model-shapes-resnet18-b32.json"
OCL = f"ocl:{DEVICE.index}"


def run_script(name, *arguments, timeout=600):
    """Runs bench/<name> with the suite's environment; returns its stdout, failing on a non-zero exit."""
    done = subprocess.run([sys.executable, str(BENCH / name), *arguments], capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"{name} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def positive(value):
    return isinstance(value, float) and math.isfinite(value) and value > 0


def test_conv_bench_times_every_direction_of_every_shape(tmp_path):
    out = tmp_path / "conv.json"
    text = run_script("conv_bench.py", "--shapes", "small", "--baseline", "cpu", "--ocl", OCL, "--reps", "1",
                      "--chain", "1", "--json", str(out))
    figures = json.loads(out.read_text())
    assert len(figures["ocl_ms"]) == 9 and figures["ocl_ms"].keys() == figures["baseline_ms"].keys()
    for key, (synced, chained) in figures["ocl_ms"].items():
        assert positive(synced) and positive(chained), key
    assert {key.split(" / ")[1] for key in figures["ocl_ms"]} == {"forward", "input grad", "weight grad"}
    # Every case's problem went through the runtime (forward, backward-data and backward-weight keys).
    directions = {key.split(",")[0] for key in figures["ocl_levels"]}
    assert directions == {"dir=fwd", "dir=bwd_data", "dir=bwd_weight"}, figures["ocl_levels"]
    assert "3x3 16@14 / weight grad" in text


def test_conv_bench_times_16bit_convolutions(tmp_path):
    out = tmp_path / "conv16.json"
    text = run_script("conv_bench.py", "--shapes", "small", "--baseline", "cpu", "--ocl", OCL, "--reps", "1",
                      "--chain", "1", "--dtype", "bf16", "--json", str(out))
    figures = json.loads(out.read_text())
    assert figures["dtype"] == "bf16" and "; bf16;" in text
    assert len(figures["ocl_ms"]) == 9 and figures["ocl_ms"].keys() == figures["baseline_ms"].keys()
    for key, (synced, chained) in figures["ocl_ms"].items():
        assert positive(synced) and positive(chained), key


def test_gemm_bench_times_every_precision_and_names_the_math_it_ran(tmp_path):
    out = tmp_path / "gemm.json"
    text = run_script("gemm_bench.py", "--shapes", "small", "--baseline", "cpu", "--ocl", OCL, "--reps", "1",
                      "--chain", "1", "--json", str(out))
    figures = json.loads(out.read_text())
    assert len(figures["ocl_ms"]) == 8 and figures["ocl_ms"].keys() == figures["baseline_ms"].keys()
    assert all(positive(ms) for ms in figures["ocl_ms"].values()), figures["ocl_ms"]
    assert {key.split(" / ")[1] for key in figures["ocl_ms"]} == {"fp32", "tf32", "fp16", "bf16"}
    # Every dtype reached the runtime; PoCL has no TF32 units, so the TF32 case is the exact call there.
    assert {key.split()[0] for key in figures["ocl_problems"]} == {"fp32", "fp16", "bf16"}, figures["ocl_problems"]
    assert "33x17x65 / tf32" in text
    bad = subprocess.run([sys.executable, str(BENCH / "gemm_bench.py"), "--precisions", "fp8"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "fp8" in bad.stderr


def test_models_bench_times_compiled_against_eager(tmp_path):
    out = tmp_path / "compiled.json"
    text = run_script("models.py", "--baseline", "ocl-eager", "--compile", "ocltune", "--ocl", OCL, "--models",
                      "mobilenet_v2", "--modes", "inference,training", "--batch", "2", "--size", "32", "--reps", "1",
                      "--warmup", "1", "--json", str(out))
    figures = json.loads(out.read_text())
    rows = figures["results"]
    assert {r["mode"] for r in rows} == {"inference", "training"}
    for r in rows:
        assert r["baseline"] == "ocl-eager" and positive(r["baseline_ms"]) and positive(r["ocl_ms"]), r
        assert not r["fallbacks"], r
    assert "ocl-eager ms" in text


def test_op_overhead_times_every_case(tmp_path):
    out = tmp_path / "overhead.json"
    run_script("op_overhead.py", "--baseline", "cpu", "--ocl", OCL, "--chain", "2", "--reps", "1", "--json", str(out))
    figures = json.loads(out.read_text())
    assert figures["ocl_us"].keys() == figures["baseline_us"].keys() and len(figures["ocl_us"]) >= 9
    for case, (total, host) in figures["ocl_us"].items():
        assert positive(total) and positive(host), case


def test_models_bench_runs_a_training_step_without_fallbacks(tmp_path):
    out = tmp_path / "models.json"
    run_script("models.py", "--baseline", "cpu", "--ocl", OCL, "--models", "resnet18", "--modes", "training",
               "--batch", "2", "--size", "32", "--reps", "1", "--warmup", "0", "--breakdown", "3", "--json", str(out))
    (row,) = json.loads(out.read_text())["results"]
    assert (row["model"], row["mode"], row["batch"]) == ("resnet18", "training", 2)
    assert positive(row["ocl_ms"]) and positive(row["baseline_ms"]) and row["fallbacks"] == {}
    # Steps back to back, one synchronisation at the end, as a training loop runs them.
    assert positive(row["ocl_back_to_back_ms"]) and positive(row["baseline_back_to_back_ms"])
    assert row["back_to_back_ratio"] == row["baseline_back_to_back_ms"] / row["ocl_back_to_back_ms"]
    assert "convolution_backward" in row["ocl_breakdown"]["op"]
    # --breakdown-only: the same step with only the convolutions synchronised and timed.
    run_script("models.py", "--baseline", "cpu", "--ocl", OCL, "--models", "resnet18", "--modes", "training",
               "--batch", "2", "--size", "32", "--reps", "1", "--warmup", "0", "--breakdown", "3",
               "--breakdown-only", "convolution,convolution_backward", "--json", str(out))
    (row,) = json.loads(out.read_text())["results"]
    for side in ("ocl_breakdown", "baseline_breakdown"):
        assert set(row[side]["op"]) == {"convolution", "convolution_backward"}, row[side]["op"]
    assert row["ocl_breakdown"]["op"]["convolution_backward"][0] == 20  # resnet18's 20 convolutions


def test_select_shapes_keeps_the_costliest_problems(tmp_path):
    out = tmp_path / "costly.json"
    recorded = RECORDED_SHAPES
    run_script("select_shapes.py", str(recorded), "--op", "conv2d", "--dirs", "fwd", "--batch", "32", "--top", "3",
               "-o", str(out))
    chosen = json.loads(out.read_text())
    assert len(chosen) == 3
    assert all(p["op"] == "conv2d" and p["dir"] == "fwd" and p["n"] == 32 for p in chosen)

    def cost(p):
        out_h = (p["h"] + 2 * p["pad_h"] - p["dil_h"] * (p["r"] - 1) - 1) // p["stride_h"] + 1
        out_w = (p["w"] + 2 * p["pad_w"] - p["dil_w"] * (p["s"] - 1) - 1) // p["stride_w"] + 1
        macs = p["n"] * p["k"] * out_h * out_w * p["c"] // p["groups"] * p["r"] * p["s"]
        return macs * p["recorded"]["calls"]

    everything = [p for p in json.loads(recorded.read_text())
                  if p["op"] == "conv2d" and p["dir"] == "fwd" and p["n"] == 32 and p["groups"] != p["c"]]
    assert [cost(p) for p in chosen] == sorted((cost(p) for p in everything), reverse=True)[:3]

    # --where and --add: the 3x3 weight gradients of groups 1 but the 3-channel first layer, added to
    # the file once (the second --add of the same choice adds nothing).
    for _ in range(2):
        run_script("select_shapes.py", str(recorded), "--dirs", "bwd_weight", "--where", "r=3", "--where", "groups=1",
                   "--where", "c!=3", "--batch", "32", "--top", "100", "--add", "-o", str(out))
    added = json.loads(out.read_text())[3:]
    wanted = [p for p in json.loads(recorded.read_text()) if p["op"] == "conv2d" and p["dir"] == "bwd_weight"
              and p["n"] == 32 and p["r"] == 3 and p["groups"] == 1 and p["c"] != 3]
    assert len(added) == len(wanted) > 0 and sorted(map(cost, added)) == sorted(map(cost, wanted))


def test_model_shapes_lists_what_the_device_recorded(tmp_path):
    # The convolutions of resnet18's training step at batch 32, listed without a device, are the ones
    # the H200 run recorded (every direction; no input gradient for the first layer), with their calls.
    out = tmp_path / "resnet18.json"
    run_script("model_shapes.py", "--models", "resnet18", "--modes", "training", "--batch", "32", "-o", str(out))
    listed = json.loads(out.read_text())
    recorded = json.loads(RECORDED_SHAPES.read_text())

    def key(p):
        return json.dumps({k: v for k, v in p.items() if k != "recorded"}, sort_keys=True)

    recorded_keys = {key(p) for p in recorded}
    assert len(listed) == 32 and all(key(p) in recorded_keys for p in listed)
    by_dir = {d: [p for p in listed if p["dir"] == d] for d in ("fwd", "bwd_weight", "bwd_data")}
    assert len(by_dir["fwd"]) == len(by_dir["bwd_weight"]) == len(by_dir["bwd_data"]) + 1
    assert not [p for p in by_dir["bwd_data"] if p["c"] == 3]
    assert sum(p["recorded"]["calls"] for p in by_dir["fwd"]) == 20  # resnet18's 20 convolutions

    # --math tf32: the same problems with the math of PyTorch's default TF32 convolutions.
    run_script("model_shapes.py", "--models", "resnet18", "--modes", "training", "--batch", "32", "--math", "tf32",
               "-o", str(out))
    tf32 = json.loads(out.read_text())
    assert [dict(p, math="tf32") for p in listed] == tf32


def test_select_shapes_keeps_the_untuned_problems(tmp_path):
    # Two problems of a recorded file, one with a row of its shape in a rows file: --untuned-in keeps
    # the other; a row of the same shape in another math mode does not count as tuning it.
    recorded = [p for p in json.loads(RECORDED_SHAPES.read_text())
                if p["op"] == "conv2d" and p["dir"] == "fwd"][:2]
    shapes, rows, out = tmp_path / "shapes.json", tmp_path / "rows.jsonl", tmp_path / "untuned.json"
    shapes.write_text(json.dumps(recorded))
    tuned, other = ({k: v for k, v in p.items() if k != "recorded"} for p in recorded)
    lines = [{"format": "ocltune-tuned-rows", "schema_version": 2},
             {"table": "best", "op": "conv2d", "dtype": "fp32", "math": "exact", "shape": tuned},
             {"table": "best", "op": "conv2d", "dtype": "fp32", "math": "tf32", "shape": other}]
    rows.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    run_script("select_shapes.py", str(shapes), "--untuned-in", str(rows), "-o", str(out))
    assert json.loads(out.read_text()) == [recorded[1]]


def test_model_targets_judges_each_row_by_its_target():
    text = run_script("model_targets.py", "--part", "fp32", str(DATA / "h200-models-fp32-b32.json"),
                      str(DATA / "h200-resnet50-inference-b64-fp32.json"))
    lines = {tuple(line.split()[:3]): line.split() for line in text.splitlines() if line.split()[:1] != ["model"]}
    assert lines[("resnet50", "inference", "32")][-2:] == ["1.0", "yes"]  # 1.008 against 1.0
    assert lines[("resnet50", "inference", "64")][-2:] == ["1.0", "no"]  # 0.909
    assert lines[("mobilenet_v2", "inference", "32")][-2:] == ["0.8", "no"]  # 0.776
    assert len(lines[("resnet18", "training", "32")]) == 7  # batch 32 is not a resnet18 target row
    assert "3 rows met, 2 missed" in text


def test_attention_bench_times_the_fused_entry_its_gemms_and_a_baseline_process(tmp_path):
    # --cuda names the baseline's device; the CPU stands in for CUDA here (a process of its own).
    out = tmp_path / "attention.json"
    run_script("attention_bench.py", "--ocl", OCL, "--shape", "2,2,16,16,8", "--dropout", "0.1", "--reps", "1",
               "--warmup", "0", "--parts", "--cuda", "cpu", "--json", str(out))
    figures = json.loads(out.read_text())
    assert positive(figures["fused"]["ms"]) and positive(figures["math"]["ms"]) and positive(figures["cuda"]["ms"])
    assert figures["fused"]["fallbacks"] == {}
    assert len(figures["parts"]) == 7 and all(positive(v) for k, v in figures["parts"].items() if "GEMMs" not in k)


def test_allreduce_bench_times_ocl_and_gloo_at_every_size(tmp_path, monkeypatch):
    # Its two ranks on the two PoCL devices of POCL_DEVICES="pthread pthread" (rank r on ocl:r).
    monkeypatch.setenv("POCL_DEVICES", "pthread pthread")
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "lo")
    out = tmp_path / "allreduce.json"
    text = run_script("allreduce_bench.py", "--sizes", "1K,3001", "--reps", "2", "--warmup", "1", "--json", str(out),
                      timeout=300)
    figures = json.loads(out.read_text())
    assert figures["devices"] == ["ocl:0", "ocl:1"]
    for side in ("ocl", "gloo"):
        assert list(figures[f"{side}_ms"]) == ["1K", "3001"]
        assert all(positive(v) for v in figures[f"{side}_ms"].values())
        assert all(positive(v) for v in figures[f"{side}_algbw_gbps"].values())
    assert figures["bytes"] == {"1K": 4096, "3001": 12004}
    assert "gloo/ocl" in text


def test_first_step_times_a_new_process_and_says_where_its_first_step_went(tmp_path):
    out = tmp_path / "first.json"
    # "own": the suite's caches as they are (a cold state would compile every kernel: minutes on PoCL)
    text = run_script("first_step.py", "--models", "resnet18", "--ocl", OCL, "--batch", "2", "--size", "32",
                      "--steps", "3", "--runs", "1", "--states", "own", "--log-builds", "--json", str(out))
    figures = json.loads(out.read_text())["results"]["resnet18"]["own"]
    assert all(positive(figures[key]) for key in ("first_s", "second_s", "steady_s", "import_s")), figures
    startup = figures["startup"]
    # A new process resolves each problem once, and builds or loads programs for them.
    assert startup["resolutions"] > 10 and startup["compiled"] + startup["loaded"] > 0, startup
    assert startup["plain_programs"] > 0, startup
    assert "resnet18:" in text and "own" in text
    # --log-builds: each plain program the child built, with its time (a new process builds them all).
    assert text.count("    plain program ") == startup["plain_programs"], text
    bad = subprocess.run([sys.executable, str(BENCH / "first_step.py"), "--states", "tepid"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "tepid" in bad.stderr
