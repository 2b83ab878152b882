#!/usr/bin/env python3
"""gen_level2: writes problems/level2/NNN_name.json (manifest) and NNN_name.cu (reference) for
KernelBench level 2's fused-operator chains from the compact specs in
tools/problems/level2_specs.py.

A spec names the leading op (Linear, Conv2d/3d, ConvTranspose2d/3d), the chain that follows it
as ops of this module (elementwise statements, reductions, softmax, norms, pools), the
parameters, the dims sets and a PyTorch transcription (written by hand, independently of the
chain, so that tools/baselines/crosscheck.py compares two separate readings of the problem). The
reference is a chain of launches: the leading op's shared kernel (problems/shared/) writes
float32 scratch, generated elementwise kernels and the generic kernels of shared/l2_ops.cuh do
the rest in double, and the last kernel writes the float32 output. Each manifest's "hidden" dims
generator (drawn by the verifier at verification time) comes from tools/problems/level2_hidden.py,
its value classes ("values", the params' "vary") from tools/problems/value_classes.py.

    python3 tools/problems/gen_level2.py [--only 1,2,3] [--out problems/level2]
"""
import argparse
import importlib
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kcproblems  # noqa: E402
import level2_hidden  # noqa: E402
from level2_ops import Ew, Linear2, Norm, Pool, Reduce, Reshape, Save, Softmax  # noqa: E402
import value_classes  # noqa: E402

# Macros of the shared convolution headers: generated code must not use these identifiers.
SHARED_MACROS = {"COB", "TX", "TY", "PX", "PY", "CC", "KWF", "R", "NT", "WCAP", "NH", "SMEM_D",
                 "TILE", "A_AT", "B_AT", "LIN_T", "LIN_BK", "PT", "CU", "WT"}
GRID = "min(cdiv(%s, 256), 65536)"


# ---------------------------------------------------------------- helpers

def prod(dims):
    dims = [str(d) for d in dims if str(d) != "1"]
    if not dims:
        return "1"
    return "*".join("(%s)" % d if re.search(r"[-+/%]", d) else d for d in dims)


def evald(expr, dims):
    return kcproblems.eval_dim_expr(str(expr), dims)


