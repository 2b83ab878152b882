#!/bin/sh
# run.sh: runs the CPU suite against the build in $1 (default .): every cmocka
# binary in $1/bin/tests, every tests/cli/test_*.sh and a short run of every fuzz
# target of tests/fuzz/ (built in $KC_FUZZ_O, default build/fuzz), each with its time as it
# ends, then prints the closing line "N passed, N failed in S s" (", N skipped" when fuzz
# targets were not built). Names after the build directory run only those tests.
# Exit status 0 only when nothing failed.
BUILD="${1:-.}"
[ $# -gt 0 ] && shift
ONLY="$*" # test names (test_fail_fast, test_dedup, fuzz_sse): only those
wanted() { [ -z "$ONLY" ] || case " $ONLY " in *" $1 "*) true ;; *) false ;; esac; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }
suite_start=$(now)
export KC_BIN="$(cd "$BUILD" && pwd)/bin"
export KC_ROOT="$(pwd)"
export KC_PROBLEMS="$KC_ROOT/problems"
export CMOCKA_MESSAGE_OUTPUT=stdout
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$KC_ROOT/tests/lsan.supp:print_suppressions=0}"
passed=0
failed=0
failures=""
log=$(mktemp)
for t in "$KC_BIN"/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    wanted "$name" || continue
    t0=$(now)
    if "$t" >"$log" 2>&1; then status=ok; else status=fail; fi
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    p=${p:-0}; f=${f:-0}
    if [ "$status" = fail ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed or sanitizer abort
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$status" = fail ]; then
        failures="$failures $name"
        echo "---- $name FAILED ($(secs "$t0")):"; tail -40 "$log"
    else
        echo "ok   $name ($p tests, $(secs "$t0"))"
    fi
done
for t in tests/cli/test_*.sh; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .sh)
    wanted "$name" || continue
    t0=$(now)
    if sh "$t" >"$log" 2>&1; then
        passed=$((passed + 1)); echo "ok   $name ($(secs "$t0"))"
    else
        failed=$((failed + 1)); failures="$failures $name"
        echo "---- $name FAILED ($(secs "$t0")):"; tail -40 "$log"
    fi
done
# Fuzz smoke (tests/fuzz/): each libFuzzer target replays its regression inputs, then fuzzes
# for FUZZ_SMOKE_SECONDS from its seed corpus. Not built (no clang with libFuzzer): SKIP.
skipped=0
for t in $(cat tests/fuzz/targets); do
    name=fuzz_$t
    wanted "$name" || continue
    sh tests/fuzz/run.sh smoke "${KC_FUZZ_O:-build/fuzz}" "$t" >"$log" 2>&1
    case $? in
    0) passed=$((passed + 1)); echo "ok   $name ($(tail -1 "$log"))" ;;
    2) skipped=$((skipped + 1)); tail -1 "$log" ;;
    *) failed=$((failed + 1)); failures="$failures $name"
       echo "---- $name FAILED:"; tail -40 "$log" ;;
    esac
done
rm -f "$log"
[ -n "$failures" ] && echo "failed:$failures"
if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped in $(secs "$suite_start")"
else
    echo "$passed passed, $failed failed in $(secs "$suite_start")"
fi
[ "$failed" -eq 0 ]
