#!/bin/sh
# test_timing_noise: --timing-noise PCT (kverify check, run and serve) takes a percentage from
# 0.01 to 100 and refuses anything else with exit 4 and a message naming the range; a valid value
# is accepted (check --compile-only then succeeds without a GPU). That the value reaches the
# worker and decides the extra timed reps is tests/gpu/test_timing_noise.sh.
set -u
. "$(dirname "$0")/lib.sh"
kv="$KC_BIN/kverify"
"$kv" problems --show-reference level1/019_relu >"$T/relu.cu" || fail "show-reference"

for bad in 0 0.001 -1 101 abc 0.1x ""; do
    "$kv" check --problem level1/019_relu --compile-only --timing-noise "$bad" "$T/relu.cu" \
        >"$T/out" 2>&1
    rc=$?
    [ "$rc" -eq 4 ] || fail "check --timing-noise '$bad': exit $rc, not 4 ($(cat "$T/out"))"
    grep -q "timing-noise takes a percentage from 0.01 to 100 (default 0.5)" "$T/out" ||
        fail "check --timing-noise '$bad': $(cat "$T/out")"
done
for good in 0.01 0.1 0.5 100; do
    "$kv" check --problem level1/019_relu --compile-only --timing-noise "$good" "$T/relu.cu" \
        >"$T/out" 2>&1 || fail "check --timing-noise $good refused: $(cat "$T/out")"
done

"$kv" import --db "$T/c.db" --problem level1/019_relu "$T/relu.cu" >/dev/null || fail "import"
"$kv" run --db "$T/c.db" --timing-noise 0 >"$T/out" 2>&1
[ $? -eq 4 ] || fail "run --timing-noise 0 was accepted: $(cat "$T/out")"
grep -q "timing-noise takes a percentage" "$T/out" || fail "run: $(cat "$T/out")"
"$kv" run --db "$T/c.db" --compile-only --timing-noise 0.1 >"$T/out" 2>&1 ||
    fail "run --timing-noise 0.1 refused: $(cat "$T/out")"

"$kv" serve --port 1 --timing-noise 200 >"$T/out" 2>&1
[ $? -ne 0 ] || fail "serve --timing-noise 200 was accepted"
grep -q "timing-noise takes a percentage" "$T/out" || fail "serve: $(cat "$T/out")"
echo ok
