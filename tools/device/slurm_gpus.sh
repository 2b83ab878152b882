#!/bin/sh
# slurm_gpus.sh: Slurm with real GPUs (issue 37), for a call on a multi-GPU kind: a one-node
# cluster (tests/cli/slurm_cluster.sh) run from the Debian bundle (carry .devslurm, made here by
# `sh tools/device/slurm_bundle.sh .devslurm`; the host has no Slurm) whose node's GPUs are the
# host's first 4 /dev/nvidiaN; an array of one task per GPU of a collection verified on the GPUs
# (bundled fake LLM, a wrong first turn) with one GPU per task (`kc_slurm.sh submit
# --gpus-per-task 1`), then merge
# and kcurate. Writes $OUT/slurm.txt: each task's GPU, the shards' verdicts, the merged counts.
# Fails (exit 1) when a task did not get exactly one GPU of its own or verified nothing
# correct. A dry run without GPUs (placeholder devices, compile-only): KC_BIN=bin
# KC_SLURM_GPUS=placeholder COLLECT_EXTRA=--compile-only WANT=compiled sh tools/device/slurm_gpus.sh
set -eu
R=$(pwd)
export KC_BIN="${KC_BIN:-$R/.devbuild/bin}" KC_ROOT="$R" KC_PROBLEMS="$R/problems"
export LD_LIBRARY_PATH="$R/.devlibs:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64"
export KC_SLURM_BUNDLE="${KC_SLURM_BUNDLE-$R/.devslurm}" KC_SLURM_GPUS="${KC_SLURM_GPUS:-real}"
WANT=${WANT:-correct}
OUT="${OUT:-/tmp/kc-out}"
mkdir -p "$OUT"
REPORT="$OUT/slurm.txt"
echo "device nodes: $(ls /dev/nvidia* 2>/dev/null | tr '\n' ' ')" >"$REPORT"
. "$R/tests/cli/lib.sh"
skip() { echo "slurm_gpus: cannot run: $*" | tee -a "$REPORT"; exit 1; }
. "$R/tests/cli/slurm_cluster.sh"
start_cluster
echo "cluster up: $(sinfo -h -N -o '%N %T %G')" >>"$REPORT"
# one task per GPU the node declares (4 on the 4-GPU kind, 2 on the 2-GPU kind)
N=$NGPU

D="$C/shared/run"
# the GPU host has Python but maybe no sqlite3 shell
q() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$@"; }
VERDICTS="SELECT group_concat(verdict || ' ' || n, ', ') FROM (SELECT verdict, count(*) n FROM v_latest_verification GROUP BY verdict)"
echo '{"endpoint": "bundled", "bundled_args": "--bug runtime"}' >"$T/kc.json"
t0=$(date +%s)
sh "$R/tools/slurm/kc_slurm.sh" submit --dir "$D" --shards "$N" --gpus-per-task 1 --config "$T/kc.json" \
    -- --problems 'level1/01*,level1/02*' --samples 2 --turns 2 --concurrency 2 ${COLLECT_EXTRA:-} >>"$REPORT" 2>&1 ||
    fail "submit: $(tail -3 "$REPORT")"
wait_idle
echo "array done in $(( $(date +%s) - t0 )) s" >>"$REPORT"
sh "$R/tools/slurm/kc_slurm.sh" status --dir "$D" >>"$REPORT" 2>&1 || fail "a shard did not complete: $(tail -5 "$REPORT")"
gpus=
for s in $(seq 0 $((N - 1))); do
    log=$(ls "$D"/logs/shard-$s-*.out | head -1)
    g=$(sed -n 's/.*GPUs: \([0-9,]*\)).*/\1/p' "$log" | head -1)
    v=$(q "$D/shard-$s.db" "$VERDICTS")
    echo "shard $s: GPU ${g:-none}; verdicts: $v" >>"$REPORT"
    case $g in 0 | 1 | 2 | 3) ;; *) fail "shard $s did not run on one GPU (${g:-none})" ;; esac
    case " $gpus " in *" $g "*) fail "shards share GPU $g" ;; esac
    gpus="$gpus $g"
    q "$D/shard-$s.db" "SELECT count(*) FROM v_latest_verification WHERE verdict = '$WANT'" | grep -qv '^0$' ||
        fail "shard $s has no verdict $WANT"
done
sh "$R/tools/slurm/kc_slurm.sh" merge --dir "$D" >>"$REPORT" 2>&1 || fail "merge: $(tail -3 "$REPORT")"
"$KC_BIN/kcurate" run --db "$D/merged.db" >/dev/null 2>&1 || fail "kcurate run on the merged database"
echo "merged: $(q "$D/merged.db" "SELECT count(*) FROM trajectories") trajectories, $(q "$D/merged.db" "$VERDICTS")" >>"$REPORT"
echo "ok: $N tasks, GPUs$gpus" | tee -a "$REPORT"
