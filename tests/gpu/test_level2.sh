#!/bin/sh
# test_level2: KernelBench level 2 (problems/level2, written by tools/problems/gen_level2.py). (1) every
# reference passes its own verification; (2) all-zero, constant, poison, pass-through (where
# shapes allow) and epilogue-skipping candidates (the leading op only) fail every problem not
# marked "degenerate"; (3) tools/baselines/crosscheck.py agrees with each manifest's PyTorch transcription
# on small, alt and default dims (skipped, with a note, when python3 has no torch).
. "$KC_ROOT/tests/gpu/lib.sh"
ls "$KC_PROBLEMS"/level2/*.json >/dev/null 2>&1 || { echo "SKIP: no problems/level2"; exit 0; }
db="$OUT_DIR/level2.db"
dir="${TMPDIR:-/tmp}/kc-level2"
rm -rf "$db"* "$dir"
mkdir -p "$dir"
for m in "$KC_PROBLEMS"/level2/*.json; do
    id="level2/$(basename "$m" .json)"
    "$KC_BIN/kverify" problems --show-reference "$id" > "$dir/reference.cu" || fail "load $id"
    "$KC_BIN/kverify" import --db "$db" --problem "$id" "$dir/reference.cu" >/dev/null || fail "import $id"
done
start=$(date +%s)
"$KC_BIN/kverify" run --db "$db" ${KC_NO_TIMING:+--no-timing} > "$OUT_DIR/level2_references.log" 2>&1
tail -1 "$OUT_DIR/level2_references.log"
echo "level2 references: $(( $(date +%s) - start )) s"
bad=$(sql "$db" "SELECT c.problem_id, v.verdict, v.message FROM candidates c JOIN v_latest_verification v ON v.candidate_id = c.id WHERE v.verdict <> 'correct'")
total=$(sql "$db" "SELECT count(*) FROM candidates")
[ -z "$bad" ] || { echo "$bad"; fail "level-2 references that do not pass their own verification"; }
echo "level2 references: $total of $total pass"

ddb="$OUT_DIR/level2_degenerate.db"
rm -f "$ddb"*
degenerate=""
for m in "$KC_PROBLEMS"/level2/*.json; do
    name=$(basename "$m" .json); id="level2/$name"
    if grep -q '"degenerate"' "$m"; then degenerate="$degenerate $id"; continue; fi
    files=$("$KC_BIN/kc_degenerate" "$id" "$dir/$name") || fail "generate $id"
    files="$files $(python3 "$KC_ROOT/tests/gpu/l2_skip_epilogue.py" "$KC_BIN" "$id" "$dir/$name")" || fail "skip-epilogue $id"
    "$KC_BIN/kverify" import --db "$ddb" --problem "$id" $files >/dev/null || fail "import $id"
done
echo "level2 degenerate problems (not required to reject trivial outputs):$degenerate"
"$KC_BIN/kverify" run --db "$ddb" --no-timing > "$OUT_DIR/level2_degenerate.log" 2>&1
tail -1 "$OUT_DIR/level2_degenerate.log"
passed=$(sql "$ddb" "SELECT c.problem_id, c.id FROM candidates c JOIN v_latest_verification v ON v.candidate_id = c.id WHERE v.verdict = 'correct'")
pending=$(sql "$ddb" "SELECT count(*) FROM candidates WHERE status = 'pending'")
dtotal=$(sql "$ddb" "SELECT count(*) FROM candidates")
[ -z "$passed" ] || { echo "$passed"; fail "trivial or epilogue-skipping outputs accepted on level 2"; }
[ "$pending" = 0 ] || fail "$pending level-2 degenerate candidates were not verified"
echo "level2 degenerate: all $dtotal candidates rejected"

if python3 -c "import torch, numpy" 2>/dev/null; then
    python3 "$KC_ROOT/tools/baselines/crosscheck.py" --bin "$KC_BIN" --problems "$KC_PROBLEMS" --suite level2 \
        --dims "${L2_CROSSCHECK_DIMS:-small,alt,default}" --report "$OUT_DIR/crosscheck_level2.json" > "$OUT_DIR/crosscheck_level2.log" 2>&1
    rc=$?
    tail -1 "$OUT_DIR/crosscheck_level2.log"
    [ "$rc" = 0 ] || { grep -E "NO |DISAGREES" "$OUT_DIR/crosscheck_level2.log" | head -40; fail "level-2 references disagree with PyTorch"; }
else
    echo "note: python3 without torch/numpy: level-2 cross-check not run"
fi
