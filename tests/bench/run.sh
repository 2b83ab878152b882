#!/bin/sh
# run.sh: `make bench`: runs every tests/bench/bench_*.sh with the build in $1.
# Each prints its own figures; GPU benchmarks say SKIP without a GPU.
BUILD="${1:-.}"
export KC_BIN="$(cd "$BUILD" && pwd)/bin"
export KC_ROOT="$(pwd)"
export KC_PROBLEMS="$KC_ROOT/problems"
status=0
for b in tests/bench/bench_*.sh; do
    [ -f "$b" ] || continue
    echo "== $(basename "$b" .sh)"
    sh "$b" || { echo "bench $(basename "$b") FAILED"; status=1; }
done
exit $status
