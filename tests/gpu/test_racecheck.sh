#!/bin/sh
# test_racecheck: the deferred race check (issue 34, docs/INTEGRITY.md "Races"), on a GPU. Three
# kernels from tests/gpu/catalogue/integrity4/: race_warp_sum (level1/047: a warp-synchronous
# shared-memory sum without __syncwarp or volatile, right on an H100 in practice), race_synced_sum
# (the same tree with __syncwarp) and race_none_relu (level1/019, elementwise, no shared memory).
#   1. kverify run (default sanitizer: memcheck only) labels all three correct;
#   2. kexport refuses the two shared-memory labels until they are race-checked;
#   3. kverify racecheck: race_warp_sum hazard -> a new verification, unsafe; race_synced_sum
#      clean; race_none_relu not checked (it needs no check); the racecheck time per candidate
#      is printed (the cost of the deferred check); a second pass finds nothing to check;
#   4. relabelled, kexport exports race_synced_sum and race_none_relu as correct, and not the race;
#   5. the same two reductions with racecheck inline (kverify run --sanitizer all): the race
#      unsafe there too, and the inline racecheck's time per candidate.
# Standalone: KC_BIN=bin KC_ROOT=. KC_PROBLEMS=problems sh tests/gpu/test_racecheck.sh
. "$KC_ROOT/tests/gpu/lib.sh"
dir="$KC_ROOT/tests/gpu/catalogue/integrity4"
db="$OUT_DIR/racecheck.db"
rm -rf "$db"* "$OUT_DIR/racecheck_export"*
kv="$KC_BIN/kverify"
"$kv" import --db "$db" --problem level1/047_sum_reduction "$dir/race_warp_sum.cu" "$dir/race_synced_sum.cu" >/dev/null ||
    fail "import the reductions"
"$kv" import --db "$db" --problem level1/019_relu "$dir/race_none_relu.cu" >/dev/null || fail "import relu"
verdict() { sql "$db" "SELECT verdict FROM v_latest_verification WHERE candidate_id = $1"; }

# 1. kverify run: all three correct (memcheck finds nothing; the race does not show).
"$kv" run --db "$db" --threads 2 >"$OUT_DIR/racecheck_run.log" 2>&1 || { cat "$OUT_DIR/racecheck_run.log"; fail "kverify run"; }
for id in 1 2 3; do
    [ "$(verdict $id)" = correct ] || fail "candidate $id: kverify run says $(verdict $id): $(sql "$db" "SELECT message FROM v_latest_verification WHERE candidate_id = $id")"
done
echo "racecheck: kverify run labelled all three correct (the race did not show)"

# 2. No export of the unchecked shared-memory labels.
"$KC_BIN/kcurate" run --db "$db" >/dev/null || fail "kcurate run"
X="--db $db --no-gzip --format sft --every-turn --dedup none --split train,valid,test,heldout"
if "$KC_BIN/kexport" $X --out "$OUT_DIR/racecheck_export0" >/dev/null 2>"$OUT_DIR/racecheck_export0.err"; then
    fail "kexport exported correct labels that were never race-checked"
fi
grep -q "2 correct labels need a race check" "$OUT_DIR/racecheck_export0.err" ||
    fail "kexport's refusal: $(cat "$OUT_DIR/racecheck_export0.err")"

# 3. The deferred race check.
start=$(date +%s.%N)
rc=0
"$kv" racecheck --db "$db" --json >"$OUT_DIR/racecheck.json" 2>"$OUT_DIR/racecheck.err" || rc=$?
[ $rc -eq 0 ] || { cat "$OUT_DIR/racecheck.err" "$OUT_DIR/racecheck.json"; fail "kverify racecheck exit $rc"; }
python3 - "$OUT_DIR/racecheck.json" "$start" <<'EOF' || fail "racecheck results"
import json, sys, time
r = json.load(open(sys.argv[1]))
wall = time.time() - float(sys.argv[2])
by = {x["candidate_id"]: x for x in r["results"]}
for x in r["results"]:
    print("racecheck: candidate %d %s: %s (verdict %s), racecheck %.2f s, compile again %.2f s"
          % (x["candidate_id"], x["problem_id"], x["result"], x["verdict"], x["racecheck_ms"] / 1000,
             x["compile_ms"] / 1000))
