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

It also checks that each launch's threads cover what the kernel is meant to write (COVER, below:
a new kernel needs a line there too): a kernel without a grid-stride loop (the tiled products,
one block per 64x64 tile; the recurrent steps, a warp per hidden unit and a block row per batch
entry) needs grid and block to reach every output element; a grid-stride kernel needs the block
shape it assumes (a multiple of 32 for a warp or block reduction, conv2d_ref's 128 threads) and
the dynamic shared memory it stages (conv2d_ref's chunk, the SSD kernels', NetVLAD's scales);
every launch keeps grid.y and grid.z at most 65535 and grid.x below 2^31. And a split
convolution's two launches come as a pair: conv2d_split_sum right after its conv2d_ref_split, on
the same output, with the same KS and n = B * CO * OH * OW (else some outputs go unsummed, or
conv_part is overwritten before it is read).

    python3 tools/problems/check_level3_bounds.py [--only 10,35] [--bin bin] [--draws 2]
                                                  [--problems DIR]

--problems DIR reads DIR/level3 (with DIR/shared beside it: gen_level3.py --conv-split's
references, say) instead of problems/, and gives kverify the same DIR (KC_PROBLEMS).
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


def conv2d_split(a, g):  # x, w, y, part, then conv2d_ref's B..G, then KS
    acc = conv2d(a[:3] + a[4:20], g)
    KS, n = a[20], a[4] * a[6] * a[9] * a[10]
    return acc if KS == 1 else acc[:2] + [(3, KS * n, "w")]


def split_sum(a, g):  # part, y, n, KS; with KS 1 the conv just before wrote y (it stands for both)
    return ([] if a[3] == 1 else [(0, a[3] * a[2], "r")]) + [(1, a[2], "w")]


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
    "conv2d_ref_split": conv2d_split,
    "conv2d_split_sum": split_sum,
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


# kernel -> function(args, grid, block, dynamic shared memory bytes, #define values) ->
# [(what, needed, launched)]: launched must be at least needed. GRID_STRIDE marks the kernels
# whose every loop over outputs is grid-stride (any grid.x >= 1 covers everything); their rules
# check only what the block or shared memory must be. A kernel in KERNELS and not here is a
# problem (its coverage is unknown).
def tiles(a, g, b, sm, d):  # mm_tile: block (16, 16), C's 64x64 tile (blockIdx.x, blockIdx.y)
    return [("grid.x*64 >= rows", a[3], g[0] * 64), ("grid.y*64 >= cols", a[4], g[1] * 64),
            ("block 16x16", 256, b[0] * b[1] * (b[0] == 16 and b[1] == 16 and b[2] == 1))]


def rnn_step(o):  # a warp per hidden unit j = blockIdx.x*8 + warp (256 threads), batch blockIdx.y
    def f(a, g, b, sm, d):
        B, H = a[7 + o], a[8 + o]
        return [("grid.x*8 >= H", H, g[0] * 8), ("grid.y >= B", B, g[1]),
                ("block 256", 256, b[0] * (b[0] == 256 and b[1] == 1 and b[2] == 1))]
    return f


def warps(a, g, b, sm, d):  # a warp per row, or a block reduction (l3_block_sum): whole warps
    return [("block a multiple of 32, at most 1024", 1, int(b[0] % 32 == 0 and 32 <= b[0] <= 1024 and b[1] == b[2] == 1))]


def conv2d_cover(a, g, b, sm, d):
    KH, KW, SH, SW, DH, DW = a[10], a[11], a[12], a[13], a[16], a[17]
    cc = d.get("CC", 0)
    xr, xc = 7 * SH + (KH - 1) * DH + 1, 63 * SW + (KW - 1) * DW + 1
    return [("block 128", 128, b[0] * (b[0] == 128 and b[1] == b[2] == 1)),
            ("shared memory 12*(CC*KH*KW*16 + CC*XR*XC)", 12 * (cc * KH * KW * 16 + cc * xr * xc), sm),
            ("#define CC", 1, cc)]


def conv2d_split_cover(a, g, b, sm, d):
    """conv2d_cover, and a split count in [1, chunks] (each split at least one chunk)."""
    cig, cc = a[5] // a[19], d.get("CC", 0)
    chunks = ceil_div(cig, cc) if cc else 0
    return conv2d_cover(a[:3] + a[4:20], g, b, sm, d) + [
        ("KS >= 1", 1, a[20]), ("KS <= chunks", a[20], chunks)]


GRID_STRIDE = {"conv2d_ref", "conv2d_ref_split", "conv2d_split_sum", "l3_bias_act_d", "l3_bias_act_f", "l3_bn_stats", "l3_bn_apply", "l3_maxpool2d",
               "l3_avgpool2d", "l3_row_mean", "l3_copy_channels", "l3_copy", "l3_copy_rows", "l3_slice_channels",
               "l3_channel_shuffle", "l3_softmax_rows", "l3_upconv2x2", "l3_state_in", "l3_state_out",
               "l3_split_heads", "l3_causal_rows", "l3_merge_heads", "l3_layernorm", "l3_transpose", "l3_vlad",
               "l3_vlad_normalize", "l3_vit_patches", "l3_vit_embed", "l3_broadcast_rows", "l3_swin_spatial",
               "l3_patch_merge", "l3_qkv_bias", "l3_swin_cpb", "l3_swin_v2_attn", "l3_ssd_y", "l3_ssd_state"}
COVER = {
    "l3_linear_nt": tiles, "l3_matmul_nn": tiles, "matmul_ref": tiles,
    # grid.z is the batch count, which no argument states: its extent is checked with the writes
    "l3_bmm_nt": tiles, "l3_bmm_nn_d": tiles,
    "l3_lstm_step": rnn_step(1), "l3_gru_step": rnn_step(0),
    "conv2d_ref": conv2d_cover, "conv2d_ref_split": conv2d_split_cover,
    "l3_bn_stats": warps, "l3_layernorm": warps, "l3_row_mean": warps, "l3_softmax_rows": warps,
    "l3_causal_rows": warps,
    "l3_vlad_normalize": lambda a, g, b, sm, d: warps(a, g, b, sm, d) + [("shared memory 8*K", 8 * a[4], sm)],
    "l3_ssd_y": lambda a, g, b, sm, d: [("shared memory 8*(T + 2*T*N + T*T)", 8 * (a[6] + 2 * a[6] * a[9] + a[6] * a[6]), sm)],
    "l3_ssd_state": lambda a, g, b, sm, d: [("shared memory 8*(2*T + T*N)", 8 * (2 * a[5] + a[5] * a[8]), sm)],
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


def grid_of(g, env, k=0):
    """grid (k 0) or block (k 1) as 3 integers; k 2: the dynamic shared memory bytes."""
    if k >= len(g):
        return 0 if k == 2 else [1, 1, 1]
    m = re.match(r"^dim3\((.*)\)$", g[k])
    parts = split_args(m.group(1)) if m else [g[k]]
    vals = [kcproblems.eval_dim_expr(p, env) for p in parts]
    if k == 2:
        return vals[0]
    return (vals + [1, 1, 1])[:3]


def defines(cu):
    """{NAME: integer} of the reference's own `#define NAME integer` lines (conv2d_ref's CC)."""
    return {mm.group(1): int(mm.group(2)) for mm in re.finditer(r"^#define\s+(\w+)\s+(\d+)\b", cu, re.M)}


def coverage(m, kernel, vals, gz, block, smem, defs, label, problems):
    """The launch's threads reach every element the kernel writes (COVER, GRID_STRIDE)."""
    what = "%s %s: %s" % (m["id"], label, kernel)
    if not (1 <= gz[0] < 2 ** 31 and 1 <= gz[1] <= 65535 and 1 <= gz[2] <= 65535):
        problems.append("%s: grid %r outside CUDA's limits" % (what, gz))
    if not (1 <= block[0] * block[1] * block[2] <= 1024 and 0 <= smem <= 232448):
        problems.append("%s: block %r or shared memory %d outside the H100's limits" % (what, block, smem))
    if kernel not in COVER and kernel not in GRID_STRIDE:
        problems.append("%s: kernel has no coverage rule (COVER, GRID_STRIDE)" % what)
        return
    for rule, needed, launched in COVER[kernel](vals, gz, block, smem, defs) if kernel in COVER else []:
        if launched < needed:
            problems.append("%s: %s: needs %d, the launch gives %d (grid %r, block %r, shared %d)"
                            % (what, rule, needed, launched, gz, block, smem))


def check(m, cu, dims, label, problems):
    env = dict(dims)
    defs = defines(cu)
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
    pending = []  # the conv2d_ref_split whose partial sums the next launch must add: (y, KS, n, line)

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

    def pair_split(kernel, vals, args):
        """conv2d_ref_split and conv2d_split_sum come in pairs: the sum right after its split, on
        the same y, with the same KS and n = B * CO * OH * OW (else outputs go unsummed, or
        conv_part is overwritten before it is read)."""
        what = "%s %s: %s" % (m["id"], label, kernel)
        if kernel == "conv2d_split_sum":
            if not pending:
                problems.append("%s: no conv2d_ref_split just before it" % what)
                return
            y, ks, n, line = pending.pop()
            got = vals[1]
            if not (isinstance(got, Ptr) and (got.buf, got.base) == (y.buf, y.base)) or vals[3] != ks or vals[2] != n:
                problems.append("%s (%s): y, n, KS = (%s, %r, %r), but the split before it (%s) wrote y %s, n %d, KS %d"
                                % (what, ", ".join(args), args[1], vals[2], vals[3], line, y.buf, n, ks))
            return
        if pending:
            problems.append("%s: launched before the partial sums of %s were added (conv2d_split_sum)" % (what, pending.pop()[3]))
        if kernel == "conv2d_ref_split" and isinstance(vals[2], Ptr):
            pending.append((vals[2], vals[20], vals[4] * vals[6] * vals[9] * vals[10], "conv2d_ref_split(%s)" % ", ".join(args[:3])))

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
        pair_split(kernel, vals, args)
        coverage(m, kernel, vals, gz, grid_of(g, env, 1), grid_of(g, env, 2), defs, label, problems)
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
    if pending:
        problems.append("%s %s: the partial sums of %s are never added" % (m["id"], label, pending[0][3]))


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
    ap.add_argument("--problems", default=os.path.join(ROOT, "problems"))
    args = ap.parse_args()
    os.environ["KC_PROBLEMS"] = os.path.abspath(args.problems)
    only = {int(x) for x in args.only.split(",") if x}
    problems, n = [], 0
    for path in sorted(glob.glob(os.path.join(args.problems, "level3", "*.json"))):
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
