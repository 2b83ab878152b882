#!/usr/bin/env python3
"""add_value_classes: writes the value classes that tools/problems/value_classes.py decides into
the level-1 and attention manifests: the "values" block (before "tolerance"), each param's "vary"
(and "vary_why") inside its one-line object, and "capacity" as the last member of "hidden".
The level-1 manifests are hand-formatted, so their edit is textual and minimal; the attention
ones are json.dumps output (indent 2) and are dumped again the same way. A re-run replaces what
an earlier run wrote. Each edited file is checked to parse to exactly the manifest plus the
declarations. Level 2 is generated: tools/problems/gen_level2.py emits the same declarations.

    python3 tools/problems/add_value_classes.py [--suite level1,attention] [--check]

--check writes nothing and fails when a manifest differs from what this would write."""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kcproblems  # noqa: E402
import value_classes  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "problems"))


def dumps(v):
    return json.dumps(v, ensure_ascii=False)


def values_block(vals):
    """The "values" member, one line per class, as the manifests lay out objects."""
    lines = ['    "%s": %s' % (k, dumps(vals[k])) for k in ("large", "structure", "special")]
    return '  "values": {\n' + ",\n".join(lines) + "\n  },\n"


def strip_old(text):
    """text without what an earlier run wrote."""
    text = re.sub(r'  "values": \{\n(?:    .*\n)*?  \},\n', "", text)
    text = re.sub(r', "vary": \[[^\]]*\](?:, "vary_why": "(?:[^"\\]|\\.)*")?(?=\})', "", text)
    text = re.sub(r',\n    "capacity": \{"sets": .*\}(?=\n  \})', "", text)
    return text


def redump(text, decl):
    """A machine-written manifest (json.dumps with indent 2: the attention suite) is written the
    same way again, "values" placed before "tolerance"."""
    m = expected(text, decl)
    out = {}
    for k, v in m.items():
        if k == "tolerance":
            out["values"] = m["values"]
        if k != "values":
            out[k] = v
    return json.dumps(out, indent=2) + "\n"


def edit(text, decl):
    if json.dumps(json.loads(text), indent=2) + "\n" == text:
        return redump(text, decl)
    text = strip_old(text)
    # values before tolerance
    anchor = '  "tolerance": '
    assert text.count(anchor) == 1, "no single tolerance line"
    text = text.replace(anchor, values_block(decl["values"]) + anchor)
    # vary inside each param's one-line object
    for name, v in decl["vary"].items():
        pat = re.compile(r'(\{"name": "%s", "dtype": "[a-z0-9]+", "value": [^,}]+)\}' % re.escape(name))
        assert len(pat.findall(text)) == 1, "param %s: not one one-line object" % name
        extra = ', "vary": %s' % dumps(v["vary"])
        if "vary_why" in v:
            extra += ', "vary_why": %s' % dumps(v["vary_why"])
        text = pat.sub(lambda mo: mo.group(1) + extra + "}", text)
    # capacity as the last member of hidden
    if decl["capacity"]:
        mo = re.search(r'\n  "hidden": \{\n(?:    .*\n)*?(?=  \},?\n)', text)
        assert mo, "no hidden block"
        end = mo.end()
        text = text[:end - 1] + ',\n    "capacity": %s\n' % dumps(decl["capacity"]) + text[end:]
    return text


def expected(before, decl):
    m = json.loads(before)
    m.pop("values", None)
    for p in m.get("params", []):
        p.pop("vary", None), p.pop("vary_why", None)
        p.update(decl["vary"][p["name"]])
    m["hidden"].pop("capacity", None)
    if decl["capacity"]:
        m["hidden"]["capacity"] = decl["capacity"]
    m["values"] = decl["values"]
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="level1,attention")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    stale = 0
    n = 0
    for suite in args.suite.split(","):
        decide = {"level1": value_classes.level1, "attention": value_classes.attention}[suite]
        for path in kcproblems.problem_manifests(ROOT, suite):
            with open(path) as f:
                before = f.read()
            decl = decide(json.loads(before))
            after = edit(before, decl)
            if json.loads(after) != expected(before, decl):
                sys.exit("%s: the edited text does not parse to the manifest plus its declarations" % path)
            n += 1
            if after != before:
                stale += 1
                if args.check:
                    print("%s: not what add_value_classes.py writes" % path)
                else:
                    with open(path, "w") as f:
                        f.write(after)
    verb = "differ" if args.check else "rewritten"
    print("add_value_classes: %d manifests, %d %s" % (n, stale, verb))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
