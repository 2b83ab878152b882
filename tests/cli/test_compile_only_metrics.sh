#!/bin/sh
# test_compile_only_metrics: not measured is not 0 (issue 35, item 2). A compile-only run ran
# nothing on a GPU, so its pass@k, fast_p@k, speedup@k and counts of correct samples are unknown:
# '-' in kcurate stats, null in --json (with "compile_only": true and "measured": false on its
# group, and "compile_only" on its run in stats --json and kcurate runs), '-' and a note in the
# report; they were 0.000 and 0.00x, and 0 solved, with nothing saying why. A run verified on a
# GPU in the same database (kc_synth's, merged in) keeps its numbers in a group of its own.
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
env -u OPENAI_BASE_URL "$KC_BIN/kcollect" --problems level1/019_relu,level1/023_softmax --db "$T/co.db" \
    --compile-only --samples 2 --turns 2 --fake-args "--bug compile" >/dev/null 2>"$T/e" || fail "kcollect: $(cat "$T/e")"
"$KC_BIN/kc_synth" --db "$T/gpu.db" --candidates 60 --problems 3 >/dev/null || fail "kc_synth"
"$KC_BIN/kcurate" merge "$T/gpu.db" "$T/co.db" -o "$DB" >/dev/null 2>"$T/e" || fail "merge: $(cat "$T/e")"
"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run"

# text: the compile-only group says it is not measured and prints '-', never 0
"$KC_BIN/kcurate" stats --db "$DB" >"$T/s.txt" 2>"$T/e" || fail "stats: $(cat "$T/e")"
sed -n '/fake-echo/,/fast_2@1/p' "$T/s.txt" >"$T/co.txt"
grep -q "fake-echo · loop · compile-only: 2 problems (- solved), 4 samples (- correct)" "$T/co.txt" ||
    fail "compile-only group line: $(head -1 "$T/co.txt")"
grep -q "not measured: nothing of this group was run on a GPU" "$T/co.txt" || fail "no word that nothing ran: $(cat "$T/co.txt")"
grep -q "pass@1 -" "$T/co.txt" && grep -q "speedup@1 -" "$T/co.txt" && grep -q "fast_0@1 -" "$T/co.txt" ||
    fail "compile-only metrics are not '-': $(cat "$T/co.txt")"
! grep -Eq "@1 0\.000|@1 0\.00x" "$T/co.txt" || fail "compile-only metrics printed as 0: $(cat "$T/co.txt")"
sed -n '/synth-model/,/fast_2@1/p' "$T/s.txt" >"$T/gpu.txt"
grep -Eq "pass@1 [01]\.[0-9]{3}" "$T/gpu.txt" || fail "the GPU group lost its numbers: $(cat "$T/gpu.txt")"
! grep -q "compile-only\|not measured" "$T/gpu.txt" || fail "the GPU group is called compile-only"

# --json: null, compile_only and measured on the group, compile_only on the run
"$KC_BIN/kcurate" stats --db "$DB" --json >"$T/s.json" || fail "stats --json"
j() { sqlite3 :memory: "SELECT $1 FROM json_each(json_extract(readfile('$T/s.json'), '\$.metrics')) g
    WHERE json_extract(g.value, '\$.model') = '$2' AND json_extract(g.value, '\$.suite') = 'level1'"; }
[ "$(j "json_extract(g.value, '\$.compile_only') || ' ' || json_extract(g.value, '\$.measured')" fake-echo)" = "1 0" ] ||
    fail "compile-only group flags: $(j g.value fake-echo)"
[ "$(j "json_type(g.value, '\$.pass_at_k.1') || json_type(g.value, '\$.speedup_at_k.1') ||
        json_type(g.value, '\$.fast_p_at_k.0.1') || json_type(g.value, '\$.solved_samples')" fake-echo)" = nullnullnullnull ] ||
    fail "compile-only metrics are not null: $(j g.value fake-echo)"
[ "$(j "json_type(g.value, '\$.pass_at_k.1') || ' ' || json_extract(g.value, '\$.compile_only')" synth-model)" = "real 0" ] ||
    fail "GPU group: $(j g.value synth-model)"
[ "$(sqlite3 :memory: "SELECT group_concat(json_extract(value, '\$.model') || ':' || json_extract(value, '\$.compile_only'), ' ')
     FROM json_each(json_extract(readfile('$T/s.json'), '\$.runs'))")" = "synth-model:0 fake-echo:1" ] ||
    fail "runs: compile_only: $(sqlite3 :memory: "SELECT json_extract(readfile('$T/s.json'), '\$.runs')")"
"$KC_BIN/kcurate" runs --db "$DB" | grep -Eq "fake-echo .* yes +[0-9]+ .* yes$" || fail "kcurate runs: no compile_only column"

# report: '-' cells and a note
"$KC_BIN/kcurate" report --db "$DB" --out "$T/rep" >/dev/null 2>"$T/e" || fail "report: $(cat "$T/e")"
row=$(grep 'fake-echo</td><td>loop (compile-only)</td>' "$T/rep/index.html") || fail "report: no compile-only row"
! echo "$row" | grep -q '0\.0%\|0\.00x' || fail "report: compile-only metrics as 0: $row"
grep -q 'id="not-measured">Not measured (-): nothing of a compile-only run was run on a GPU' "$T/rep/index.html" ||
    fail "report: no note that nothing was measured"
echo ok
