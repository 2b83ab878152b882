#!/bin/sh
# test_conv_split: tools/problems/unsplit_convs.py, which the GPU test of level 3's split
# convolutions (tests/gpu/test_conv_split.sh) builds its candidates with, on CPU:
#   - DenseNet-201's reference unsplit: every conv2d_ref_split launch becomes a conv2d_ref launch
#     with the same grid less the split factor and the same arguments less conv_part and KS,
#     every conv2d_split_sum launch goes (519 launch lines -> 417), and it compiles as a
#     candidate (policy, launch lines and arguments checked against the kernels' signatures);
#   - --drop-sum 5 drops exactly one sum launch and keeps the splits (the control);
#   - --gemm: every ungrouped convolution becomes a conv2d_gemm_ref launch (DenseNet-201: 102, no
#     split or sum left), the kernel is pasted in, and it compiles without spills; ShuffleNet's
#     grouped convolutions stay split (22 of its 25), each with its sum;
#   - a reference without split convolutions (level3/001_mlp) is refused (exit 1).
. "$KC_ROOT/tests/cli/lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 absent"; exit 0; }
tool="$KC_ROOT/tools/problems/unsplit_convs.py"
id=level3/016_densenet201
"$KC_BIN/kverify" problems --show-reference "$id" >"$T/ref.cu" || fail "load $id"
launches() { grep -c "^// *@launch $2" "$1"; }
[ "$(launches "$T/ref.cu" conv2d_ref_split)" -eq 101 ] || fail "$id has $(launches "$T/ref.cu" conv2d_ref_split) split convolutions, not 101"
python3 "$tool" "$T/ref.cu" "$T/unsplit.cu" >"$T/out" || { cat "$T/out"; fail "unsplit"; }
grep -q "101 launches rewritten" "$T/out" || fail "$(cat "$T/out")"
[ "$(launches "$T/unsplit.cu" conv2d_ref_split)" -eq 0 ] || fail "split launches left"
[ "$(launches "$T/unsplit.cu" conv2d_split_sum)" -eq 0 ] || fail "sum launches left"
[ "$(launches "$T/unsplit.cu" conv2d_ref)" -eq 102 ] || fail "conv2d_ref launches: $(launches "$T/unsplit.cu" conv2d_ref), expected 102 (101 and the stem's)"
[ "$(launches "$T/unsplit.cu" '')" -eq 417 ] || fail "unsplit launch lines: $(launches "$T/unsplit.cu" ''), expected 417"
# the first dense layer's 3x3 conv, by hand: 10 images' tiles, no factor; no conv_part, no KS
want='// @launch conv2d_ref<<<min(((B)*(1)*cdiv((32)/(1), 16)*cdiv(S2W, 64)*cdiv(S2H, 8)), 1048576), 128, 12*(4*(3)*(3)*16 + 4*(7*(1) + (3))*(63*(1) + (3)))>>>(h, b0_0_conv_w, t, B, 64, 32, S2H, S2W, S2H, S2W, 3, 3, 1, 1, 1, 1, 1, 1, 1);'
grep -qxF "$want" "$T/unsplit.cu" || fail "the first dense layer's conv is not what it should be: $(grep -m2 'conv2d_ref<<<' "$T/unsplit.cu" | tail -1)"
"$KC_BIN/kverify" check --compile-only --problem "$id" "$T/unsplit.cu" >"$T/out" 2>&1 ||
    { cat "$T/out"; fail "the unsplit DenseNet-201 does not compile as a candidate"; }
python3 "$tool" "$T/ref.cu" "$T/drop.cu" --drop-sum 5 >"$T/out" || fail "drop-sum: $(cat "$T/out")"
[ "$(launches "$T/drop.cu" conv2d_split_sum)" -eq 100 ] || fail "drop-sum left $(launches "$T/drop.cu" conv2d_split_sum) sums, expected 100"
[ "$(launches "$T/drop.cu" conv2d_ref_split)" -eq 101 ] || fail "drop-sum changed the splits"
python3 "$tool" "$T/ref.cu" "$T/gemm.cu" --gemm >"$T/out" || fail "gemm: $(cat "$T/out")"
[ "$(launches "$T/gemm.cu" conv2d_gemm_ref)" -eq 102 ] || fail "gemm launches: $(launches "$T/gemm.cu" conv2d_gemm_ref)"
[ "$(launches "$T/gemm.cu" conv2d_ref)$(launches "$T/gemm.cu" conv2d_split_sum)" = 00 ] || fail "convolutions left after --gemm"
"$KC_BIN/kverify" check --compile-only --problem "$id" "$T/gemm.cu" >"$T/out" 2>&1 ||
    { cat "$T/out"; fail "the tensor-core DenseNet-201 does not compile as a candidate"; }
grep -q '{"name":"conv2d_gemm_ref","stack_bytes":0,"spill_stores":0,"spill_loads":0,' "$T/out" ||
    fail "conv2d_gemm_ref spills: $(grep -o '{"name":"conv2d_gemm_ref"[^}]*}' "$T/out")"
"$KC_BIN/kverify" problems --show-reference level3/026_shufflenet >"$T/shuffle.cu" || fail "load 026"
python3 "$tool" "$T/shuffle.cu" "$T/shuffle_gemm.cu" --gemm >/dev/null || fail "gemm 026"
[ "$(launches "$T/shuffle.cu" conv2d_ref_split)/$(launches "$T/shuffle_gemm.cu" conv2d_ref_split)/$(launches "$T/shuffle_gemm.cu" conv2d_split_sum)" = 25/22/22 ] ||
    fail "ShuffleNet's grouped convolutions: $(launches "$T/shuffle_gemm.cu" conv2d_ref_split) splits, $(launches "$T/shuffle_gemm.cu" conv2d_split_sum) sums"
"$KC_BIN/kverify" problems --show-reference level3/001_mlp >"$T/mlp.cu" || fail "load level3/001_mlp"
python3 "$tool" "$T/mlp.cu" "$T/x.cu" >"$T/out" && fail "a reference without splits was rewritten"
grep -q "has no split convolution" "$T/out" || fail "refusal: $(cat "$T/out")"
echo "ok: DenseNet-201 unsplit (101 convolutions, 519 -> 417 launch lines) and on the tensor cores compiles; one sum dropped for the control"
