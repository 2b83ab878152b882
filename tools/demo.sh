#!/bin/sh
# demo.sh: the main job end to end (`make demo`). kcollect runs the closed loop
# on level 1 against the bundled test LLM server (the default when no endpoint
# is configured; it answers with each problem's reference after a buggy first
# try), kverify checks on the GPU when there is one (then races: kverify racecheck) and stops
# at compilation otherwise, kcurate labels and deduplicates, kexport writes the dataset.
# Settings: DEMO_PROBLEMS (default level1), DEMO_OUT (default demo-out),
# OPENAI_BASE_URL/OPENAI_API_KEY or DEMO_ARGS for a real endpoint, DEMO_RACE_PER_GPU (race
# checks side by side on each GPU, default 8: each is a compute-sanitizer process, mostly
# start-up on the CPU). Each step's seconds are printed at the end.
set -eu
BUILD="${1:-.}"
BIN="$(cd "$BUILD" && pwd)/bin"
OUT="${DEMO_OUT:-demo-out}"
PROBLEMS="${DEMO_PROBLEMS:-level1}"
mkdir -p "$OUT"
DB="$OUT/kc.db"
if "$BIN/kverify" gpus >/dev/null 2>&1; then
    mode=""; bug="runtime"; sft_args="--verdict correct"
    echo "demo: GPU found: candidates are run, checked and timed"
else
    # Nothing is verified correct without a GPU: the SFT set holds the compiled turns.
    mode="--compile-only"; bug="compile"; sft_args="--every-turn --verdict compiled --dedup none"
    echo "demo: no GPU: verification stops at compilation (labels 'compiled')"
fi
t0=$(date +%s)
# shellcheck disable=SC2086
"$BIN/kcollect" --problems "$PROBLEMS" --db "$DB" --turns 3 $mode --fake-args "--bug $bug" ${DEMO_ARGS:-}
t1=$(date +%s)
if [ -z "$mode" ]; then
    # correct labels that use shared memory or cross-block communication need a race check
    # before kexport takes them (docs/INTEGRITY.md "Races")
    "$BIN/kverify" racecheck --db "$DB" --per-gpu "${DEMO_RACE_PER_GPU:-8}"
fi
t2=$(date +%s)
"$BIN/kcurate" run --db "$DB"
"$BIN/kcurate" stats --db "$DB"
rm -rf "$OUT/sft" "$OUT/multiturn" "$OUT/sft.tar"
# shellcheck disable=SC2086
"$BIN/kexport" --db "$DB" --out "$OUT/sft" --format sft $sft_args --split train,valid,test --tar
"$BIN/kexport" --db "$DB" --out "$OUT/multiturn" --format multiturn --verdict any --split train,valid,test
t3=$(date +%s)
echo
echo "demo: seconds: collect $((t1 - t0)), race checks $((t2 - t1)), curate and export $((t3 - t2)); total $((t3 - t0))"
echo "demo: database          $DB"
echo "demo: SFT dataset       $OUT/sft/ (bundle $OUT/sft.tar)"
echo "demo: multi-turn data   $OUT/multiturn/"
echo "demo: datasheets        $OUT/sft/DATASHEET.md, $OUT/multiturn/DATASHEET.md"
