#!/bin/sh
# cost_ab.sh: integrity IV's cost on one GPU with the machine to itself (issue 34's "make bench
# before and after on the same machine"). The throughput batches of make bench (COST_SUITES,
# default level1) run in the order COST_ORDER (default old, new, nopool, new, old; old: the
# pre-integrity-IV tree in .devbuild/base; new: .devbuild/bin as it is; pool/nopool: new with
# KC_MAP_POOL=1/0; COST_COPIES=K imports each reference K times), so a drift of the machine over the call shows as a difference between two
# runs of one binary. Then, if L3_ONLY is set, the level-3 cross-checks of those problems, and
# the layer-diagnosis test. At most 8 files come back: bench.txt (every run), digest.txt (one
# line per verification of each suite, tools/device/digest.py), cc3.txt, layers.txt, summary.txt.
. tools/device/common.sh

bench_one() { # TREE (old|new|pool) RUN
    if [ "$1" = old ]; then dir="$R/.devbuild/base"; bin="$dir/bin"; else dir="$R"; bin="$B"; fi
    pool=; [ "$1" = pool ] && pool=1; [ "$1" = nopool ] && pool=0
    echo "##### $1 run $2" >> "$OUT/bench.txt"
    KC_BIN="$bin" KC_ROOT="$dir" KC_PROBLEMS="$dir/problems" KC_MAP_POOL="$pool" \
        KC_BENCH_PARTS=throughput KC_BENCH_SUITES="${COST_SUITES:-level1}" KC_BENCH_TP_COPIES="${COST_COPIES:-1}" \
        OUT="/tmp/bench_$1_$2" timeout 150 \
        sh "$R/tests/bench/bench_verify.sh" >> "$OUT/bench.txt" 2>&1
    for suite in ${COST_SUITES:-level1}; do
        echo "$1 run $2 $suite: $(cat /tmp/bench_$1_$2/bench/rate_$suite 2>/dev/null || echo n/a)/s;" \
            "$(grep "^$suite verdicts" "$OUT/bench.txt" | tail -1)" >> "$S"
    done
    for suite in ${COST_SUITES:-level1}; do
        grep -i -E "error|fail" "/tmp/bench_$1_$2/bench/throughput_$suite.log" | grep -v "0 errors" | tail -5 \
            | sed "s/^/$suite log: /" >> "$OUT/bench.txt"
        python3 "$R/tools/device/digest.py" "/tmp/bench_$1_$2/bench/throughput_$suite.db" "$1$2-$suite" \
            >> "$OUT/digest.txt" 2>&1
    done
}

note "start: $(nvidia-smi -L | tr '\n' ' ')"
n=0
for t in ${COST_ORDER:-old new nopool new old}; do
    n=$((n + 1))
    bench_one "$t" "$n"
done
note "benches done"
if [ -n "${L3_ONLY:-}" ]; then
    KC_ROOT="$R" KC_PROBLEMS="$R/problems" timeout 200 python3 tools/baselines/crosscheck.py --bin "$B" \
        --suite level3 --only "$L3_ONLY" --dims small,alt,default --seeds 11,12 \
        --out /dev/shm/kc3 --report /tmp/cc3.json > "$OUT/cc3.txt" 2>&1
    note "cross-checks done"
    grep -E "agree|DISAGREES|error|ratio" "$OUT/cc3.txt" | tail -30 >> "$S"
fi
KC_ROOT="$R" KC_PROBLEMS="$R/problems" KC_BIN="$B" OUT=/tmp/layers timeout 120 \
    sh tests/gpu/test_layers.sh > "$OUT/layers.txt" 2>&1
echo "layers: $(tail -1 "$OUT/layers.txt")" >> "$S"
note done
cat "$S"
