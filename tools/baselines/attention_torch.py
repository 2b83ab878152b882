#!/usr/bin/env python3
"""attention_torch: PyTorch's own attention kernels on the attention suite (problems/attention),
in each problem's dtype, with the same mask and score functions: SDPA where it can express the
variant, and torch.compile'd flex_attention (score_mod / mask_mod / block mask) for every problem.

  check      `kverify dump` writes the harness's inputs and the reference's output for a dims
             set and seed; the PyTorch kernels run on those inputs and are compared with the
             reference output under the manifest's tolerance. One line per (problem, kernel,
             dims): PASS/FAIL with the worst |d| / (atol + rtol |ref|) (must stay below 1), or
             ERROR when PyTorch itself cannot run that shape. Exit status 1 on any FAIL of a
             required kernel. Used by tests/gpu/test_attention.sh.
  baselines  times SDPA and compiled flex_attention on the default dims with the protocol of
             tools/baselines/baselines.py, prints ms and achieved TFLOP/s (the manifest's flops: 4*D per
             scored pair), and writes problems/attention/baselines/<gpu>.json: eager_ms is SDPA
             where it expresses the variant (else the manifest's torch_reference in eager mode),
             compile_ms is compiled flex_attention.

    python3 tools/baselines/attention_torch.py check --bin bin [--dims small,alt,default] [--only 001,005]
    python3 tools/baselines/attention_torch.py baselines [--only ...] [--warm-only]

  --warm-only (baselines) compiles and runs flex_attention for the selected problems once, to
  fill Inductor's on-disk caches from several processes at once before a serial timing pass;
  nothing is timed or written.
"""
import argparse
import datetime
import json
import math
import os
import shutil
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems"))
import kcproblems  # noqa: E402


def _flex():
    """A freshly compiled flex_attention. Dynamo caches compiled frames per code object and,
    past its recompile limit (8 in torch 2.11), silently runs flex_attention unfused in eager
    mode: on the H100 the 9th and 10th problems of a run were checked and timed that way
    (131 ms instead of a fused kernel). So the caches are reset per problem, the limit raised,
    and the unfused fallback's warning made an error: a result is compiled flex or none."""
    import warnings
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    torch._dynamo.reset()
    for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit", "accumulated_cache_size_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, max(getattr(torch._dynamo.config, name), 256))
    warnings.filterwarnings("error", message="flex_attention called without torch.compile")
    return torch.compile(flex_attention, dynamic=False), create_block_mask


def variant(pid):
    """The problem's name without its number: causal, relative_bias, ..."""
    return pid.split("/")[-1].split("_", 1)[1]


