#!/bin/sh
# test_shard_summary: a shard's kcollect summary counts the shard's problems (issue 35, item 5):
# with --shard I/N it said "problems 10" for every shard of a 10-problem selection, whatever
# the shard held. Now each shard's summary gives the problems of its own trajectories, names the
# shard and the selection's size, and its start line says how many of the problems it holds; an
# unsharded run counts the selection.
set -eu
. "$(dirname "$0")/lib.sh"
SEL='level1/01*'
selected=$(ls "$KC_PROBLEMS"/level1/01*.json | wc -l)
for i in 0 1 2 3; do
    env -u OPENAI_BASE_URL "$KC_BIN/kcollect" --problems "$SEL" --db "$T/s$i.db" --compile-only \
        --turns 2 --samples 2 --shard $i/4 --fake-args "--bug compile" >"$T/o$i" 2>"$T/e$i" ||
        fail "shard $i: $(cat "$T/e$i")"
    held=$(sqlite3 "$T/s$i.db" "SELECT count(DISTINCT problem_id) FROM trajectories")
    [ "$held" -lt "$selected" ] || fail "setup: shard $i holds every problem"
    grep -q "^  problems       $held (shard $i/4's, of the $selected selected), solved " "$T/o$i" ||
        fail "shard $i holds $held problems; its summary: $(grep problems "$T/o$i")"
    grep -q "shard $i/4: $held of the problems)" "$T/e$i" || fail "shard $i start line: $(grep 'starting new run' "$T/e$i")"
done
env -u OPENAI_BASE_URL "$KC_BIN/kcollect" --problems "$SEL" --db "$T/all.db" --compile-only --turns 2 \
    --samples 2 --fake-args "--bug compile" >"$T/o" 2>"$T/e" || fail "unsharded: $(cat "$T/e")"
grep -q "^  problems       $selected, solved " "$T/o" || fail "unsharded summary: $(grep problems "$T/o")"
echo ok