class Emitter:
    def __init__(self, spec):
        self.spec = spec
        self.kernels = []   # generated kernel source
        self.launches = []  # launch lines
        self.scratch = []   # (name, dtype, count expr)
        self.n_ew = 0
        self.n_buf = 0
        self.saved = {}     # name -> (buffer, shape)
        self.tensors = {t["name"]: t for t in spec["inputs"]}

    def new_buf(self, shape, dtype="f64"):
        self.n_buf += 1
        name = "t%d" % self.n_buf
        self.scratch.append((name, dtype, prod(shape)))
        return name

    def bcast_index(self, tshape, shape, tag):
        """The index into a tensor of shape tshape broadcast against shape: code over the
        coordinates cK and stride arguments (name, dim expression) the kernel must receive."""
        tshape = [str(d) for d in tshape]
        if tshape == [str(d) for d in shape]:
            return "i", set(), []
        off = len(shape) - len(tshape)
        assert off >= 0, (tshape, shape)
        terms, stride, args = [], [], []
        for k in range(len(tshape) - 1, -1, -1):
            if tshape[k] != "1":
                st = prod(stride)
                if st == "1":
                    terms.append("c%d" % (k + off))
                else:
                    args.append(("st_%s%d" % (tag, k + off), st))
                    terms.append("c%d * st_%s%d" % (k + off, tag, k + off))
                stride.append(tshape[k])
        if not terms:
            return "0", set(), []
        return " + ".join(reversed(terms)), {int(re.match(r"c(\d+)", t).group(1)) for t in terms}, args

    def ew(self, ops, src, src_dtype, shape, out_dtype, dst=None):
        """One kernel for a run of Ew ops; returns (dst buffer, new shape)."""
        self.n_ew += 1
        kname = "ew%d" % self.n_ew
        out_shape = shape
        for op in ops:
            if op.out_shape:
                out_shape = op.out_shape
        coords = set()
        body, params, strides = [], [], []
        refs = []
        if out_shape != shape:
            idx, cs, st = self.bcast_index(shape, out_shape, "src")
            coords |= cs
            strides += st
            read = "(double)src[%s]" % idx
        else:
            read = "(double)src[i]"
        for op in ops:
            stmt = op.stmt
            for name in re.findall(r"\{(\w+)\}", stmt):
                if name in self.saved:
                    buf, bshape = self.saved[name]
                    idx, cs, st = self.bcast_index(bshape, out_shape, name)
                    refs.append((name, buf, "const double *__restrict__ %s" % name))
                else:
                    t = self.tensors[name]
                    idx, cs, st = self.bcast_index(t["shape"], out_shape, name)
                    refs.append((name, name, "const float *__restrict__ %s" % name))
                coords |= cs
                strides += [a for a in st if a not in strides]
                stmt = stmt.replace("{%s}" % name, "(double)%s[%s]" % (name, idx))
            for p in self.spec.get("params", []):
                if re.search(r"\b%s\b" % p["name"], stmt) and p["name"] not in params:
                    params.append(p["name"])
            body.append("        v = %s;" % stmt)
        seen = set()
        decl = ["const %s *__restrict__ src" % ("float" if src_dtype == "f32" else "double"),
                "%s *__restrict__ dst" % ("float" if out_dtype == "f32" else "double"), "long long n"]
        call = [src, None, "%s" % prod(out_shape)]
        for name, buf, d in refs:
            if name not in seen:
                seen.add(name)
                decl.append(d)
                call.append(buf)
        cdecl = []
        for k in sorted(coords):
            decl.append("long long in%d, long long sz%d" % (k, k))
            call.append("%s, %s" % (prod(out_shape[k + 1:]), out_shape[k]))
            cdecl.append("        const long long c%d = i / in%d %% sz%d;" % (k, k, k))
        for arg, expr in strides:
            decl.append("long long %s" % arg)
            call.append(expr)
        for p in params:
            decl.append("double %s" % p)
            call.append(p)
        if dst is None:
            dst = self.new_buf(out_shape, out_dtype)
        call[1] = dst
        src_text = "\n".join([
            "extern \"C\" __global__ void %s(%s)" % (kname, ", ".join(decl)),
            "{",
            "    const long long step = (long long)gridDim.x * blockDim.x;",
            "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {",
        ] + cdecl + ["        double v = %s;" % read] + body + [
            "        dst[i] = (%s)v;" % ("float" if out_dtype == "f32" else "double"),
            "    }",
            "}"])
        self.kernels.append(("// %s" % "; ".join(o.phrase for o in ops if o.phrase), src_text))
        self.launches.append("%s<<<%s, 256>>>(%s);" % (kname, GRID % prod(out_shape), ", ".join(call)))
        return dst, out_shape


def merged(shape, a, b):
    return prod(shape[:a]), prod(shape[a:b]), prod(shape[b:])


