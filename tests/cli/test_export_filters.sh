#!/bin/sh
# test_export_filters: kexport's --run, --model and --level values that match nothing are an
# error naming the filter (no quiet 0-record export), in every format; every filter applies to
# every format (rl exported every problem whatever --run said); kcurate runs lists the runs
# (id, model, endpoint, synthetic or not, counts) that --run and --model select from (issue 24).
set -eu
. "$(dirname "$0")/lib.sh"
start_server
DB="$T/a.db"
"$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model model-a --db "$DB" \
    --compile-only --turns 1 >"$T/o" 2>"$T/e" || fail "run a: $(cat "$T/e")"
"$KC_BIN/kcollect" --problems level1/023_softmax --endpoint "$URL" --model model-b --db "$DB" \
    --compile-only --turns 1 >"$T/o" 2>"$T/e" || fail "run b: $(cat "$T/e")"
stop_server
"$KC_BIN/kcollect" --problems level1/019_relu --db "$DB" --compile-only --turns 1 >"$T/o" 2>"$T/e" \
    || fail "bundled run: $(cat "$T/e")"
"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run"

# kcurate runs: one row per run with model, endpoint, synthetic or not, counts.
"$KC_BIN/kcurate" runs --db "$DB" >"$T/runs" 2>"$T/e" || fail "kcurate runs: $(cat "$T/e")"
grep -Eq "^ +1 +finished +model-a +http://127.0.0.1:[0-9]+/v1 +no +1 +1 +1 " "$T/runs" || fail "run 1 row: $(cat "$T/runs")"
grep -Eq "^ +3 +finished +fake-echo +bundled-fake-llm +yes +1 +1 +1 " "$T/runs" || fail "run 3 row: $(cat "$T/runs")"
"$KC_BIN/kcurate" runs --db "$DB" --json >"$T/runs.json" || fail "kcurate runs --json"
[ "$(sqlite3 :memory: "SELECT group_concat(json_extract(value, '\$.model') || ':' || json_extract(value, '\$.synthetic'), ' ')
     FROM json_each(readfile('$T/runs.json'))")" = "model-a:0 model-b:0 fake-echo:1" ] || fail "runs --json: $(cat "$T/runs.json")"

# A filter that matches nothing: an error naming it, nothing written, in every format.
for fmt in sft multiturn rl preference kernelbench; do
    for f in "--run 99:--run 99" "--model nosuch:--model nosuch" "--run 1,42:--run 42" "--level 9:--level 9"; do
        opt=${f%%:*}; named=${f#*:}
        rc=0
        "$KC_BIN/kexport" --db "$DB" --out "$T/x-$fmt" --format $fmt --verdict any $opt >"$T/o" 2>"$T/e" || rc=$?
        [ $rc -ne 0 ] || fail "$fmt $opt: exit 0 for a filter that matches nothing"
        grep -q -- "$named matches nothing" "$T/e" || fail "$fmt $opt: the filter is not named: $(cat "$T/e")"
        [ ! -e "$T/x-$fmt" ] || fail "$fmt $opt: wrote $T/x-$fmt"
    done
done
"$KC_BIN/kexport" --db "$DB" --out "$T/x" --run 99 >"$T/o" 2>"$T/e" && fail "--run 99 exported"
grep -q "kcurate runs --db $DB" "$T/e" || fail "the error does not say how to list the runs: $(cat "$T/e")"

# Every filter applies to every format: rl of run 1 holds run 1's problem only.
for sel in "--run 1" "--model model-a"; do
    "$KC_BIN/kexport" --db "$DB" --out "$T/rl-$(echo $sel | tr -d ' -')" --format rl --no-gzip $sel >"$T/o" 2>"$T/e" \
        || fail "rl $sel: $(cat "$T/e")"
    ids=$(cat "$T"/rl-$(echo $sel | tr -d ' -')/*.jsonl | grep -o '"problem_id": *"[^"]*"' | sort -u | tr '\n' ' ')
    case "$ids" in
    *019_relu*) ;; *) fail "rl $sel: run 1's problem missing: $ids" ;;
    esac
    case "$ids" in
    *023_softmax*) fail "rl $sel: another run's problem exported: $ids" ;;
    esac
done
echo ok
