#!/bin/sh
# test_stale_labels: no export from stale labels. After kcurate run, candidates collected (and
# candidates verified again) later make kexport refuse with the exact kcurate command that
# relabels them, the last run's parameters included; --allow-stale exports anyway and says so in
# the manifest; --curate runs that command first, and then every candidate is exported.
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
q() { sqlite3 "$DB" "$1"; }
collect() { env -u OPENAI_BASE_URL "$KC_BIN/kcollect" --problems "$1" --db "$DB" --compile-only \
    --turns 2 --fake-args "--bug compile" >/dev/null 2>&1 || fail "kcollect $1"; }
X="--db $DB --no-gzip --format sft --every-turn --verdict any --dedup none --split train,valid,test,heldout"
records() { cat "$1"/*.jsonl 2>/dev/null | wc -l; }

collect level1/019_relu
"$KC_BIN/kcurate" run --db "$DB" --heldout 'level1/09*,level1/019_relu' --gamma 0.5 >/dev/null
"$KC_BIN/kexport" $X --out "$T/e0" >/dev/null 2>&1 || fail "export of fresh labels failed"
[ "$(records "$T/e0")" = 2 ] || fail "expected 2 records, got $(records "$T/e0")"

# More collected after curating: refused, with the command to run.
collect level1/023_softmax
rc=0
"$KC_BIN/kexport" $X --out "$T/e1" >"$T/o1" 2>"$T/e1.err" || rc=$?
[ $rc -ne 0 ] || fail "kexport exported stale labels without a word"
grep -q "2 candidate(s) collected and 0 verified again since the last kcurate run" "$T/e1.err" ||
    fail "the refusal does not count what is stale: $(cat "$T/e1.err")"
cmd=$(grep "kcurate run --db" "$T/e1.err" | sed 's/^ *//')
echo "$cmd" | grep -q -- "--heldout 'level1/09\*,level1/019_relu'" && echo "$cmd" | grep -q -- "--gamma 0.5" ||
    fail "the command does not carry the last run's parameters: $cmd"
[ ! -e "$T/e1/manifest.json" ] || fail "a refused export wrote files"

# --allow-stale: exported as labelled, the manifest says how many are stale.
"$KC_BIN/kexport" $X --out "$T/e2" --allow-stale >/dev/null 2>&1 || fail "--allow-stale failed"
[ "$(records "$T/e2")" = 2 ] || fail "--allow-stale: expected the 2 labelled records"
[ "$(sqlite3 :memory: "SELECT json_extract(readfile('$T/e2/manifest.json'), '\$.provenance.stale_labels.candidates')")" = 2 ] ||
    fail "the manifest does not say the labels were stale"

# The printed command relabels; then the export goes through with all 4 records.
eval "$cmd" >/dev/null || fail "the printed command failed: $cmd"
[ "$(q "SELECT count(*) FROM problem_labels WHERE heldout")" = 1 ] || fail "the printed command lost --heldout"
"$KC_BIN/kexport" $X --out "$T/e3" >/dev/null 2>&1 || fail "export after relabelling failed"
[ "$(records "$T/e3")" = 4 ] || fail "expected 4 records after relabelling"

# A candidate verified again after curating is stale too; --curate relabels first.
q "INSERT INTO verifications(candidate_id, verdict, flags, message, verifier_version)
   SELECT candidate_id, verdict, flags, message, verifier_version FROM verifications ORDER BY id LIMIT 1"
rc=0
"$KC_BIN/kexport" $X --out "$T/e4" >/dev/null 2>"$T/e4.err" || rc=$?
[ $rc -ne 0 ] && grep -q "0 candidate(s) collected and 1 verified again" "$T/e4.err" ||
    fail "a re-verified candidate did not make the labels stale: $(cat "$T/e4.err")"
n=$(q 'SELECT count(*) FROM curate_runs')
"$KC_BIN/kexport" $X --out "$T/e5" --curate >"$T/o5" 2>"$T/e5.err" || { cat "$T/e5.err"; fail "--curate failed"; }
grep -q "running .*kcurate run --db" "$T/e5.err" || fail "--curate does not say what it runs"
[ "$(q 'SELECT count(*) FROM curate_runs')" = $((n + 1)) ] || fail "--curate did not run kcurate"
[ "$(q "SELECT json_extract(params_json, '\$.gamma') FROM curate_runs ORDER BY id DESC LIMIT 1")" = 0.5 ] ||
    fail "--curate did not keep the last run's parameters"
[ "$(records "$T/e5")" = 4 ] || fail "--curate: expected 4 records"
echo ok