def build_reference(spec):
    """Returns (cu text, shape of the output) for a spec."""
    em = Emitter(spec)
    lead = spec["lead"]
    d = dict(spec["dims"]["default"])
    for k, e in spec.get("derived", {}).items():
        d[k] = evald(e, d)
    lines = []
    kind = lead["kind"]
    includes = []
    t0 = "t0"
    shape = lead["out_shape"]
    em.scratch.append(("t0", "f32", prod(shape)))
    if kind == "linear":
        includes.append('#include "shared/linear_ref.cuh"')
        lines.append("linear_ref<<<dim3(min(cdiv(%s, 64), 65535), min(cdiv(%s, 64), 65535)), 256>>>(x, %s, t0, %s, %s, %s);"
                     % (lead["N"], lead["M"], lead["w"], lead["M"], lead["N"], lead["K"]))
    elif kind == "conv2d":
        includes += ["#define CC 4 /* input channels per chunk */", '#include "shared/conv2d_ref.cuh"']
        lines.append("conv2d_ref<<<min(B*cdiv(CO, 16)*cdiv(OW, 64)*cdiv(OH, 8), 1048576), 128, "
                     "12*(4*K*K*16 + 4*(7*S + K)*(63*S + K))>>>(x, weight, t0, B, CI, CO, H, W, OH, OW, K, K, S, S, P, P, 1, 1, 1);")
    elif kind == "conv3d" and lead.get("blocked"):  # register-blocked (level 1's 060): ~10x the direct one
        includes.append('#include "shared/conv3d_blocked_ref.cuh"')
        lines.append("conv3d_ref<<<dim3(min(cdiv(OD*OH*OW, 256)*cdiv(CO, 16), 2147483647), min(B, 65535)), 128>>>(x, weight, t0, B, CI, CO, D, H, W, OD, OH, OW, K, K, K, S, S, S, P, P, P, 1, 1, 1, 1);")
    elif kind == "conv3d":
        includes.append('#include "shared/conv3d_direct_ref.cuh"')
        lines.append("conv3d_ref<<<min(cdiv(B*CO*OD*OH*OW, 256), 65536), 256>>>(x, weight, t0, B, CI, CO, D, H, W, OD, OH, OW, K, K, K, S, S, S, P, P, P, 1, 1, 1, 1);")
    elif kind == "convT2d":
        includes += ["#define KWF %d /* kernel width of the fast path */" % evald("K", d),
                     '#include "shared/conv_transpose2d_ref.cuh"']
        lines.append("conv_transpose2d_ref<<<dim3(min(cdiv(CO, 16)*cdiv(OH*cdiv(OW, 4), 128), 2147483647), min(B, 65535)), 128>>>"
                     "(x, weight, t0, B, CI, CO, H, W, OH, OW, K, K, S, S, P, P, 1, 1, 1);")
    elif kind == "convT3d":
        includes += ["#define COB 16 /* output channels per thread (even) */",
                     '#include "shared/conv_transpose3d_ref.cuh"']
        lines.append("conv_transpose3d_ref<<<min(B*cdiv(CO, 16)*S*S*S*cdiv(cdiv(OD, S)*cdiv(cdiv(OH, S), 4)*cdiv(OW, S), 128), 1048576), 128>>>"
                     "(x, weight, t0, B, CI, CO, D, H, W, OD, OH, OW, K, K, K, S, S, S, P, P, P, 1, 1, 1, 1);")
    else:
        raise ValueError(kind)
    if spec.get("pre"):  # pools on x before the leading op (038); it reads their float32 result
        src, _ = pre_chain(em, spec["pre"], spec["inputs"][0]["shape"])
        for a, b in (("(x, ", "(%s, " % src), (", D, H, W, ", ", %s, " % ", ".join(lead["in_sp"]))):
            assert lines[0].count(a) == 1, (a, lines[0])
            lines[0] = lines[0].replace(a, b)
    em.launches += lines
    includes.append('#include "shared/l2_ops.cuh"')

    cur, cur_dtype = t0, "f32"
    chain = list(spec["chain"])
    if lead.get("bias"):
        bshape = [shape[1]] + ["1"] * (len(shape) - 2) if kind != "linear" else [shape[1]]
        chain.insert(0, Ew("v + {%s}" % lead["bias"], "add the %s bias" % kind.replace("T", "Transpose")))
        em.tensors[lead["bias"]] = dict(em.tensors[lead["bias"]], shape=bshape)
    chain.append(None)
    pending = []
    outname = spec["outputs"][0]["name"]
    for op in chain:
        if isinstance(op, Ew):
            pending.append(op)
            continue
        last = op is None
        wants_f32 = last or isinstance(op, Linear2)
        if pending or last or (cur_dtype == "f32" and not isinstance(op, (Linear2, Reshape))):
            out_dtype = "f32" if wants_f32 else "f64"
            cur, shape = em.ew(pending or [Ew("v", None)], cur, cur_dtype, shape, out_dtype,
                               dst=outname if last else None)
            cur_dtype, pending = out_dtype, []
        if last:
            break
        if isinstance(op, Save):
            em.saved[op.name] = (cur, list(shape))
        elif isinstance(op, Reshape):
            shape = list(op.shape)
        elif isinstance(op, Reduce):
            o, r, n = merged(shape, op.a, op.b)
            new = shape[:op.a] + (["1"] * (op.b - op.a) if op.keepdim else []) + shape[op.b:]
            dst = em.new_buf(new)
            block = evald(r, d) >= 256 and evald(o, d) * evald(n, d) < 65536 * 4
            kname = "l2_reduce_mid_block" if block else "l2_reduce_mid"
            grid = "min(%s, 1048576)" % prod([o, n]) if block else GRID % prod([o, n])
            em.launches.append("%s<<<%s, %d>>>(%s, %s, %s, %s, %s, %d);" % (
                kname, grid, 256, cur, dst, o, r, n, Reduce.KINDS[op.kind]))
            cur, shape = dst, new
        elif isinstance(op, Softmax):
            o, r, n = merged(shape, op.a, op.b)
            dst = em.new_buf(shape)
            block = evald(r, d) >= 256
            kname = "l2_softmax_mid_block" if block else "l2_softmax_mid"
            grid = "min(%s, 1048576)" % prod([o, n]) if block else GRID % prod([o, n])
            em.launches.append("%s<<<%s, 256>>>(%s, %s, %s, %s, %s);" % (kname, grid, cur, dst, o, r, n))
            cur = dst
        elif isinstance(op, Pool):
            cur, shape = em_pool(em, op, cur, shape)
        elif isinstance(op, Norm):
            if op.kind == "batch":
                st = em.new_buf(["2", shape[1]])
                em.launches.append("l2_chan_stats<<<min(%s, 65536), 1024>>>(%s, %s, %s, %s, %s);" % (
                    shape[1], cur, st, shape[0], shape[1], prod(shape[2:])))
            else:
                if op.kind == "group":
                    rows, L = "%s*%s" % (shape[0], op.groups), prod(["%s/%s" % (shape[1], op.groups)] + shape[2:])
                elif op.kind == "instance":
                    rows, L = prod(shape[:2]), prod(shape[2:])
                else:  # layer over the last dim
                    rows, L = prod(shape[:-1]), shape[-1]
                st = em.new_buf(["2", rows])
                threads = 32 if evald(L, d) <= 1024 else 256
                em.launches.append("l2_row_stats<<<min(%s, 1048576), %d>>>(%s, %s, %s, %s);" % (
                    rows, threads, cur, st, rows, L))
            cur, shape = em_norm(em, op, st, cur, shape)
        elif isinstance(op, Linear2):
            dst = em.new_buf([shape[0], op.n_dim], "f32")
            em.launches.append("linear_ref<<<dim3(min(cdiv(%s, 64), 65535), min(cdiv(%s, 64), 65535)), 256>>>(%s, %s, %s, %s, %s, %s);"
                               % (op.n_dim, shape[0], cur, op.w, dst, shape[0], op.n_dim, shape[1]))
            cur, cur_dtype, shape = dst, "f32", [shape[0], op.n_dim]
            pending.append(Ew("v + {%s}" % op.b, "add the second Linear's bias"))
            em.tensors[op.b] = dict(em.tensors[op.b], shape=[op.n_dim])
            continue
        if not isinstance(op, (Save, Reshape)):
            cur_dtype = "f64"
    return em, includes, shape


