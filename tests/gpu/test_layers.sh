#!/bin/sh
# test_layers: which layer went wrong first (issue 38, docs/LEVEL3.md). On level3/001_mlp
# (network.0, network.2, network.4: three Linear layers, ReLU fused into the first two):
# (1) the reference itself is correct and gets no evidence.layers (no diagnosis run);
# (2) the reference with network.2's bias added twice (a second bias add in float after the
#     first) is a mismatch whose evidence.layers names network.2 as the first layer that
#     differs, network.0 as the last that matches, and compares all three;
# (3) the same candidate without its @layer lines is a mismatch with no evidence.layers and no
#     layers_error: kv_feedback renders only evidence.layers, so its feedback is today's
#     (tests/unit/test_verify_layers.c checks that byte for byte).
. "$KC_ROOT/tests/gpu/lib.sh"
"$KC_BIN/kverify" gpus >/dev/null 2>&1 || { echo "SKIP: no usable GPU"; exit 0; }
work="${TMPDIR:-/tmp}/kc-layers"
rm -rf "$work"
mkdir -p "$work"
id=level3/001_mlp
"$KC_BIN/kverify" problems --show-reference "$id" > "$work/reference.cu" || fail "load $id"
fc1='// @launch l3_bias_act_d<<<min(cdiv((B)*(H2), 256), 65536), 256>>>(acc, fc1_b, 0, a1, (B)*(H2), 1, H2, 1);'
grep -qxF "$fc1" "$work/reference.cu" || fail "$id: network.2's bias line changed; update this test"
python3 - "$work/reference.cu" "$work/doubled.cu" "$fc1" <<'PY' || fail "write the doubled-bias candidate"
import sys
src, dst, line = sys.argv[1], sys.argv[2], sys.argv[3]
twice = (line.replace(", H2, 1);", ", H2, 0);") + "\n" +
         "// @launch l3_bias_act_f<<<min(cdiv((B)*(H2), 256), 65536), 256>>>(a1, fc1_b, 0, a1, (B)*(H2), 1, H2, 1);")
text = open(src).read()
assert text.count(line) == 1
open(dst, "w").write(text.replace(line, twice))
PY
grep -v '^// @layer ' "$work/doubled.cu" > "$work/doubled_unnamed.cu"

check() { # label file: the result as JSON in $work/label.json
    "$KC_BIN/kverify" check --problem "$id" "$work/$2" --json --no-timing > "$work/$1.json"
    cp "$work/$1.json" "$OUT_DIR/layers_$1.json" 2>/dev/null
}
check reference reference.cu
check doubled doubled.cu
check unnamed doubled_unnamed.cu
python3 - "$work" <<'PY' || fail "layer diagnosis"
import json, sys
w = sys.argv[1]
def load(name):
    return json.load(open("%s/%s.json" % (w, name)))
ref, dbl, unn = load("reference"), load("doubled"), load("unnamed")
ok = True
def expect(cond, what):
    global ok
    if not cond:
        print("FAIL:", what)
        ok = False
ev = ref.get("evidence") or {}
expect(ref["verdict"] == "correct", "the reference is correct (got %s: %s)" % (ref["verdict"], ref["message"]))
expect("layers" not in ev and "layers_error" not in ev, "the reference gets no layers evidence")
ev = dbl.get("evidence") or {}
layers = ev.get("layers")
expect(dbl["verdict"] == "mismatch", "the doubled bias is a mismatch (got %s)" % dbl["verdict"])
expect(layers is not None, "the doubled bias has evidence.layers (layers_error: %s)" % ev.get("layers_error"))
if layers:
    names = [c["name"] for c in layers["compared"]]
    print("layers: dims %s seed %s compared %s first_bad %s last_good %s (%.1f ms)"
          % (layers["dims"], layers["seed"], names, layers["first_bad"], layers["last_good"], layers.get("ms", 0)))
    expect(names == ["network.0", "network.2", "network.4"], "all three layers compared in order")
    expect(layers["first_bad"] == "network.2", "network.2 is the first layer that differs")
    expect(layers["last_good"] == "network.0", "network.0 matches")
    expect(layers["compared"][0]["bad"] == 0 and layers["compared"][1]["bad"] > 0, "bad counts")
    expect(layers["unmatched_candidate"] == 0 and layers["unmatched_reference"] == 0, "every name matched")
    expect(layers["dims"] == dbl["evidence"]["first_failure"]["dims"], "the failing run's dims")
ev = unn.get("evidence") or {}
expect(unn["verdict"] == "mismatch", "without @layer lines still a mismatch (got %s)" % unn["verdict"])
expect("layers" not in ev and "layers_error" not in ev, "without @layer lines no layers evidence")
expect(dbl["flags"] == unn["flags"], "the diagnosis changes no flag")
sys.exit(0 if ok else 1)
PY
echo "test_layers: ok"
