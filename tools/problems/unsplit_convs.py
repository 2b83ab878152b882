#!/usr/bin/env python3
"""unsplit_convs: rewrites a level-3 reference (kverify problems --show-reference ID) whose
convolutions run split over their input channels (gen_level3.py --conv-split) so that every
convolution runs unsplit: each `conv2d_ref_split` launch becomes the `conv2d_ref` launch of the
same convolution and the `conv2d_split_sum` launch after it goes. On a split reference this
gives back the committed reference's launch lines exactly (tests/cli/test_conv_split.sh checks
it: the split launches are the committed ones plus the partial-sum buffer and the split count).
With --drop-sum N it keeps the splits and drops only the N-th sum launch (0-based): that layer's
output is then never written where its split count exceeds 1, a control the verifier must label
wrong (tests/gpu/test_conv_split.sh). With --gemm every ungrouped convolution, split or not,
becomes a `conv2d_gemm_ref` launch (problems/shared/conv2d_gemm_ref.cuh, the implicit product on
the FP64 tensor cores, pasted in before the launch lines, with matmul_tiled_ref.cuh when the
reference lacks it): verified as a candidate, it says whether that experimental kernel is right
and how its time compares with the reference's (docs/LEVEL3.md).

    python3 tools/problems/unsplit_convs.py REFERENCE.cu OUT.cu [--drop-sum N | --gemm]

Prints how many launches it rewrote (or dropped); exits 1 when the reference has none."""
import argparse
import os
import re
import sys

SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "problems", "shared")
SPLIT = re.compile(r"^// (\s*)@launch conv2d_ref_split<<<(.*)>>>\((.*)\);$")
PLAIN = re.compile(r"^// (\s*)@launch conv2d_ref<<<(.*)>>>\((.*)\);$")
SUM = re.compile(r"^// \s*@launch conv2d_split_sum<<<.*>>>\(.*\);$")


def top_level(text, sep):
    """text split at sep where no parenthesis is open."""
    out, depth, cur = [], 0, ""
    i = 0
    while i < len(text):
        ch = text[i]
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and text.startswith(sep, i):
            out.append(cur.strip())
            cur, i = "", i + len(sep)
            continue
        cur += ch
        i += 1
    out.append(cur.strip())
    return out


def strip_parens(text):
    """text without parentheses that enclose all of it (the split launch's "(TILES)")."""
    if text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, ch in enumerate(text):
            depth += (ch == "(") - (ch == ")")
            if depth == 0 and i < len(text) - 1:
                return text
        return text[1:-1]
    return text


def unsplit_line(indent, config, args):
    """The conv2d_ref launch of a conv2d_ref_split launch: its grid without the split factor,
    its arguments without the partial-sum buffer (4th) and the split count (last)."""
    grid, block, smem = top_level(config, ",")
    m = re.match(r"^min\((.*)\)$", grid)
    product, cap = top_level(m.group(1), ",")
    tiles = strip_parens(top_level(product, "*")[0])  # "(TILES)*(KS)"
    a = top_level(args, ",")
    a = a[:3] + a[4:-1]
    return "// %s@launch conv2d_ref<<<min(%s, %s), %s, %s>>>(%s);" % (indent, tiles, cap, block, smem, ", ".join(a))


def gemm_line(indent, args):
    """The conv2d_gemm_ref launch of a convolution with conv2d_ref's 19 arguments."""
    B, CO, OH, OW, G = args[3], args[5], args[8], args[9], args[18]
    return "// %s@launch conv2d_gemm_ref<<<dim3(cdiv((%s)*(%s)*(%s), 64), cdiv((%s)/(%s), 64), %s), dim3(16, 16)>>>(%s);" % (
        indent, B, OH, OW, CO, G, G, ", ".join(args))


def rewrite_gemm(lines):
    """Every ungrouped convolution as conv2d_gemm_ref, its kernel pasted before the first
    directive (a grouped one, depthwise above all, would fill a 64-column tile with a few
    channels: it stays as it is)."""
    out, n, dropping = [], 0, False
    for line in lines:
        m = SPLIT.match(line) or PLAIN.match(line)
        a = top_level(m.group(3), ",") if m else []
        if m and SPLIT.match(line):
            a = a[:3] + a[4:-1]
        if m and a[18] == "1":
            out.append(gemm_line(m.group(1), a))
            n += 1
            dropping = SPLIT.match(line) is not None  # its sum goes too
            continue
        if SUM.match(line) and dropping:
            dropping = False
            continue
        dropping = False
        out.append(line)
    text = "\n".join(out)
    first = re.search(r"^// *@", text, re.M)
    paste = "" if re.search(r"^#define MM_TILE\b", text, re.M) else open(os.path.join(SHARED, "matmul_tiled_ref.cuh")).read()
    paste += open(os.path.join(SHARED, "conv2d_gemm_ref.cuh")).read()
    at = first.start() if first else len(text)
    return (text[:at] + paste + "\n" + text[at:]).split("\n"), n


def rewrite(lines, drop_sum):
    out, n, sums = [], 0, 0
    for line in lines:
        m = SPLIT.match(line)
        if m and drop_sum is None:
            out.append(unsplit_line(*m.groups()))
            n += 1
            continue
        if SUM.match(line):
            sums += 1
            if drop_sum is None or sums - 1 == drop_sum:
                n += drop_sum is not None
                continue
        out.append(line)
    return out, n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reference")
    ap.add_argument("out")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--drop-sum", type=int, default=None)
    mode.add_argument("--gemm", action="store_true")
    a = ap.parse_args()
    lines = open(a.reference).read().splitlines()
    out, n = rewrite_gemm(lines) if a.gemm else rewrite(lines, a.drop_sum)
    if n == 0 and a.gemm:
        print("unsplit_convs: %s has no convolution" % a.reference)
        return 1
    if n == 0:
        print("unsplit_convs: %s has no split convolution%s" % (a.reference, "" if a.drop_sum is None else
                                                                 " sum numbered %d" % a.drop_sum))
        return 1
    open(a.out, "w").write("\n".join(out) + "\n")
    print("unsplit_convs: %d launches %s" % (n, "dropped" if a.drop_sum is not None else
                                             "on the tensor cores" if a.gemm else "rewritten"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
