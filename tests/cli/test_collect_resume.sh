#!/bin/sh
# test_collect_resume: kill -9 at any moment, then the same command again,
# finishes the run with no turn lost or duplicated and no answer paid twice.
# First at chosen points (KC_COLLECT_CRASH: right after a paid answer is stored
# and before its turn is recorded; right after a turn is recorded), then a
# second copy of the command (refused), SIGINT, kill -9 at random moments; then the run is finished and the database and the fake
# server's request counts are checked.
set -eu
. "$(dirname "$0")/lib.sh"

start_server --bug compile --delay-ms 40
DB="$T/kc.db"
q() { sqlite3 "$DB" "$1"; }
stat_count() { sqlite3 :memory: "SELECT count(*) FROM json_each(json_extract(readfile('$T/stats.json'), '\$.$1')) WHERE value > 1"; }
run() { "$KC_BIN/kcollect" $ARGS "$@" >>"$T/log" 2>&1; }
ARGS="--problems level1/019_relu,level1/023_softmax --endpoint $URL --model fake \
        --db $DB --samples 2 --turns 3 --compile-only"

paid_stored() { q "SELECT count(*) FROM responses WHERE from_cache = 0"; }
answered() { sqlite3 :memory: "SELECT json_extract(readfile('$T/stats.json'), '\$.answered')"; }

# Chosen crash points, one request in flight at a time (the concurrency is not
# part of the run's identity): each run dies there (exit 137), the next goes
# on, and every answer the server gave is stored exactly once.
for point in response_stored:1 turn_recorded:2 response_stored:2 turn_recorded:1; do
    rc=0
    KC_COLLECT_CRASH=$point run --concurrency 1 || rc=$?
    [ $rc -eq 137 ] || fail "KC_COLLECT_CRASH=$point: expected death by SIGKILL, got exit $rc"
done
[ "$(stat_count answered_bodies)" = 0 ] || fail "an answer was paid twice after crashes at chosen points"
[ "$(answered)" = "$(paid_stored)" ] || fail "server answered $(answered), database holds $(paid_stored)"

# The same command twice at once: the second refuses (it would pay twice).
started=$(grep -c "ing run 1 " "$T/log" || true)
(exec "$KC_BIN/kcollect" $ARGS --concurrency 1 >>"$T/log" 2>&1) &
first=$!
i=0
while [ "$(grep -c "ing run 1 " "$T/log" || true)" -le "$started" ]; do   # it holds the lock
    i=$((i + 1)); [ $i -lt 200 ] || fail "the first copy did not start"; sleep 0.05
done
rc=0
"$KC_BIN/kcollect" $ARGS >"$T/second" 2>&1 || rc=$?
kill -9 $first 2>/dev/null || true
wait $first 2>/dev/null || true
[ $rc -eq 1 ] && grep -q "already in progress" "$T/second" || fail "a second copy of the run was not refused: $(cat "$T/second")"

# SIGINT: the run stops soon, says so, and is marked interrupted.
started=$(grep -c "ing run 1 " "$T/log" || true)
# (SIGINT at its default: a script's background job would start with it ignored, which kcollect
# respects)
(exec env --default-signal=INT "$KC_BIN/kcollect" $ARGS --concurrency 1 >"$T/int.out" 2>>"$T/log") &
pid=$!
i=0
while [ "$(grep -c "ing run 1 " "$T/log" || true)" -le "$started" ]; do
    i=$((i + 1)); [ $i -lt 200 ] || fail "the interrupted copy did not start"; sleep 0.05
done
kill -INT $pid
rc=0
wait $pid || rc=$?
if [ $rc -ne 0 ]; then   # it may have finished its last turns before the signal
    [ $rc -eq 130 ] || fail "SIGINT: exit $rc, expected 130"
fi
if [ $rc -ne 0 ] && ! grep -q "not finished 0$" "$T/int.out"; then
    grep -q "interrupted: run the same command again" "$T/int.out" || fail "SIGINT: $(cat "$T/int.out")"
    [ "$(q "SELECT status FROM runs")" = interrupted ] || fail "SIGINT: run status $(q 'SELECT status FROM runs')"
fi

# Random moments, 4 requests in flight.
CONC=4
kills=0
for delay in $(awk -v s=$$ 'BEGIN { srand(s); for (i = 0; i < 5; i++) printf "%.2f ", 0.05 + rand() * 1.5 }'); do
    (exec "$KC_BIN/kcollect" $ARGS --concurrency $CONC >>"$T/log" 2>&1) &
    pid=$!
    sleep "$delay"
    if kill -9 $pid 2>/dev/null; then kills=$((kills + 1)); fi
    wait $pid 2>/dev/null || true
done
echo "killed $kills runs at random moments"

run --concurrency $CONC || { tail -20 "$T/log"; fail "the final run did not finish"; }
[ "$(q "SELECT count(*) FROM trajectories WHERE status = 'done' AND stop_reason = 'first_compiled'")" = 4 ] \
    || fail "trajectories: $(q 'SELECT problem_id, sample_index, status, stop_reason FROM trajectories')"
# Bug then fix: exactly turns 0 and 1 in every trajectory, none lost, none twice.
[ "$(q "SELECT count(*) FROM turns")" = 8 ] || fail "expected 8 turns, found $(q 'SELECT count(*) FROM turns')"
[ "$(q "SELECT count(*) FROM (SELECT trajectory_id FROM turns GROUP BY trajectory_id
        HAVING count(*) = 2 AND min(turn_index) = 0 AND max(turn_index) = 1)")" = 4 ] || fail "turn indices"
[ "$(q "SELECT count(*) FROM turns t JOIN v_latest_verification v ON v.candidate_id = t.candidate_id
        WHERE (t.turn_index = 0 AND v.verdict = 'compile_error') OR (t.turn_index = 1 AND v.verdict = 'compiled')")" = 8 ] \
    || fail "verdicts"
# Every stored answer was used by exactly one turn; no candidate without a turn.
[ "$(q "SELECT count(*) FROM responses r WHERE (SELECT count(*) FROM turns t WHERE t.response_id = r.id) != 1")" = 0 ] \
    || fail "a stored response is unused or used twice"
[ "$(q "SELECT count(*) FROM candidates c WHERE NOT EXISTS (SELECT 1 FROM turns t WHERE t.candidate_id = c.id)")" = 0 ] \
    || fail "a candidate without a turn (a half-recorded turn)"
[ "$(q "SELECT count(*) FROM runs")" = 1 ] && [ "$(q "SELECT status FROM runs")" = finished ] || fail "runs"
# Each request hash was paid for (stored from the network) once.
[ "$(q "SELECT count(*) FROM (SELECT r.request_hash FROM requests r JOIN responses s ON s.request_id = r.id
        WHERE s.from_cache = 0 GROUP BY r.request_hash HAVING count(*) > 1)")" = 0 ] || fail "an answer stored twice"
# Answers the server sent but nobody stored are the requests in flight when a
# kill landed: at most the concurrency per random kill, none otherwise.
lost=$(( $(answered) - $(paid_stored) ))
echo "answers lost in flight: $lost (random kills: $kills, concurrency $CONC)"
[ "$lost" -le $((kills * CONC + 1)) ] || fail "$lost answers lost after $kills kills (and one copy killed)"
echo "ok"
