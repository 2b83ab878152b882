#!/bin/sh
# test_cache_endpoint: the response cache reuses an answer only for the endpoints that gave it.
# A run against the bundled (synthetic) server, then the same request (same model name, seed and
# prompt) against a fake_llm started by hand behind --endpoint: the second run makes its own HTTP
# request and records synthetic = 0 (it reused the synthetic answer, labelled as the endpoint's).
# A third run against the same endpoint spelled otherwise (localhost for 127.0.0.1, a trailing
# slash) is answered from the cache without a request.
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
q() { sqlite3 "$DB" "$1"; }
stat() { sqlite3 :memory: "SELECT json_extract(readfile('$T/stats.json'), '$1')"; }
ARGS="--problems level1/019_relu --db $DB --compile-only --turns 1 --seed 3"

env -u OPENAI_BASE_URL "$KC_BIN/kcollect" $ARGS --endpoint bundled >"$T/o1" 2>"$T/e1" ||
    { cat "$T/e1"; fail "bundled run failed"; }
[ "$(q "SELECT synthetic || ' ' || model FROM runs")" = "1 fake-echo" ] || fail "bundled run: $(q 'SELECT * FROM runs')"

start_server
"$KC_BIN/kcollect" $ARGS --endpoint "$URL" --model fake-echo >"$T/o2" 2>"$T/e2" ||
    { cat "$T/e2"; fail "endpoint run failed"; }
[ "$(stat '$.requests')" = 1 ] || fail "the endpoint run sent $(stat '$.requests') requests (reused the synthetic answer?)"
[ "$(q "SELECT count(*) FROM runs WHERE synthetic = 0")" = 1 ] || fail "runs: $(q 'SELECT id, synthetic FROM runs')"
[ "$(q "SELECT group_concat(rs.from_cache) FROM turns t JOIN trajectories j ON j.id = t.trajectory_id
        JOIN runs r ON r.id = j.run_id JOIN responses rs ON rs.id = t.response_id WHERE r.synthetic = 0")" = 0 ] ||
    fail "the endpoint run's turn is recorded from the cache"

PORT=$(echo "$URL" | sed 's|.*:\([0-9]*\)/v1$|\1|')
"$KC_BIN/kcollect" $ARGS --endpoint "http://localhost:$PORT/v1/" --model fake-echo --context full \
    >"$T/o3" 2>"$T/e3" || { cat "$T/e3"; fail "third run failed"; }
[ "$(stat '$.requests')" = 1 ] || fail "the same endpoint's answer was not reused from the cache"
[ "$(q "SELECT count(*) FROM responses WHERE from_cache = 1")" = 1 ] || fail "no cache hit recorded"
stop_server
echo ok
