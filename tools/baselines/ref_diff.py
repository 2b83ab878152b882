#!/usr/bin/env python3
"""ref_diff: compares the reference kernels of two problem trees bit for bit, for checking that
a rewritten reference (a faster kernel, another summation order) still gives the same outputs.
For each problem and dims set it runs `kverify dump` with the same seed under each tree
(KC_PROBLEMS), loads the reference outputs (.npy; bf16 stored as uint16 bits) and prints how
many elements differ, the largest difference and the largest difference over the problem's
tolerance. Exit status 1 when any element differs or a dump fails. Needs a GPU and numpy:
    python3 tools/baselines/ref_diff.py --old OLD_TREE --new problems \\
        --ids level1/002_standard_matrix_multiplication,attention/001_causal \\
        [--dims default,alt0,alt1,hidden0] [--seed 4242] [--bin bin] [--jobs 4]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def dump(args, tree, pid, dims, root):
    out = os.path.join(root, os.path.basename(tree.rstrip("/")) + "-" + str(abs(hash(tree))),
                       pid.replace("/", "_"), dims)
    os.makedirs(out, exist_ok=True)
    r = subprocess.run([os.path.join(args.bin, "kverify"), "dump", "--problem", pid, "--seed",
                        str(args.seed), "--dims", dims, "--out", out],
                       env=dict(os.environ, KC_PROBLEMS=tree), capture_output=True, text=True)
    return out, r.returncode, r.stderr.strip()[-300:]


def load(path, dtype):
    a = np.load(path)
    if dtype == "bf16":
        a = (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float64)


def compare_outputs(old_dir, new_dir):
    """One text per output, and whether every element is identical (NaN where both are NaN)."""
    meta = json.load(open(os.path.join(new_dir, "meta.json")))
    atol, rtol = meta.get("atol", 0.0), meta.get("rtol", 0.0)
    texts, same = [], True
    for out in meta["outputs"]:
        a = load(os.path.join(old_dir, out["file"]), out["dtype"])
        b = load(os.path.join(new_dir, out["file"]), out["dtype"])
        both_nan = np.isnan(a) & np.isnan(b)
        differ = int(((a != b) & ~both_nan).sum())
        diff = np.where(both_nan, 0.0, np.abs(a - b))
        worst = float(np.nanmax(diff / (atol + rtol * np.abs(a)))) if a.size else 0.0
        texts.append("%s: %d/%d differ, max |d| %.3g, worst |d|/tol %.4f"
                     % (out["name"], differ, a.size, float(np.nanmax(diff)) if a.size else 0.0, worst))
        same = same and differ == 0
    return "; ".join(texts), same


def one(args, root, pid, dims):
    (o1, r1, e1), (o2, r2, e2) = dump(args, args.old, pid, dims, root), dump(args, args.new, pid, dims, root)
    if r1 or r2:
        return "%-45s %-8s dump failed: old exit %d %s | new exit %d %s" % (pid, dims, r1, e1, r2, e2), False
    text, same = compare_outputs(o1, o2)
    shutil.rmtree(o1, ignore_errors=True)
    shutil.rmtree(o2, ignore_errors=True)
    return "%-45s %-8s %s" % (pid, dims, text), same


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--ids", required=True, help="comma-separated problem ids")
    ap.add_argument("--dims", default="default,alt0,alt1,hidden0")
    ap.add_argument("--seed", type=int, default=4242)
    ap.add_argument("--bin", default="bin")
    ap.add_argument("--jobs", type=int, default=4, help="dumps in flight (they share the GPU)")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="kc-ref-diff-")
    jobs = [(p, d) for p in args.ids.split(",") for d in args.dims.split(",")]
    all_same = True
    try:
        with ThreadPoolExecutor(args.jobs) as ex:
            for line, same in ex.map(lambda j: one(args, root, *j), jobs):
                print(line, flush=True)
                all_same = all_same and same
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("identical" if all_same else "DIFFERENT (or a dump failed)")
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
