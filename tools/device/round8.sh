#!/bin/sh
# round8.sh: a short call on a multi-GPU kind (4 GPUs, else 2) for issue 37 (carry .devbuild, .devlibs and
# .devslurm): the bench's scaling part with the start-up split (phases.py's first_jobs: each
# GPU's worker up, first compile, first job) and both batches' databases back, kverify serve
# when SERVE=1, then the Slurm array with one real GPU per task (slurm_gpus.sh; its log's tail
# and report come back).
. tools/device/common.sh

note "start: $(nvidia-smi -L | tr '\n' ' ')"
sh tools/device/init_probe.sh # before any other CUDA process: the GPUs' first open after idle
KC_BIN="$B" KC_BENCH_PARTS=scaling OUT=/tmp/sc timeout 200 sh tests/bench/bench_verify.sh > "$OUT/scaling.txt" 2>&1
note "scaling rc $?"
tar czf "$OUT/scaling_dbs.tgz" -C /tmp/sc/bench scaling_one.db scaling_level1.db 2>/dev/null
grep -E "scaling|split|start-up" "$OUT/scaling.txt" | cut -c1-400 >> "$S"
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
