#!/bin/sh
# test_deps_split: `make demo` installs only what building and running need; the test-only
# packages (Chromium, clang and its runtimes, cmocka) are `make test`'s (issue 24).
set -eu
. "$(dirname "$0")/lib.sh"
cd "$KC_ROOT"
sh tools/deps.sh run --list >"$T/run" || fail "deps.sh run --list"
sh tools/deps.sh test --list >"$T/test" || fail "deps.sh test --list"
for p in chromium clang libclang-rt-14-dev libcmocka-dev; do
    ! grep -qx "$p" "$T/run" || fail "the run deps include the test-only $p"
    grep -qx "$p" "$T/test" || fail "the test deps lack $p"
done
for p in gcc libsqlite3-dev libjansson-dev libcurl4-openssl-dev libarchive-dev libjs-chart.js; do
    grep -qx "$p" "$T/run" || fail "the run deps lack $p"
done
make -n demo 2>/dev/null | grep -q "tools/deps.sh run" || fail "make demo does not install the run deps only: $(make -n demo 2>&1 | head -3)"
make -n test 2>/dev/null | grep -q "tools/deps.sh test" || fail "make test does not install the test deps"
echo ok
