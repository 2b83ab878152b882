#!/bin/sh
# round4.sh: one call of a 4-GPU device machine, laid out so that each GPU works on its own
# (binaries built here and carried in .devbuild/bin, the old tree's in .devbuild/base/bin):
#   GPU 0  make bench's throughput part, old binary then new (the cost of integrity IV), then
#          batched verification's throughput on level 1 (test_batched.sh, COPIES copies)
#   GPU 1  the integrity IV catalogue, REPEAT times (tests/gpu/test_integrity4.sh)
#   GPU 2  the level-3 cross-checks named in L3_ONLY (tools/baselines/crosscheck.py) and the
#          layer diagnosis test (tests/gpu/test_layers.sh, when present)
#   GPU 3  make demo on level 1, then level 2 (tools/demo.sh), timed
# then, with every GPU free again, the bench's scaling part (1 GPU against 4, per-phase tables).
# The GPUs share the host's CPUs: the throughput figures of GPU 0 are old and new side by side
# under the same neighbours. Logs go to $OUT. Steps: ARGS (default "parallel scaling").
set -u
OUT="${OUT:-/tmp/kc-out}"
mkdir -p "$OUT"
R=$(pwd)
export LD_LIBRARY_PATH="$R/.devlibs:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64"
export PYTHONUNBUFFERED=1 KC_ROOT="$R" KC_PROBLEMS="$R/problems"
B="$R/.devbuild/bin"
stamp() { echo "=== $1 ($(date +%T))"; }

gpu0() {
    for tree in old new; do
        if [ $tree = old ]; then dir="$R/.devbuild/base"; bin="$dir/bin"; else dir="$R"; bin="$B"; fi
        (cd "$dir" && CUDA_VISIBLE_DEVICES=0 KC_BIN="$bin" KC_ROOT="$dir" KC_PROBLEMS="$dir/problems" \
            KC_BENCH_PARTS=throughput OUT="/tmp/bench_$tree" timeout 250 sh tests/bench/bench_verify.sh) \
            > "$OUT/bench_$tree.txt" 2>&1
    done
    CUDA_VISIBLE_DEVICES=0 KC_BIN="$B" KC_BATCH_PARTS=throughput KC_BATCH_SUITES="${BATCH_SUITES:-level1}" \
        COPIES="${COPIES:-8}" OUT=/tmp/batched timeout 200 sh tests/gpu/test_batched.sh > "$OUT/batched.txt" 2>&1
}

gpu1() {
    CUDA_VISIBLE_DEVICES=1 KC_BIN="$B" REPEAT="${REPEAT:-20}" OUT=/tmp/i4 timeout 540 \
        sh tests/gpu/test_integrity4.sh > "$OUT/integrity4.txt" 2>&1
}

gpu2() {
    # float64 PyTorch at the default dims tells a reference's error from float32's rounding
    for prec in ${L3_PRECISIONS:-f64 f32}; do
        [ -n "${L3_ONLY:-}" ] || break
        CUDA_VISIBLE_DEVICES=2 timeout 200 python3 tools/baselines/crosscheck.py \
            --bin "$B" --suite level3 --only "$L3_ONLY" --dims small,alt,default --seeds 11 \
            --default-precision "$prec" --out /dev/shm/kc3 --report "$OUT/cc3_$prec.json" \
            > "$OUT/cc3_$prec.txt" 2>&1
    done
    if [ -f tests/gpu/test_layers.sh ]; then
        CUDA_VISIBLE_DEVICES=2 KC_BIN="$B" OUT=/tmp/layers timeout 200 sh tests/gpu/test_layers.sh \
            > "$OUT/layers.txt" 2>&1
    fi
}

gpu3() {
    for suite in level1 level2; do
        rm -rf "/tmp/demo_$suite"
        t0=$(date +%s.%N)
        CUDA_VISIBLE_DEVICES=3 DEMO_PROBLEMS=$suite DEMO_OUT="/tmp/demo_$suite" timeout 240 \
            sh tools/demo.sh .devbuild > "$OUT/demo_$suite.txt" 2>&1
        echo "demo $suite rc=$? $(python3 -c "import time; print(round(time.time() - $t0, 1))") s" >> "$OUT/demo_times.txt"
    done
}

for step in ${*:-parallel scaling}; do
    case $step in
    parallel)
        stamp parallel
        gpu0 & p0=$!; gpu1 & p1=$!; gpu2 & p2=$!; gpu3 & p3=$!
        wait $p0 $p1 $p2 $p3;;
    scaling)
        stamp scaling
        KC_BIN="$B" KC_BENCH_PARTS=scaling OUT=/tmp/scaling timeout 260 sh tests/bench/bench_verify.sh \
            > "$OUT/scaling.txt" 2>&1;;
    esac
done
stamp done
for f in bench_old bench_new batched integrity4 cc3_f64 cc3_f32 layers demo_times scaling; do
    [ -f "$OUT/$f.txt" ] || continue
    echo "--- $f"; grep -E "candidates/s|scaling|PASS|FAIL|ok|DISAGREES|agree|demo|batched:|passed|failed" "$OUT/$f.txt" | tail -14
done
