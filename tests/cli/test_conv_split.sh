#!/bin/sh
# test_conv_split: level 3's convolutions split over their input channels (gen_level3.py
# --conv-split: conv2d_ref_split and conv2d_split_sum, not yet in the committed references) and
# on the FP64 tensor cores (unsplit_convs.py --gemm: conv2d_gemm_ref), on CPU, as the GPU test
# (tests/gpu/test_conv_split.sh) uses them:
#   - DenseNet-201 split: 101 of its 102 convolutions split (518 launch lines), every launch
#     inside its buffers at the fixed and drawn dims (check_level3_bounds.py --problems, the
#     partial sums inside conv_part), and it compiles as a candidate of the committed problem;
#   - unsplit_convs.py on it gives back the committed reference's launch lines exactly (each
#     split launch is the committed conv2d_ref launch plus conv_part and KS);
#   - --drop-sum 5 drops exactly one sum launch and keeps the splits (the GPU test's control),
#     and check_level3_bounds.py then names the split whose partial sums nothing adds;
#   - --gemm on the committed reference: its 102 convolutions become conv2d_gemm_ref launches,
#     the kernel (with matmul_tiled_ref.cuh's mm_step) is pasted in, and it compiles without
#     spills; on split ShuffleNet the grouped convolutions stay split (22 of 25) with their sums;
#   - a reference without convolutions to unsplit (level3/001_mlp) is refused (exit 1).
. "$KC_ROOT/tests/cli/lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 absent"; exit 0; }
tool="$KC_ROOT/tools/problems/unsplit_convs.py"
id=level3/016_densenet201
mkdir -p "$T/p/level3"
ln -s "$KC_PROBLEMS/shared" "$T/p/shared"
python3 "$KC_ROOT/tools/problems/gen_level3.py" --conv-split --only 16,26 --out "$T/p/level3" >/dev/null ||
    fail "gen_level3 --conv-split"
python3 "$KC_ROOT/tools/problems/check_level3_bounds.py" --bin "$KC_BIN" --draws 2 --problems "$T/p" >"$T/bounds" ||
    fail "split references outside their buffers: $(head -5 "$T/bounds")"
KC_PROBLEMS="$T/p" "$KC_BIN/kverify" problems --show-reference "$id" >"$T/split.cu" || fail "load the split $id"
"$KC_BIN/kverify" problems --show-reference "$id" >"$T/ref.cu" || fail "load $id"
launches() { grep -c "^// *@launch $2" "$1"; }
[ "$(launches "$T/split.cu" conv2d_ref_split)/$(launches "$T/split.cu" conv2d_split_sum)/$(launches "$T/split.cu" '')" = 101/101/518 ] ||
    fail "split $id: $(launches "$T/split.cu" conv2d_ref_split) splits, $(launches "$T/split.cu" '') launch lines"
[ "$(launches "$T/ref.cu" conv2d_ref_split)" -eq 0 ] || fail "the committed $id has split convolutions"
"$KC_BIN/kverify" check --compile-only --problem "$id" "$T/split.cu" >"$T/out" 2>&1 ||
    { cat "$T/out"; fail "the split DenseNet-201 does not compile as a candidate"; }
python3 "$tool" "$T/split.cu" "$T/unsplit.cu" >"$T/out" || { cat "$T/out"; fail "unsplit"; }
grep -q "101 launches rewritten" "$T/out" || fail "$(cat "$T/out")"
grep "^// *@launch" "$T/unsplit.cu" >"$T/unsplit.lines"
grep "^// *@launch" "$T/ref.cu" >"$T/ref.lines"
cmp -s "$T/unsplit.lines" "$T/ref.lines" ||
    fail "unsplit launch lines differ from the committed reference's: $(diff "$T/ref.lines" "$T/unsplit.lines" | head -4)"
python3 "$tool" "$T/split.cu" "$T/drop.cu" --drop-sum 5 >"$T/out" || fail "drop-sum: $(cat "$T/out")"
[ "$(launches "$T/drop.cu" conv2d_split_sum)/$(launches "$T/drop.cu" conv2d_ref_split)" = 100/101 ] ||
    fail "drop-sum left $(launches "$T/drop.cu" conv2d_split_sum) sums, $(launches "$T/drop.cu" conv2d_ref_split) splits"
# and the bounds check sees the dropped sum: a split whose partial sums nothing adds
mkdir -p "$T/q/level3"
ln -s "$KC_PROBLEMS/shared" "$T/q/shared"
cp "$T/p/level3/016_densenet201.json" "$T/q/level3/"
python3 "$tool" "$T/p/level3/016_densenet201.cu" "$T/q/level3/016_densenet201.cu" --drop-sum 5 >/dev/null ||
    fail "drop-sum on the generated file"
python3 "$KC_ROOT/tools/problems/check_level3_bounds.py" --only 16 --problems "$T/q" >"$T/bounds2" &&
    fail "the bounds check passed a split whose sum was dropped"
grep -q "launched before the partial sums of conv2d_ref_split" "$T/bounds2" ||
    fail "the dropped sum was not named: $(tail -3 "$T/bounds2")"
python3 "$tool" "$T/ref.cu" "$T/gemm.cu" --gemm >"$T/out" || fail "gemm: $(cat "$T/out")"
[ "$(launches "$T/gemm.cu" conv2d_gemm_ref)" -eq 102 ] || fail "gemm launches: $(launches "$T/gemm.cu" conv2d_gemm_ref)"
[ "$(launches "$T/gemm.cu" conv2d_ref)" -eq 0 ] || fail "convolutions left after --gemm"
"$KC_BIN/kverify" check --compile-only --problem "$id" "$T/gemm.cu" >"$T/out" 2>&1 ||
    { cat "$T/out"; fail "the tensor-core DenseNet-201 does not compile as a candidate"; }
grep -q '{"name":"conv2d_gemm_ref","stack_bytes":0,"spill_stores":0,"spill_loads":0,' "$T/out" ||
    fail "conv2d_gemm_ref spills: $(grep -o '{"name":"conv2d_gemm_ref"[^}]*}' "$T/out")"
KC_PROBLEMS="$T/p" "$KC_BIN/kverify" problems --show-reference level3/026_shufflenet >"$T/shuffle.cu" || fail "load 026"
python3 "$tool" "$T/shuffle.cu" "$T/shuffle_gemm.cu" --gemm >/dev/null || fail "gemm 026"
[ "$(launches "$T/shuffle.cu" conv2d_ref_split)/$(launches "$T/shuffle_gemm.cu" conv2d_ref_split)/$(launches "$T/shuffle_gemm.cu" conv2d_split_sum)" = 25/22/22 ] ||
    fail "ShuffleNet's grouped convolutions: $(launches "$T/shuffle_gemm.cu" conv2d_ref_split) splits, $(launches "$T/shuffle_gemm.cu" conv2d_split_sum) sums"
"$KC_BIN/kverify" problems --show-reference level3/001_mlp >"$T/mlp.cu" || fail "load level3/001_mlp"
python3 "$tool" "$T/mlp.cu" "$T/x.cu" >"$T/out" && fail "a reference without splits was rewritten"
grep -q "has no split convolution" "$T/out" || fail "refusal: $(cat "$T/out")"
echo "ok: DenseNet-201 split (518 launch lines) compiles and unsplits to the committed reference; on the tensor cores it compiles without spills; one sum dropped for the control"
