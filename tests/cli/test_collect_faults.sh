#!/bin/sh
# test_collect_faults: kcollect through every fault of the fake LLM server.
# Retryable ones (429 with Retry-After, 500, a reset connection, a stream cut
# mid-way, malformed JSON, a stream of keep-alives only, a hung reply, a 20 MB
# answer, cut at --max-answer-bytes) are ridden out and the run finishes with every turn recorded; a quota
# error stops the run at once without a retry and the same command resumes it
# later; a 400 ends its trajectory without a retry and fails the run; an auth error on the first
# endpoint fails over to the second.
set -eu
. "$(dirname "$0")/lib.sh"
SERVER2=
cleanup() { for p in $SERVER $SERVER2; do kill "$p" 2>/dev/null; done; rm -rf "$T"; }
[ -n "${KEEP:-}" ] && trap - EXIT

start() { # name port args...: starts fake_llm, prints its pid; the port lands in $T/name.port
    name=$1; port=$2; shift 2
    "$KC_BIN/fake_llm" --port "$port" --stats-file "$T/$name.json" "$@" >"$T/$name.out" 2>&1 &
    echo $! >"$T/$name.pid"
    i=0
    while ! grep -q listening "$T/$name.out" 2>/dev/null; do
        i=$((i + 1)); [ $i -lt 100 ] || fail "fake_llm did not start"; sleep 0.05
    done
    sed -n 's/.*:\([0-9]*\)$/\1/p' "$T/$name.out" >"$T/$name.port"
}
stat() { sqlite3 :memory: "SELECT json_extract(readfile('$T/$1.json'), '\$.$2')"; }
FAST="--backoff-ms 20 --idle-timeout 4 --attempt-timeout 1.5 --retries 12"

# Every retryable fault, then answers.
start a 0 --bug compile --faults "429:1,500,reset,cut,malformed,idle,hang,huge"
SERVER=$(cat "$T/a.pid")
DB="$T/a.db"
"$KC_BIN/kcollect" --problems level1/019_relu --endpoint "http://127.0.0.1:$(cat "$T/a.port")/v1" \
    --model fake --db "$DB" --samples 2 --turns 3 --concurrency 2 --compile-only $FAST \
    >"$T/out1" 2>"$T/err1" || { cat "$T/err1"; fail "the run did not ride out the faults"; }
[ "$(sqlite3 "$DB" "SELECT count(*) FROM trajectories WHERE status = 'done'")" = 2 ] || fail "trajectories"
[ "$(sqlite3 "$DB" "SELECT sum(attempts) - count(*) FROM responses")" -ge 7 ] \
    || fail "retries not recorded: $(sqlite3 "$DB" 'SELECT attempts FROM responses')"
[ "$(sqlite3 "$DB" "SELECT count(*) FROM responses WHERE finish_reason = 'answer_cap' AND answer_bytes > 1048576")" = 1 ] \
    || fail "the 20 MB answer was not cut at --max-answer-bytes and recorded as such"
[ "$(sqlite3 "$DB" "SELECT max(size) FROM blobs")" -le 1048576 ] || fail "a blob above the answer cap was stored"
[ "$(stat a faults_left)" = 0 ] || fail "faults not all consumed"
kill "$SERVER"; wait "$SERVER" 2>/dev/null || true

# Quota: the run stops after one request, nothing retried, and resumes later.
start q 0 --faults quota
SERVER=$(cat "$T/q.pid")
PORT=$(cat "$T/q.port")
DB="$T/q.db"
run_q() { "$KC_BIN/kcollect" --problems level1/019_relu --endpoint "http://127.0.0.1:$PORT/v1" \
          --model fake --db "$DB" --compile-only $FAST; }
rc=0
run_q >"$T/out2" 2>"$T/err2" || rc=$?
[ $rc -eq 1 ] || fail "quota: expected exit 1, got $rc"
grep -q insufficient_quota "$T/err2" || fail "quota error not reported: $(cat "$T/err2")"
[ "$(stat q requests)" = 1 ] || fail "quota error retried ($(stat q requests) requests)"
[ "$(sqlite3 "$DB" "SELECT status FROM runs")" = interrupted ] || fail "run not marked interrupted"
kill "$SERVER"; wait "$SERVER" 2>/dev/null || true
start q2 "$PORT"
SERVER=$(cat "$T/q2.pid")
run_q >"$T/out3" 2>"$T/err3" || { cat "$T/err3"; fail "the resumed run failed"; }
[ "$(sqlite3 "$DB" "SELECT count(*) || ' ' || max(status) FROM runs")" = "1 finished" ] || fail "not resumed in the same run"
kill "$SERVER"; wait "$SERVER" 2>/dev/null || true

