#!/bin/sh
# round7.sh: one call on the 4-GPU kind for issue 37 (carry .devbuild, .devlibs and .devslurm):
# the bench's scaling part alone on the host, with both batches' databases back (phases.py splits
# the GPU clients' idle time: start-up, between jobs, tail); kverify serve rewarding 256
# level-1 completions; then the Slurm array with one real GPU per task (slurm_gpus.sh).
# At most 8 files come back: summary, scaling.txt, the databases, serve.txt, slurm.txt.
. tools/device/common.sh

note "start: $(nvidia-smi -L | tr '\n' ' ')"
KC_BIN="$B" KC_BENCH_PARTS=scaling OUT=/tmp/sc timeout 200 sh tests/bench/bench_verify.sh > "$OUT/scaling.txt" 2>&1
note "scaling rc $?"
tar czf "$OUT/scaling_dbs.tgz" -C /tmp/sc/bench scaling_one.db scaling_level1.db 2>/dev/null
grep -E "scaling|split" "$OUT/scaling.txt" | cut -c1-300 >> "$S"
note "serve"
serve 10 256
grep -E "p50|p95|seconds" "$OUT/serve.txt" >> "$S"
note "slurm"
OUT="$OUT" timeout 200 sh tools/device/slurm_gpus.sh > /tmp/slurm_run.txt 2>&1
note "slurm rc $?"
tail -20 /tmp/slurm_run.txt > "$OUT/slurm_run_tail.txt"
tail -8 "$OUT/slurm.txt" >> "$S" 2>/dev/null
note done
cat "$S"
