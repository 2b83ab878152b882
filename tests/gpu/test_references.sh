#!/bin/sh
# test_references: every problem's reference passes its own verification
# (5 fresh seeds on the default dims plus every alt dims set), recorded in a database.
. "$KC_ROOT/tests/gpu/lib.sh"
db="$OUT_DIR/references.db"
rm -f "$db"*
for m in "$KC_PROBLEMS"/level1/*.json; do
    id="level1/$(basename "$m" .json)"
    "$KC_BIN/kverify" problems --show-reference "$id" > "$OUT_DIR/reference.cu" || fail "load $id"
    "$KC_BIN/kverify" import --db "$db" --problem "$id" "$OUT_DIR/reference.cu" >/dev/null || fail "import $id"
done
start=$(date +%s)
"$KC_BIN/kverify" run --db "$db" ${KC_NO_TIMING:+--no-timing} > "$OUT_DIR/references_run.log" 2>&1
tail -1 "$OUT_DIR/references_run.log"
echo "references: $(( $(date +%s) - start )) s"
bad=$(sql "$db" "SELECT c.problem_id, v.verdict, v.message FROM candidates c JOIN v_latest_verification v ON v.candidate_id = c.id WHERE v.verdict <> 'correct'")
total=$(sql "$db" "SELECT count(*) FROM candidates")
[ -z "$bad" ] || { echo "$bad"; fail "references that do not pass their own verification"; }
echo "references: $total of $total pass"
