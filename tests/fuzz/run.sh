#!/bin/sh
# run.sh: runs the libFuzzer targets built by tests/fuzz/fuzz.mk.
#   sh tests/fuzz/run.sh smoke FUZZ_O TARGET   one target, as `make test` does: replays
#       tests/fuzz/regressions/TARGET/*, then fuzzes FUZZ_SMOKE_SECONDS (default 10) from
#       tests/fuzz/corpus/TARGET. Exit 0 clean, 1 a finding (crash, leak, UB, timeout, OOM),
#       2 skipped (not built: no clang with libFuzzer). Last line: the one-line result.
#   sh tests/fuzz/run.sh fuzz FUZZ_O [TARGET...]  every target (default all) for FUZZ_SECONDS
#       (default 60) each, one after the other; exit 1 when any had a finding.
# New inputs go to FUZZ_O/work/TARGET (kept between runs), findings to FUZZ_O/artifacts/TARGET/.
mode="$1"
FUZZ_O="${2:-build/fuzz}"
KC_ROOT="$(pwd)"
export KC_PROBLEMS="${KC_PROBLEMS:-$KC_ROOT/problems}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"

# Longest input per target: big enough for its seeds, small enough to stay fast.
max_len() {
    case "$1" in
    expr) echo 1024 ;;
    launch | sse | ipc | serve) echo 8192 ;;
    *) echo 32768 ;;
    esac
}

# Extra options: ipc's payload lengths come from the child, so a parent that allocates what is
# announced before it arrives is a finding: cap single allocations well under IPC_MAX_BLOB.
extra_opts() {
    case "$1" in
    ipc) echo "-malloc_limit_mb=64" ;;
    esac
}

# run_target TARGET SECONDS: prints progress to stdout, the result as the last line.
run_target() {
    t="$1"
    secs="$2"
    bin="$FUZZ_O/fuzz_$t"
    if [ ! -x "$bin" ]; then
        echo "SKIP fuzz_$t: not built ($bin missing: needs clang with libFuzzer; make deps)"
        return 2
    fi
    work="$FUZZ_O/work/$t"
    art="$FUZZ_O/artifacts/$t"
    mkdir -p "$work" "$art"
    log="$FUZZ_O/work/$t.log"
    reg="tests/fuzz/regressions/$t"
    nreg=0
    if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
        nreg=$(ls "$reg" | wc -l)
        if ! "$bin" -timeout=10 -rss_limit_mb=2048 $(extra_opts "$t") "$reg"/* >"$log" 2>&1; then
            tail -40 "$log"
            echo "FAIL fuzz_$t: a regression input fails again (see above; replay: $bin $reg/<file>)"
            return 1
        fi
    fi
    corpus=""
    [ -d "tests/fuzz/corpus/$t" ] && corpus="tests/fuzz/corpus/$t"
    if ! "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$t")" $(extra_opts "$t") \
        -print_final_stats=1 -artifact_prefix="$art/" "$work" $corpus >"$log" 2>&1; then
        grep -v '^#[0-9]' "$log" | tail -40
        echo "FAIL fuzz_$t: finding saved under $art/ (replay: $bin <file>; minimize: $bin -minimize_crash=1 -runs=10000 <file>)"
        return 1
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    echo "fuzz_$t: ${secs}s, ${execs:-?} execs, $nreg regression inputs replayed, corpus $(ls "$work" | wc -l) + seeds"
    return 0
}

case "$mode" in
smoke)
    run_target "$3" "${FUZZ_SMOKE_SECONDS:-10}"
    ;;
fuzz)
    shift 2
    targets="$*"
    [ -n "$targets" ] || targets=$(cat tests/fuzz/targets)
    bad=""
    for t in $targets; do
        run_target "$t" "${FUZZ_SECONDS:-60}"
        [ $? -eq 1 ] && bad="$bad $t"
    done
    [ -z "$bad" ] || { echo "fuzz: findings in:$bad"; exit 1; }
    ;;
*)
    echo "usage: sh tests/fuzz/run.sh smoke FUZZ_O TARGET | fuzz FUZZ_O [TARGET...]" >&2
    exit 2
    ;;
esac
