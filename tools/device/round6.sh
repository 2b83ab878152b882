#!/bin/sh
# round6.sh: the next 4-GPU call (issue 37 and 38), laid out so that what is missing after this
# session's calls comes back in one call: the scaling part alone on the host with both batches'
# databases (tests/bench/phases.py splits their GPU clients' idle time: start-up, between jobs,
# tail), kverify serve, then side by side make demo (level 1, GPU 0), the level-3 eager
# baselines resumed (GPU 1) and make demo on level 3 (GPU 2). At most 8 files come back.
. tools/device/common.sh

note "start: $(nvidia-smi -L | tr '\n' ' ')"
KC_BIN="$B" KC_BENCH_PARTS=scaling OUT=/tmp/sc timeout 180 sh tests/bench/bench_verify.sh > "$OUT/scaling.txt" 2>&1
tar czf "$OUT/scaling_dbs.tgz" -C /tmp/sc/bench scaling_one.db scaling_level1.db 2>/dev/null
grep -E "scaling|split" "$OUT/scaling.txt" | cut -c1-300 >> "$S"
note "serve"
serve 30 256
grep -E "p50|p95|seconds" "$OUT/serve.txt" >> "$S"
note "demo, baselines"
demo() { # GPU SUITE
    t0=$(date +%s)
    CUDA_VISIBLE_DEVICES=$1 DEMO_PROBLEMS=$2 DEMO_OUT="/tmp/demo_$2" timeout 240 \
        sh tools/demo.sh .devbuild > "$OUT/demo_$2.txt" 2>&1
    echo "demo $2 rc=$? $(( $(date +%s) - t0 )) s" >> "$S"
}
demo 0 level1 &
CUDA_VISIBLE_DEVICES=1 timeout 240 python3 tools/baselines/baselines.py --suite level3 --eager \
    --budget-s 200 > "$OUT/baselines3.txt" 2>&1 &
demo 2 level3 &
wait
cp problems/level3/baselines/*.json "$OUT/" 2>/dev/null
note done
cat "$S"
