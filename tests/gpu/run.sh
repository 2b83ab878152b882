#!/bin/sh
# run.sh: `make test-gpu`: runs every tests/gpu/test_*.sh with the build in $1.
# Without a GPU each says SKIP and the suite passes, saying it skipped.
BUILD="${1:-.}"
export KC_BIN="$(cd "$BUILD" && pwd)/bin"
export KC_ROOT="$(pwd)"
export KC_PROBLEMS="$KC_ROOT/problems"
if ! "$KC_BIN/kverify" gpus >/dev/null 2>&1; then
    echo "SKIP: no usable GPU (kverify gpus found none); the GPU suite did not run"
    exit 0
fi
passed=0; failed=0
for t in tests/gpu/test_*.sh; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .sh)
    if sh "$t"; then passed=$((passed + 1)); echo "ok   $name"
    else failed=$((failed + 1)); echo "FAIL $name"; fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
