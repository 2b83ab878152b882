#!/usr/bin/env python3
"""gen_level3: writes problems/level3/NNN_name.json (manifest) and NNN_name.cu (reference) for
KernelBench level 3's networks from the specs in tools/problems/level3_specs.py (docs/LEVEL3.md).

Each spec builds a level3_net.Net: dims sets and hidden generator, the packed input "params"
whose views are the module's parameters (PyTorch's default initialisers, each view naming the
state-dict key it holds), the value classes and tolerance with their reasons, and the
reference's launch schedule over the shared kernels of problems/shared/ (l3_ops.cuh and the
level-1/2 product and convolution kernels).

torch_reference is KernelBench's own source of the problem (the one thing copied from
KernelBench, as the project's convention allows): --kernelbench DIR reads it from a checkout's
KernelBench/level3/; without it, the committed manifest's torch_reference is kept.

    python3 tools/problems/gen_level3.py [--only 1,2] [--out problems/level3] [--kernelbench DIR]
                                         [--conv-split]

--conv-split writes the references with their convolutions split over the input channels
(conv2d_ref_split, level3_net.CONV_SPLIT), not yet the committed ones (docs/LEVEL3.md).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import level3_net  # noqa: E402
import level3_specs  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def dump_manifest(m):
    """JSON with one line per tensor, view and dims set (as the level-1 and -2 manifests are)."""
    out = ["{"]
    keys = list(m)
    for i, k in enumerate(keys):
        sep = "," if i < len(keys) - 1 else ""
        v = m[k]
        if k == "dims":
            alts = ",\n".join("      " + json.dumps(a) for a in v["alt"])
            out.append('  "dims": {\n    "default": %s,\n    "small": %s,\n    "alt": [\n%s\n    ]\n  }%s'
                       % (json.dumps(v["default"]), json.dumps(v["small"]), alts, sep))
        elif k == "hidden":
            lines = ["    %s: %s" % (json.dumps(n), json.dumps(g)) for n, g in v["dims"].items()]
            rest = ["    %s: %s" % (json.dumps(f), json.dumps(v[f])) for f in v if f != "dims"]
            out.append('  "hidden": {\n    "dims": {\n%s\n    },\n%s\n  }%s'
                       % (",\n".join("  " + l for l in lines), ",\n".join(rest), sep))
        elif k in ("values", "torch_model"):
            lines = ["    %s: %s" % (json.dumps(c), json.dumps(v[c])) for c in v]
            out.append('  %s: {\n%s\n  }%s' % (json.dumps(k), ",\n".join(lines), sep))
        elif k == "inputs":
            items = []
            for t in v:
                if "views" not in t:
                    items.append("    " + json.dumps(t))
                    continue
                head = {x: t[x] for x in t if x != "views"}
                views = ",\n".join("      " + json.dumps(w) for w in t["views"])
                items.append("    %s, \"views\": [\n%s\n    ]}" % (json.dumps(head)[:-1], views))
            out.append('  "inputs": [\n%s\n  ]%s' % (",\n".join(items), sep))
        elif k in ("outputs", "params"):
            items = ",\n".join("    " + json.dumps(t) for t in v)
            out.append('  "%s": [\n%s\n  ]%s' % (k, items, sep))
        else:
            out.append("  %s: %s%s" % (json.dumps(k), json.dumps(v), sep))
    out.append("}")
    return "\n".join(out) + "\n"


def torch_source(net, kernelbench, outdir):
    """KernelBench's source of the problem: from a checkout, else from the committed manifest."""
    if kernelbench:
        path = os.path.join(kernelbench, "KernelBench", "level3", net.kb_name + ".py")
        with open(path) as f:
            return f.read()
    path = os.path.join(outdir, "%03d_%s.json" % (net.num, net.name))
    if not os.path.exists(path):
        path = os.path.join(ROOT, "problems", "level3", "%03d_%s.json" % (net.num, net.name))
    with open(path) as f:
        return json.load(f)["torch_reference"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(ROOT, "problems", "level3"))
    ap.add_argument("--kernelbench", default="", help="a KernelBench checkout (for torch_reference)")
    ap.add_argument("--conv-split", action="store_true", help="convolutions split over input channels")
    args = ap.parse_args()
    level3_net.CONV_SPLIT = args.conv_split
    os.makedirs(args.out, exist_ok=True)
    only = {int(x) for x in args.only.split(",") if x}
    n = 0
    for build in level3_specs.SPECS:
        net = build()
        if only and net.num not in only:
            continue
        m = net.manifest_dict(torch_source(net, args.kernelbench, args.out))
        base = os.path.join(args.out, "%03d_%s" % (net.num, net.name))
        with open(base + ".json", "w") as f:
            f.write(dump_manifest(m))
        with open(base + ".cu", "w") as f:
            f.write(net.reference_text())
        n += 1
    print("gen_level3: wrote %d problems to %s" % (n, os.path.normpath(args.out)))


if __name__ == "__main__":
    main()
