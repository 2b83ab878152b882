#!/bin/sh
# test_shared_gpu: what kverify computes does not depend on what else runs on the GPU. Beside a
# neighbour process (tests/gpu/gpu_neighbour.py: 40 GB held, matrix products without pause),
# for level-2 references whose chains pass through scratch buffers at default dims: (1) `kverify
# dump` twice gives bit-identical reference outputs (the references sum in a fixed order in
# double, so any difference is a race), and (2) each reference verified as a candidate (3 seeds,
# no timing) is correct. Until the worker wrote its buffers' guard pattern on its own stream, a
# memset on the legacy stream landed after the reference's first kernels beside such a
# neighbour: the dumps differed (1 of 128 and 58,172 of 8.4 M values) and disagreed with
# PyTorch. Skips without torch (the neighbour is a PyTorch process).
. "$KC_ROOT/tests/gpu/lib.sh"
if ! python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    echo "SKIP test_shared_gpu: python3 with torch and CUDA not found (the neighbour process needs them)"
    exit 0
fi
PROBLEMS="level2/063_gemm_relu_divide level2/065_conv2d_avg_pool_sigmoid_sum level2/052_conv2d_activation_batch_norm"
dir="${TMPDIR:-/tmp}/kc-shared-gpu"
rm -rf "$dir"; mkdir -p "$dir"
python3 "$KC_ROOT/tests/gpu/gpu_neighbour.py" 40 > "$dir/neighbour.log" 2>&1 &
neighbour=$!
trap 'kill $neighbour 2>/dev/null; rm -rf "$dir"' EXIT
i=0
until grep -q ready "$dir/neighbour.log"; do
    i=$((i + 1)); [ $i -lt 600 ] || fail "the neighbour process did not start: $(tail -3 "$dir/neighbour.log")"
    sleep 0.1
done
status=0
for id in $PROBLEMS; do
    n=$(echo "$id" | tr / _)
    for rep in 1 2; do
        "$KC_BIN/kverify" dump --problem "$id" --seed 11 --dims default --out "$dir/$n-$rep" >/dev/null ||
            fail "dump $id"
    done
    for f in "$dir/$n-1"/*.npy; do
        if cmp -s "$f" "$dir/$n-2/$(basename "$f")"; then
            echo "PASS dump $id $(basename "$f"): identical twice beside a busy neighbour"
        else
            echo "FAIL dump $id $(basename "$f"): differs between two dumps beside a busy neighbour"
            status=1
        fi
    done
    rm -rf "$dir/$n-1" "$dir/$n-2"
    "$KC_BIN/kverify" problems --show-reference "$id" > "$dir/$n.cu" || fail "show-reference $id"
    verdict=$("$KC_BIN/kverify" check --problem "$id" "$dir/$n.cu" --no-timing --n-seeds 3 --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["verdict"])')
    if [ "$verdict" = correct ]; then
        echo "PASS check $id: the reference as a candidate is correct beside a busy neighbour"
    else
        echo "FAIL check $id: the reference as a candidate is $verdict beside a busy neighbour"
        status=1
    fi
done
[ "$status" -eq 0 ] || fail "results depend on a neighbour process"
echo "shared GPU: dumps identical and references correct beside a busy neighbour"
