#!/bin/sh
# test_audit: the audit tools without a GPU. kcollect --problem-budget records the problem's
# clock per turn and stops samples when the shared budget is spent; kverify reverify in
# compile-only mode adds a second verification to every candidate (verdict `compiled` both
# times, no flips) and resumes an interrupted pass; a stored verdict changed by hand shows as
# exactly that flip; the speedup rule ignores a change within the timing noise and reports one
# beyond it; a 'compiled' -> 'correct' refinement is no flip; kverify import --jsonl reports each
# malformed line with its number and imports the rest, and the claims are checked against our
# verdicts (correct claims that hold, speedups within 10%).
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
q() { sqlite3 "$DB" "$1"; }
flips() { "$KC_BIN/kcurate" flips --db "$DB" "$@"; }

# ---- a compile-only collection with a per-problem budget ----
start_server --bug compile --delay-ms 20
PROBLEMS=level1/001_square_matmul,level1/019_relu,level1/023_softmax
"$KC_BIN/kcollect" --problems $PROBLEMS --endpoint "$URL" --model fake-echo --db "$DB" --samples 2 \
    --turns 3 --concurrency 2 --compile-only --problem-budget 5 >"$T/c.out" 2>"$T/c.err" \
    || { cat "$T/c.err"; fail "kcollect failed"; }
[ "$(q "SELECT json_extract(config_json, '$.problem_budget_minutes') FROM runs")" = 5.0 ] \
    || fail "the run does not record its problem budget: $(q 'SELECT config_json FROM runs')"
# Every turn carries the problem clock and tokens; both grow turn by turn within a problem.
[ "$(q "SELECT count(*) FROM turns WHERE problem_elapsed_ms IS NULL OR problem_elapsed_ms <= 0
        OR problem_tokens < tokens_in + tokens_out")" = 0 ] || fail "turns lack the problem clock"
[ "$(q "SELECT count(*) FROM turns a JOIN turns b ON a.trajectory_id = b.trajectory_id
        AND b.turn_index = a.turn_index + 1 WHERE b.problem_elapsed_ms <= a.problem_elapsed_ms
        OR b.problem_tokens <= a.problem_tokens")" = 0 ] || fail "problem clock not increasing"
N=$(q "SELECT count(*) FROM candidates WHERE source_sha IS NOT NULL")
[ "$N" = 12 ] || fail "expected 12 candidates with a kernel, got $N"

# A problem budget smaller than one turn: each problem gets its first turns, then no more.
"$KC_BIN/kcollect" --problems $PROBLEMS --endpoint "$URL" --model fake-echo --db "$T/b.db" \
    --samples 3 --turns 3 --concurrency 1 --compile-only --problem-budget 0.0001 --seed 7 \
    >"$T/b.out" 2>"$T/b.err" || { cat "$T/b.err"; fail "kcollect with a tiny budget failed"; }
[ "$(sqlite3 "$T/b.db" "SELECT count(*) FROM turns")" = 3 ] \
    || fail "a spent problem budget still ran turns: $(sqlite3 "$T/b.db" 'SELECT count(*) FROM turns')"
[ "$(sqlite3 "$T/b.db" "SELECT count(*) FROM trajectories WHERE stop_reason = 'problem_minutes'")" = 9 ] \
    || fail "trajectories not stopped by the problem budget: $(sqlite3 "$T/b.db" 'SELECT stop_reason FROM trajectories')"
stop_server

# ---- reverify, compile-only, interrupted by --limit then resumed ----
"$KC_BIN/kverify" reverify --db "$DB" --compile-only --limit 5 >"$T/r1.out" 2>"$T/r1.err" \
    || { cat "$T/r1.err"; fail "reverify --limit failed"; }
grep -q "reverify pass 1: 5 of 12 candidates re-verified (run the same command again to resume)" "$T/r1.out" \
    || fail "partial pass: $(cat "$T/r1.out")"
"$KC_BIN/kverify" reverify --db "$DB" --compile-only >"$T/r2.out" 2>"$T/r2.err" \
    || { cat "$T/r2.err"; fail "reverify resume failed"; }
grep -q "resuming reverify pass 1" "$T/r2.out" || fail "did not resume: $(cat "$T/r2.out")"
grep -q "reverify pass 1: 12 of 12 candidates re-verified (pass finished); 0 label flips" "$T/r2.out" \
    || fail "pass not finished: $(cat "$T/r2.out")"
