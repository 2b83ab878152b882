#!/usr/bin/env python3
"""calibrate_values: PyTorch's float32 operator (an honest float32 kernel) against the same model
in float64 (the reference's arithmetic) under the value classes a manifest declares ("values",
the params' "vary"): plain inputs, structured inputs (per-row and per-column scales and offsets
and the secret spikes, drawn as the harness draws them, atol times the structure atol), the
large-magnitude run (atol times the large atol) and the special values (NaN/Inf agreement of
float32 and float64 PyTorch). Prints per problem and class the worst |d| / (atol * k + rtol *
|ref|) over the dims sets and vary values tried (below 1 passes; the declarations aim at a
margin), and writes calibrate_values.json. Run on the GPU machine:
    python3 tools/baselines/calibrate_values.py --suites level1,level2,attention [--sets sets.json] --out DIR
sets.json (optional): {problem id: [dims sets]}, e.g. hidden draws from `kverify problems --draw`;
the small and alt dims are always tried, the default dims when all tensors fit in --max-gb.
Constant inputs with a "vary" take it in the plain and structured runs, as the verifier fills them
on every seed but the first and on the drawn dims (--no-vary-inputs: the constants themselves).
Level 3 (suite level3, not in the default --suites): the packed parameters get the value classes
view by view, each view with its own init and its own shape's rows and columns, as the harness
fills them (fill_views), the padding between views NaN; the model is KernelBench's own Model run
as the manifest's torch_model says, in float32 and in float64. --dry-run needs no torch and no
GPU: it lists, per problem, the dims sets, value classes, varied params and inputs that a run
would try, and stops.
    python3 tools/baselines/calibrate_values.py --suites level3 --only level3/001,level3/008 --out DIR
    python3 tools/baselines/calibrate_values.py --suites level3 --dry-run"""
import argparse
import json
import math
import os
import sys
import time

torch = None  # imported in main unless --dry-run (which runs without torch)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems"))
import kcproblems  # noqa: E402

FLOAT = {"f32", "f16", "bf16", "f64"}


def unit(gen, n, device):
    return torch.rand(n, generator=gen, device=device, dtype=torch.float64)


def shape_packed(x, t, dims, mode, vals, gen):
    """A packed input (level 3): each view shaped as an input of its own (its init, its shape's
    rows and columns), as the harness's fill_views draws it; the NaN padding left as it is."""
    if not mode:
        return x
    layout, _ = kcproblems.view_layout(t, dims)
    flat = x.reshape(-1).clone()
    for v, off, n in layout:
        shape = kcproblems.shape_of(v, dims)
        part = flat[off:off + n].view(shape)
        flat[off:off + n] = shape_input(part, dict(v, dtype=t["dtype"]), dims, mode, vals, gen).reshape(-1)
    return flat.view(x.shape)


