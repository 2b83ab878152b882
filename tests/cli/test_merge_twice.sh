#!/bin/sh
# test_merge_twice: two databases that each ran the same collection (the same run identity: the
# same command on two machines) merge (issue 35, item 15; it failed with SQLite's "UNIQUE
# constraint failed: trajectories.run_id, ..."). A trajectory (run, problem, sample) collected
# twice with the same answers is kept once: the merge adds nothing of it, and merging again adds
# nothing at all. Collected twice with other answers, the second is kept apart in a run of its
# own (the identity plus "collected_again": the run key and the source database), said on screen,
# while the source's other trajectories join the run; kcollect with the same command continues
# the first run; kcurate, stats and kexport --run work on the result.
set -eu
. "$(dirname "$0")/lib.sh"
count() { sqlite3 "$1" "SELECT count(*) FROM $2"; }
TABLES="runs trajectories turns requests responses candidates compiles verifications"

# 1. The same answers (the bundled server answers the same command the same way).
for d in a b; do
    env -u OPENAI_BASE_URL "$KC_BIN/kcollect" --problems 'level1/01[0-2]*' --db "$T/$d.db" --compile-only \
        --turns 2 --fake-args "--bug compile" >/dev/null 2>"$T/e" || fail "kcollect $d: $(cat "$T/e")"
done
[ "$(sqlite3 "$T/a.db" 'SELECT run_key FROM runs')" = "$(sqlite3 "$T/b.db" 'SELECT run_key FROM runs')" ] ||
    fail "setup: not the same run identity"
"$KC_BIN/kcurate" merge "$T/a.db" "$T/b.db" -o "$T/same.db" >"$T/o" 2>"$T/e" || fail "merge of the same run twice: $(cat "$T/e")"
grep -q "3 trajectories were collected twice with the same answers .*: kept once" "$T/o" || fail "summary: $(cat "$T/o")"
for t in $TABLES; do
    [ "$(count "$T/same.db" $t)" = "$(count "$T/a.db" $t)" ] || fail "same answers: $t $(count "$T/same.db" $t), one collection has $(count "$T/a.db" $t)"
done
"$KC_BIN/kcurate" merge "$T/a.db" "$T/b.db" -o "$T/same.db" >"$T/o" 2>"$T/e" || fail "merging again: $(cat "$T/e")"
grep -q ": 0 rows added, .*0 blobs and 0 problems added" "$T/o" || fail "merging again added rows: $(cat "$T/o")"
"$KC_BIN/kcurate" merge "$T/b.db" -o "$T/a.db" >"$T/o" 2>"$T/e" || fail "merge into one of them: $(cat "$T/e")"
for t in $TABLES; do
    [ "$(count "$T/a.db" $t)" = "$(count "$T/b.db" $t)" ] || fail "b into a: $t"
done
"$KC_BIN/kcurate" verify-db --db "$T/same.db" >/dev/null || fail "verify-db of the merge"

# 2. Other answers: the same endpoint (one port) answering otherwise the second time.
start_server --bug compile
port=$(sed -n 's/.*:\([0-9]*\)$/\1/p' "$T/server.out")
C="--problems level1/019_relu,level1/023_softmax --endpoint $URL --model m --compile-only --turns 2"
"$KC_BIN/kcollect" $C --samples 2 --db "$T/c.db" >/dev/null 2>"$T/e" || fail "kcollect c: $(cat "$T/e")"
stop_server
start_server --port "$port"
"$KC_BIN/kcollect" $C --samples 3 --db "$T/d.db" >/dev/null 2>"$T/e" || fail "kcollect d: $(cat "$T/e")"
stop_server
[ "$(sqlite3 "$T/c.db" 'SELECT run_key FROM runs')" = "$(sqlite3 "$T/d.db" 'SELECT run_key FROM runs')" ] ||
    fail "setup: not the same run identity"
"$KC_BIN/kcurate" merge "$T/c.db" "$T/d.db" -o "$T/two.db" >"$T/o" 2>"$T/e" || fail "merge of other answers: $(cat "$T/e")"
grep -q "4 trajectories were collected twice with other answers .*kept apart in run 2" "$T/o" || fail "summary: $(cat "$T/o")"
q() { sqlite3 "$T/two.db" "$1"; }
[ "$(q "SELECT run_id || ':' || count(*) FROM trajectories GROUP BY run_id ORDER BY run_id" | tr '\n' ' ')" = "1:6 2:4 " ] ||
    fail "trajectories per run: $(q 'SELECT run_id, count(*) FROM trajectories GROUP BY 1')"
[ "$(q "SELECT json_extract(identity_json, '\$.collected_again.run_key') = (SELECT run_key FROM runs WHERE id = 1)
     AND json_extract(identity_json, '\$.collected_again.database') = '$(sqlite3 "$T/d.db" "SELECT value FROM db_info WHERE key = 'uuid'")'
     AND run_key <> (SELECT run_key FROM runs WHERE id = 1) FROM runs WHERE id = 2")" = 1 ] ||
    fail "the run kept apart: $(q 'SELECT run_key, identity_json FROM runs WHERE id = 2')"
for t in turns candidates verifications; do
    [ "$(count "$T/two.db" $t)" = "$(($(count "$T/c.db" $t) + $(count "$T/d.db" $t)))" ] || fail "other answers: $t lost or doubled"
done
"$KC_BIN/kcurate" merge "$T/c.db" "$T/d.db" -o "$T/two.db" >"$T/o" 2>"$T/e" || fail "merging again: $(cat "$T/e")"
grep -q ": 0 rows added, " "$T/o" || fail "merging other answers again added rows: $(cat "$T/o")"
"$KC_BIN/kcurate" verify-db --db "$T/two.db" >/dev/null || fail "verify-db of the merge with a run kept apart"
# the same command continues the first run
start_server --port "$port"
"$KC_BIN/kcollect" $C --samples 3 --db "$T/two.db" >/dev/null 2>"$T/e" || fail "kcollect on the merge: $(cat "$T/e")"
stop_server
grep -q "continuing run 1 " "$T/e" || fail "the same command does not continue run 1: $(grep run "$T/e")"
"$KC_BIN/kcurate" run --db "$T/two.db" >/dev/null || fail "kcurate run"
"$KC_BIN/kcurate" stats --db "$T/two.db" >"$T/s" || fail "kcurate stats"
grep -q "level1 · m · loop · compile-only: 2 problems (- solved), 10 samples" "$T/s" || fail "stats: $(grep ' · m' "$T/s")"
"$KC_BIN/kexport" --db "$T/two.db" --out "$T/x" --format multiturn --verdict any --run 2 --no-gzip \
    --split train,valid,test,heldout >/dev/null 2>"$T/e" || fail "kexport --run 2: $(cat "$T/e")"
[ "$(cat "$T"/x/*.jsonl | wc -l)" = 4 ] || fail "kexport --run 2: not its 4 trajectories"
echo ok