def mods(pid, dims, params, extra):
    """(score_mod, mask_mod, mask_depends_on_b, gqa) in FlexAttention's terms."""
    name = variant(pid)
    S = dims["S"]
    H = dims.get("HQ", dims.get("H"))
    causal = lambda b, h, q, k: q >= k  # noqa: E731
    W = dims.get("W")
    window = lambda b, h, q, k: (q >= k) & (q - k <= W)  # noqa: E731
    cap = params.get("softcap")
    softcap = lambda s, b, h, q, k: cap * torch.tanh(s / cap)  # noqa: E731
    if name in ("causal", "causal_fp32"):
        return None, causal, False, False
    if name == "relative_bias":
        bias = extra["bias"]
        return (lambda s, b, h, q, k: s + bias[h, q - k + S - 1]), None, False, False
    if name == "alibi_causal":
        slope = torch.exp2(-8.0 * (torch.arange(H, device="cuda", dtype=torch.float64) + 1) / H).float()
        return (lambda s, b, h, q, k: s + slope[h] * (k - q)), causal, False, False
    if name == "sliding_window":
        return None, window, False, False
    if name == "document_causal":
        seg = extra["seg"]
        return None, (lambda b, h, q, k: (q >= k) & (seg[b, q] == seg[b, k])), True, False
    if name == "softcap_causal":
        return softcap, causal, False, False
    if name == "gqa_causal":
        return None, causal, False, True
    if name == "neighborhood_2d":
        CH, CW, KH, KW = dims["CH"], dims["CW"], dims["KH"], dims["KW"]

        def natten(b, h, q, k):
            r0 = torch.clamp(q // CW - KH // 2, 0, CH - KH)
            c0 = torch.clamp(q % CW - KW // 2, 0, CW - KW)
            kr, kc = k // CW, k % CW
            return (kr >= r0) & (kr < r0 + KH) & (kc >= c0) & (kc < c0 + KW)
        return None, natten, False, False
    if name == "gqa_window_softcap":
        return softcap, window, False, True
    raise ValueError("no mods for " + pid)


def dense_mask(mask_mod, B, H, S, per_b):
    """The mask_mod evaluated densely: (B or 1, 1, S, S) booleans for SDPA."""
    q = torch.arange(S, device="cuda").view(S, 1)
    k = torch.arange(S, device="cuda").view(1, S)
    if per_b:
        return torch.stack([mask_mod(b, 0, q, k) for b in range(B)]).view(B, 1, S, S)
    return mask_mod(0, 0, q, k).view(1, 1, S, S)


def sdpa_fn(pid, dims, params, extra):
    """(callable(q, k, v), required) for SDPA, or None where SDPA cannot express the variant."""
    name = variant(pid)
    S = dims["S"]
    H = dims.get("HQ", dims.get("H"))
    _, mask_mod, per_b, gqa = mods(pid, dims, params, extra)
    if name in ("causal", "causal_fp32", "gqa_causal"):
        return (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)), True
    if name in ("sliding_window", "document_causal", "neighborhood_2d"):
        m = dense_mask(mask_mod, dims["B"], H, S, per_b)
        return (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=m)), True
    i = torch.arange(S, device="cuda").view(1, S, 1)
    j = torch.arange(S, device="cuda").view(1, 1, S)
    h = torch.arange(H, device="cuda").view(H, 1, 1)
    if name == "relative_bias":  # the table is bf16 already: the float mask is exact
        bias = extra["bias"][h, i - j + S - 1].unsqueeze(0)
        return (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype))), True
    if name == "alibi_causal":  # SDPA wants the mask in q's dtype: ALiBi rounded to bf16 (not required)
        slope = torch.exp2(-8.0 * (h + 1).double() / H)
        bias = (slope * (j - i)).masked_fill(j > i, float("-inf")).unsqueeze(0)
        return (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype))), False
    return None


def flex_fn(pid, dims, params, extra):
    flex, create_block_mask = _flex()
    score_mod, mask_mod, per_b, gqa = mods(pid, dims, params, extra)
    S = dims["S"]
    bm = create_block_mask(mask_mod, dims["B"] if per_b else None, None, S, S, device="cuda") if mask_mod else None
    return lambda q, k, v: flex(q, k, v, score_mod=score_mod, block_mask=bm, enable_gqa=gqa)


def params_of(m):
    return {p["name"]: p["value"] for p in m.get("params", [])}


def setup_precision():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


# ---- check ----

def check_one(args, m, dims_name, out_dir):
    import crosscheck  # noqa: E402 (tools/baselines/crosscheck.py: load_tensor, compare)
    pid = m["id"]
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = [os.path.join(args.bin, "kverify"), "dump", "--problem", pid, "--seed", str(args.seed),
           "--dims", dims_name, "--out", out_dir]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return [("FAIL", pid, "dump", dims_name, "kverify dump failed: " + r.stderr.strip()[-300:], True)]
    with open(os.path.join(out_dir, "meta.json")) as f:
        meta = json.load(f)
    dims = meta["dims"]
    ins = {t["name"]: crosscheck.load_tensor(os.path.join(out_dir, t["file"]), t["dtype"]) for t in meta["inputs"]}
    ref = crosscheck.load_tensor(os.path.join(out_dir, meta["outputs"][0]["file"]), meta["outputs"][0]["dtype"])
    params = params_of(m)
    atol, rtol = m["tolerance"]["atol"], m["tolerance"]["rtol"]
    rows = []
    kernels = []
    s = sdpa_fn(pid, dims, params, ins)
    if s:
        kernels.append(("sdpa", s[0], s[1]))
    kernels.append(("flex", None, True))
    for kname, fn, required in kernels:
        try:
            if fn is None:
                fn = flex_fn(pid, dims, params, ins)
            with torch.no_grad():
                got = fn(ins["q"], ins["k"], ins["v"])
            torch.cuda.synchronize()
            st = crosscheck.compare(got, ref, atol, rtol)
            verdict = "PASS" if st["ok"] else ("FAIL" if required else "INFO")
            rows.append((verdict, pid, kname, dims_name, "worst |d|/tol %.3g, max |d| %.3g%s" % (
                st["worst_ratio"], st["max_abs"], "" if required else " (not required)"), required))
        except Exception as e:  # noqa: BLE001 (a shape PyTorch's kernel does not take)
            # flex_attention falling back to its unfused eager path is not a shape PyTorch
            # cannot run: the compiled kernel was not checked, so a required check fails
            unfused = "without torch.compile" in str(e)
            rows.append(("FAIL" if unfused and required else "ERROR", pid, kname, dims_name,
                         repr(e)[:200], required))
    del ins, ref
    torch.cuda.empty_cache()
    shutil.rmtree(out_dir, ignore_errors=True)
    return rows


