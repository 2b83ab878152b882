#!/bin/sh
# test_run_timing: `make test` (tests/run.sh) prints each test's name and time as it ends and the
# suite's total time (issue 24); names after the build directory select tests.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$KC_ROOT"
# never recursively (a run.sh that ignored the names would run this test again)
[ -z "${KC_RUN_TIMING_NESTED:-}" ] || { echo "nested: not run"; exit 0; }
KC_RUN_TIMING_NESTED=1 timeout 120 sh tests/run.sh "$(dirname "$KC_BIN")" test_datasheet_formats test_deps_split >"$T/out" 2>&1 || fail "run.sh: $(cat "$T/out")"
grep -Eq "^ok   test_datasheet_formats \([0-9]+\.[0-9] s\)$" "$T/out" || fail "no name and time: $(cat "$T/out")"
grep -Eq "^ok   test_deps_split \([0-9]+\.[0-9] s\)$" "$T/out" || fail "no name and time: $(cat "$T/out")"
[ "$(grep -c '^ok ' "$T/out")" = 2 ] || fail "not only the named tests ran: $(cat "$T/out")"
tail -1 "$T/out" | grep -Eq "^2 passed, 0 failed in [0-9]+\.[0-9] s$" || fail "no total: $(tail -1 "$T/out")"
echo ok
