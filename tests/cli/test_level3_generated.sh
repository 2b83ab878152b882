#!/bin/sh
# test_level3_generated: problems/level3 is what tools/problems/gen_level3.py writes from
# tools/problems/level3_specs.py (a hand-edited manifest or reference, or a spec changed without
# regenerating, fails), every level-3 manifest and reference loads and parses (kverify problems
# --suite level3 lists them all valid), and every reference's launches stay inside their buffers
# and views under the fixed dims sets and four drawn ones (tools/problems/check_level3_bounds.py:
# the references have not run on a GPU, and a scratch buffer sized for the wrong layer is found
# here first), every layer point ("// @layer", issue 38) included: a region of a scratch buffer or
# an output that the launch before it wrote; and 41 of the 50 networks name their layers
# (level3_net.py names none inside @for loops: the recurrent and SSD networks have none).
. "$KC_ROOT/tests/cli/lib.sh"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 absent"
    exit 0
fi
mkdir -p "$T/gen"
cp "$KC_PROBLEMS"/level3/*.json "$T/gen/" # torch_reference (KernelBench's source) is kept from them
python3 "$KC_ROOT/tools/problems/gen_level3.py" --out "$T/gen" >/dev/null || fail "gen_level3 failed"
for f in "$T"/gen/*; do
    cmp -s "$f" "$KC_PROBLEMS/level3/$(basename "$f")" ||
        fail "problems/level3/$(basename "$f") differs from what tools/problems/gen_level3.py writes (regenerate and commit both)"
done
for f in "$KC_PROBLEMS"/level3/*.json "$KC_PROBLEMS"/level3/*.cu; do
    [ -f "$T/gen/$(basename "$f")" ] || fail "problems/level3/$(basename "$f") is not written by tools/problems/gen_level3.py"
done
"$KC_BIN/kverify" problems --suite level3 --json > "$T/list.json" || fail "kverify problems --suite level3 failed"
grep -q '"valid": false' "$T/list.json" && fail "a level-3 manifest does not load: $(cat "$T/list.json")"
python3 "$KC_ROOT/tools/problems/check_level3_bounds.py" --bin "$KC_BIN" --draws 2 > "$T/bounds.txt" ||
    fail "a level-3 reference touches memory outside its buffers: $(head -5 "$T/bounds.txt")"
n=$(grep -l "^// @layer " "$KC_PROBLEMS"/level3/*.cu | wc -l)
[ "$n" -eq 41 ] || fail "$n level-3 references have @layer lines, expected 41"
grep -q "^// @layer network.0 a0\[0\] f32\[(B)\*(H1)\]$" "$KC_PROBLEMS/level3/001_mlp.cu" ||
    fail "001_mlp's first layer point is not network.0 at a0"
echo ok