# Old verifications kept, one new one per candidate, same verdicts, both with verifier version.
[ "$(q "SELECT count(*) FROM verifications WHERE reverify_pass = 1")" = 12 ] || fail "pass rows"
[ "$(q "SELECT count(DISTINCT candidate_id) FROM verifications WHERE reverify_pass = 1")" = 12 ] || fail "a candidate verified twice in one pass"
[ "$(q "SELECT count(*) FROM verifications WHERE reverify_pass IS NULL")" = 12 ] || fail "old rows lost"
[ "$(q "SELECT count(*) FROM verifications WHERE verifier_version IS NULL OR verifier_version = ''")" = 0 ] || fail "verifier version"
[ "$(q "SELECT group_concat(DISTINCT verdict) FROM verifications WHERE reverify_pass = 1 AND candidate_id IN
        (SELECT candidate_id FROM verifications WHERE reverify_pass IS NULL AND verdict = 'compiled')")" = compiled ] \
    || fail "compiled candidates changed verdict"
[ "$(q "SELECT count(*) FROM v_label_flips")" = 0 ] || fail "flips on a deterministic reverify: $(q 'SELECT * FROM v_label_flips')"
flips | grep -q "^label flips: 0 (12 candidates verified more than once" || fail "kcurate flips: $(flips)"
# A finished pass is not resumed: the same command starts pass 2.
"$KC_BIN/kverify" reverify --db "$DB" --compile-only --problems level1/019_relu >"$T/r3.out" 2>&1 \
    || fail "selected reverify failed"
grep -q "starting reverify pass 2" "$T/r3.out" && grep -q "pass 2: 4 of 4 candidates" "$T/r3.out" \
    || fail "--problems selection: $(cat "$T/r3.out")"
"$KC_BIN/kverify" reverify --db "$DB" --compile-only --verdict compile_error >"$T/r4.out" 2>&1 || fail "verdict selection"
grep -q "pass 3: 6 of 6 candidates" "$T/r4.out" || fail "--verdict selection: $(cat "$T/r4.out")"

# ---- a deliberately changed stored verdict is exactly one flip ----
C=$(q "SELECT min(candidate_id) FROM verifications WHERE verdict = 'compiled' AND reverify_pass IS NULL")
q "UPDATE verifications SET verdict = 'compile_error' WHERE candidate_id = $C AND reverify_pass IS NULL"
[ "$(q "SELECT count(*) FROM v_label_flips")" = 1 ] || fail "expected one flip: $(q 'SELECT * FROM v_label_flips')"
[ "$(q "SELECT candidate_id || ' ' || kind || ' ' || before || ' ' || after FROM v_label_flips")" = \
  "$C verdict_class compile_fail compiled" ] || fail "wrong flip: $(q 'SELECT * FROM v_label_flips')"
flips --json >"$T/f.json"
[ "$(sqlite3 :memory: "SELECT json_array_length(readfile('$T/f.json'), '$.flips') || ' ' ||
      json_extract(readfile('$T/f.json'), '$.by_kind.verdict_class')")" = "1 1" ] || fail "flips --json: $(cat "$T/f.json")"
flips | grep -q "candidate $C .* verdict_class: compile_fail -> compiled" || fail "flips text: $(flips)"

# ---- the speedup rule and refinements, on hand-made GPU verifications of one candidate ----
add_v() { # verdict flags median stdev n speedup
    q "INSERT INTO verifications(candidate_id, verdict, flags, verifier_version, gpu_name)
       VALUES ($C, '$1', '$2', 'test', 'NVIDIA H100 80GB HBM3');
       INSERT INTO timings(verification_id, median_ms, stdev_ms, n, speedup_eager)
       VALUES (last_insert_rowid(), $3, $4, $5, $6)"
}
before=$(q "SELECT count(*) FROM v_label_flips")
add_v correct '' 1.000 0.004 100 2.0   # compiled -> correct: a refinement, no flip
add_v correct '' 1.010 0.004 100 1.98  # 1% slower: within the 2% floor, no flip
add_v correct '' 1.500 0.004 100 1.33  # 50% slower, far beyond noise: a speedup flip
add_v correct alt_shape_fail 1.500 0.004 100 1.33  # a new flag: a flags flip
[ "$(q "SELECT group_concat(kind, ',') FROM (SELECT kind FROM v_label_flips WHERE candidate_id = $C
        ORDER BY after_id, kind)")" = "verdict_class,speedup,flags" ] \
    || fail "speedup/flags rule: $(q "SELECT kind, before, after FROM v_label_flips WHERE candidate_id = $C")"
[ "$(q "SELECT count(*) FROM v_label_flips")" = $((before + 2)) ] || fail "unexpected extra flips"
# Noisy timings: the same 50% change with a huge stdev is within the noise.
add_v correct alt_shape_fail 1.000 5.0 10 2.0
[ "$(q "SELECT count(*) FROM v_label_flips WHERE candidate_id = $C AND kind = 'speedup'")" = 1 ] \
    || fail "a change within a large stdev counted as a flip"

