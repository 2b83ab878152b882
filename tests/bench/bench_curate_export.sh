#!/bin/sh
# bench_curate_export: kcurate and kexport on 1,000,000 synthetic candidates (kc_synth).
# Prints the dedup seconds (exact + MinHash, as measured by kcurate) and the export throughput in
# MB/s of JSONL before compression (sft, every turn, no filters): plain JSONL, gzip at the default
# level (6) and gzip level 1. Targets on a 2-core machine: dedup <= 60 s, export >= 100 MB/s.
# The database is generated once and kept in $KC_BENCH_DIR (default /tmp/kc-bench);
# KC_BENCH_CANDIDATES changes the size.
#   KC_BIN=<build>/bin sh tests/bench/bench_curate_export.sh
set -eu
BIN="${KC_BIN:?}"
N="${KC_BENCH_CANDIDATES:-1000000}"
DIR="${KC_BENCH_DIR:-/tmp/kc-bench}"
DB="$DIR/synth-$N.db"
mkdir -p "$DIR"
if [ ! -f "$DB.done" ]; then
    rm -f "$DB" "$DB-wal" "$DB-shm"
    echo "generating $N synthetic candidates into $DB (once)..."
    start=$(date +%s)
    "$BIN/kc_synth" --db "$DB" --candidates "$N" --problems 100 --page-size 16384
    echo "generated in $(( $(date +%s) - start )) s"
    touch "$DB.done"
fi
echo "machine: $(nproc) CPU(s), $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
echo "\$ kcurate run --db $DB"
out=$("$BIN/kcurate" run --db "$DB")
echo "$out"
dedup=$(echo "$out" | sed -n 's/.*dedup \([0-9.]*\) s.*/\1/p')
summary="dedup (exact + MinHash) of $N candidates: $dedup s (target <= 60)"
for mode in --no-gzip "" "--gzip-level 6"; do
    rm -rf "$DIR/export"
    echo "\$ kexport --db $DB --out $DIR/export --format sft --every-turn --verdict any --dedup none $mode"
    # shellcheck disable=SC2086 # $mode is one or two words
    line=$("$BIN/kexport" --db "$DB" --out "$DIR/export" --format sft --every-turn --verdict any \
        --dedup none $mode | head -1)
    echo "$line"
    summary="$summary
export ${mode:---gzip (default level 1)}: $(echo "$line" | sed -n 's/.*(\([0-9.]*\) MB\/s).*/\1/p') MB/s of JSONL (target >= 100)"
done
rm -rf "$DIR/export"
echo "== summary"
echo "$summary"
