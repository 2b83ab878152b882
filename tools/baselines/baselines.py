#!/usr/bin/env python3
"""baselines: times PyTorch eager and torch.compile (default mode) for every
problem of a suite on this GPU, with the verifier's protocol (L2 flushed by
writing 2x its size before every rep, CUDA events around the forward call,
3 warm-up reps, adaptive reps up to a cap, median), and writes
problems/<suite>/baselines/<gpu-model>.json. The file is rewritten after each
problem, so a killed capture resumes where it stopped (--resume, the default);
problems still without a figure are listed under "missing_eager" and
"missing_compile". torch.compile of 100 problems takes long: run it in pieces
with --budget-s, or first fill the compile caches (Inductor's FX-graph and Triton caches on
disk) from several processes at once with --warm-only (nothing timed, nothing written), then time
serially: compile_build_s is then the build time with warm caches (the doc says so).
KernelBench's published table ran with PyTorch's defaults, under which cuDNN convolutions may use
TF32 (torch.backends.cudnn.allow_tf32 is True by default); ours has TF32 off everywhere, as the
verifier requires of candidates. For problems whose reference uses a convolution, --torch-defaults
also times eager mode under PyTorch's defaults (eager_torch_defaults_ms), so both are on record.
Level 3 (a manifest with torch_model): what is timed is KernelBench's own Model on the inputs its
forward takes, the packed parameters loaded into the Model once beforehand (kcproblems
baseline_call), not the copy of every view on each call. --dry-run needs no torch and no GPU: it
lists what would be timed (default dims, inputs, packed parameters, the Model call) and stops.
    python3 tools/baselines/baselines.py --eager --compile --budget-s 400
    python3 tools/baselines/baselines.py --suite level3 --eager --compile --only 001_,009_
    python3 tools/baselines/baselines.py --suite level3 --dry-run
    python3 tools/baselines/baselines.py --suite level2 --compile --warm-only --only 001_,005_ &   # ...
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time

torch = None  # imported in main unless --dry-run (which runs without torch)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems"))
import kcproblems  # noqa: E402


def slug(name):
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", name.lower())).strip("-")


def time_fn(fn, args, cap_s=1.0, min_reps=10, max_reps=200):
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.int32, device="cuda")
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.no_grad():
        for _ in range(3):
            fn(*args)
        torch.cuda.synchronize()
        times, t0 = [], time.time()
        while len(times) < max_reps:
            flush.zero_()
            start.record()
            fn(*args)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
            if len(times) >= min_reps and time.time() - t0 > cap_s:
                break
    return statistics.median(times)


def driver_version():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True).stdout.strip().splitlines()[0]
    except Exception:  # noqa: BLE001
        return "unknown"


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def uses_cudnn_conv(m):
    return re.search(r"\bconv", m["torch_reference"], re.IGNORECASE) is not None


def selected_manifests(args):
    paths = kcproblems.problem_manifests(args.problems, args.suite)
    if args.only:
        paths = [p for p in paths if any(k in os.path.basename(p) for k in args.only.split(","))]
    return paths


def warm(args):
    """--warm-only: torch.compile and run each selected problem so that a later timing pass finds
    Inductor's caches warm."""
    for path in selected_manifests(args):
        m = kcproblems.load_manifest(path)
        dims = dict(kcproblems.dims_sets(m))["default"]
        c0 = time.time()
        try:
            model = kcproblems.make_model(m, dims, torch).cuda()
            inputs = kcproblems.random_inputs(m, dims, torch)
            fn, args_ = kcproblems.baseline_call(model, m, inputs)
            compiled = torch.compile(fn)
            with torch.no_grad():
                compiled(*args_)
            torch.cuda.synchronize()
            print("warm %-48s %.1f s" % (m["id"], time.time() - c0), flush=True)
            del model, inputs, compiled, fn, args_
        except Exception as e:  # noqa: BLE001
            print("warm %-48s ERROR %s" % (m["id"], repr(e)[:200]), flush=True)
        torch._dynamo.reset()
        torch.cuda.empty_cache()
    return 0


def dry_run(args):
    """--dry-run: what a timing pass would time, problem by problem, without torch or a GPU."""
    out = args.out
    doc = json.load(open(out)) if out and os.path.exists(out) else {"problems": {}}
    paths = selected_manifests(args)
    for path in paths:
        m = kcproblems.load_manifest(path)
        dims = dict(kcproblems.dims_sets(m))["default"]
        entry = doc["problems"].get(m["id"], {})
        todo = [what for what, flag, key in (("eager", args.eager, "eager_ms"),
                                             ("compile", args.compile, "compile_ms"))
                if flag and key not in entry]
        if args.torch_defaults and uses_cudnn_conv(m) and "eager_torch_defaults_ms" not in entry:
            todo.append("eager with PyTorch's TF32 defaults")
        if not (args.eager or args.compile or args.torch_defaults):
            status = "nothing selected (--eager, --compile, --torch-defaults)"
        else:
            status = "would time " + ", ".join(todo) if todo else "already in " + out
        print("%s: %s" % (m["id"], status))
        print("    dims %s" % json.dumps(dims, sort_keys=True))
        print("    timed: %s%s" % (kcproblems.describe_model(m, dims),
                                   ", parameters loaded once before timing" if "torch_model" in m else ""))
        for line in kcproblems.describe_inputs(m, dims):
            print("    input " + line)
        print("    inputs and outputs %.1f MB" % (kcproblems.tensor_bytes(m, dims) / 1e6))
    print("dry run: %d problems of %s, nothing timed or written" % (len(paths), args.suite))
    return 0


