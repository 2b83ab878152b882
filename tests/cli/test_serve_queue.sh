#!/bin/sh
# test_serve_queue: the load rules of `kverify serve` (issue 25) with one verification thread:
# a queue of 2 (--queue 2) under a burst of 40 concurrent requests answers some 200 and the rest
# 503 with Retry-After and a JSON error, refuses a batch larger than the queue with 413, takes
# work again once drained and counts the refusals in /health; with a larger queue, a client's
# single item is answered before another client's earlier batch of 6 is done (round-robin).
set -eu
. "$(dirname "$0")/lib.sh"
kv="$KC_BIN/kverify"
client="python3 $KC_ROOT/tests/cli/serve_client.py"
start_serve() {
    out=$1; shift
    "$kv" serve --port 0 --compile-only --compile-procs 1 --workers 1 "$@" >"$out" 2>"$out.err" &
    SERVE=$!
    i=0
    while ! grep -q 'listening on http://127.0.0.1:[0-9]*$' "$out" 2>/dev/null; do
        kill -0 "$SERVE" 2>/dev/null || fail "kverify serve exited: $(cat "$out.err")"
        i=$((i + 1)); [ $i -lt 400 ] || fail "kverify serve did not start"; sleep 0.05
    done
    BASE="http://127.0.0.1:$(sed -n 's/.*:\([0-9]*\)$/\1/p' "$out")"
}
stop_serve() {
    kill -TERM "$SERVE"; status=0; wait "$SERVE" || status=$?
    [ "$status" = 0 ] || fail "kverify serve exited $status: $(tail -3 "$1.err")"
    SERVE=
}
SERVE=
trap '[ -n "$SERVE" ] && kill "$SERVE" 2>/dev/null; cleanup' EXIT
cp "$KC_PROBLEMS/level1/019_relu.cu" "$T/good.cu"

start_serve "$T/q.out" --queue 2
$client "$BASE" queue_full "$T/good.cu" 40 || fail "full queue"
stop_serve "$T/q.out"

start_serve "$T/f.out" --queue 64
$client "$BASE" fairness "$T/good.cu" || fail "round-robin across clients"
stop_serve "$T/f.out"
echo "kverify serve queue: ok"