print("racecheck: cost of the deferred check: %.2f s of racecheck per candidate (mean of %d), "
      "%.1f s for the whole command" % (r["racecheck_s_per_candidate"], r["checked"], wall))
assert sorted(by) == [1, 2], "checked %s, expected candidates 1 and 2 (3 needs no check)" % sorted(by)
assert by[1]["result"] == "hazard" and by[1]["verdict"] == "unsafe", by[1]
assert by[2]["result"] == "clean" and by[2]["verdict"] == "correct", by[2]
EOF
[ "$(verdict 1)" = unsafe ] || fail "race_warp_sum is $(verdict 1) after racecheck"
[ "$(verdict 2)" = correct ] && [ "$(verdict 3)" = correct ] || fail "a control lost its label"
[ "$(sql "$db" "SELECT group_concat(result, ',') FROM (SELECT result FROM race_checks ORDER BY verification_id)")" = "hazard,clean" ] ||
    fail "race_checks: $(sql "$db" 'SELECT verification_id, result FROM race_checks')"
sql "$db" "SELECT json_extract(evidence_json, '$.racecheck.runs[0].report') FROM v_latest_verification WHERE candidate_id = 1" |
    grep -q "hazard" || fail "the unsafe verification does not carry the racecheck report"
echo "racecheck: hazard: $(sql "$db" "SELECT message FROM v_latest_verification WHERE candidate_id = 1")"
"$kv" racecheck --db "$db" >"$OUT_DIR/racecheck2.out" 2>&1 || fail "second racecheck: $(cat "$OUT_DIR/racecheck2.out")"
grep -q "^nothing to race-check" "$OUT_DIR/racecheck2.out" || fail "second pass: $(cat "$OUT_DIR/racecheck2.out")"

# 4. Relabelled, the export goes through: the two correct kernels, not the race.
"$KC_BIN/kcurate" run --db "$db" >/dev/null || fail "kcurate run after racecheck"
"$KC_BIN/kexport" $X --out "$OUT_DIR/racecheck_export1" >/dev/null 2>"$OUT_DIR/racecheck_export1.err" ||
    fail "kexport after racecheck: $(cat "$OUT_DIR/racecheck_export1.err")"
n=$(cat "$OUT_DIR"/racecheck_export1/*.jsonl | wc -l)
[ "$n" = 2 ] || fail "exported $n records, expected 2"
! grep -q colsum_warp_racy "$OUT_DIR"/racecheck_export1/*.jsonl || fail "the race was exported as correct"

# 5. Inline: --sanitizer all runs racecheck in the verification itself.
db2="$OUT_DIR/racecheck_inline.db"
rm -f "$db2"*
"$kv" import --db "$db2" --problem level1/047_sum_reduction "$dir/race_warp_sum.cu" "$dir/race_synced_sum.cu" >/dev/null ||
    fail "import (inline)"
"$kv" run --db "$db2" --threads 1 --sanitizer all >"$OUT_DIR/racecheck_inline.log" 2>&1 || { cat "$OUT_DIR/racecheck_inline.log"; fail "kverify run --sanitizer all"; }
db="$db2"
[ "$(verdict 1)" = unsafe ] && [ "$(verdict 2)" = correct ] ||
    fail "inline racecheck: race_warp_sum $(verdict 1), race_synced_sum $(verdict 2)"
sql "$db2" "SELECT candidate_id, json_extract(r.value, '$.tool'), json_extract(r.value, '$.ms') FROM v_latest_verification v, json_each(v.evidence_json, '$.sanitizer.runs') r" |
    while IFS='|' read -r id tool ms; do
        echo "racecheck: inline (--sanitizer all) candidate $id: $tool $(python3 -c "print('%.2f s' % ($ms / 1000))")"
    done
echo "racecheck: all expectations met"