def em_pool(em, op, cur, shape):
    """Max/avg pool (no padding, floor) over the last len(op.k) dims, in double."""
    nd = len(op.k)
    sp = shape[-nd:]
    outsp = ["(%s - %s)/%s + 1" % (sp[j], op.k[j], op.s[j]) for j in range(nd)]
    new = shape[:-nd] + outsp
    dst = em.new_buf(new)
    k3 = ["1"] * (3 - nd) + list(op.k)
    s3 = ["1"] * (3 - nd) + list(op.s)
    i3 = ["1"] * (3 - nd) + sp
    o3 = ["1"] * (3 - nd) + outsp
    em.launches.append("l2_pool3d<<<%s, 256>>>(%s, %s, %s, %s, %s, %s, %s, %s);" % (
        GRID % prod(new), cur, dst, prod(shape[:-nd]), ", ".join(i3), ", ".join(o3),
        ", ".join(k3), ", ".join(s3), 2 if op.kind == "max" else 1))
    return dst, new


def pre_chain(em, ops, x_shape):
    """Pools on the input x before the leading op: x to double, the pools in double, then one
    rounding to float32, the tensor the leading op reads (as PyTorch's float32 pool output)."""
    cur, shape = em.ew([Ew("v", "x to double (for the pools before the leading op)")], "x", "f32", x_shape, "f64")
    for op in ops:
        assert isinstance(op, Pool), op
        cur, shape = em_pool(em, op, cur, shape)
    return em.ew([Ew("v", "the pooled x as float32, the leading op's input")], cur, "f64", shape, "f32")


