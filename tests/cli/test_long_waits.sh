#!/bin/sh
# test_long_waits: waits speak. Each retry of kcollect's LLM client prints a line on stderr with
# the attempt, the HTTP status (or the error) and the wait; `kverify gpus` where the NVIDIA
# driver cannot be loaded says "no NVIDIA driver found" and exits 3, not 127 from the loader.
set -eu
. "$(dirname "$0")/lib.sh"
start_server --faults "503*2,429:1"
"$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model fake --db "$T/kc.db" \
    --compile-only --turns 1 --retries 5 --backoff-ms 50 >/dev/null 2>"$T/err" ||
    { cat "$T/err"; fail "kcollect failed"; }
grep -q "retry: attempt 1 of 6 failed (HTTP 503).*waiting [0-9.]* s" "$T/err" || fail "no line for attempt 1: $(cat "$T/err")"
grep -q "retry: attempt 2 of 6 failed (HTTP 503)" "$T/err" || fail "no line for attempt 2"
grep -q "retry: attempt 3 of 6 failed (HTTP 429).*waiting [0-9.]* s (Retry-After)" "$T/err" || fail "no line for the 429"
[ "$(grep -c 'retry: attempt' "$T/err")" = 3 ] || fail "expected 3 retry lines"
stop_server

# No driver: KC_LIBCUDA names a library that is not there (on a host without the driver the
# real libcuda.so.1 is missing the same way).
rc=0
KC_LIBCUDA=libkc-no-such-driver.so.1 "$KC_BIN/kverify" gpus >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 3 ] || fail "kverify gpus without a driver: exit $rc (want 3): $(cat "$T/err")"
grep -q "no NVIDIA driver found" "$T/err" || fail "no 'no NVIDIA driver found': $(cat "$T/err")"
! grep -q "error while loading shared libraries" "$T/err" || fail "the loader error leaked through"
echo ok
