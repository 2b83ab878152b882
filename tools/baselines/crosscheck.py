#!/usr/bin/env python3
"""crosscheck: checks every problem's reference kernel against its PyTorch
reference (the manifest's torch_reference, run in float64) on the same inputs:
`kverify dump` writes the harness's seeded inputs and the reference kernel's
outputs as .npy; this runs Model(**params, **dims)(*inputs) and compares with
the problem's tolerance. Prints a table (worst error per problem and dims) and
writes crosscheck.json. --dims takes default, small, alt (every alt set), altN, hiddenK, and
bound / strat: every boundary / stratified set the verifier runs with each seed (those whose
tensors fit --max-set-gb). Run on the GPU machine:
    python3 tools/baselines/crosscheck.py --bin bin --dims small,alt,default --seeds 11,12 --out DIR
    python3 tools/baselines/crosscheck.py --bin bin --suite level3 --dims hidden0,bound,strat --seeds 11
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems"))
import kcproblems  # noqa: E402


def load_tensor(path, dtype):
    a = np.load(path, mmap_mode="r")
    t = torch.from_numpy(np.ascontiguousarray(a))
    if dtype == "bf16":
        t = t.view(torch.bfloat16)
    return t.cuda()


def compare_chunk(a, b, atol, rtol):
    nan_mismatch = int((torch.isnan(a) != torch.isnan(b)).sum())
    both = ~(torch.isnan(a) | torch.isnan(b))
    d = torch.where(both, (a - b).abs(), torch.zeros_like(a))
    d = torch.where(torch.isinf(a) & torch.isinf(b) & (a == b), torch.zeros_like(d), d)
    d = torch.nan_to_num(d, nan=float("inf"))
    allowed = atol + rtol * b.abs()
    ratio = torch.where(allowed > 0, d / allowed, torch.where(d > 0, float("inf"), 0.0))
    rel = d / b.abs().clamp_min(1e-30)
    return nan_mismatch, float(d.max()), float(rel.max()), float(ratio.max())


def compare(got_ref, want, atol, rtol, chunk=1 << 26):
    """got_ref: reference kernel output; want: torch's. Chunked: outputs can be several GB."""
    a_all, b_all = got_ref.flatten(), want.flatten()
    if a_all.numel() != b_all.numel():
        return {"ok": False, "error": "numel %d vs torch %d" % (a_all.numel(), b_all.numel())}
    st = {"nan_mismatch": 0, "max_abs": 0.0, "max_rel": 0.0, "worst_ratio": 0.0}
    for i in range(0, a_all.numel(), chunk):
        a = a_all[i:i + chunk].double()
        b = b_all[i:i + chunk].to(a.device).double()
        n, d, r, q = compare_chunk(a, b, atol, rtol)
        st["nan_mismatch"] += n
        st["max_abs"], st["max_rel"], st["worst_ratio"] = max(st["max_abs"], d), max(st["max_rel"], r), max(st["worst_ratio"], q)
    st["ok"] = st["nan_mismatch"] == 0 and st["worst_ratio"] <= 1
    return st


def run_torch(m, meta, dirpath, precision):
    dims = meta["dims"]
    ins = [load_tensor(os.path.join(dirpath, t["file"]), t["dtype"]) for t in meta["inputs"]]
    model = kcproblems.make_model(m, dims, torch).cuda()
    with torch.no_grad():
        try:
            if precision != "f64":
                raise RuntimeError("float32 requested")
            x64 = [t.double() if t.is_floating_point() else t for t in ins]
            out = model.double()(*x64)
        except Exception:  # float32 asked for, or a reference that insists on its dtype
            out = model.float()(*ins)
            precision = "f32"
    if not isinstance(out, (tuple, list)):
        out = (out,)
    return out, precision


