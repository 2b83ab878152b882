#!/bin/sh
# round8.sh: a short call on a multi-GPU kind (4 GPUs, else 2) for issue 37 (carry .devbuild, .devlibs and
# .devslurm): the bench's scaling part with the start-up split (phases.py's first_jobs: each
# GPU's worker up, first compile, first job), twice: compile servers starting all at once and 8
# at a time (SPAWN_AB="64 8"; KC_COMPILE_SPAWN_AT_ONCE), each pass's databases back, kverify serve
# when SERVE=1, then the Slurm array with one real GPU per task (slurm_gpus.sh; its log's tail
# and report come back).
. tools/device/common.sh

note "start: $(nvidia-smi -L | tr '\n' ' ')"
sh tools/device/init_probe.sh # before any other CUDA process: the GPUs' first open after idle
# a short batch first, so that neither pass below pays the fresh machine's cold page cache
KC_BIN="$B" KC_BENCH_PARTS=throughput KC_BENCH_SUITES=level1 KC_BENCH_ONLY='00*' OUT=/tmp/warmup \
    timeout 100 sh tests/bench/bench_verify.sh > /dev/null 2>&1
# before and after in one call: compile servers all starting at once (64, the old behaviour)
# against at most 8 at a time (the default since the seventh session)
for at_once in ${SPAWN_AB:-64 8}; do
    KC_COMPILE_SPAWN_AT_ONCE=$at_once KC_BIN="$B" KC_BENCH_PARTS=scaling OUT=/tmp/sc timeout 200 \
        sh tests/bench/bench_verify.sh > "$OUT/scaling_$at_once.txt" 2>&1
    note "scaling, compile servers starting $at_once at once: rc $?"
    tar czf "$OUT/scaling_dbs_$at_once.tgz" -C /tmp/sc/bench scaling_one.db scaling_level1.db 2>/dev/null
    grep -E "scaling|split|start-up" "$OUT/scaling_$at_once.txt" | cut -c1-400 >> "$S"
done
if [ -n "${SERVE:-}" ]; then # kverify serve rewarding 256 level-1 completions (common.sh)
    note "serve"
    serve 10 256
    grep -E "p50|p95|seconds" "$OUT/serve.txt" >> "$S"
fi
note "slurm"
OUT="$OUT" timeout 200 sh tools/device/slurm_gpus.sh > /tmp/slurm_run.txt 2>&1
note "slurm rc $?"
tail -40 /tmp/slurm_run.txt > "$OUT/slurm_run_tail.txt"
tail -8 "$OUT/slurm.txt" >> "$S" 2>/dev/null
note done
cat "$S"
