#!/bin/sh
# test_export_prompts: exported records carry the prompt the model saw, end to end with the real
# tools. kcollect runs against the fake LLM server (OpenAI and Anthropic APIs, compile-only),
# kverify imports a candidate, kcurate labels. Checks: every sft and multiturn record of a
# collected candidate opens with the system and first user message of its trajectory's first
# recorded request; the imported candidate's record and the rl prompt of the same problem carry
# exactly what kcollect sent for that problem; --system-prompt replaces the system message only
# and is recorded in the manifest.
set -eu
. "$(dirname "$0")/lib.sh"
export OPENAI_API_KEY=sk-kc-test-openai ANTHROPIC_API_KEY=sk-kc-test-anthropic

DB="$T/kc.db"
start_server --bug compile
"$KC_BIN/kcollect" --problems level1/019_relu,level1/023_softmax --endpoint "$URL" --model fake-echo \
    --db "$DB" --turns 3 --compile-only >"$T/out1" 2>"$T/err1" || { cat "$T/err1"; fail "openai run failed"; }
stop_server
start_server
"$KC_BIN/kcollect" --problems level1/023_softmax --endpoint "$URL" --api anthropic --model claude-fake \
    --db "$DB" --compile-only >"$T/out2" 2>"$T/err2" || { cat "$T/err2"; fail "anthropic run failed"; }
stop_server
"$KC_BIN/kverify" import --db "$DB" --problem level1/019_relu "$KC_PROBLEMS/level1/019_relu.cu" >/dev/null
"$KC_BIN/kcurate" run --db "$DB" >/dev/null

export_to() { # dir format [options]: plain JSONL of every split, every turn, no filter
    d=$1 f=$2; shift 2
    "$KC_BIN/kexport" --db "$DB" --out "$T/$d" --format "$f" --split train,valid,test,heldout \
        --verdict any --every-turn --dedup none --no-gzip "$@" >/dev/null
    cat "$T/$d"/*.jsonl >"$T/$d.jsonl"
}
# Queries over the records of an export (table r, one JSON record per row) and the database (k).
q() { # jsonl sql
    sqlite3 "$T/q.db" "DROP TABLE IF EXISTS r" "CREATE TABLE r(j TEXT)" ".mode ascii" \
        ".separator \"\\037\" \"\\n\"" ".import $1 r" ".mode list" "ATTACH '$DB' AS k" "$2"
}
# The system and first user message of each trajectory's first request, as recorded (OpenAI
# sends the system message first in messages; Anthropic as a top-level field).
SENT="(SELECT t.trajectory_id AS traj, tr.problem_id AS problem, q.api AS api,
        coalesce(json_extract(b.data, '\$.system'),
                 (SELECT json_extract(m.value, '\$.content') FROM json_each(b.data, '\$.messages') m
                  WHERE json_extract(m.value, '\$.role') = 'system')) AS system,
        (SELECT json_extract(m.value, '\$.content') FROM json_each(b.data, '\$.messages') m
         WHERE json_extract(m.value, '\$.role') = 'user' ORDER BY m.key LIMIT 1) AS user
    FROM k.turns t JOIN k.trajectories tr ON tr.id = t.trajectory_id
    JOIN k.requests q ON q.id = t.request_id JOIN k.blobs b ON b.sha256 = q.body_sha
    WHERE t.turn_index = (SELECT min(turn_index) FROM k.turns u WHERE u.trajectory_id = t.trajectory_id))"
MSG="json_extract(j, '\$.messages[0].content')"
USR="json_extract(j, '\$.messages[1].content')"

[ "$(sqlite3 "$DB" "SELECT count(DISTINCT api) FROM requests")" = 2 ] || fail "expected requests of both APIs"
[ "$(sqlite3 "$DB" "SELECT count(DISTINCT body_sha) FROM requests")" -gt 4 ] || fail "too few requests"

# sft: every collected candidate's record opens with the recorded prompt, both APIs.
export_to sft sft
total=$(q "$T/sft.jsonl" "SELECT count(*) FROM r WHERE json_extract(j, '\$.provenance.origin') = 'turn'")
[ "$total" -ge 5 ] || fail "too few collected sft records: $total"
same=$(q "$T/sft.jsonl" "SELECT count(*), count(DISTINCT s.api) FROM r JOIN $SENT s
    ON s.traj = json_extract(j, '\$.provenance.trajectory_id')
    WHERE json_extract(j, '\$.messages[0].role') = 'system' AND $MSG = s.system AND $USR = s.user")
[ "$same" = "$total|2" ] || fail "sft records whose prompt is the recorded one: $same of $total"

# The imported candidate and the rl prompt of its problem: exactly what kcollect sent for it.
sent_relu="(SELECT system, user FROM $SENT WHERE problem = 'level1/019_relu' LIMIT 1)"
[ "$(q "$T/sft.jsonl" "SELECT count(*) FROM r, $sent_relu s WHERE json_extract(j, '\$.provenance.origin')
      = 'import' AND $MSG = s.system AND $USR = s.user")" = 1 ] ||
    fail "the imported candidate's prompt is not kcollect's: $(q "$T/sft.jsonl" "SELECT substr($MSG, 1, 80),
      substr($USR, 1, 80) FROM r WHERE json_extract(j, '\$.provenance.origin') = 'import'")"
export_to rl rl
[ "$(q "$T/rl.jsonl" "SELECT count(*) FROM r, $sent_relu s WHERE json_extract(j, '\$.extra_info.problem_id')
      = 'level1/019_relu' AND json_extract(j, '\$.prompt[0].content') = s.system
      AND json_extract(j, '\$.prompt[1].content') = s.user")" = 1 ] || fail "the rl prompt is not kcollect's"

# multiturn: the recorded prompt, then the recorded answers and feedback.
export_to multiturn multiturn
total=$(q "$T/multiturn.jsonl" "SELECT count(*) FROM r")
[ "$(q "$T/multiturn.jsonl" "SELECT count(*) FROM r JOIN $SENT s ON s.traj = json_extract(j, '\$.provenance.trajectory_id')
      WHERE $MSG = s.system AND $USR = s.user")" = "$total" ] || fail "multiturn prompts differ from the recorded ones"
[ "$(q "$T/multiturn.jsonl" "SELECT count(*) FROM r, json_each(j, '\$.messages') m
      WHERE m.key >= 2 AND json_extract(m.value, '\$.role') <> CASE m.key % 2 WHEN 0 THEN 'assistant' ELSE 'user' END")" = 0 ] ||
    fail "multiturn messages do not alternate answer and feedback"

# --system-prompt: the system message only, recorded in the manifest.
export_to override sft --system-prompt "Be brief."
[ "$(q "$T/override.jsonl" "SELECT count(*) FROM r WHERE $MSG <> 'Be brief.'")" = 0 ] || fail "system message not replaced"
n=$(q "$T/override.jsonl" "SELECT count(*) FROM r WHERE json_extract(j, '\$.provenance.origin') = 'turn'")
[ "$(q "$T/override.jsonl" "SELECT count(*) FROM r JOIN $SENT s ON s.traj = json_extract(j, '\$.provenance.trajectory_id')
      WHERE $USR = s.user")" = "$n" ] || fail "--system-prompt changed the user message"
grep -q '"system_prompt": "Be brief."' "$T/override/manifest.json" || fail "override not in the manifest"
grep -q '"system_prompt": null' "$T/sft/manifest.json" || fail "default system prompt not recorded as null"
echo ok