def dump_and_compare(args, m, todo, out, seeds=None):
    """Dumps inputs and reference outputs for the dims in todo, runs torch, compares."""
    pid = m["id"]
    cmd = [os.path.join(args.bin, "kverify"), "dump", "--problem", pid, "--seeds", seeds or args.seeds,
           "--dims", ",".join(todo), "--out", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return [{"problem": pid, "dims": ",".join(todo), "ok": False, "error": "dump failed: " + r.stderr.strip()[-500:]}]
    rows = []
    single = os.path.exists(os.path.join(out, "meta.json"))  # one dims set and seed: no subdirs
    for sub in [""] if single else sorted(os.listdir(out)):
        dirpath = os.path.join(out, sub)
        with open(os.path.join(dirpath, "meta.json")) as f:
            meta = json.load(f)
        precision = args.default_precision if meta["dims_name"] == "default" else "f64"
        try:
            outs, precision = run_torch(m, meta, dirpath, precision)
        except Exception as e:  # noqa: BLE001
            rows.append({"problem": pid, "dims": meta["dims_name"], "seed": meta["seed"], "ok": False, "error": "torch: %r" % e})
            continue
        for t, want in zip(meta["outputs"], outs):
            got = load_tensor(os.path.join(dirpath, t["file"]), t["dtype"])
            st = compare(got, want, m["tolerance"]["atol"], m["tolerance"]["rtol"])
            del got
            st.update({"problem": pid, "dims": meta["dims_name"], "seed": meta["seed"], "output": t["name"], "torch_precision": precision})
            rows.append(st)
        del outs
        torch.cuda.empty_cache()
    return rows


def cover_sets(args, pid, family, seed):
    """[(name, dims)]: the boundary ("bound") or stratified ("strat") sets of seed, as the
    verifier runs them (`kverify problems --boundary/--stratified`)."""
    flag = "--boundary" if family == "bound" else "--stratified"
    r = subprocess.run([os.path.join(args.bin, "kverify"), "problems", flag, pid, "--seed", seed],
                       capture_output=True, text=True, check=True)
    return [(row["name"], row["dims"]) for row in map(json.loads, r.stdout.splitlines())]


def check_cover(args, m, family, out):
    """Every boundary or stratified set of each seed that fits --max-set-gb, dumped and compared."""
    rows = []
    for seed in args.seeds.split(","):
        keep = []
        for name, dims in cover_sets(args, m["id"], family, seed):
            if kcproblems.tensor_bytes(m, dims) <= args.max_set_gb * 2**30:
                keep.append(name)
            else:
                rows.append({"problem": m["id"], "dims": name, "seed": seed, "ok": None,
                             "skipped": "tensors exceed --max-set-gb"})
        if keep:
            rows += dump_and_compare(args, m, keep, out, seeds=seed)
            shutil.rmtree(out, ignore_errors=True)
    return rows


def check_problem(args, path):
    m = kcproblems.load_manifest(path)
    pid = m["id"]
    rows = []
    sets = dict(kcproblems.dims_sets(m))
    wanted, families = [], []
    for d in args.dims.split(","):
        if d in ("bound", "strat"):
            families.append(d)
            continue
        wanted += [k for k in sets if k.startswith("alt")] if d == "alt" else [d]
    todo = [d for d in wanted if d != "default" or kcproblems.tensor_bytes(m, sets["default"]) <= args.max_default_gb * 2**30]
    for d in wanted:
        if d not in todo:
            rows.append({"problem": pid, "dims": d, "ok": None, "skipped": "default tensors exceed --max-default-gb"})
    out = os.path.join(args.out, pid.replace("/", "_"))
    shutil.rmtree(out, ignore_errors=True)
    try:
        if todo:
            rows += dump_and_compare(args, m, todo, out)
            shutil.rmtree(out, ignore_errors=True)
        for family in families:
            rows += check_cover(args, m, family, out)
    finally:
        shutil.rmtree(out, ignore_errors=True)  # dumps of several GB must not pile up in /dev/shm
    return rows


def summarize(rows):
    by = {}
    for r in rows:
        p = by.setdefault(r["problem"], {"ok": True, "worst_ratio": 0.0, "max_rel": 0.0, "dims": set(), "skipped": []})
        if r.get("ok") is None:
            p["skipped"].append(r["dims"])
            continue
        p["dims"].add(r["dims"])
        p["ok"] = p["ok"] and bool(r.get("ok"))
        p["worst_ratio"] = max(p["worst_ratio"], r.get("worst_ratio", float("inf")) if r.get("ok") is not None else 0)
        p["max_rel"] = max(p["max_rel"], r.get("max_rel", 0.0))
        if not r.get("ok"):
            p.setdefault("errors", []).append(r)
    return by


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="bin")
    ap.add_argument("--problems", default=os.environ.get("KC_PROBLEMS", "problems"))
    ap.add_argument("--suite", default="level1")
    ap.add_argument("--only", default="", help="comma-separated ids or substrings")
    ap.add_argument("--dims", default="small,alt,default")
    ap.add_argument("--seeds", default="11,12")
    ap.add_argument("--max-default-gb", type=float, default=24.0)
    ap.add_argument("--max-set-gb", type=float, default=4.0,
                    help="boundary and stratified sets whose tensors exceed this are skipped (the "
                         "capacity sets hold more than 2^31 elements)")
    ap.add_argument("--out", default="/dev/shm/kc-crosscheck" if os.path.isdir("/dev/shm") else "/tmp/kc-crosscheck")
    ap.add_argument("--report", default="crosscheck.json")
    ap.add_argument("--default-precision", default="f32", choices=["f32", "f64"],
                    help="PyTorch precision on the default dims (float64 convolutions of several GB "
                         "fall back to slow kernels); TF32 is off either way")
    args = ap.parse_args()
    os.environ["KC_PROBLEMS"] = os.path.abspath(args.problems)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    paths = kcproblems.problem_manifests(args.problems, args.suite)
    if args.only:
        keys = args.only.split(",")
        paths = [p for p in paths if any(k in p for k in keys)]
    t0 = time.time()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for path in paths:
        try:
            new = check_problem(args, path)
        except Exception as e:  # noqa: BLE001 (out of memory on the largest shapes, say)
            new = [{"problem": kcproblems.load_manifest(path)["id"], "dims": "?", "ok": False, "error": repr(e)[:300]}]
        torch.cuda.empty_cache()
        rows += new
        bad = [r for r in new if r.get("ok") is False]
        print("%-48s %s" % (new[0]["problem"] if new else path, "ok" if not bad else "DISAGREES %s" % bad[:1]), flush=True)
        with open(args.report, "w") as f:  # partial results survive a timeout
            json.dump({"rows": rows, "partial": True}, f, indent=1, default=str)
    by = summarize(rows)
    agree = sum(1 for p in by.values() if p["ok"])
    print("%-48s %-5s %12s %12s  %s" % ("problem", "agree", "worst |d|/tol", "max rel", "dims checked"))
    for pid, p in sorted(by.items()):
        print("%-48s %-5s %12.3g %12.3g  %s%s" % (pid, "yes" if p["ok"] else "NO", p["worst_ratio"], p["max_rel"],
              ",".join(sorted(p["dims"])), (" (skipped: %s)" % ",".join(p["skipped"])) if p["skipped"] else ""))
        for e in p.get("errors", [])[:3]:
            print("    ", {k: e[k] for k in e if k not in ("problem",)})
    print("%d/%d problems agree with PyTorch (float64) within tolerance; %.0f s" % (agree, len(by), time.time() - t0))
    with open(args.report, "w") as f:
        json.dump({"rows": rows, "agree": agree, "total": len(by)}, f, indent=1, default=str)
    return 0 if agree == len(by) else 1


if __name__ == "__main__":
    sys.exit(main())