# ---- third-party labels ----
REF=$(sed 's/\\/\\\\/g; s/"/\\"/g' "$KC_PROBLEMS/level1/019_relu.cu" | awk '{printf "%s\\n", $0}')
cat >"$T/claims.jsonl" <<EOF
{"problem_id": "level1/019_relu", "code": "$REF", "claimed_correct": true, "claimed_speedup": 1.0, "source": "lab-a", "id": "r1"}
{"problem_id": "level1/019_relu", "response": "Here:\\n\`\`\`cuda\\nextern \"C\" __global__ void k(float *y) { y[0] = undefined_thing; }\\n// @launch k<<<1, 1>>>(y);\\n\`\`\`\\n", "claimed_correct": true, "source": "lab-a", "id": 2}
this line is not JSON

{"problem_id": "level1/019_relu", "claimed_correct": true, "source": "lab-a"}
{"problem_id": "level1/019_relu", "code": "x", "response": "y", "source": "lab-a"}
{"problem_id": "level1/999_nope", "code": "x", "source": "lab-a"}
{"problem_id": "level1/019_relu", "code": "$REF", "claimed_speedup": -2, "source": "lab-a"}
{"problem_id": "level1/019_relu", "code": "$REF", "claimed_correct": "yes", "source": "lab-a"}
{"problem_id": "level1/023_softmax", "code": "$REF", "claimed_correct": false, "claimed_speedup": 2.0, "source": "lab-b"}
EOF
set +e
"$KC_BIN/kverify" import --db "$DB" --jsonl "$T/claims.jsonl" >"$T/i.out" 2>"$T/i.err"
st=$?
set -e
[ $st = 1 ] || fail "import with bad lines should exit 1, got $st: $(cat "$T/i.err")"
grep -q "imported 3 of 9 records" "$T/i.out" && grep -q "(6 rejected)" "$T/i.out" || fail "import summary: $(cat "$T/i.out")"
for l in 3 5 6 7 8 9; do
    grep -q "claims.jsonl:$l: " "$T/i.err" || fail "no error for line $l: $(cat "$T/i.err")"
done
grep -q "claims.jsonl:3: not valid JSON" "$T/i.err" || fail "line 3 message"
grep -q "claims.jsonl:5: 'code'\|claims.jsonl:5: give exactly one" "$T/i.err" || fail "line 5 message: $(cat "$T/i.err")"
grep -q "claims.jsonl:7: unknown problem 'level1/999_nope'" "$T/i.err" || fail "line 7 message"
grep -q "claims.jsonl:8: 'claimed_speedup' must be a number > 0" "$T/i.err" || fail "line 8 message"
[ "$(q "SELECT group_concat(line || ':' || source || ':' || coalesce(external_id, '-'), ' ') FROM
        (SELECT * FROM third_party_claims ORDER BY line)")" = "1:lab-a:r1 2:lab-a:2 10:lab-b:-" ] \
    || fail "claims rows: $(q 'SELECT * FROM third_party_claims')"
q "SELECT record_json FROM third_party_claims" | grep -q '"code"' && fail "code kept in record_json"
"$KC_BIN/kverify" run --db "$DB" --compile-only >"$T/run.out" 2>&1 || fail "kverify run after import"
# Compile-only: the compile error disproves a "correct" claim; the others cannot be checked yet.
[ "$(q "SELECT group_concat(coalesce(correct_holds, 'null'), ',') FROM (SELECT * FROM v_claim_checks ORDER BY candidate_id)")" = "null,0,null" ] \
    || fail "claim checks (compile only): $(q 'SELECT * FROM v_claim_checks')"
# Hand-made GPU results: our speedups 1.05 (claim 1.0: holds within 10%) and, for the kernel
# claimed incorrect, correct at 1.5x (claim 2.0x: does not hold).
for pair in "1:1.05" "10:1.5"; do
    line=${pair%%:*}; sp=${pair#*:}
    cid=$(q "SELECT candidate_id FROM third_party_claims WHERE line = $line")
    q "INSERT INTO verifications(candidate_id, verdict, verifier_version, gpu_name) VALUES ($cid, 'correct', 'test', 'H100');
       INSERT INTO timings(verification_id, median_ms, speedup_eager) VALUES (last_insert_rowid(), 1, $sp)"
done
flips >"$T/flips.txt"
grep -q 'lab-a: 2 records; "correct" claims 2, 1 hold; "incorrect" claims 0, 0 hold; speedup claims 1, 1 hold within 10%; 0 not verified' "$T/flips.txt" \
    || fail "lab-a summary: $(cat "$T/flips.txt")"
grep -q 'lab-b: 1 records; "correct" claims 0, 0 hold; "incorrect" claims 1, 0 hold; speedup claims 1, 0 hold within 10%' "$T/flips.txt" \
    || fail "lab-b summary: $(cat "$T/flips.txt")"
[ "$(q "SELECT group_concat(kind, ',') FROM (SELECT kind FROM v_label_flips WHERE before_id IS NULL ORDER BY candidate_id, kind)")" = \
  "claim_correct,claim_correct,claim_speedup" ] || fail "claim flips: $(q 'SELECT * FROM v_label_flips WHERE before_id IS NULL')"
echo "ok: test_audit"
