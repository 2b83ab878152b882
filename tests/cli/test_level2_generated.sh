#!/bin/sh
# test_level2_generated: problems/level2 is what tools/problems/gen_level2.py writes from its specs files
# (a hand-edited manifest or reference, or a spec changed without regenerating, fails), and the
# generator's two special forms come out right: 038's AvgPool3d runs on x before the
# ConvTranspose3d, which reads the pooled float32 copy with the pooled extents (PD, PH, PW); the
# blocked Conv3d leads (047, 048) expand shared/conv3d_blocked_ref.cuh with its macros undefined
# after it; tests/gpu/l2_skip_epilogue.py keeps 038's pool launches before the leading op.
. "$KC_ROOT/tests/cli/lib.sh"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 absent"
    exit 0
fi
python3 "$KC_ROOT/tools/problems/gen_level2.py" --out "$T/gen" >/dev/null || fail "gen_level2 failed"
for f in "$T"/gen/*; do
    cmp -s "$f" "$KC_PROBLEMS/level2/$(basename "$f")" ||
        fail "problems/level2/$(basename "$f") differs from what tools/problems/gen_level2.py writes (regenerate and commit both)"
done
for f in "$KC_PROBLEMS"/level2/*.json "$KC_PROBLEMS"/level2/*.cu; do
    [ -f "$T/gen/$(basename "$f")" ] || fail "problems/level2/$(basename "$f") is not written by tools/problems/gen_level2.py"
done

# 038: pool on x first, then the transposed convolution on the pooled copy
ref038=$(ls "$KC_PROBLEMS"/level2/038_*.cu) || fail "no 038"
launches=$(grep '^// @launch' "$ref038")
first=$(echo "$launches" | head -1)
echo "$first" | grep -q '(x, t1, ' || fail "038: the first launch does not read x: $first"
echo "$launches" | sed -n 2p | grep -q '^// @launch l2_pool3d<<<.*(t1, t2, B\*CI, D, H, W, ' || fail "038: no pool on x second"
lead=$(echo "$launches" | grep 'conv_transpose3d_ref')
echo "$lead" | grep -q '(t3, weight, t0, B, CI, CO, PD, PH, PW, OD, OH, OW,' || fail "038: the lead does not read the pooled x: $lead"
grep -q '^// @scratch t3 f32\[' "$ref038" || fail "038: the pooled x is not float32"
grep -q '"OD": "(D/2 - 1)\*S' "${ref038%.cu}.json" || fail "038: OD is not taken from the pooled depth"

# 047, 048: the blocked Conv3d, expanded by the loader
for p in 047 048; do
    id="level2/$(basename "$(ls "$KC_PROBLEMS"/level2/${p}_*.json)" .json)"
    "$KC_BIN/kverify" problems --show-reference "$id" > "$T/$p.cu" || fail "show-reference $id"
    grep -q 'register-blocked direct 3-D convolution' "$T/$p.cu" || fail "$id: blocked Conv3d not expanded"
    grep -q '^#undef WT' "$T/$p.cu" || fail "$id: the blocked Conv3d's macros are not undefined"
    grep -q '^// @launch conv3d_ref<<<dim3(' "$T/$p.cu" || fail "$id: not the blocked launch"
done

# the epilogue-skipping candidate of 038 keeps the pool launches and stops at the lead
id038="level2/$(basename "$ref038" .cu)"
skip=$(python3 "$KC_ROOT/tests/gpu/l2_skip_epilogue.py" "$KC_BIN" "$id038" "$T/skip") || fail "l2_skip_epilogue 038"
[ -f "$skip" ] || fail "l2_skip_epilogue wrote nothing for 038"
n=$(grep -c '^// @launch' "$skip")
[ "$n" = 5 ] || fail "038 skip candidate: $n launches, want pool chain (3) + lead + copy"
grep '^// @launch' "$skip" | sed -n 4p | grep -q 'conv_transpose3d_ref' || fail "038 skip candidate: 4th launch is not the lead"
grep -q '^// @scratch t3 f32' "$skip" || fail "038 skip candidate: the pooled x has no scratch line"
echo "level2 generated: $(ls "$T"/gen/*.json | wc -l) problems as committed; 038 pre-pool, 047/048 blocked Conv3d ok"
