#!/usr/bin/env python3
"""l2_skip_epilogue: writes an epilogue-skipping candidate for a level-2 problem (GPU tests only):
the reference's own leading op (Linear/Conv/ConvTranspose into its float32 scratch t0, after
any pools on x that precede it), then a
plain copy of t0 into the output, skipping the whole chain after it. Written only where t0 and
the output have the same element count; prints the file written, or nothing.
    l2_skip_epilogue.py BIN PROBLEM_ID OUT_DIR"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "problems"))
import kcproblems  # noqa: E402

COPY = ('extern "C" __global__ void skip_copy(const float *t, float *y, long long n)\n'
        "{\n    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;"
        " i += (long long)gridDim.x * blockDim.x)\n        y[i] = t[i];\n}\n")


def main():
    bin_dir, pid, out = sys.argv[1:4]
    root = os.environ.get("KC_PROBLEMS", "problems")
    m = kcproblems.load_manifest(os.path.join(root, pid + ".json"))
    dims = dict(kcproblems.dims_sets(m))["default"]
    src = subprocess.run([os.path.join(bin_dir, "kverify"), "problems", "--show-reference", pid],
                         check=True, capture_output=True, text=True).stdout
    t0 = re.search(r"^// @scratch t0 f32\[(.*)\]$", src, re.M)
    launches = re.findall(r"^// @launch .*$", src, re.M)
    y = m["outputs"][0]
    ny = 1
    for e in kcproblems.shape_of(y, dims):
        ny *= e
    if not t0 or kcproblems.eval_dim_expr(t0.group(1), dims) != ny:
        return 0
    body = re.sub(r"^// @(launch|scratch) .*\n", "", src, flags=re.M)
    # the leading op is the first launch writing t0; launches before it (038's pool on x) stay
    lead = next(i for i, line in enumerate(launches) if re.search(r"\bt0\b", line))
    scratch = re.findall(r"^// @scratch .*$", src, re.M) if lead else [t0.group(0)]
    text = ("// Epilogue-skipping candidate for %s: the leading op only; must fail verification.\n" % pid
            + body + COPY + "\n".join(scratch) + "\n" + "\n".join(launches[:lead + 1]) + "\n"
            + "// @launch skip_copy<<<4096, 256>>>(t0, %s, %s);\n" % (y["name"], t0.group(1)))
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "skip_epilogue.cu")
    with open(path, "w") as f:
        f.write(text)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
