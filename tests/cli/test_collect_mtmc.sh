#!/bin/sh
# test_collect_mtmc: kcollect --strategy mtmc end to end, compile-only, with the bundled test
# server (--bug stuck-step: every 'vectorize' step fails to compile). Turn 0 asks for a plan and
# stores it (no candidate); each step turn implements one action and stores it; the failing step
# is asked again from the last compiled kernel with the failure as feedback; after
# --plan-retries failures the plan is revised and the new plan's step finishes the trajectory
# (plan_done); step feedback carries the hardware facts; the same command again adds nothing; a
# default-strategy run in the same database stores no plan and no action. Exports: sft and
# multiturn carry plan and action (null, '' in multiturn turns, for the default strategy), and
# --format plan gives one record per plan with its outcome; kcurate stats (and --json) show
# pass@k per strategy, computed from the verdicts.
set -eu
. "$(dirname "$0")/lib.sh"

DB="$T/a.db"
q() { sqlite3 "$DB" "$1"; }
# jq FILE SQL: SQL over the records of a plain JSONL file, one row per record in table r(j).
jq() { sqlite3 :memory: "CREATE TABLE r AS SELECT value AS j FROM json_each('[' ||
    replace(rtrim(CAST(readfile('$1') AS TEXT), char(10)), char(10), ',') || ']'); $2"; }
PROBLEMS=level1/019_relu,level1/020_leaky_relu
mtmc() { env -u OPENAI_BASE_URL "$KC_BIN/kcollect" --problems $PROBLEMS --db "$DB" --samples 2 \
         --turns 10 --compile-only --strategy mtmc --fake-args "--bug stuck-step" "$@"; }

mtmc >"$T/out1" 2>"$T/err1" || { cat "$T/err1"; fail "mtmc run failed"; }
grep -q "trajectories   4, done 4, solved 4" "$T/out1" || fail "summary: $(cat "$T/out1")"
[ "$(q "SELECT json_extract(config_json, '\$.strategy') FROM runs")" = mtmc ] || fail "run strategy"

# per trajectory: plan, baseline, vectorize x2 (failed), revise, unroll; plan_done
[ "$(q "SELECT count(*) FROM trajectories WHERE stop_reason = 'plan_done'")" = 4 ] ||
    fail "stop reasons: $(q "SELECT stop_reason FROM trajectories")"