def shape_input(x, t, dims, mode, vals, gen):
    """The harness's value classes on one input (verify/worker/harness.cu shape_value): in double,
    then rounded to the input's dtype."""
    if "views" in t:
        return shape_packed(x, t, dims, mode, vals, gen)
    init = t["init"]
    dist = init["dist"]
    if t["dtype"] not in FLOAT or dist not in ("normal", "uniform_fan_in") or not mode:
        return x
    dev = x.device
    v = x.double().flatten()
    n = v.numel()
    if dist == "normal":
        mean, std = init.get("mean", 0.0), init.get("std", 1.0)
    else:
        mean, std = 0.0, 1.0 / math.sqrt(kcproblems.eval_dim_expr(init["fan_in"], dims))
    shape = list(x.shape)
    if mode == "structure":
        rows = shape[0] if shape else 1
        cols = shape[-1] if shape else 1
        row_stride = n // rows if rows else 1
        idx = torch.arange(n, device=dev)
        r = torch.exp2(4.0 * unit(gen, rows, dev) - 2.0)[idx // max(row_stride, 1)]
        c = torch.exp2(2.0 * unit(gen, cols, dev) - 1.0)[idx % max(cols, 1)]
        o = ((unit(gen, rows, dev) - 0.5) * std)[idx // max(row_stride, 1)] if dist == "normal" else 0.0
        v = (v - mean) * r * c + mean + o
        spike = vals["structure"].get("spike", 0)
        if spike and dist == "normal":
            p = 16.0 / n if n > 64 else 0.25
            hit = unit(gen, n, dev) < p
            sign = torch.where(unit(gen, n, dev) < 0.5, -1.0, 1.0)
            v = torch.where(hit, sign * spike * std, v)
    elif mode == "large":
        v = v * vals["large"]["scale"]
    elif mode == "special" and dist == "normal":
        codes = vals["special"]["values"]
        p = 16.0 / n if n > 64 else 0.25
        hit = unit(gen, n, dev) < p
        k = (unit(gen, n, dev) * len(codes)).long().clamp(max=len(codes) - 1)
        table = torch.tensor([{"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "-0": -0.0}[s]
                              for s in codes], dtype=torch.float64, device=dev)
        v = torch.where(hit, table[k], v)
    return v.view(shape).to(x.dtype)


def ratio(got, ref, atol, rtol):
    """worst |d| / (atol + rtol |ref|), NaN/Inf disagreements counted apart."""
    a, b = got.double().flatten(), ref.double().flatten()
    nan_bad = int((torch.isnan(a) != torch.isnan(b)).sum())
    inf_bad = int(((torch.isinf(a) | torch.isinf(b)) & ~(a == b) & ~torch.isnan(a) & ~torch.isnan(b)).sum())
    ok = ~(torch.isnan(a) | torch.isnan(b) | torch.isinf(a) | torch.isinf(b))
    if not bool(ok.any()):
        return 0.0, nan_bad, inf_bad
    d = (a[ok] - b[ok]).abs()
    allowed = atol + rtol * b[ok].abs()
    q = torch.where(allowed > 0, d / allowed, torch.where(d > 0, math.inf, 0.0))
    return float(q.max()), nan_bad, inf_bad


def run_model(m, dims, params, ins):
    mm = dict(m)
    mm["params"] = [dict(p, value=params[p["name"]]) for p in m.get("params", [])]
    model = kcproblems.make_model(mm, dims, torch).cuda()
    with torch.no_grad():
        x32 = [x.float() if x.is_floating_point() and x.dtype == torch.float64 else x for x in ins]
        x32 = [x.float() if x.dtype in (torch.bfloat16, torch.float16) and m["id"].startswith("attention") else x
               for x in x32]
        out32 = model(*x32)
        x64 = [x.double() if x.is_floating_point() else x for x in ins]
        out64 = model.double()(*x64)
    if not isinstance(out32, (tuple, list)):
        out32, out64 = (out32,), (out64,)
    return out32, out64


def out_dtype(m, i):
    return getattr(torch, kcproblems.DTYPES[m["outputs"][i]["dtype"]])


def inputs_varied(m, vary):
    """m with its constant inputs (views included) drawn from their "vary" when vary is set."""
    return dict(m, inputs=[kcproblems.varied(t) for t in m["inputs"]]) if vary else m


def one(m, dims, mode, params, seed, k_atol, vary=False):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    m = inputs_varied(m, vary)
    ins = kcproblems.random_inputs(m, dims, torch, generator=gen)
    vals = m["values"]
    ins = [shape_input(x, t, dims, mode, vals, gen) for x, t in zip(ins, m["inputs"])]
    out32, out64 = run_model(m, dims, params, ins)
    worst, nb, ib = 0.0, 0, 0
    for i, (a, b) in enumerate(zip(out32, out64)):
        a = a.to(out_dtype(m, i))  # the output's dtype, as a kernel writes it
        q, n1, n2 = ratio(a, b, m["tolerance"]["atol"] * k_atol, m["tolerance"]["rtol"])
        worst, nb, ib = max(worst, q), nb + n1, ib + n2
    return worst, nb, ib


def dims_with_derived(m, d):
    d = dict(d)
    for k, e in m.get("derived", {}).items():
        d[k] = kcproblems.eval_dim_expr(e, d)
    return d


VERBOSE = False


def note(m, d, mode, params, q):
    if VERBOSE and q > 0.3:
        print("    %s %s %s %s: %.3f" % (m["id"], mode or "plain", d, params, q), flush=True)


def varied_params(m):
    """The params' values the runs use in turn: each param's "vary" list (its value without one)."""
    base = {p["name"]: p["value"] for p in m.get("params", [])}
    nv = max([len(p.get("vary", [])) for p in m.get("params", [])] + [1])
    varied = []
    for i in range(nv):
        v = dict(base)
        for p in m.get("params", []):
            if p.get("vary"):
                v[p["name"]] = p["vary"][i % len(p["vary"])]
        varied.append(v)
    return base, varied


def dims_to_try(m, extra_sets, max_gb):
    """small, the alts, the extra sets, and the default dims when the inputs and outputs fit
    max_gb three times over; and whether the default dims are in."""
    sets = [dims_with_derived(m, m["dims"]["small"])] + [dims_with_derived(m, a) for a in m["dims"]["alt"]]
    sets += [dims_with_derived(m, s) for s in extra_sets]
    default = dims_with_derived(m, m["dims"]["default"])
    fits = kcproblems.tensor_bytes(m, default) * 3 <= max_gb * 1e9
    return sets + [default] if fits else sets, fits


def varied_inputs(m):
    """Names of the constant inputs and views that have a "vary"."""
    out = []
    for t in m["inputs"]:
        for v in t.get("views", [t]):
            if "vary" in v.get("init", {}):
                out.append(v["name"] if v is t else "%s.%s" % (t["name"], v["name"]))
    return out


def calibrate(m, extra_sets, max_gb, vary_inputs=True):
    vals = m.get("values")
    if not vals:
        return None
    base, varied = varied_params(m)
    nv = len(varied)
    sets, _ = dims_to_try(m, extra_sets, max_gb)
    res = {"plain": 0.0, "structure": 0.0, "large": 0.0, "special_nan": 0, "special_inf": 0, "errors": [],
           "vary": varied, "plain_by_vary": [0.0] * nv, "structure_by_vary": [0.0] * nv}
    st = vals["structure"]
    for si, d in enumerate(sets):
        try:
            for vi, params in enumerate(varied):
                q, _, _ = one(m, d, None, params, 100 + si * 10 + vi, 1, vary_inputs)
                note(m, d, None, params, q)
                res["plain"] = max(res["plain"], q)
                res["plain_by_vary"][vi] = max(res["plain_by_vary"][vi], q)
                if st["on"]:
                    q, _, _ = one(m, d, "structure", params, 200 + si * 10 + vi, st["atol"], vary_inputs)
                    note(m, d, "structure", params, q)
                    res["structure"] = max(res["structure"], q)
                    res["structure_by_vary"][vi] = max(res["structure_by_vary"][vi], q)
            if vals["large"]["scale"] and si in (0, 1):
                q, _, _ = one(m, d, "large", base, 300 + si, vals["large"]["atol"])
                note(m, d, "large", base, q)
                res["large"] = max(res["large"], q)
            if vals["special"]["values"] and si == 0:
                _, nb, ib = one(m, d, "special", base, 400, 1)
                res["special_nan"] += nb
                res["special_inf"] += ib
        except Exception as e:  # noqa: BLE001
            res["errors"].append("%s: %s" % (d, str(e)[:200]))
        torch.cuda.empty_cache()
    return res


def dry_run(args, extra):
    """--dry-run: per problem, what a run would try; no torch, no GPU."""
    only = [s for s in args.only.split(",") if s]
    n = 0
    for suite in args.suites.split(","):
        for path in kcproblems.problem_manifests(args.root, suite):
            m = kcproblems.load_manifest(path)
            if only and not any(m["id"].startswith(o) for o in only):
                continue
            vals = m.get("values")
            if not vals:
                print("%s: no \"values\": skipped" % m["id"])
                continue
            n += 1
            sets, fits = dims_to_try(m, extra.get(m["id"], []), args.max_gb)
            _, varied = varied_params(m)
            st = vals["structure"]
            classes = ["plain"] + (["structure (atol x%g)" % st["atol"]] if st["on"] else [])
            if vals["large"]["scale"]:
                classes.append("large (scale %g, atol x%g)" % (vals["large"]["scale"], vals["large"]["atol"]))
            if vals["special"]["values"]:
                classes.append("special %s" % ",".join(vals["special"]["values"]))
            vin = varied_inputs(m)
            print("%s: %s" % (m["id"], "; ".join(classes)))
            print("    %d dims sets (%s): %s" % (
                len(sets), "default included" if fits else "default left out: --max-gb",
                "; ".join(json.dumps(d, sort_keys=True) for d in sets[:3]) + ("; ..." if len(sets) > 3 else "")))
            print("    params in turn: %s" % (varied if m.get("params") else "none"))
            print("    varied constants (plain and structured runs): %s" % (
                "none" if not vin else "%d (%s)" % (len(vin), ", ".join(vin[:6]) + (", ..." if len(vin) > 6 else ""))
                if args.vary_inputs else "off (--no-vary-inputs)"))
            print("    model: %s" % kcproblems.describe_model(m, sets[0]))
            for line in kcproblems.describe_inputs(m, sets[0]):
                print("    input at small dims: " + line)
    print("dry run: %d problems, nothing run or written" % n)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "problems"))
    ap.add_argument("--suites", default="level1,level2,attention")
    ap.add_argument("--only", default="", help="comma-separated ids or id prefixes")
    ap.add_argument("--sets", default="")
    ap.add_argument("--max-gb", type=float, default=3.0)
    ap.add_argument("--out", default=".")
    ap.add_argument("--verbose", action="store_true", help="print every run past 0.3")
    ap.add_argument("--no-vary-inputs", dest="vary_inputs", action="store_false",
                    help="constant inputs keep their value in every run (default: their \"vary\" in the plain and structured runs)")
    ap.add_argument("--dry-run", action="store_true",
                    help="list what each problem's runs would be (dims sets, value classes, varied params and inputs); no torch, no GPU")
    args = ap.parse_args()
    extra = json.load(open(args.sets)) if args.sets else {}
    if args.dry_run:
        return dry_run(args, extra)
    global VERBOSE, torch
    import torch as torch_module
    torch = torch_module
    VERBOSE = args.verbose
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    only = [s for s in args.only.split(",") if s]
    rows = {}
    t0 = time.time()
    for suite in args.suites.split(","):
        for path in kcproblems.problem_manifests(args.root, suite):
            m = kcproblems.load_manifest(path)
            if only and not any(m["id"].startswith(o) for o in only):
                continue
            t1 = time.time()
            r = calibrate(m, extra.get(m["id"], []), args.max_gb, args.vary_inputs)
            if r is None:
                continue
            rows[m["id"]] = r
            flag = "" if max(r["plain"], r["structure"], r["large"]) < 1 and not r["special_nan"] + r["special_inf"] else "  <--"
            print("%-70s plain %7.3f  struct %7.3f  large %7.3f  special %d/%d  %4.1fs%s%s" % (
                m["id"], r["plain"], r["structure"], r["large"], r["special_nan"], r["special_inf"],
                time.time() - t1, flag, ("  ERR " + r["errors"][0]) if r["errors"] else ""), flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "calibrate_values.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("%d problems in %.0f s" % (len(rows), time.time() - t0))


if __name__ == "__main__":
    sys.exit(main())
