#!/bin/sh
# test_export_filters: kexport's --run, --model and --level values that match nothing are an
# error naming the filter (no quiet 0-record export), in every format; every filter applies to
# every format (rl exported every problem whatever --run said); kcurate runs lists the runs
# (id, model, endpoint, synthetic or not, counts) that --run and --model select from (issue 24).
# plan (mtmc runs of two models on a level-1 and a level-2 problem): --run, --model, --level and
# --split that match some records export only those, as sft does.
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
for fmt in sft multiturn rl preference kernelbench plan; do
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

# plan, like sft: a filter that matches some records exports only those.
P2=level2/001_conv2d_relu_bias_add
DB="$T/p.db"
start_server --bug stuck-step
"$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model model-a --db "$DB" \
    --compile-only --turns 10 --strategy mtmc >"$T/o" 2>"$T/e" || fail "mtmc run a: $(cat "$T/e")"
"$KC_BIN/kcollect" --problems $P2 --endpoint "$URL" --model model-b --db "$DB" \
    --compile-only --turns 10 --strategy mtmc >"$T/o" 2>"$T/e" || fail "mtmc run b: $(cat "$T/e")"
stop_server
"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run (mtmc)"
split_b=$(sqlite3 "$DB" "SELECT split FROM problem_labels WHERE problem_id = '$P2'")
split_a=$(sqlite3 "$DB" "SELECT split FROM problem_labels WHERE problem_id = 'level1/019_relu'")
exported() { # FORMAT OPTIONS...: the problem ids exported, sorted, space separated
    fmt=$1; shift
    rm -rf "$T/f"
    "$KC_BIN/kexport" --db "$DB" --out "$T/f" --format $fmt --no-gzip --verdict any --dedup none \
        --split train,valid,test,heldout "$@" >"$T/o" 2>"$T/e" || fail "$fmt $*: $(cat "$T/e")"
    cat "$T"/f/*.jsonl | grep -o '"level[12]/[^"]*"' | tr -d '"' | sort -u | tr '\n' ' '
}
for fmt in plan sft; do
    [ "$(exported $fmt)" = "level1/019_relu $P2 " ] || fail "$fmt: unfiltered: $(exported $fmt)"
    for sel in "--run 1" "--model model-a" "--level 1"; do
        [ "$(exported $fmt $sel)" = "level1/019_relu " ] || fail "$fmt $sel: $(exported $fmt $sel)"
    done
    for sel in "--run 2" "--model model-b" "--level 2"; do
        [ "$(exported $fmt $sel)" = "$P2 " ] || fail "$fmt $sel: $(exported $fmt $sel)"
    done
    if [ "$split_a" != "$split_b" ]; then
        [ "$(exported $fmt --split $split_b)" = "$P2 " ] || fail "$fmt --split $split_b"
    fi
    rc=0
    "$KC_BIN/kexport" --db "$DB" --out "$T/g" --format $fmt --run 9 >"$T/o" 2>"$T/e" || rc=$?
    [ $rc -ne 0 ] && grep -q -- "--run 9 matches nothing" "$T/e" || fail "$fmt --run 9: $(cat "$T/e")"
done
echo ok