expected='0|plan|||3
1|baseline -- one thread per output element, as the reference does|1|compiled|
2|vectorize 4 -- float4 loads and stores where the size allows|2|compile_error|
3|vectorize 4 -- float4 loads and stores where the size allows|2|compile_error|
4|revise|||1
5|unroll 4 -- unroll the per-thread loop instead|1|compiled|'
got=$(q "SELECT t.turn_index, t.action, t.step, v.verdict, json_array_length(t.plan_json) FROM turns t
         LEFT JOIN v_latest_verification v ON v.candidate_id = t.candidate_id
         WHERE t.trajectory_id = 1 ORDER BY t.turn_index")
[ "$got" = "$expected" ] || fail "turns of trajectory 1:
$got"
[ "$(q "SELECT count(*) FROM turns WHERE action IN ('plan', 'revise') AND candidate_id IS NOT NULL")" = 0 ] ||
    fail "planning turns have candidates"
[ "$(q "SELECT count(*) FROM turns WHERE action IS NULL")" = 0 ] || fail "mtmc turns without action"
[ "$(q "SELECT json_extract(plan_json, '\$[1].action') || ' ' || json_extract(plan_json, '\$[1].arg')
        FROM turns WHERE trajectory_id = 1 AND turn_index = 0")" = "vectorize 4" ] || fail "plan_json"

blob() { q "SELECT CAST(data AS TEXT) FROM blobs WHERE sha256 = ($1)"; }
retry=$(blob "SELECT prompt_sha FROM turns WHERE trajectory_id = 1 AND turn_index = 3")
echo "$retry" | grep -q "KC-MTMC STEP 2/3 ATTEMPT 2" || fail "retry prompt: $retry"
echo "$retry" | grep -q "previous attempt at this step failed" || fail "retry without the failure"
echo "$retry" | grep -q "undeclared_identifier_kc" || fail "retry without the compile log"
echo "$retry" | grep -q "relu_ref" || fail "retry without the last compiled kernel"
echo "$retry" | grep -q "Hardware facts:" || fail "retry without hardware facts"
fb=$(blob "SELECT feedback_sha FROM turns WHERE trajectory_id = 1 AND turn_index = 1")
echo "$fb" | grep -q "registers per thread.*occupancy at most" || fail "step feedback: $fb"
revise=$(blob "SELECT prompt_sha FROM turns WHERE trajectory_id = 1 AND turn_index = 4")
echo "$revise" | grep -q "KC-MTMC REVISE REQUEST: action 2" || fail "revise prompt: $revise"

# the same command again: every trajectory done, nothing asked
n=$(q "SELECT count(*) FROM turns")
mtmc >"$T/out2" 2>"$T/err2" || fail "rerun failed: $(cat "$T/err2")"
[ "$(q "SELECT count(*) FROM turns")" = "$n" ] || fail "the rerun added turns"

# the default strategy: no plan, no action
env -u OPENAI_BASE_URL "$KC_BIN/kcollect" --problems $PROBLEMS --db "$DB" --samples 2 --turns 4 \
    --compile-only >"$T/out3" 2>"$T/err3" || fail "default run failed: $(cat "$T/err3")"
[ "$(q "SELECT count(*) FROM runs")" = 2 ] || fail "the default strategy did not start its own run"
[ "$(q "SELECT count(*) FROM turns t JOIN trajectories tr ON tr.id = t.trajectory_id
        WHERE tr.run_id = 2 AND (t.action IS NOT NULL OR t.plan_json IS NOT NULL OR t.step IS NOT NULL)")" = 0 ] ||
    fail "default-strategy turns with plan or action"

"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run"
ex() { "$KC_BIN/kexport" --db "$DB" --no-gzip --split train,valid,test,heldout "$@" >/dev/null 2>"$T/ex.err" ||
       fail "kexport $*"; }
ex --out "$T/sft" --format sft --verdict any --every-turn --dedup none
cat "$T"/sft/*.jsonl >"$T/sft.jsonl"
[ "$(jq "$T/sft.jsonl" "SELECT count(*) FROM r WHERE json_extract(j, '\$.provenance.run.run_id') = 1
     AND json_type(j, '\$.plan') = 'array' AND json_type(j, '\$.action') = 'text'")" = 16 ] ||
    fail "mtmc sft records without plan and action"
[ "$(jq "$T/sft.jsonl" "SELECT count(*) FROM r WHERE json_extract(j, '\$.provenance.run.run_id') = 2
     AND json_type(j, '\$.plan') = 'null' AND json_type(j, '\$.action') = 'null'")" = 4 ] ||
    fail "default sft records: plan and action not null"
[ "$(jq "$T/sft.jsonl" "SELECT json_extract(j, '\$.plan[0].action') FROM r
     WHERE json_extract(j, '\$.action') LIKE 'unroll%' LIMIT 1")" = unroll ] ||
    fail "the revised plan is not the plan of its step"

ex --out "$T/mt" --format multiturn
cat "$T"/mt/*.jsonl >"$T/mt.jsonl"
[ "$(jq "$T/mt.jsonl" "SELECT count(*) FROM r WHERE json_type(j, '\$.plan') = 'array'
     AND json_extract(j, '\$.turns[2].action') LIKE 'vectorize 4%'
     AND json_extract(j, '\$.messages[2].content') LIKE '%PLAN%'")" = 4 ] || fail "mtmc multiturn records"
[ "$(jq "$T/mt.jsonl" "SELECT count(*) FROM r WHERE json_type(j, '\$.plan') = 'null'
     AND json_extract(j, '\$.turns[0].action') = ''")" = 4 ] || fail "default multiturn records"

ex --out "$T/plan" --format plan
cat "$T"/plan/*.jsonl >"$T/plan.jsonl"
got=$(jq "$T/plan.jsonl" "SELECT json_extract(j, '\$.revision'), json_array_length(j, '\$.plan'),
      json_extract(j, '\$.outcome.verdict'), json_extract(j, '\$.outcome.steps_done'),
      json_extract(j, '\$.outcome.turns'), json_extract(j, '\$.outcome.revised'),
      json_extract(j, '\$.hardware.compile_only'), json_extract(j, '\$.spec') LIKE 'Problem %'
      FROM r WHERE json_extract(j, '\$.provenance.trajectory_id') = 1")
[ "$got" = "0|3|compiled|1|3|1|1|1
1|1|compiled|1|1|0|1|1" ] || fail "plan records of trajectory 1: $got"
[ "$(jq "$T/plan.jsonl" "SELECT count(*) FROM r")" = 8 ] || fail "plan records: not two per trajectory"

# pass@k per strategy, from the verdicts: the mtmc run's kernels as if run on a GPU (one correct
# sample of two per problem, the others mismatched); the loop run stays compile-only: not measured
q "UPDATE verifications SET verdict = 'mismatch' WHERE verdict = 'compiled' AND candidate_id IN
   (SELECT t.candidate_id FROM turns t JOIN trajectories tr ON tr.id = t.trajectory_id WHERE tr.run_id = 1);
   UPDATE verifications SET verdict = 'correct' WHERE candidate_id IN (SELECT t.candidate_id
   FROM turns t JOIN trajectories tr ON tr.id = t.trajectory_id WHERE tr.run_id = 1
   AND tr.sample_index = 0 AND t.turn_index = 5)"
"$KC_BIN/kcurate" stats --db "$DB" >"$T/stats" || fail "kcurate stats"
grep -q "level1 · fake-echo · mtmc · compile-only: 2 problems (2 solved), 4 samples (2 correct), 6.00 turns" "$T/stats" ||
    fail "stats: $(cat "$T/stats")"
grep -A1 "fake-echo · mtmc" "$T/stats" | grep -q "pass@1 0.500  pass@5 -" || fail "mtmc pass@k: $(cat "$T/stats")"
grep -A2 "fake-echo · loop" "$T/stats" | grep -q "pass@1 -" || fail "loop pass@k: $(cat "$T/stats")"
"$KC_BIN/kcurate" stats --db "$DB" --json >"$T/stats.json"
[ "$(sqlite3 :memory: "SELECT json_extract(value, '\$.pass_at_k.1') || ' ' ||
      json_extract(value, '\$.fast_p_at_k.0.1') || ' ' || json_extract(value, '\$.fast_p_at_k.1.1') || ' ' ||
      coalesce(json_extract(value, '\$.pass_at_k.5'), 'none')
      FROM json_each(json_extract(readfile('$T/stats.json'), '\$.metrics'))
      WHERE json_extract(value, '\$.strategy') = 'mtmc'")" = "0.5 0.5 0.0 none" ] ||
    fail "stats --json: $(cat "$T/stats.json")"
"$KC_BIN/kcurate" report --db "$DB" --out "$T/report" >/dev/null 2>&1 || fail "kcurate report"
grep -q "Strategies side by side" "$T/report/index.html" || fail "the report does not compare strategies"
echo ok