def save(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", default="problems")
    ap.add_argument("--suite", default="level1")
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--budget-s", type=float, default=1e9, help="stop starting new problems after this")
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--warm-only", action="store_true",
                    help="compile and run each selected problem once to fill the on-disk compile caches; time nothing, write nothing")
    ap.add_argument("--note", default="", help="a remark stored in the file (e.g. how the compile caches were warmed)")
    ap.add_argument("--torch-defaults", action="store_true",
                    help="also time eager mode with PyTorch's default TF32 settings where the reference uses a convolution")
    ap.add_argument("--dry-run", action="store_true",
                    help="list what would be timed (dims, inputs, packed parameters, the Model call); no torch, no GPU")
    args = ap.parse_args()
    if args.dry_run:
        return dry_run(args)
    global torch
    import torch as torch_module
    torch = torch_module
    set_tf32(False)
    if args.warm_only:
        return warm(args)
    name = torch.cuda.get_device_name(0)
    out = args.out or os.path.join(args.problems, args.suite, "baselines", slug(name) + ".json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    doc = json.load(open(out)) if os.path.exists(out) else {"problems": {}}
    doc.update({"gpu": name, "driver": driver_version(), "torch": torch.__version__,
                "cuda": torch.version.cuda, "updated": datetime.date.today().isoformat(),
                "protocol": "median of CUDA-event timings of Model.forward, L2 flushed (2x L2 written) "
                            "before each rep, 3 warm-up reps, >=10 reps and ~1 s; TF32 off; "
                            "inputs with the manifest's distributions on the default dims",
                "tf32": {"matmul": False, "cudnn": False,
                         "eager_torch_defaults_ms": "eager under PyTorch's defaults (matmul TF32 off, cuDNN TF32 "
                                                    "on), timed for problems whose reference uses a convolution"}})
    if args.note:
        doc["note"] = args.note
    paths = selected_manifests(args)
    if any("torch_model" in kcproblems.load_manifest(p) for p in paths):
        doc["protocol"] += ("; level 3: KernelBench's own Model.forward on the inputs it takes, its "
                            "parameters loaded from the packed input once before the reps")
    t0 = time.time()
    for path in paths:
        if time.time() - t0 > args.budget_s:
            break
        m = kcproblems.load_manifest(path)
        entry = doc["problems"].setdefault(m["id"], {})
        need_eager = args.eager and "eager_ms" not in entry
        need_compile = args.compile and "compile_ms" not in entry
        need_defaults = (args.torch_defaults and uses_cudnn_conv(m)
                         and "eager_torch_defaults_ms" not in entry)
        if not (need_eager or need_compile or need_defaults):
            continue
        dims = dict(kcproblems.dims_sets(m))["default"]
        model = inputs = compiled = fn = fn_args = None
        try:
            model = kcproblems.make_model(m, dims, torch).cuda()
            inputs = kcproblems.random_inputs(m, dims, torch)
            fn, fn_args = kcproblems.baseline_call(model, m, inputs)
            if need_eager:
                entry["eager_ms"] = round(time_fn(fn, fn_args), 5)
            if need_defaults:
                set_tf32(False)
                torch.backends.cudnn.allow_tf32 = True  # PyTorch's default
                try:
                    entry["eager_torch_defaults_ms"] = round(time_fn(fn, fn_args), 5)
                finally:
                    set_tf32(False)
            if need_compile:
                c0 = time.time()
                compiled = torch.compile(fn)
                entry["compile_ms"] = round(time_fn(compiled, fn_args), 5)
                entry["compile_build_s"] = round(time.time() - c0, 1)
            entry.pop("error", None)
        except Exception as e:  # noqa: BLE001
            entry["error"] = repr(e)[:300]
        del model, inputs, compiled
        fn = fn_args = None
        torch._dynamo.reset()
        torch.cuda.empty_cache()
        print("%-48s eager %s ms, compile %s ms%s%s" % (
            m["id"], entry.get("eager_ms"), entry.get("compile_ms"),
            ", eager with PyTorch defaults %s ms" % entry["eager_torch_defaults_ms"] if "eager_torch_defaults_ms" in entry else "",
            "  ERROR " + entry["error"] if "error" in entry else ""), flush=True)
        ids = [kcproblems.load_manifest(p)["id"] for p in kcproblems.problem_manifests(args.problems, args.suite)]
        doc["missing_eager"] = [i for i in ids if "eager_ms" not in doc["problems"].get(i, {})]
        doc["missing_compile"] = [i for i in ids if "compile_ms" not in doc["problems"].get(i, {})]
        save(out, doc)
    ids = [kcproblems.load_manifest(p)["id"] for p in kcproblems.problem_manifests(args.problems, args.suite)]
    doc["missing_eager"] = [i for i in ids if "eager_ms" not in doc["problems"].get(i, {})]
    doc["missing_compile"] = [i for i in ids if "compile_ms" not in doc["problems"].get(i, {})]
    save(out, doc)
    print("wrote %s: %d problems without eager, %d without compile" % (out, len(doc["missing_eager"]), len(doc["missing_compile"])))


if __name__ == "__main__":
    sys.exit(main())