# A request the endpoint refuses (400): the trajectory ends with stop_reason 'error' after one
# request, the run exits 1 saying so, and a rerun asks again (the cause may be fixed).
start b 0 --faults "bad*5"
SERVER=$(cat "$T/b.pid")
DB="$T/b.db"
run_b() { "$KC_BIN/kcollect" --problems level1/019_relu --endpoint "http://127.0.0.1:$(cat "$T/b.port")/v1" \
          --model fake --db "$DB" --compile-only $FAST; }
rc=0
run_b >"$T/out5" 2>"$T/err5" || rc=$?
[ $rc -eq 1 ] || fail "the run with a 400 exited $rc"
[ "$(sqlite3 "$DB" "SELECT status || ' ' || stop_reason FROM trajectories")" = "done error" ] || fail "400: trajectory"
[ "$(stat b requests)" = 1 ] || fail "a 400 was retried ($(stat b requests) requests)"
rc=0
run_b >"$T/out6" 2>"$T/err6" || rc=$?
[ $rc -eq 1 ] && [ "$(stat b requests)" = 2 ] || fail "a rerun after a 400 did not ask again ($rc, $(stat b requests) requests)"
kill "$SERVER"; wait "$SERVER" 2>/dev/null || true

# Auth error on the first endpoint: failover to the second, which answers everything.
start bad 0 --faults "auth*50"
SERVER=$(cat "$T/bad.pid")
start good 0
SERVER2=$(cat "$T/good.pid")
DB="$T/f.db"
"$KC_BIN/kcollect" --problems level1/019_relu --model fake --db "$DB" --compile-only $FAST \
    --endpoint "http://127.0.0.1:$(cat "$T/bad.port")/v1,http://127.0.0.1:$(cat "$T/good.port")/v1" \
    >"$T/out4" 2>"$T/err4" || { cat "$T/err4"; fail "failover run failed"; }
[ "$(stat bad requests)" = 1 ] || fail "the dead endpoint was asked again"
[ "$(sqlite3 "$DB" "SELECT endpoint FROM requests")" = "http://127.0.0.1:$(cat "$T/good.port")/v1" ] \
    || fail "requests.endpoint should name the endpoint that answered"
kill "$SERVER" "$SERVER2"; wait "$SERVER" "$SERVER2" 2>/dev/null || true

# --spread-endpoints: the requests go round two servers of the same model (each answers about
# half); without it every request goes to the first (the second is the failover).
start s1 0
SERVER=$(cat "$T/s1.pid")
start s2 0
SERVER2=$(cat "$T/s2.pid")
EPS="http://127.0.0.1:$(cat "$T/s1.port")/v1,http://127.0.0.1:$(cat "$T/s2.port")/v1"
"$KC_BIN/kcollect" --problems level1/019_relu,level1/020_leaky_relu --model fake --db "$T/s.db" \
    --samples 4 --turns 1 --compile-only $FAST --endpoint "$EPS" >"$T/out7" 2>&1 || fail "run on two endpoints: $(cat "$T/out7")"
[ "$(stat s1 requests)|$(stat s2 requests)" = "8|0" ] || fail "without --spread-endpoints: $(stat s1 requests)|$(stat s2 requests), not 8|0"
"$KC_BIN/kcollect" --problems level1/019_relu,level1/020_leaky_relu --model fake --db "$T/s2.db" \
    --samples 4 --turns 1 --compile-only $FAST --endpoint "$EPS" --spread-endpoints >"$T/out8" 2>&1 ||
    fail "spread run: $(cat "$T/out8")"
[ "$(stat s1 requests)|$(stat s2 requests)" = "12|4" ] || fail "--spread-endpoints: $(stat s1 requests)|$(stat s2 requests), not 12|4"
[ "$(sqlite3 "$T/s2.db" "SELECT count(DISTINCT endpoint) FROM requests")" = 2 ] || fail "the spread run's requests name one endpoint"
echo ok
