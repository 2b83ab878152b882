#!/bin/sh
# test_collect_loop: kcollect end to end in --compile-only mode against the fake
# LLM server on loopback. Bug-then-fix on several problems:
# every trajectory fails to compile, then compiles, and stops; every turn is
# recorded with prompt, response, candidate, compile log, verdict and feedback;
# a rerun of the same command is a no-op; a different run over the same
# requests is answered from the response cache without a single HTTP request;
# keys never reach the database; the Anthropic API, reasoning in <think> tags
# without an opening tag, the bundled server and --dry-run.
set -eu
. "$(dirname "$0")/lib.sh"
export OPENAI_API_KEY=sk-kc-test-SECRET-openai ANTHROPIC_API_KEY=sk-kc-test-SECRET-anthropic

q() { sqlite3 "$DB" "$1"; }
stat() { sqlite3 :memory: "SELECT json_extract(readfile('$T/stats.json'), '$1')"; }

PROBLEMS=level1/001_square_matmul,level1/019_relu,level1/023_softmax
start_server --bug compile
DB="$T/a.db"
run() { "$KC_BIN/kcollect" --problems $PROBLEMS --endpoint "$URL" --model fake-echo --db "$DB" \
        --turns 4 --concurrency 3 --compile-only "$@"; }

run >"$T/out1" 2>"$T/err1" || { cat "$T/err1"; fail "first run failed"; }
grep -q "trajectories   3, done 3, solved 3" "$T/out1" || fail "summary: $(cat "$T/out1")"
[ "$(q "SELECT count(*) FROM trajectories WHERE status='done' AND stop_reason='first_compiled'")" = 3 ] \
    || fail "trajectories not all done by first_compiled"
[ "$(q "SELECT count(*) FROM turns")" = 6 ] || fail "expected 6 turns"
# Turn 0 is the injected compile error, turn 1 the fix, for every trajectory.
[ "$(q "SELECT group_concat(DISTINCT t.turn_index || ':' || v.verdict) FROM turns t
        JOIN v_latest_verification v ON v.candidate_id = t.candidate_id ORDER BY 1")" = "0:compile_error,1:compiled" ] \
    || [ "$(q "SELECT count(*) FROM turns t JOIN v_latest_verification v ON v.candidate_id = t.candidate_id
              WHERE (t.turn_index = 0 AND v.verdict = 'compile_error') OR (t.turn_index = 1 AND v.verdict = 'compiled')")" = 6 ] \
    || fail "verdicts per turn: $(q "SELECT turn_index, verdict FROM turns t JOIN v_latest_verification v ON v.candidate_id=t.candidate_id")"
# Every turn carries its prompt, response, candidate, feedback, tokens; the compile log names the error.
[ "$(q "SELECT count(*) FROM turns WHERE prompt_sha IS NULL OR response_id IS NULL OR candidate_id IS NULL
        OR feedback_sha IS NULL OR tokens_in <= 0 OR tokens_out <= 0 OR wall_ms <= 0")" = 0 ] || fail "incomplete turn rows"
q "SELECT compile_log FROM v_candidate_audit WHERE turn_index = 0" | grep -q undeclared_identifier_kc \
    || fail "compile log of turn 0 lacks the error"
q "SELECT feedback FROM v_candidate_audit WHERE turn_index = 0 LIMIT 1" | grep -qi "undeclared_identifier_kc" \
    || fail "feedback of turn 0 lacks the compile error"
# Turn 1's request carries the whole history: spec, broken answer, feedback.
q "SELECT CAST(b.data AS TEXT) FROM turns t JOIN requests r ON r.id = t.request_id
   JOIN blobs b ON b.sha256 = r.body_sha WHERE t.turn_index = 1 LIMIT 1" >"$T/body1"
grep -q '"role":"assistant"' "$T/body1" && grep -q 'Problem level1/' "$T/body1" || fail "turn 1 request lacks history"
[ "$(q "SELECT status || ' ' || endpoint FROM runs")" = "finished $URL" ] || fail "runs row: $(q 'SELECT * FROM runs')"
[ "$(stat '$.requests')" = 6 ] || fail "expected 6 requests, server saw $(stat '$.requests')"
[ "$(sqlite3 :memory: "SELECT count(*) FROM json_each(json_extract(readfile('$T/stats.json'), '\$.bodies')) WHERE value > 1")" = 0 ] \
    || fail "a request body was sent twice"

# The same command again: nothing to do, nothing sent.
run >"$T/out2" 2>"$T/err2" || fail "rerun failed"
[ "$(stat '$.requests')" = 6 ] || fail "the rerun sent requests"
[ "$(q "SELECT count(*) FROM runs")" = 1 ] && [ "$(q "SELECT count(*) FROM turns")" = 6 ] || fail "rerun added rows"

