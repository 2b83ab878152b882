#!/bin/sh
# bench_merge_shards: the merge step of a Slurm job array (tools/slurm/kc_slurm.sh merge) at
# scale: `kcurate merge` of KC_BENCH_SHARDS (default 64) synthetic shard databases of
# KC_BENCH_SHARD_CANDIDATES (default 10,000) candidates each (kc_synth, a seed and run tag per
# shard), into one new database. Prints the time to generate, the merge time, candidates merged
# per second and the sizes. The shards are generated once into $KC_BENCH_DIR/shards-S-C
# (default /tmp/kc-bench); the merged output is removed at the end.
#   KC_BIN=<build>/bin sh tests/bench/bench_merge_shards.sh
set -eu
BIN="${KC_BIN:?}"
S="${KC_BENCH_SHARDS:-64}"
C="${KC_BENCH_SHARD_CANDIDATES:-10000}"
DIR="${KC_BENCH_DIR:-/tmp/kc-bench}/shards-$S-$C"
mkdir -p "$DIR"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
if [ ! -f "$DIR/.done" ]; then
    rm -f "$DIR"/shard-*
    echo "generating $S shards of $C synthetic candidates into $DIR (once)..."
    t0=$(now)
    i=0
    while [ $i -lt "$S" ]; do
        "$BIN/kc_synth" --db "$DIR/shard-$i.db" --candidates "$C" --problems 100 \
            --seed $((1000 + i)) --run-tag "shard$i" >/dev/null
        i=$((i + 1))
    done
    echo "generated in $(since "$t0") s"
    touch "$DIR/.done"
fi
echo "machine: $(nproc) CPU(s), $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
OUT="$DIR/merged.db"
rm -f "$OUT" "$OUT-wal" "$OUT-shm"
shards=$(i=0; while [ $i -lt "$S" ]; do printf '%s ' "$DIR/shard-$i.db"; i=$((i + 1)); done)
t0=$(now)
# shellcheck disable=SC2086 # the shard paths
"$BIN/kcurate" merge $shards -o "$OUT" | tail -1
secs=$(since "$t0")
n=$(sqlite3 "$OUT" "SELECT count(*) FROM candidates")
echo "merge of $S shards x $C candidates: $secs s ($n candidates, $(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%d", n / s }') candidates/s);" \
     "shards $(du -sh "$DIR" --exclude=merged.db | cut -f1), merged $(du -h "$OUT" | cut -f1)"
[ "$n" -eq $((S * C)) ] || { echo "merged $n candidates, expected $((S * C))"; exit 1; }
rm -f "$OUT" "$OUT-wal" "$OUT-shm"