def cmd_check(args):
    setup_precision()
    os.environ["KC_PROBLEMS"] = os.path.abspath(args.problems)
    failed = passed = errors = 0
    t0 = time.time()
    for path in selected(args):
        m = kcproblems.load_manifest(path)
        names = []
        sets = [n for n, _ in kcproblems.dims_sets(m)]
        for d in args.dims.split(","):
            names += [n for n in sets if n.startswith("alt")] if d == "alt" else [d]
        for dn in names:
            for verdict, pid, kname, dims_name, msg, required in check_one(args, m, dn, os.path.join(args.out, "dump")):
                print("%-5s %-36s %-5s %-8s %s" % (verdict, pid, kname, dims_name, msg), flush=True)
                passed += verdict == "PASS"
                failed += verdict == "FAIL"
                errors += verdict == "ERROR"
    print("attention torch check: %d passed, %d failed, %d errors (PyTorch could not run the shape) in %.0f s"
          % (passed, failed, errors, time.time() - t0))
    return 1 if failed else 0


# ---- baselines ----

def warm_flex(args):
    for path in selected(args):
        m = kcproblems.load_manifest(path)
        dims = dict(kcproblems.dims_sets(m))["default"]
        c0 = time.time()
        try:
            ins = kcproblems.random_inputs(m, dims, torch)
            extra = {t["name"]: x for t, x in zip(m["inputs"], ins)}
            with torch.no_grad():
                flex_fn(m["id"], dims, params_of(m), extra)(*ins[:3])
            torch.cuda.synchronize()
            print("warm %-36s %.1f s" % (m["id"], time.time() - c0), flush=True)
            del ins, extra
        except Exception as e:  # noqa: BLE001
            print("warm %-36s ERROR %s" % (m["id"], repr(e)[:200]), flush=True)
        torch.cuda.empty_cache()
    return 0


