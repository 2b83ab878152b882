#!/bin/sh
# test_datasheet_truth: every sentence an export's DATASHEET.md generates is true of the data it
# describes (issue 35, item 3). The CPU demo path (the bundled server, compile-only): no
# "correct kernels" above "Verdict classes: compiled", the bundled server is a test server (never
# "model `bundled-fake-llm`"), nothing claims a kernel was run, timed or written by a model, no
# split or speedup that is not there; multiturn counts each trajectory's best class (compiled, not
# "incorrect"); rl has no empty verdict-class line. A run against an endpoint (a model's answers)
# and GPU labels (kc_synth) say so instead. The same database and config give the same bytes.
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
env -u OPENAI_BASE_URL "$KC_BIN/kcollect" --problems 'level1/01[0-5]*' --db "$DB" --compile-only \
    --turns 3 --fake-args "--bug compile" >/dev/null 2>"$T/e" || fail "kcollect: $(cat "$T/e")"
"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run"
X="--db $DB --split train,valid,test"
# as tools/demo.sh exports without a GPU
"$KC_BIN/kexport" $X --out "$T/sft" --format sft --every-turn --verdict compiled --dedup none >/dev/null 2>&1 || fail "sft"
"$KC_BIN/kexport" $X --out "$T/mt" --format multiturn --verdict any >/dev/null 2>&1 || fail "multiturn"
"$KC_BIN/kexport" $X --out "$T/rl" --format rl >/dev/null 2>&1 || fail "rl"
"$KC_BIN/kexport" $X --out "$T/kb" --format kernelbench --verdict compiled >/dev/null 2>&1 || fail "kernelbench"
S="$T/sft/DATASHEET.md"
no() { ! grep -q -- "$2" "$1" || fail "$(basename "$(dirname "$1")") datasheet says '$2': $(grep -- "$2" "$1")"; }
yes() { grep -q -- "$2" "$1" || fail "$(basename "$(dirname "$1")") datasheet does not say '$2'"; }
for d in sft mt rl kb; do
    F="$T/$d/DATASHEET.md"
    no "$F" "of correct kernels"
    no "$F" 'model `bundled-fake-llm`'
    no "$F" "running and timing every kernel"
    no "$F" "Kernels were written by the model"
    no "$F" "what the model produced"
    no "$F" "the model gave none"
    no "$F" "Speedups hold"
    no "$F" "model selection (valid)"   # no valid split in this selection
    no "$F" "provenance.verification)."  # no GPU, no seeds
    yes "$F" "run on a GPU"
    yes "$F" "by a test server (bundled-fake-llm), not by a language model"
    yes "$F" "for testing the pipeline"
done
yes "$S" "^- Verdict classes of the kernels: compiled [0-9]"
yes "$S" "No kernel of this export was run on a GPU"
yes "$S" "one per turn whose kernel the verdict filter keeps"
yes "$S" 'what the test server produced'
yes "$S" '`compiled` (a compile-only run, no GPU) is not known to be correct'
yes "$T/mt/DATASHEET.md" "^- Best verdict class of each trajectory's turns: compiled [0-9]* ("
no "$T/mt/DATASHEET.md" "incorrect"
no "$T/mt/DATASHEET.md" "duplicates removed"   # multiturn keeps every turn
no "$T/rl/DATASHEET.md" "Verdict classes"
no "$T/kb/DATASHEET.md" "first user message"   # modules carry no prompt
no "$T/mt/DATASHEET.md" "reasoning of its representative"   # multiturn keeps every turn
yes "$T/rl/DATASHEET.md" '`correct` is 0 and `best_speedup_eager` null for want of a GPU'
[ "$(sqlite3 :memory: "SELECT json_extract(readfile('$T/mt/manifest.json'), '\$.counts.by_verdict_class.compiled')")" = \
  "$(sqlite3 :memory: "SELECT json_extract(readfile('$T/mt/manifest.json'), '\$.counts.records')")" ] ||
    fail "multiturn manifest: $(sqlite3 :memory: "SELECT json_extract(readfile('$T/mt/manifest.json'), '\$.counts')")"

# The same database and config: the same bytes.
"$KC_BIN/kexport" $X --out "$T/sft2" --format sft --every-turn --verdict compiled --dedup none >/dev/null 2>&1 || fail "sft again"
cmp -s "$S" "$T/sft2/DATASHEET.md" && cmp -s "$T/sft/manifest.json" "$T/sft2/manifest.json" ||
    fail "a second export of the same database and config differs"

# A model's answers (the fake server as an endpoint): no synthetic words, the model wrote them.
start_server
"$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model real-model --db "$T/m.db" \
    --compile-only --turns 1 >/dev/null 2>"$T/e" || fail "endpoint run: $(cat "$T/e")"
stop_server
"$KC_BIN/kcurate" run --db "$T/m.db" >/dev/null
"$KC_BIN/kexport" --db "$T/m.db" --out "$T/m" --format sft --verdict compiled --split train,valid,test,heldout \
    >/dev/null 2>&1 || fail "model sft"
no "$T/m/DATASHEET.md" "ynthetic"
no "$T/m/DATASHEET.md" "test server"
yes "$T/m/DATASHEET.md" "by the model(s) of the runs listed above"
yes "$T/m/DATASHEET.md" "run 1 (model real-model, 1 records)"

# GPU labels (synthetic database of timed correct kernels): run on a GPU, timed, speedups.
"$KC_BIN/kc_synth" --db "$T/g.db" --candidates 120 --problems 4 >/dev/null || fail "kc_synth"
"$KC_BIN/kcurate" run --db "$T/g.db" >/dev/null
"$KC_BIN/kexport" --db "$T/g.db" --out "$T/g" --format sft --split train,valid,test,heldout >/dev/null 2>&1 || fail "gpu sft"
yes "$T/g/DATASHEET.md" "where it compiled, running it on a GPU against a trusted reference"
yes "$T/g/DATASHEET.md" "^- Verdict classes of the kernels: correct [0-9]*\.$"
yes "$T/g/DATASHEET.md" "Speedups hold for the GPU"
yes "$T/g/DATASHEET.md" "kverify verified the kernels on a GPU (version, GPU, driver and seeds"
no "$T/g/DATASHEET.md" "compile-only"
echo ok
