#!/bin/sh
# test_serve: `kverify serve --compile-only` on the loopback (issue 25), driven by
# tests/cli/serve_client.py and by the trainer adapter tools/kc_reward.py:
# 1. it verifies a good kernel (compiled) and a bad one (compile_error) with kcurate's reward
#    (--reward-incorrect set on the server, and a per-request reward parameter), a batch in order;
# 2. bad requests get a 4xx JSON error and the service lives on: malformed JSON, a body that is not
#    an object, a missing field, a bad problem id, an unknown problem, a body over --max-body, more
#    items than --max-items, an out-of-range or unknown reward parameter, a wrong path or method;
# 3. 200 concurrent requests are all answered;
# 4. clients that disconnect mid-body, mid-headers or while their item is verified do not hurt it;
# 5. compute_score (via extra_info and via the rl export's ground_truth JSON), trl_reward and
#    trl_reward_async return the server's numbers;
# 6. --db holds every verification (origin 'serve'); kcurate verify-db, run, flips and report
#    and kverify reverify (labels reproduced) work on it;
# 7. SIGTERM stops it with exit 0 and no compile server left behind.
# The full queue (503 with Retry-After) is test_serve_queue.sh.
set -eu
. "$(dirname "$0")/lib.sh"
kv="$KC_BIN/kverify"
client="python3 $KC_ROOT/tests/cli/serve_client.py"

# start_serve OUT OPTIONS...: kverify serve on a free loopback port; sets SERVE (pid), BASE (URL).
start_serve() {
    out=$1; shift
    "$kv" serve --port 0 --compile-only --compile-procs 2 "$@" >"$out" 2>"$out.err" &
    SERVE=$!
    i=0
    while ! grep -q 'listening on http://127.0.0.1:[0-9]*$' "$out" 2>/dev/null; do
        kill -0 "$SERVE" 2>/dev/null || fail "kverify serve exited: $(cat "$out.err")"
        i=$((i + 1)); [ $i -lt 400 ] || fail "kverify serve did not start: $(cat "$out.err")"
        sleep 0.05
    done
    BASE="http://127.0.0.1:$(sed -n 's/.*:\([0-9]*\)$/\1/p' "$out")"
}
SERVE=
trap '[ -n "$SERVE" ] && kill "$SERVE" 2>/dev/null; cleanup' EXIT

printf 'extern "C" __global__ void k(float *y) { y[0] = oops; }\n// @launch k<<<1, 1>>>(y);\n' > "$T/bad.cu"
cp "$KC_PROBLEMS/level1/019_relu.cu" "$T/good.cu"

start_serve "$T/serve.out" --db "$T/serve.db" --reward-incorrect -0.25 --max-body 65536 \
    --max-items 8 --max-completion 32768
$client "$BASE" basics "$T/good.cu" "$T/bad.cu" || fail "basics (verify, rewards, batch)"
$client "$BASE" refusals "$T/good.cu" || fail "bad requests"
$client "$BASE" concurrent "$T/good.cu" 200 || fail "200 concurrent requests"
$client "$BASE" disconnects "$T/good.cu" || fail "clients that disconnect"
KC_REWARD_URL="$BASE" $client "$BASE" adapter "$T/good.cu" "$T/bad.cu" || fail "the adapter"

# every verification recorded, as kverify run records them
n_ok=$(sqlite3 "$T/serve.db" "SELECT count(*) FROM verifications v JOIN candidates c ON c.id = v.candidate_id WHERE c.origin = 'serve'")
[ "$n_ok" -ge 210 ] || fail "only $n_ok verifications recorded"
sqlite3 "$T/serve.db" "SELECT DISTINCT verdict FROM verifications ORDER BY 1" | tr '\n' ' ' > "$T/verdicts"
[ "$(cat "$T/verdicts")" = "compile_error compiled extract_error " ] || fail "verdicts recorded: $(cat "$T/verdicts")"
pending=$(sqlite3 "$T/serve.db" "SELECT count(*) FROM candidates WHERE status = 'pending'")
[ "$pending" = 0 ] || fail "$pending candidates left pending"
# requests refused with 4xx verify nothing and record nothing: no unknown problem registered
[ "$(sqlite3 "$T/serve.db" "SELECT count(*) FROM problems")" = 1 ] || fail "problems registered by refused requests"

servers=$(pgrep -P "$SERVE" -f compile-server | wc -l)
[ "$servers" -ge 1 ] || fail "no compile server under the service"
kill -TERM "$SERVE"
status=0; wait "$SERVE" || status=$?
[ "$status" = 0 ] || fail "kverify serve exited $status on SIGTERM: $(tail -3 "$T/serve.out.err")"
sleep 0.2
pgrep -f "compile-server" -P "$SERVE" >/dev/null 2>&1 && fail "compile servers left after stop"
SERVE=
"$KC_BIN/kcurate" verify-db --db "$T/serve.db" > "$T/verifydb.txt" || fail "verify-db: $(grep -v ' ok' "$T/verifydb.txt")"
"$KC_BIN/kcurate" run --db "$T/serve.db" > "$T/curate.txt" || fail "kcurate run on the service's database"
# the audit tools on its records: a reverify pass reproduces the labels, flips and report read it
"$kv" reverify --db "$T/serve.db" --compile-only --limit 4 > "$T/reverify.txt" || fail "reverify: $(cat "$T/reverify.txt")"
grep -q "0 label flips" "$T/reverify.txt" || fail "reverify of served verifications: $(tail -1 "$T/reverify.txt")"
"$KC_BIN/kcurate" flips --db "$T/serve.db" > /dev/null || fail "kcurate flips on the service's database"
"$KC_BIN/kcurate" report --db "$T/serve.db" --out "$T/report" > /dev/null || fail "kcurate report"
[ -s "$T/report/index.html" ] || fail "kcurate report wrote no page"
echo "kverify serve: ok"
