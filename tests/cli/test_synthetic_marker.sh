#!/bin/sh
# test_synthetic_marker: synthetic answers are never labelled as a real model. --model with no
# endpoint is refused (even with an API key set), and so is --model with --endpoint bundled; the
# bundled server's run is recorded synthetic (runs.synthetic, runs.server), and every record of
# every format, the manifest and the datasheet built from it say synthetic: true with the
# server's name, while a run against a real endpoint says synthetic: false.
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
q() { sqlite3 "$DB" "$1"; }
# jq FILE SQL: SQL over the records of a plain JSONL file, one row per record in table r(j).
jq() { sqlite3 :memory: "CREATE TABLE r AS SELECT value AS j FROM json_each('[' ||
    replace(rtrim(CAST(readfile('$1') AS TEXT), char(10)), char(10), ',') || ']'); $2"; }

# An API key and --model but no endpoint: refused, nothing recorded.
rc=0
env -u OPENAI_BASE_URL OPENAI_API_KEY=sk-test "$KC_BIN/kcollect" --problems level1/019_relu \
    --model gpt-4o --db "$DB" --compile-only >"$T/o1" 2>"$T/e1" || rc=$?
[ $rc -ne 0 ] || fail "--model gpt-4o without an endpoint was accepted"
grep -q "no endpoint is configured" "$T/e1" && grep -q -- "--endpoint bundled" "$T/e1" ||
    fail "the refusal does not say why and what to do: $(head -1 "$T/e1")"
[ ! -e "$DB" ] || [ "$(q 'SELECT count(*) FROM runs')" = 0 ] || fail "a refused run was recorded"
rc=0
"$KC_BIN/kcollect" --problems level1/019_relu --endpoint bundled --model gpt-4o --db "$DB" \
    --compile-only >/dev/null 2>"$T/e2" || rc=$?
[ $rc -ne 0 ] && grep -q "synthetic test server" "$T/e2" || fail "--endpoint bundled --model gpt-4o accepted"

# The bundled server, named: a synthetic run.
env -u OPENAI_BASE_URL "$KC_BIN/kcollect" --problems level1/019_relu,level1/023_softmax \
    --endpoint bundled --db "$DB" --compile-only --turns 2 --fake-args "--bug compile" \
    >"$T/o3" 2>"$T/e3" || { cat "$T/e3"; fail "bundled run failed"; }
grep -q "synthetic" "$T/e3" || fail "the bundled server's answers are not called synthetic on screen"
[ "$(q "SELECT synthetic || ' ' || server || ' ' || model FROM runs")" = "1 bundled-fake-llm fake-echo" ] ||
    fail "runs: $(q 'SELECT synthetic, server, model FROM runs')"
# A real endpoint (the fake server run by hand, as any OpenAI-compatible server): not synthetic.
start_server
"$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model real-model --db "$DB" \
    --compile-only --turns 1 --seed 9 >/dev/null 2>"$T/e4" || { cat "$T/e4"; fail "endpoint run failed"; }
stop_server
[ "$(q "SELECT synthetic || ' ' || coalesce(server, 'null') FROM runs WHERE model = 'real-model'")" = "0 null" ] ||
    fail "a run against an endpoint was recorded as synthetic"

# A correct verdict for the compiled turns, so that preference pairs exist without a GPU.
q "UPDATE verifications SET verdict = 'correct' WHERE verdict = 'compiled'"
# ... race-checked clean (softmax uses shared memory: kexport wants a race check of such labels)
q "INSERT INTO race_checks(verification_id, tool, result, verifier_version)
   SELECT id, 'test', 'clean', 'test' FROM verifications WHERE verdict = 'correct'"
"$KC_BIN/kcurate" run --db "$DB" >/dev/null
X="--db $DB --no-gzip --split train,valid,test,heldout --dedup none"
"$KC_BIN/kexport" $X --out "$T/sft" --format sft --every-turn 2>"$T/w" >/dev/null
grep -q "synthetic" "$T/w" || fail "kexport does not warn of synthetic records"
"$KC_BIN/kexport" $X --out "$T/mt" --format multiturn --verdict any >/dev/null 2>&1
"$KC_BIN/kexport" $X --out "$T/rl" --format rl >/dev/null 2>&1
"$KC_BIN/kexport" $X --out "$T/pref" --format preference >/dev/null 2>&1
cat "$T"/sft/*.jsonl >"$T/sft.jsonl"; cat "$T"/mt/*.jsonl >"$T/mt.jsonl"
cat "$T"/rl/*.jsonl >"$T/rl.jsonl"; cat "$T"/pref/*.jsonl >"$T/pref.jsonl"
S="json_extract(j, '\$.provenance.run.synthetic')"
[ "$(jq "$T/sft.jsonl" "SELECT count(*) FROM r WHERE json_extract(j, '\$.provenance.run.model') = 'fake-echo'
    AND $S = 1 AND json_extract(j, '\$.provenance.run.server') = 'bundled-fake-llm'")" -ge 2 ] ||
    fail "sft records of the bundled run are not marked synthetic"
[ "$(jq "$T/sft.jsonl" "SELECT count(*) FROM r WHERE json_extract(j, '\$.provenance.run.model') = 'real-model'
    AND $S = 0 AND json_extract(j, '\$.provenance.run.server') = ''")" = 1 ] ||
    fail "the real endpoint's sft record is not marked synthetic: false"
[ "$(jq "$T/mt.jsonl" "SELECT count(*) FROM r WHERE $S = 1")" = 2 ] || fail "multiturn records not marked synthetic"
[ "$(jq "$T/mt.jsonl" "SELECT count(*) FROM r, json_each(j, '\$.turns') t
    WHERE json_extract(json_extract(t.value, '\$.provenance_json'), '\$.run.synthetic') = 1")" -ge 4 ] ||
    fail "multiturn turns not marked"
[ "$(jq "$T/rl.jsonl" "SELECT count(*) FROM r WHERE json_extract(j, '\$.extra_info.synthetic') = 1
    AND json_extract(j, '\$.extra_info.synthetic_server') = 'bundled-fake-llm'")" = 2 ] ||
    fail "rl records built on synthetic candidates are not marked"
[ "$(jq "$T/pref.jsonl" "SELECT count(*) FROM r WHERE json_extract(j, '\$.provenance.chosen.run.synthetic') = 1
    AND json_extract(j, '\$.provenance.rejected.run.synthetic') = 1")" -ge 1 ] || fail "preference records not marked"
for d in sft mt rl pref; do
    m="$T/$d/manifest.json"
    [ "$(sqlite3 :memory: "SELECT json_extract(readfile('$m'), '\$.provenance.synthetic'),
        json_extract(readfile('$m'), '\$.provenance.synthetic_servers[0]')")" = "1|bundled-fake-llm" ] ||
        fail "$d manifest does not say synthetic"
    grep -q "Synthetic data.*bundled-fake-llm" "$T/$d/DATASHEET.md" || fail "$d datasheet does not say synthetic"
done
echo ok
