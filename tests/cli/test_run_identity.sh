#!/bin/sh
# test_run_identity: re-running with more turns, more samples and another spelling of the same
# endpoint (localhost, a trailing slash) continues the run: ended trajectories get their next
# turn, new samples are added, nothing is duplicated, and the screen says so with the counts. A
# changed sampling setting starts a new run that says why and how many trajectories it adds.
# kexport keeps runs apart (--run, --model) and its manifest says when they mix.
set -eu
. "$(dirname "$0")/lib.sh"
start_server --bug compile
DB="$T/kc.db"
q() { sqlite3 "$DB" "$1"; }
PORT=$(echo "$URL" | sed 's|.*:\([0-9]*\)/v1|\1|')
run() { "$KC_BIN/kcollect" --problems level1/019_relu,level1/023_softmax --model fake --db "$DB" \
    --compile-only "$@"; }

run --endpoint "http://127.0.0.1:$PORT/v1" --turns 1 --samples 2 >/dev/null 2>"$T/e1" ||
    { cat "$T/e1"; fail "first run"; }
[ "$(q "SELECT count(*) FROM trajectories WHERE stop_reason = 'turns'")" = 4 ] || fail "4 trajectories should stop at 1 turn"
grep -q "starting new run 1 .*it will add 4 trajectories" "$T/e1" || fail "first run: $(grep run "$T/e1")"

# More turns, one more sample, localhost with a trailing slash: the same run.
run --endpoint "http://localhost:$PORT/v1/" --turns 2 --samples 3 >/dev/null 2>"$T/e2" ||
    { cat "$T/e2"; fail "second run"; }
[ "$(q 'SELECT count(*) FROM runs')" = 1 ] || fail "a new run was started: $(grep run "$T/e2")"
grep -q "continuing run 1 .*it will add 2 trajectories and extend 4 ended ones" "$T/e2" ||
    fail "the continuation does not say what it adds: $(grep run "$T/e2")"
[ "$(q 'SELECT count(*) FROM trajectories')" = 6 ] || fail "expected 6 trajectories, got $(q 'SELECT count(*) FROM trajectories')"
[ "$(q 'SELECT count(*) FROM turns')" = 12 ] || fail "expected 12 turns (2 per trajectory), got $(q 'SELECT count(*) FROM turns')"
[ "$(q "SELECT count(*) FROM trajectories WHERE stop_reason = 'first_compiled'")" = 6 ] ||
    fail "extended trajectories did not reach their correct second turn"
[ "$(q 'SELECT count(*) FROM (SELECT trajectory_id, turn_index FROM turns GROUP BY 1, 2 HAVING count(*) > 1)')" = 0 ] ||
    fail "a turn was recorded twice"

# The same command again: nothing to add or extend.
run --endpoint "http://localhost:$PORT/v1/" --turns 2 --samples 3 >/dev/null 2>"$T/e3"
grep -q "continuing run 1 .*it will add 0 trajectories and extend 0 ended ones" "$T/e3" || fail "rerun: $(grep run "$T/e3")"

# Another temperature: a new run, which says why and what it adds.
"$KC_BIN/kcollect" --problems level1/019_relu --model fake --db "$DB" --compile-only \
    --endpoint "$URL" --turns 2 --temperature 0.5 >/dev/null 2>"$T/e4" || { cat "$T/e4"; fail "new run"; }
[ "$(q 'SELECT count(*) FROM runs')" = 2 ] || fail "a changed temperature did not start a new run"
grep -q "starting new run 2 .*it will add 1 trajectories" "$T/e4" || fail "new run: $(grep run "$T/e4")"
grep -q "not a continuation of run 1: sampling.temperature unset -> 0.5" "$T/e4" ||
    fail "the new run does not say why: $(grep continuation "$T/e4")"

# Exports keep runs apart, and say when they mix.
"$KC_BIN/kcurate" run --db "$DB" >/dev/null
X="--db $DB --no-gzip --format multiturn --verdict any --split train,valid,test,heldout --dedup none"
"$KC_BIN/kexport" $X --out "$T/all" >/dev/null 2>"$T/w"
grep -q "mixes 2 runs" "$T/w" || fail "kexport does not warn that runs mix"
m() { sqlite3 :memory: "SELECT json_extract(readfile('$1/manifest.json'), '\$.provenance.$2')"; }
[ "$(m "$T/all" mixed_runs)" = 1 ] && [ "$(m "$T/all" 'runs[1].records')" = 1 ] || fail "manifest: runs not said mixed"
"$KC_BIN/kexport" $X --out "$T/one" --run 1 >/dev/null 2>"$T/w1"
[ "$(m "$T/one" mixed_runs)" = 0 ] && [ "$(cat "$T"/one/*.jsonl | wc -l)" = 6 ] || fail "--run 1 did not keep run 1 alone"
! grep -q "mixes" "$T/w1" || fail "a single-run export warned of mixing"
[ "$(cat "$T"/one/*.jsonl | grep -c '"run_id":2')" = 0 ] || fail "--run 1 exported a record of run 2"
rc=0
"$KC_BIN/kexport" $X --out "$T/none" --model other-model >/dev/null 2>"$T/none.err" || rc=$?
[ $rc -ne 0 ] || fail "--model other-model (no such model) exited 0"
grep -q -- "--model other-model matches nothing" "$T/none.err" || fail "the unmatched filter is not named"
[ "$(cat "$T"/none/*.jsonl 2>/dev/null | wc -l)" = 0 ] || fail "--model other-model exported records"
echo ok
