#!/bin/sh
# test_profile: `kverify dump --profile RUNS` (the reference's device time by kernel, CUPTI):
# level1/019_relu's reference is one relu_ref launch an execution; DenseNet-201's (no @for
# loops) issues one launch per launch line, conv2d_ref and the BatchNorms among them; the per-kernel
# times add up to the total, and the dump's outputs are those of a dump without --profile.
. "$KC_ROOT/tests/gpu/lib.sh"
"$KC_BIN/kverify" gpus >/dev/null 2>&1 || { echo "SKIP: no usable GPU"; exit 0; }
work="${TMPDIR:-/tmp}/kc-profile"
rm -rf "$work"
mkdir -p "$work"
"$KC_BIN/kverify" dump --problem level1/019_relu --seed 3 --out "$work/relu" --profile 3 >"$work/relu.out" ||
    fail "dump --profile: $(cat "$work/relu.out")"
"$KC_BIN/kverify" dump --problem level1/019_relu --seed 3 --out "$work/relu0" >/dev/null || fail "dump"
cmp -s "$work/relu/ref_y.npy" "$work/relu0/ref_y.npy" || fail "--profile changed the dumped outputs"
grep -q "relu_ref" "$work/relu.out" || fail "the printed profile does not name relu_ref: $(cat "$work/relu.out")"
id=level3/016_densenet201
"$KC_BIN/kverify" dump --problem $id --seed 3 --dims small --out "$work/d201" --profile 2 >"$work/d201.out" ||
    fail "dump $id --profile: $(cat "$work/d201.out")"
cp "$work/relu/meta.json" "$OUT_DIR/profile_relu.json" 2>/dev/null
cp "$work/d201/meta.json" "$OUT_DIR/profile_densenet201.json" 2>/dev/null
lines=$(grep -c "^// *@launch" "$KC_ROOT/problems/level3/016_densenet201.cu")
python3 - "$work" "$lines" <<'PY' || fail "profile contents"
import json, sys
w, lines = sys.argv[1], int(sys.argv[2])
def check(meta, runs, launches, must):
    p = json.load(open(meta))["profile"]
    assert p["runs"] == runs, p
    assert abs(p["launches"] - launches) < 1e-9, (p["launches"], launches)
    ks = p["kernels"]
    assert abs(sum(k["launches"] for k in ks) - launches) < 1e-9
    assert abs(sum(k["ms"] for k in ks) - p["device_ms"]) < 1e-6 * max(1, p["device_ms"])
    assert p["device_ms"] > 0 and all(k["ms"] >= 0 for k in ks)
    assert [k["ms"] for k in ks] == sorted((k["ms"] for k in ks), reverse=True), "not the costliest first"
    names = {k["kernel"] for k in ks}
    assert set(must) <= names, (must, names)
    return p
check(w + "/relu/meta.json", 3, 1, ["relu_ref"])
p = check(w + "/d201/meta.json", 2, lines, ["conv2d_ref", "l3_bn_apply", "l3_bn_stats"])
print("DenseNet-201 small: %.3f ms of kernels, %d launches; costliest %s" % (p["device_ms"], p["launches"], p["kernels"][0]))
PY
echo "ok: kverify dump --profile"
