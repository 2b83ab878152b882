#!/bin/sh
# round9.sh: issue 37's RL-shaped batches and the demos on one H100 alone (carry .devbuild and
# .devlibs), in calls of at most 600 s. PART=1: 8 distinct candidates a problem (level 1's and
# level 2's first 19 problems, all 10 of attention), verified without batches (--batch 1) and
# with them (--batch 8), side by side, every protection on (targets 4.5 / 4 / 3 candidates/s).
# PART=2: make demo on level 2 (target 60 s) and on level 3, with each step's seconds.
. tools/device/common.sh
note "start part ${PART:-1}: $(nvidia-smi -L | tr '\n' ' ')"
if [ "${PART:-1}" = 1 ]; then
    for suite in level1 level2 attention; do
        only='0[01]*'; [ "$suite" = attention ] && only='*'
        for b in 1 8; do
            KC_BIN="$B" KC_BENCH_PARTS=throughput KC_BENCH_SUITES=$suite KC_BENCH_ONLY="$only" \
                KC_BENCH_TP_COPIES=8 KC_BENCH_RUN_ARGS="--batch $b" OUT=/tmp/rl \
                timeout 170 sh tests/bench/bench_verify.sh > "$OUT/rl_${suite}_b$b.txt" 2>&1
            echo "$suite x8 --batch $b: $(grep -m1 'candidates/s' "$OUT/rl_${suite}_b$b.txt" | sed 's/.*verified/verified/' | cut -c1-120)" >> "$S"
        done
    done
else
    for suite in level2 level3; do
        rm -rf "/tmp/demo_$suite"
        t0=$(date +%s)
        DEMO_PROBLEMS=$suite DEMO_OUT="/tmp/demo_$suite" timeout 280 sh tools/demo.sh .devbuild \
            > "$OUT/demo_$suite.txt" 2>&1
        echo "demo $suite rc=$? $(( $(date +%s) - t0 )) s; $(grep 'demo: seconds' "$OUT/demo_$suite.txt")" >> "$S"
    done
fi
note done
cat "$S"