def em_norm(em, op, st, cur, shape):
    """(x - mean) / sqrt(var + eps) [* weight + bias] as a generated elementwise kernel."""
    em.n_ew += 1
    kname = "ew%d" % em.n_ew
    n = prod(shape)
    decl = ["const double *__restrict__ src", "double *__restrict__ dst", "long long n",
            "const double *__restrict__ stats", "double eps"]
    call = [cur, None, n, st, op.eps]
    if op.kind == "batch":
        sidx, inner = "c1", prod(shape[2:])
        pre = ["        const long long c1 = i / in1 % sz1;"]
        decl.append("long long in1, long long sz1")
        call.append("%s, %s" % (inner, shape[1]))
        widx = "c1"
    elif op.kind == "group":
        L = prod(["%s/%s" % (shape[1], op.groups)] + shape[2:])
        pre = ["        const long long row = i / L, c1 = i / in1 % sz1;"]
        decl.append("long long L, long long in1, long long sz1")
        call.append("%s, %s, %s" % (L, prod(shape[2:]), shape[1]))
        sidx, widx = "row", "c1"
    elif op.kind == "instance":
        L = prod(shape[2:])
        pre = ["        const long long row = i / L, c1 = i / L % sz1;"]
        decl.append("long long L, long long sz1")
        call.append("%s, %s" % (L, shape[1]))
        sidx, widx = "row", "c1"
    else:
        L = shape[-1]
        pre = ["        const long long row = i / L, c1 = i % L;"]
        decl.append("long long L")
        call.append(L)
        sidx, widx = "row", "c1"
    aff = ""
    if op.weight:
        decl.append("const float *__restrict__ weight_")
        call.append(op.weight)
        aff = " * (double)weight_[%s]" % widx
    badd = ""
    if op.bias:
        decl.append("const float *__restrict__ bias_")
        call.append(op.bias)
        badd = " + (double)bias_[%s]" % widx
    dst = em.new_buf(shape)
    call[1] = dst
    src = "\n".join([
        "extern \"C\" __global__ void %s(%s)" % (kname, ", ".join(decl)),
        "{",
        "    const long long step = (long long)gridDim.x * blockDim.x;",
        "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {",
    ] + pre + [
        "        const double mean = stats[2 * %s], var = stats[2 * %s + 1];" % (sidx, sidx),
        "        dst[i] = (src[i] - mean) / sqrt(var + eps)%s%s;" % (aff, badd),
        "    }",
        "}"])
    em.kernels.append(("// %s" % op.phrase, src))
    em.launches.append("%s<<<%s, 256>>>(%s);" % (kname, GRID % n, ", ".join(call)))
    return dst, shape


# ---------------------------------------------------------------- manifest

def dims_of(spec, which):
    return spec["dims"][which]


