#!/bin/sh
# test_fail_fast: a dead endpoint stops kcollect within seconds, naming it (issue 24).
# - Nothing listens at the URL (refused), or its host does not resolve: refused before anything
#   is written (no database file, no run in an existing database), in well under the minutes
#   per-trajectory retries took.
# - The endpoint dies in the middle of a run: a few connection failures in a row, across
#   trajectories, stop the run naming the endpoint instead of retrying every trajectory.
# - A live endpoint's transient failures (resets, 500s) are still ridden out.
set -eu
. "$(dirname "$0")/lib.sh"
[ -n "${KEEP:-}" ] && trap - EXIT
ARGS="--problems level1/019_relu --model m --compile-only --samples 4 --turns 2"

# Refused: port of a server that has just stopped.
start_server --bug compile
DEAD="$URL"
stop_server
for ep in "$DEAD" "http://kcorpus-no-such-host.invalid/v1"; do
    t0=$(date +%s)
    rc=0
    "$KC_BIN/kcollect" $ARGS --endpoint "$ep" --db "$T/new.db" >"$T/o" 2>"$T/e" || rc=$?
    t1=$(date +%s)
    [ $rc -ne 0 ] || fail "$ep: a dead endpoint exited 0"
    [ $((t1 - t0)) -le 5 ] || fail "$ep: took $((t1 - t0)) s to notice a dead endpoint"
    grep -q "cannot reach the endpoint $ep" "$T/e" || fail "$ep: the endpoint is not named: $(cat "$T/e")"
    grep -q "retry:" "$T/e" && fail "$ep: retried a dead endpoint: $(cat "$T/e")"
    [ ! -e "$T/new.db" ] || fail "$ep: a database was left behind"
done

# An existing database gets no empty run.
start_server --bug compile
"$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model m --compile-only --turns 1 \
    --db "$T/old.db" >"$T/o" 2>"$T/e" || { cat "$T/e"; fail "live run failed"; }
stop_server
rc=0
"$KC_BIN/kcollect" $ARGS --endpoint "$DEAD" --db "$T/old.db" >"$T/o" 2>"$T/e" || rc=$?
[ $rc -ne 0 ] || fail "dead endpoint with an existing database exited 0"
[ "$(sqlite3 "$T/old.db" 'SELECT count(*) FROM runs')" = 1 ] || fail "an empty run was left behind"

# Dies mid-run: every answer takes 300 ms; the server is killed after the first turns.
start_server --bug compile --delay-ms 300
"$KC_BIN/kcollect" --problems level1 --endpoint "$URL" --model m --compile-only --turns 4 \
    --samples 2 --concurrency 4 --db "$T/mid.db" >"$T/o" 2>"$T/e" &
KC=$!
i=0
while [ "$( { [ -s "$T/mid.db" ] && sqlite3 "$T/mid.db" 'SELECT count(*) FROM turns'; } 2>/dev/null || echo 0)" -lt 2 ]; do
    i=$((i + 1)); [ $i -lt 200 ] || fail "no turn recorded: $(cat "$T/e")"; sleep 0.1
done
stop_server
t0=$(date +%s)
rc=0
wait $KC || rc=$?
t1=$(date +%s)
[ $rc -ne 0 ] || fail "a run whose endpoint died exited 0"
[ $((t1 - t0)) -le 15 ] || fail "took $((t1 - t0)) s to stop after the endpoint died"
grep -q "stopped: $URL.*reached no server" "$T/e" || fail "the dead endpoint is not named: $(tail -5 "$T/e")"
[ "$(grep -c 'retry:' "$T/e")" -le 6 ] || fail "kept retrying a dead endpoint: $(grep -c 'retry:' "$T/e") retries"

# A live endpoint's resets and 500s are retried as before.
start_server --bug compile --faults "reset,500,reset,reset,500"
"$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model m --compile-only --turns 1 \
    --backoff-ms 20 --db "$T/live.db" >"$T/o" 2>"$T/e" || { cat "$T/e"; fail "transient failures stopped the run"; }
[ "$(sqlite3 "$T/live.db" "SELECT status FROM trajectories")" = done ] || fail "trajectory not done"
stop_server
echo ok
