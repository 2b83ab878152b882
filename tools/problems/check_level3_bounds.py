#!/usr/bin/env python3
"""check_level3_bounds: a CPU check of the level-3 references' memory extents, which no GPU has
run yet. For each reference it expands the launch schedule (loops, offsets, views) under every
fixed dims set (default, small, alt) and, with --bin, a few drawn ones, and checks that every
pointer argument of every launch covers what the kernel reads or writes there: inside its buffer
(an input, an output, a scratch buffer), inside its view for a view of the packed parameters,
and never a write to an input; and that every layer point ("// @layer NAME BUF[INDEX]
DTYPE[COUNT]") names a region of a scratch buffer or an output, of its dtype, inside it, and
written by the launch just before it (the region is what that launch wrote). The extents per kernel are those of problems/shared/l3_*.cuh and
the level-1/2 kernels the references launch (a table below: a new kernel needs a line).

    python3 tools/problems/check_level3_bounds.py [--only 10,35] [--bin bin] [--draws 2]
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kcproblems  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SIZE = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "u8": 1, "bool": 1}


def ceil_div(a, b):
    return -(-a // b)


# kernel -> function(args as evaluated: ints for integers, (buffer) pointers as Ptr, grid) ->
# [(argument index, elements touched from the pointer, "r" or "w")]
def conv2d(a, g):  # x, w, y, B, CI, CO, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G
    B, CI, CO, H, W, OH, OW, KH, KW, G = a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[18]
    return [(0, B * CI * H * W, "r"), (1, CO * (CI // G) * KH * KW, "r"), (2, B * CO * OH * OW, "w")]


def lstm_like(G):
    def f(a, g):  # gx, whh, bih, bhh, h_in, h_out, [c,] out, B, H, t, sb, st, ld, off
        o = 1 if G == 4 else 0
        B, H, t, sb, st, ld, off = a[7 + o:14 + o]
        rows = (B - 1) * sb + t * st + 1
        acc = [(0, rows * G * H, "r"), (1, G * H * H, "r"), (2, G * H, "r"), (3, G * H, "r"),
               (4, B * H, "r"), (5, B * H, "w"), (6 + o, (rows - 1) * ld + off + H, "w")]
        if o:
            acc.append((6, B * H, "w"))
        return acc
    return f


def bmm(kind):
    def f(a, g):
        z = g[2]
        rows, cols, inner = a[3], a[4], a[5]
        if kind == "nt":
            return [(0, z * rows * inner, "r"), (1, z * cols * inner, "r"), (2, z * rows * cols, "w")]
        return [(0, z * rows * inner, "r"), (1, z * inner * cols, "r"), (2, z * rows * cols, "w")]
    return f


KERNELS = {
    "conv2d_ref": conv2d,
    "l3_linear_nt": lambda a, g: [(0, a[3] * a[5], "r"), (1, a[4] * a[5], "r"), (2, a[3] * a[4], "w")],
    "l3_matmul_nn": lambda a, g: [(0, a[3] * a[5], "r"), (1, a[5] * a[4], "r"), (2, a[3] * a[4], "w")],
    "l3_bias_act_d": lambda a, g: [(0, a[4], "r"), (1, a[6], "r"), (2, a[4], "r"), (3, a[4], "w")],
    "l3_bias_act_f": lambda a, g: [(0, a[4], "r"), (1, a[6], "r"), (2, a[4], "r"), (3, a[4], "w")],
    "l3_bn_stats": lambda a, g: [(0, ((a[2] - 1) * a[5] + a[3]) * a[4], "r"), (1, 2 * a[3], "w")],
    "l3_bn_apply": lambda a, g: [(0, ((a[6] // (a[7] * a[8]) - 1) * a[9] + a[7]) * a[8], "r"), (1, 2 * a[7], "r"),
                                 (2, a[7], "r"), (3, a[7], "r"), (4, a[6], "r"), (5, a[6], "w")],
    "l3_maxpool2d": lambda a, g: [(0, a[2] * a[3] * a[4], "r"), (1, a[2] * a[5] * a[6], "w")],
    "l3_avgpool2d": lambda a, g: [(0, a[2] * a[3] * a[4], "r"), (1, a[2] * a[5] * a[6], "w")],
    "l3_row_mean": lambda a, g: [(0, a[2] * a[3], "r"), (1, a[2], "w")],
    "l3_copy_channels": lambda a, g: [(0, a[2] * a[3] * a[4], "r"), (1, a[2] * a[5] * a[4], "w")]
    + ([(1, 10 ** 18, "w")] if a[6] + a[3] > a[5] else []),
    "l3_slice_channels": lambda a, g: [(0, a[2] * a[3] * a[4], "r"), (1, a[2] * a[5] * a[4], "w")]
    + ([(0, 10 ** 18, "r")] if a[6] + a[5] > a[3] else []),
    "l3_copy": lambda a, g: [(0, a[2], "r"), (1, a[2], "w")],
    "l3_copy_rows": lambda a, g: [(0, (a[2] - 1) * a[4] + a[3] if a[2] else 0, "r"), (1, a[2] * a[3], "w")],
    "l3_channel_shuffle": lambda a, g: [(0, a[2] * a[3] * a[4], "r"), (1, a[2] * a[3] * a[4], "w")],
    "l3_softmax_rows": lambda a, g: [(0, a[2] * a[3], "r"), (1, a[2] * a[4], "w")],
    "l3_upconv2x2": lambda a, g: [(0, a[4] * a[5] * a[7] * a[8], "r"), (1, a[5] * a[6] * 4, "r"), (2, a[6], "r"),
                                  (3, a[4] * a[6] * 4 * a[7] * a[8], "w")],
    "l3_state_in": lambda a, g: [(0, a[2], "r"), (1, a[2], "w")],
    "l3_state_out": lambda a, g: [(0, a[2], "r"), (1, a[2], "w")],
    "l3_lstm_step": lstm_like(4),
    "l3_gru_step": lstm_like(3),
    "l3_split_heads": lambda a, g: [(0, a[4] * a[5] * 3 * a[6], "r")] + [(i, a[4] * a[5] * a[6], "w") for i in (1, 2, 3)],
    "l3_bmm_nt": bmm("nt"),
    "l3_bmm_nn_d": bmm("nn"),
    "l3_causal_rows": lambda a, g: [(0, a[1] * a[2], "w")],
    "l3_merge_heads": lambda a, g: [(0, a[2] * a[3] * a[4], "r"), (1, a[2] * a[3] * a[4], "w")],
    "l3_layernorm": lambda a, g: [(0, a[4] * a[5], "r"), (1, a[5], "r"), (2, a[5], "r"), (3, a[4] * a[5], "w")],
    "l3_transpose": lambda a, g: [(0, a[2] * a[3] * a[4], "r"), (1, a[2] * a[3] * a[4], "w")],
    "l3_vlad": lambda a, g: [(0, a[4] * a[5] * a[7], "r"), (1, a[4] * a[5] * a[6], "r"), (2, a[6] * a[7], "r"),
                             (3, a[4] * a[6] * a[7], "w")],
    "l3_vlad_normalize": lambda a, g: [(0, a[2] * a[3] * a[4], "r"), (1, a[2] * a[3] * a[4], "w")],
    "l3_vit_patches": lambda a, g: [(0, a[2] * a[3] * a[4] * a[4], "r"), (1, a[2] * a[3] * a[4] * a[4], "w")],
    "l3_vit_embed": lambda a, g: [(0, a[4] * (a[5] - 1) * a[6], "r"), (1, a[6], "r"), (2, a[5] * a[6], "r"),
                                  (3, a[5] * a[4] * a[6], "w")],
    "l3_broadcast_rows": lambda a, g: [(0, a[3], "r"), (1, (a[2] - 1) * a[4] + a[3] if a[2] else 0, "w")],
    "l3_swin_spatial": lambda a, g: [(0, a[5] * a[6] * a[7] * a[8], "r"), (1, a[9] * a[10] ** 2 * a[10] ** 2, "r"),
                                     (2, a[9] * a[10] ** 2, "r"), (3, a[5] * a[6] * a[7] * a[8], "r"),
                                     (4, a[5] * a[6] * a[7] * a[8], "w")],
    "l3_patch_merge": lambda a, g: [(0, a[2] * a[3] * a[4] * a[5], "r"), (1, a[2] * (a[3] // 2) * (a[4] // 2) * 4 * a[5], "w")],
    "l3_qkv_bias": lambda a, g: [(0, a[4] * 3 * a[5], "r"), (1, a[5], "r"), (2, a[5], "r"), (3, a[4] * 3 * a[5], "w")],
    "l3_swin_cpb": lambda a, g: [(0, 1024, "r"), (1, 512, "r"), (2, a[5] * 512, "r"), (3, (2 * a[4] - 1) ** 2 * a[5], "w")],
    "l3_swin_v2_attn": lambda a, g: [(0, a[4] * a[5] * a[6] * 3 * a[7], "r"), (1, (2 * a[9] - 1) ** 2 * a[8], "r"),
                                     (2, a[8], "r"), (3, a[4] * a[5] * a[6] * a[7], "w")],
    "l3_ssd_y": lambda a, g: [(0, a[5] * a[6] * a[7] * a[8], "r"), (1, a[5] * a[6] * a[7], "r"),
                              (2, a[5] * a[6] * a[7] * a[9], "r"), (3, a[5] * a[6] * a[7] * a[9], "r"),
                              (4, a[5] * a[6] * a[7] * a[8], "w")],
    "l3_ssd_state": lambda a, g: [(0, a[4] * a[5] * a[6] * a[7], "r"), (1, a[4] * a[5] * a[6], "r"),
                                  (2, a[4] * a[5] * a[6] * a[8], "r"), (3, a[4] * a[6] * a[7] * a[8], "w")],
}


class Ptr:
    def __init__(self, buf, base, limit, view=None):
        self.buf, self.base, self.limit, self.view = buf, base, limit, view


def split_args(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse(cu):
    """[("scratch", name, dtype, count) | ("launch", kernel, grid, args) | ("for", var, a, b) | ("end",)
    | ("layer", name, buffer, index, dtype, count)]"""
    steps = []
    for line in cu.splitlines():
        m = re.match(r"^//\s*@(\w+)\s*(.*)$", line)
        if not m:
            continue
        word, rest = m.group(1), m.group(2).strip()
        if word == "scratch":
            sm = re.match(r"(\w+)\s+(\w+)\[(.*)\]$", rest)
            steps.append(("scratch", sm.group(1), sm.group(2), sm.group(3)))
        elif word == "launch":
            lm = re.match(r"(\w+)<<<(.*)>>>\((.*)\);?$", rest)
            steps.append(("launch", lm.group(1), split_args(lm.group(2)), split_args(lm.group(3))))
        elif word == "for":
            fm = re.match(r"(\w+)\s+in\s+(.*)\.\.(.*)$", rest)
            steps.append(("for", fm.group(1), fm.group(2), fm.group(3)))
        elif word == "end":
            steps.append(("end",))
        elif word == "layer":
            ym = re.match(r"(\S+)\s+(\w+)\[(.*)\]\s+(\w+)\[(.*)\]$", rest)
            steps.append(("layer",) + ym.groups())
    return steps


def grid_of(g, env):
    m = re.match(r"^dim3\((.*)\)$", g[0])
    parts = split_args(m.group(1)) if m else [g[0]]
    vals = [kcproblems.eval_dim_expr(p, env) for p in parts] + [1, 1, 1]
    return vals[:3]


def check(m, cu, dims, label, problems):
    env = dict(dims)
    bufs = {}
    for t in m["inputs"]:
        n = kcproblems.numel(kcproblems.shape_of(t, env))
        bufs[t["name"]] = (n, "input")
    views = {}
    for t in m["inputs"]:
        if "views" in t:
            layout, _ = kcproblems.view_layout(t, env)
            for v, off, n in layout:
                views[v["name"]] = (t["name"], off, n)
    for t in m["outputs"]:
        bufs[t["name"]] = (kcproblems.numel(kcproblems.shape_of(t, env)), "output")
    steps = parse(cu)
    dtypes = {t["name"]: t["dtype"] for t in m["inputs"] + m["outputs"]}
    for s in steps:
        if s[0] == "scratch":
            bufs[s[1]] = (kcproblems.eval_dim_expr(s[3], env), "scratch")
            dtypes[s[1]] = s[2]
    written = []  # (buffer, first, end) the last launch wrote

    def ptr(arg, env):
        mm = re.match(r"^(\w+)\[(.*)\]$", arg)
        name, idx = (mm.group(1), kcproblems.eval_dim_expr(mm.group(2), env)) if mm else (arg, 0)
        if name in views:
            buf, off, n = views[name]
            return Ptr(buf, off + idx, off + n, name)
        if name in bufs:
            return Ptr(name, idx, bufs[name][0])
        return None

    def run(lst, env):
        i = 0
        while i < len(lst):
            s = lst[i]
            if s[0] == "for":
                depth, j = 0, i
                while True:  # the matching @end
                    j += 1
                    if lst[j][0] == "for":
                        depth += 1
                    elif lst[j][0] == "end":
                        if depth == 0:
                            break
                        depth -= 1
                for v in range(kcproblems.eval_dim_expr(s[2], env), kcproblems.eval_dim_expr(s[3], env)):
                    run(lst[i + 1:j], dict(env, **{s[1]: v}))
                i = j + 1
                continue
            if s[0] == "launch":
                launch(s, env)
            elif s[0] == "layer":
                layer(s, env)
            i += 1

    def layer(s, env):
        name, buf, index, dtype, count = s[1:]
        what = "%s %s: @layer %s" % (m["id"], label, name)
        if buf not in bufs or bufs[buf][1] == "input":
            problems.append("%s: %s is not a scratch buffer or an output" % (what, buf))
            return
        if dtypes[buf] != dtype:
            problems.append("%s: %s is %s, not %s" % (what, buf, dtypes[buf], dtype))
        first, n = kcproblems.eval_dim_expr(index, env), kcproblems.eval_dim_expr(count, env)
        if first < 0 or n < 1 or first + n > bufs[buf][0]:
            problems.append("%s: [%d, %d) is not inside %s (%d elements)" % (what, first, first + n, buf, bufs[buf][0]))
        if not any(b == buf and lo <= first and first + n <= hi for b, lo, hi in written):
            problems.append("%s: [%d, %d) of %s was not written by the launch before it (%r)" % (what, first, first + n, buf, written))

    def launch(s, env):
        kernel, g, args = s[1], s[2], s[3]
        if kernel not in KERNELS:
            problems.append("%s %s: kernel %s has no extents in the table" % (m["id"], label, kernel))
            return
        vals = []
        for a in args:
            p = ptr(a, env)
            if p is not None:
                vals.append(p)
            elif re.match(r"^-?\d+\.\d*(e-?\d+)?$|^\d+e-?\d+$", a):
                vals.append(float(a))
            else:
                vals.append(kcproblems.eval_dim_expr(a, env))
        gz = grid_of(g, env)
        del written[:]
        for idx, count, mode in KERNELS[kernel](vals, gz):
            p = vals[idx]
            if not isinstance(p, Ptr):
                if p == 0 and mode == "r":
                    continue  # a NULL bias or residual
                problems.append("%s %s: %s argument %d is not a buffer (%r)" % (m["id"], label, kernel, idx + 1, args[idx]))
                continue
            if count > 0 and (p.base < 0 or p.base + count > p.limit):
                what = "view %s" % p.view if p.view else p.buf
                problems.append("%s %s: %s argument %d (%s) touches [%d, %d) of %s, which has %d"
                                % (m["id"], label, kernel, idx + 1, args[idx], p.base, p.base + count, what, p.limit))
            if mode == "w" and not p.view:
                written.append((p.buf, p.base, p.base + count))
            if mode == "w" and count > 0 and bufs.get(p.buf, (0, ""))[1] == "input":
                problems.append("%s %s: %s writes input %s (argument %d)" % (m["id"], label, kernel, p.buf, idx + 1))

    run([s for s in steps if s[0] != "scratch"], env)


def signatures(src):
    """{kernel: [parameter declarations]} of the extern "C" __global__ functions in src."""
    out = {}
    for mm in re.finditer(r'extern\s+"C"\s+__global__\s+(?:void\s+)?(?:__launch_bounds__\([^)]*\)\s*)?(?:void\s+)?(\w+)\s*\(([^)]*)\)', src):
        out[mm.group(1)] = [p.strip() for p in mm.group(2).split(",") if p.strip()]
    return out


def check_signatures(m, src, problems):
    """Every launch passes as many arguments as its kernel takes, pointers to pointer parameters
    (a tensor, a view, NAME[INDEX], or 0), floating literals to floating ones, integers to
    integer ones."""
    sigs = signatures(src)
    names = {t["name"] for t in m["inputs"] + m["outputs"]}
    for t in m["inputs"]:
        names |= {v["name"] for v in t.get("views", [])}
    for step in parse(src):
        if step[0] == "scratch":
            names.add(step[1])
    for step in parse(src):
        if step[0] != "launch":
            continue
        kernel, args = step[1], step[3]
        if kernel not in sigs:
            problems.append("%s: kernel %s is not an extern \"C\" __global__ function" % (m["id"], kernel))
            continue
        params = sigs[kernel]
        if len(params) != len(args):
            problems.append("%s: %s takes %d parameters, the launch passes %d" % (m["id"], kernel, len(params), len(args)))
            continue
        for i, (p, a) in enumerate(zip(params, args)):
            is_ptr = "*" in p
            is_float = re.search(r"\b(double|float)\b", p) and not is_ptr
            a_ptr = re.match(r"^(\w+)(\[.*\])?$", a) and re.match(r"^(\w+)", a).group(1) in names
            a_float = re.match(r"^-?\d+\.\d*(e-?\d+)?$|^\d+e-?\d+$", a)
            if is_ptr and not (a_ptr or a == "0"):
                problems.append("%s: %s parameter %d (%s) is a pointer, the launch passes %s" % (m["id"], kernel, i + 1, p, a))
            elif is_float and not a_float:
                problems.append("%s: %s parameter %d (%s) is floating, the launch passes %s" % (m["id"], kernel, i + 1, p, a))
            elif not is_ptr and not is_float and (a_ptr or a_float):
                problems.append("%s: %s parameter %d (%s) is an integer, the launch passes %s" % (m["id"], kernel, i + 1, p, a))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="")
    ap.add_argument("--bin", default="", help="a build's bin/ (kverify problems --draw: drawn dims sets too)")
    ap.add_argument("--draws", type=int, default=2)
    args = ap.parse_args()
    only = {int(x) for x in args.only.split(",") if x}
    problems, n = [], 0
    for path in sorted(glob.glob(os.path.join(ROOT, "problems", "level3", "*.json"))):
        m = kcproblems.load_manifest(path)
        if only and m["kernelbench"]["problem_id"] not in only:
            continue
        with open(path[:-5] + ".cu") as f:
            cu = f.read()
        if args.bin:  # the reference as the verifier sees it, shared files expanded
            src = subprocess.run([os.path.join(args.bin, "kverify"), "problems", "--show-reference", m["id"]],
                                 capture_output=True, text=True, check=True).stdout
            check_signatures(m, src, problems)
        sets = kcproblems.dims_sets(m)
        if args.bin:
            for seed in range(args.draws):
                out = subprocess.run([os.path.join(args.bin, "kverify"), "problems", "--draw", m["id"], "--seed",
                                      str(seed), "--count", "2"], capture_output=True, text=True, check=True)
                for line in out.stdout.splitlines():
                    d = json.loads(line)
                    sets.append(("drawn(seed %d, index %d)" % (d["seed"], d["index"]), d["dims"]))
        for label, dims in sets:
            check(m, cu, dims, label, problems)
        n += 1
    for p in problems:
        print(p)
    print("check_level3_bounds: %d references, %d problems found" % (n, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
