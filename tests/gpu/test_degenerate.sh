#!/bin/sh
# test_degenerate: for every problem, all-zero outputs, a constant, the poison
# pattern and (where shapes allow) the input passed through must fail verification.
. "$KC_ROOT/tests/gpu/lib.sh"
db="$OUT_DIR/degenerate.db"
dir="${TMPDIR:-/tmp}/kc-degenerate"
rm -rf "$db"* "$dir"
for m in "$KC_PROBLEMS"/level1/*.json; do
    id="level1/$(basename "$m" .json)"
    files=$("$KC_BIN/kc_degenerate" "$id" "$dir/$(basename "$m" .json)") || fail "generate $id"
    "$KC_BIN/kverify" import --db "$db" --problem "$id" $files >/dev/null || fail "import $id"
done
start=$(date +%s)
"$KC_BIN/kverify" run --db "$db" --no-timing > "$OUT_DIR/degenerate_run.log" 2>&1
tail -1 "$OUT_DIR/degenerate_run.log"
echo "degenerate: $(( $(date +%s) - start )) s"
passed=$(sql "$db" "SELECT c.problem_id, c.id FROM candidates c JOIN v_latest_verification v ON v.candidate_id = c.id WHERE v.verdict = 'correct'")
total=$(sql "$db" "SELECT count(*) FROM candidates")
unverified=$(sql "$db" "SELECT count(*) FROM candidates WHERE status = 'pending'")
sql "$db" "SELECT v.verdict, count(*) FROM candidates c JOIN v_latest_verification v ON v.candidate_id = c.id GROUP BY 1"
[ -z "$passed" ] || { echo "$passed"; fail "degenerate outputs accepted as correct"; }
[ "$unverified" = 0 ] || fail "$unverified degenerate candidates were not verified"
echo "degenerate: all $total degenerate candidates rejected"