def cmd_baselines(args):
    import baselines  # noqa: E402 (tools/baselines/baselines.py: time_fn, slug, driver_version, save)
    setup_precision()
    if args.warm_only:
        return warm_flex(args)
    name = torch.cuda.get_device_name(0)
    out = args.out_file or os.path.join(args.problems, "attention", "baselines", baselines.slug(name) + ".json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    doc = json.load(open(out)) if os.path.exists(out) else {"problems": {}}
    doc.update({"gpu": name, "driver": baselines.driver_version(), "torch": torch.__version__,
                "cuda": torch.version.cuda, "updated": datetime.date.today().isoformat(),
                "protocol": "median of CUDA-event timings, L2 flushed (2x L2 written) before each rep, 3 warm-up "
                            "reps, >=10 reps and ~1 s; TF32 off; default dims, the manifest's input "
                            "distributions. eager_ms: SDPA where it expresses the variant (eager_kind), else "
                            "the manifest's torch_reference in eager mode; compile_ms: torch.compile'd "
                            "flex_attention with the problem's score_mod/mask_mod (block mask built outside "
                            "the timing); tflops_*: the manifest's flops (4*D per scored pair) / time",
                "tf32": {"matmul": False, "cudnn": False},
                "anchor": "FlashAttention-3 forward: about 740 TFLOP/s in fp16 on H100 SXM; dense bf16/fp16 "
                          "tensor-core peak 989 TFLOP/s"})
    print("%-36s %10s %8s %10s %8s   %s" % ("problem", "sdpa ms", "TFLOP/s", "flex ms", "TFLOP/s", "eager"))
    for path in selected(args):
        m = kcproblems.load_manifest(path)
        pid = m["id"]
        dims = dict(kcproblems.dims_sets(m))["default"]
        entry = doc["problems"][pid] = {}  # every figure of a problem comes from one run
        flops = kcproblems.eval_dim_expr(m["flops"], dims)
        try:
            ins = kcproblems.random_inputs(m, dims, torch)
            extra = {t["name"]: x for t, x in zip(m["inputs"], ins)}
            params = params_of(m)
            s = sdpa_fn(pid, dims, params, extra)
            if s:
                entry["sdpa_ms"] = round(baselines.time_fn(s[0], ins[:3]), 5)
                entry["eager_ms"], entry["eager_kind"] = entry["sdpa_ms"], "sdpa"
            else:
                model = kcproblems.make_model(m, dims, torch).cuda()
                entry["eager_ms"] = round(baselines.time_fn(model, ins), 5)
                entry["eager_kind"] = "torch_reference"
            c0 = time.time()
            f = flex_fn(pid, dims, params, extra)
            entry["flex_ms"] = entry["compile_ms"] = round(baselines.time_fn(f, ins[:3]), 5)
            entry["compile_build_s"] = round(time.time() - c0, 1)
            for k in ("sdpa", "flex"):
                if k + "_ms" in entry:
                    entry["tflops_" + k] = round(flops / (entry[k + "_ms"] * 1e-3) / 1e12, 1)
            entry.pop("error", None)
            del ins, extra
        except Exception as e:  # noqa: BLE001
            entry["error"] = repr(e)[:300]
        torch.cuda.empty_cache()
        print("%-36s %10s %8s %10s %8s   %s%s" % (pid, entry.get("sdpa_ms", "-"), entry.get("tflops_sdpa", "-"),
              entry.get("flex_ms", "-"), entry.get("tflops_flex", "-"), entry.get("eager_kind", "-"),
              ("  ERROR " + entry["error"]) if "error" in entry else ""), flush=True)
        record_missing(args, doc)
        baselines.save(out, doc)
    print("wrote %s (anchor: FlashAttention-3 forward reaches about 740 TFLOP/s in fp16 on H100)" % out)
    return 0


def record_missing(args, doc):
    """missing_eager / missing_compile: the suite's problems without that figure in the file."""
    ids = [kcproblems.load_manifest(p)["id"] for p in kcproblems.problem_manifests(args.problems, "attention")]
    doc["missing_eager"] = [i for i in ids if "eager_ms" not in doc["problems"].get(i, {})]
    doc["missing_compile"] = [i for i in ids if "compile_ms" not in doc["problems"].get(i, {})]


def selected(args):
    paths = kcproblems.problem_manifests(args.problems, "attention")
    if args.only:
        paths = [p for p in paths if any(k in os.path.basename(p) for k in args.only.split(","))]
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["check", "baselines"])
    ap.add_argument("--bin", default="bin")
    ap.add_argument("--problems", default=os.environ.get("KC_PROBLEMS", "problems"))
    ap.add_argument("--only", default="", help="comma-separated substrings of problem names")
    ap.add_argument("--dims", default="small,alt,default")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default="/dev/shm/kc-attention" if os.path.isdir("/dev/shm") else "/tmp/kc-attention")
    ap.add_argument("--warm-only", action="store_true", help="baselines: only fill the compile caches")
    ap.add_argument("--out-file", default="", help="baselines: where to write (default problems/attention/baselines/<gpu>.json)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    return cmd_check(args) if args.command == "check" else cmd_baselines(args)


if __name__ == "__main__":
    sys.exit(main())
