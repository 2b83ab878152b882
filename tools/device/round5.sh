#!/bin/sh
# round5.sh: the closing call of a session on a 4-GPU device machine (binaries built here and
# carried in .devbuild/bin, the old tree's in .devbuild/base/bin). At most 8 files come back,
# so every step writes one log under $OUT and summary.txt gathers the lines that matter.
#   GPU 1       the integrity IV catalogue, REPEAT times, on one GPU (its cross-candidate
#               check needs one worker's order)
#   GPU 0       make bench's throughput part, old binary then new (with POOL_AB=1 also new with
#               KC_MAP_POOL=1, the mapping pool), nothing else on GPU 0; then
#               the level-3 cross-checks of L3_ONLY (GPU 2) and the layer test (GPU 3)
#   all four    kverify serve rewarding SERVE_BATCH level-1 completions (tools/baselines/bench_serve.py)
. tools/device/common.sh

catalogue() {
    CUDA_VISIBLE_DEVICES=1 KC_BIN="$B" REPEAT="${REPEAT:-20}" OUT=/tmp/i4 timeout 480 \
        sh tests/gpu/test_integrity4.sh > "$OUT/integrity4.txt" 2>&1
}

bench_then_checks() {
    for tree in old new ${POOL_AB:+pool}; do
        if [ $tree = old ]; then dir="$R/.devbuild/base"; bin="$dir/bin"; else dir="$R"; bin="$B"; fi
        pool=0; [ $tree = pool ] && pool=1
        (cd "$dir" && CUDA_VISIBLE_DEVICES=0 KC_BIN="$bin" KC_ROOT="$dir" KC_PROBLEMS="$dir/problems" \
            KC_MAP_POOL=$pool KC_BENCH_PARTS=throughput OUT="/tmp/bench_$tree" timeout 250 \
            sh tests/bench/bench_verify.sh) > "$OUT/bench_$tree.txt" 2>&1
    done
    if [ -n "${L3_ONLY:-}" ]; then
        CUDA_VISIBLE_DEVICES=2 timeout 200 python3 tools/baselines/crosscheck.py --bin "$B" \
            --suite level3 --only "$L3_ONLY" --dims small,alt,default --seeds 11,12 \
            --out /dev/shm/kc3 --report /tmp/cc3.json > "$OUT/cc3.txt" 2>&1 &
    fi
    CUDA_VISIBLE_DEVICES=3 KC_BIN="$B" OUT=/tmp/layers timeout 200 sh tests/gpu/test_layers.sh \
        > "$OUT/layers.txt" 2>&1
    wait
}


note "start: $(nvidia-smi -L | tr '\n' ' ')"
catalogue & pc=$!
bench_then_checks
note "bench and checks done"
wait $pc
note "catalogue done"
serve "${SERVE_SINGLE:-30}" "${SERVE_BATCH:-256}"
note done
for f in bench_old bench_new bench_pool integrity4 cc3 layers serve; do
    [ -f "$OUT/$f.txt" ] || continue
    echo "--- $f" >> "$S"
    grep -E "candidates/s|PASS|FAIL|ok:|ok |DISAGREES|agree|passed|failed|p50|p95|batch|seconds|error" \
        "$OUT/$f.txt" | tail -40 >> "$S"
done
cat "$S"