def emit(spec, outdir):
    em, includes, out_shape = build_reference(spec)
    name = "%03d_%s" % (spec["id"], spec["name"])
    pid = "level2/" + name
    lead = spec["lead"]
    # reference text
    # The first line keeps the paths of the day the references were written (tools/gen_level2.py,
    # tools/<specs_file>): references are stored by their sha256, so their text does not change.
    head = ["// Reference for %s (generated by tools/gen_level2.py from tools/%s: edit" % (pid, spec.get("specs_file", "level2_specs.py")),
            "// the spec, not this file). %s" % spec["title"],
            "// Leading op: shared kernel, float32 scratch t0 (exact products, double sums). Then the",
            "// chain in double: generated elementwise kernels below and shared/l2_ops.cuh.",
            ] + includes + [""]
    body = []
    for comment, src in em.kernels:
        if comment:
            body.append(comment)
        body.append(src)
        body.append("")
    tail = ["// @scratch %s %s[%s]" % s for s in em.scratch if s[0] not in [o["name"] for o in spec["outputs"]]]
    tail += ["// @launch " + l for l in em.launches]
    cu = "\n".join(head + body + tail) + "\n"
    for ident in set(re.findall(r"\b[A-Za-z_]\w*\b", "\n".join(s for _, s in em.kernels))):
        if ident in SHARED_MACROS:
            raise ValueError("%s: generated code uses %s, a macro of a shared header" % (pid, ident))
    m = {
        "format": "kc-problem v1",
        "id": pid,
        "title": spec["title"],
        "level": 2,
        "kernelbench": {"level": 2, "problem_id": spec["id"], "name": spec["kb_name"]},
        "description": spec["description"],
        "torch_reference": spec["torch"],
        "dims": spec["dims"],
    }
    if spec.get("derived"):
        m["derived"] = spec["derived"]
    m["hidden"] = level2_hidden.hidden_for(spec)
    m["inputs"] = spec["inputs"]
    m["outputs"] = spec["outputs"]
    decl = value_classes.level2(spec)
    if spec.get("params"):
        m["params"] = [dict(p, **decl["vary"][p["name"]]) for p in spec["params"]]
    m["values"] = decl["values"]
    m["tolerance"] = spec["tolerance"]
    m["bytes"] = spec["bytes"]
    m["flops"] = spec["flops"]
    m["reference"] = name + ".cu"
    if spec.get("degenerate"):
        m["degenerate"] = spec["degenerate"]
    with open(os.path.join(outdir, name + ".json"), "w") as f:
        f.write(dump_manifest(m))
    with open(os.path.join(outdir, name + ".cu"), "w") as f:
        f.write(cu)
    return pid


def dump_manifest(m):
    """JSON with one line per tensor and dims set (as the level-1 manifests are laid out)."""
    out = ["{"]
    keys = list(m)
    for i, k in enumerate(keys):
        sep = "," if i < len(keys) - 1 else ""
        v = m[k]
        if k == "dims":
            alts = ",\n".join("      " + json.dumps(a) for a in v["alt"])
            out.append('  "dims": {\n    "default": %s,\n    "small": %s,\n    "alt": [\n%s\n    ]\n  }%s'
                       % (json.dumps(v["default"]), json.dumps(v["small"]), alts, sep))
        elif k == "hidden":  # one line per drawn dim, then require, caps and why
            lines = ["    %s: %s" % (json.dumps(n), json.dumps(g)) for n, g in v["dims"].items()]
            rest = ["    %s: %s" % (json.dumps(f), json.dumps(v[f])) for f in v if f != "dims"]
            out.append('  "hidden": {\n    "dims": {\n%s\n    },\n%s\n  }%s'
                       % (",\n".join("  " + l for l in lines), ",\n".join(rest), sep))
        elif k == "values":  # one line per value class
            lines = ["    %s: %s" % (json.dumps(c), json.dumps(v[c])) for c in v]
            out.append('  "values": {\n%s\n  }%s' % (",\n".join(lines), sep))
        elif k in ("inputs", "outputs", "params"):
            items = ",\n".join("    " + json.dumps(t) for t in v)
            out.append('  "%s": [\n%s\n  ]%s' % (k, items, sep))
        else:
            out.append("  %s: %s%s" % (json.dumps(k), json.dumps(v), sep))
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "problems", "level2"))
    args = ap.parse_args()
    sys.modules.setdefault("gen_level2", sys.modules[__name__])  # the specs import these classes
    specs = {}
    for spec in importlib.import_module("level2_specs").SPECS:
        specs[spec["id"]] = dict(spec)
    os.makedirs(args.out, exist_ok=True)
    only = {int(x) for x in args.only.split(",") if x}
    n = 0
    for spec in sorted(specs.values(), key=lambda s: s["id"]):
        if only and spec["id"] not in only:
            continue
        emit(spec, args.out)
        n += 1
    print("gen_level2: wrote %d problems to %s" % (n, os.path.normpath(args.out)))


if __name__ == "__main__":
    main()