# Another run (another context policy: a new run identity; more turns would continue this run)
# asks the same questions (there is no reasoning to send back): all from the cache.
run --context full >"$T/out3" 2>"$T/err3" || fail "cached run failed"
[ "$(stat '$.requests')" = 6 ] || fail "the cached run sent requests"
[ "$(q "SELECT count(*) FROM runs")" = 2 ] || fail "expected a second run"
[ "$(q "SELECT count(*) FROM responses WHERE from_cache = 1 AND cost_usd = 0")" = 6 ] || fail "cache hits not recorded"
grep -q "6 this run (6 from the response cache), 0 HTTP requests" "$T/out3" || fail "summary: $(cat "$T/out3")"

# Secrets never reach the database.
sqlite3 "$DB" .dump | grep -q "sk-kc-test" && fail "an API key is in the database"
grep -q "sk-kc-test" "$T"/err* "$T"/out* && fail "an API key is in the logs"
stop_server

# Anthropic messages, streamed, with reasoning whose opening <think> tag is missing.
start_server --think tags-no-open
DB="$T/b.db"
"$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --api anthropic --model claude-fake \
    --db "$DB" --compile-only --price 3,15 >"$T/out4" 2>"$T/err4" || { cat "$T/err4"; fail "anthropic run failed"; }
# Cost from the price table: $3 in and $15 out per million tokens.
[ "$(q "SELECT count(*) FROM responses WHERE abs(cost_usd - (prompt_tokens * 3 + completion_tokens * 15) / 1e6) < 1e-12
        AND cost_usd > 0")" = 1 ] || fail "cost: $(q 'SELECT prompt_tokens, completion_tokens, cost_usd FROM responses')"
[ "$(q "SELECT cost_usd > 0 FROM turns")" = 1 ] || fail "turn cost"

[ "$(q "SELECT count(*) FROM responses WHERE reasoning_sha IS NOT NULL")" = 1 ] || fail "reasoning not kept"
q "SELECT response FROM v_candidate_audit" | grep -q "</think>" && fail "reasoning left in the answer"
[ "$(q "SELECT api FROM requests")" = anthropic ] || fail "requests.api"
stop_server

# Script mode: a first answer cut by the token limit (labelled truncated, its
# feedback says so), then the reference; --context full sends the first
# answer's reasoning back inside <think> tags.
cat >"$T/script.json" <<'JSON'
{"answers": [{"content": "Let me write it.\n```cuda\nextern \"C\" __global__ void k(", "reasoning": "first thoughts",
              "finish_reason": "length"},
             {"content": "{{reference}}", "reasoning": "second thoughts"}]}
JSON
start_server --script "$T/script.json" --think field
DB="$T/s.db"
"$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model fake --db "$DB" --compile-only \
    --context full --no-stream >"$T/out6" 2>"$T/err6" || { cat "$T/err6"; fail "script run failed"; }
[ "$(q "SELECT group_concat(truncated || finish_reason, ' ') FROM (SELECT * FROM responses ORDER BY id)")" = "1length 0stop" ] \
    || fail "truncation label: $(q 'SELECT truncated, finish_reason FROM responses')"
q "SELECT feedback FROM v_candidate_audit WHERE turn_index = 0" | grep -q "cut off by the token limit" || fail "truncation feedback"
q "SELECT CAST(b.data AS TEXT) FROM turns t JOIN requests r ON r.id = t.request_id
   JOIN blobs b ON b.sha256 = r.body_sha WHERE t.turn_index = 1" | grep -q '<think>\\nfirst thoughts' \
    || fail "--context full did not send the reasoning back"
stop_server

# The bundled server when no endpoint is configured.
DB="$T/c.db"
env -u OPENAI_BASE_URL "$KC_BIN/kcollect" --problems level1/019_relu --db "$DB" --compile-only \
    >"$T/out5" 2>"$T/err5" || { cat "$T/err5"; fail "bundled run failed"; }
grep -q "bundled test LLM server" "$T/err5" || fail "bundled server not named on screen"
[ "$(q "SELECT endpoint FROM runs")" = bundled-fake-llm ] || fail "bundled server not named in runs"

# --dry-run prints the first prompt and touches nothing.
"$KC_BIN/kcollect" --problems level1/019_relu --dry-run --db "$T/none.db" >"$T/dry" || fail "dry run failed"
grep -q "// @launch" "$T/dry" && grep -q "Problem level1/019_relu:" "$T/dry" || fail "dry run output"
[ ! -e "$T/none.db" ] || fail "dry run created the database"
echo "ok"
