#!/bin/sh
# test_conv_split: level 3's convolutions split over their input channels (gen_level3.py
# --conv-split: conv2d_ref_split and conv2d_split_sum, problems/shared/conv2d_ref.cuh) and on the
# FP64 tensor cores (tools/problems/unsplit_convs.py --gemm: conv2d_gemm_ref.cuh) compute what
# the committed references (conv2d_ref, the kernel levels 1 and 2 use) compute. For networks
# with many split layers (DenseNet-121's dense block, DenseNet-201, ResNet-18, ShuffleNet's
# grouped convolutions, MobileNet V2) the split reference, and for those and AlexNet the
# tensor-core one, is verified as a candidate against the committed reference and must be
# `correct` at every dims set the verification runs (default, small, alt, hidden, boundary,
# stratified; the split count differs between them, 1 to 16). The control: split DenseNet-201
# with one sum launch dropped (a layer whose output is then never written where its split count
# exceeds 1, as at the default dims: the next layer reads poison) must not be.
. "$KC_ROOT/tests/gpu/lib.sh"
"$KC_BIN/kverify" gpus >/dev/null 2>&1 || { echo "SKIP: no usable GPU"; exit 0; }
work="${TMPDIR:-/tmp}/kc-conv-split"
rm -rf "$work"
mkdir -p "$work/p/level3"
ln -s "$KC_PROBLEMS/shared" "$work/p/shared"
tool="$KC_ROOT/tools/problems/unsplit_convs.py"
python3 "$KC_ROOT/tools/problems/gen_level3.py" --conv-split --only 5,9,14,16,20,26 --out "$work/p/level3" >/dev/null ||
    fail "gen_level3 --conv-split"
verdict() { # id file label: prints the verdict
    "$KC_BIN/kverify" check --problem "$1" "$2" --json --no-timing --sanitizer none >"$work/$3.json" 2>"$work/$3.err"
    cp "$work/$3.json" "$OUT_DIR/conv_split_$3.json" 2>/dev/null
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$work/$3.json" 2>/dev/null || echo "no-result"
}
status=0
for id in level3/014_densenet121_dense_block level3/016_densenet201 level3/009_resnet18 \
          level3/026_shufflenet level3/020_mobilenet_v2 level3/005_alexnet; do
    name=${id#level3/}
    "$KC_BIN/kverify" problems --show-reference "$id" >"$work/$name.cu" || fail "load $id"
    KC_PROBLEMS="$work/p" "$KC_BIN/kverify" problems --show-reference "$id" >"$work/${name}_split.cu" ||
        fail "load the split $id"
    python3 "$tool" "$work/$name.cu" "$work/${name}_gemm.cu" --gemm >/dev/null || fail "gemm $id"
    for mode in split gemm; do
        [ $mode = split ] && [ $name = 005_alexnet ] && continue # its split count is 1 at B = 1024
        v=$(verdict "$id" "$work/${name}_$mode.cu" "${name}_$mode")
        if [ "$v" = correct ]; then
            echo "ok: $id $mode is correct against the reference"
        else
            echo "FAIL: $id $mode against the reference: $v ($(head -c 600 "$work/${name}_$mode.json"))"
            status=1
        fi
    done
done
python3 "$tool" "$work/016_densenet201_split.cu" "$work/drop.cu" --drop-sum 5 >/dev/null || fail "drop-sum"
v=$(verdict level3/016_densenet201 "$work/drop.cu" drop)
case "$v" in correct | no-result) fail "DenseNet-201 with a sum dropped: $v, expected mismatch" ;; esac
echo "ok: the control (a sum dropped) is $v"
[ $status -eq 0 ] || fail "a rewritten network is not correct (above)"
