#!/bin/sh
# test_collect_hardening: what a user hits with a careless or broken server (issue 15).
# - Paid twice: a kill -9 right after an answer has arrived (committed raw, not yet parsed or
#   stored as a response) does not buy it again on resume.
# - Secrets: a server that echoes the API key (401 and 500 bodies, a header, the streamed
#   answer): the key is in no output, no database row or blob, no export.
# - A reply with no choices is retried, streamed or not (one rule), never an empty paid answer.
# - HTTP 400: the run exits non-zero with a line saying so, and the same command asks again
#   once the cause is gone.
# - An answer larger than --max-answer-bytes is cut there and recorded as such.
set -eu
. "$(dirname "$0")/lib.sh"
FAST="--backoff-ms 20 --idle-timeout 4 --attempt-timeout 3 --retries 6"
stat() { sqlite3 :memory: "SELECT json_extract(readfile('$T/stats.json'), '\$.$1')"; }
twice() { sqlite3 :memory: "SELECT count(*) FROM json_each(json_extract(readfile('$T/stats.json'), '\$.answered_bodies')) WHERE value > 1"; }

# ---- paid twice: killed right after receipt ----
start_server --bug compile
DB="$T/paid.db"
ARGS="--problems level1/019_relu --endpoint $URL --model fake --db $DB --turns 2 --compile-only --concurrency 1"
for n in 1 2; do
    rc=0
    KC_COLLECT_CRASH=answer_received:1 "$KC_BIN/kcollect" $ARGS >"$T/p.out" 2>"$T/p.err" || rc=$?
    [ $rc -eq 137 ] || { cat "$T/p.err"; fail "KC_COLLECT_CRASH=answer_received:1 (pass $n): expected SIGKILL, got $rc"; }
done
"$KC_BIN/kcollect" $ARGS >"$T/p.out" 2>"$T/p.err" || { cat "$T/p.err"; fail "resume after kills at receipt failed"; }
[ "$(twice)" = 0 ] || fail "an answer was bought twice after a kill right after its receipt"
[ "$(stat answered)" = "$(sqlite3 "$DB" 'SELECT count(*) FROM responses WHERE from_cache = 0')" ] \
    || fail "server answered $(stat answered), database holds $(sqlite3 "$DB" 'SELECT count(*) FROM responses WHERE from_cache = 0')"
grep -q "from the response cache" "$T/p.out" || fail "no summary"
stop_server

# ---- secrets: a server that echoes the key ----
KEY="sk-kctest-0123456789abcdefSECRET"
start_server --echo-key --faults "500,ok"
DB="$T/key.db"
rc=0
OPENAI_API_KEY=$KEY "$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model fake \
    --db "$DB" --turns 1 --compile-only $FAST >"$T/k.out" 2>"$T/k.err" || rc=$?
[ $rc -eq 0 ] || { cat "$T/k.err"; fail "echo-key run failed ($rc)"; }
sqlite3 "$DB" "SELECT error FROM responses" | grep -q "redacted" || fail "the 500's echoed key did not reach responses.error redacted: $(sqlite3 "$DB" 'SELECT error FROM responses')"
sqlite3 "$DB" "SELECT CAST(data AS TEXT) FROM blobs" | grep -q "called me with the key \[redacted\]" \
    || fail "the streamed answer's echoed key was not redacted in the stored answer"
stop_server
start_server --echo-key --faults "auth*9"
rc=0
OPENAI_API_KEY=$KEY "$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model fake \
    --db "$T/key2.db" --compile-only $FAST >>"$T/k.out" 2>>"$T/k.err" || rc=$?
[ $rc -ne 0 ] || fail "an auth error did not fail the run"
grep -q "redacted" "$T/k.err" || fail "the 401's message is not shown (redacted): $(cat "$T/k.err")"
"$KC_BIN/kcurate" run --db "$DB" >/dev/null 2>&1 || fail "kcurate run"
"$KC_BIN/kexport" --db "$DB" --out "$T/kexp" --no-gzip --format multiturn --verdict any >/dev/null 2>&1 \
    || "$KC_BIN/kexport" --db "$DB" --out "$T/kexp" --no-gzip >/dev/null 2>&1 || fail "kexport"
for f in "$T/k.out" "$T/k.err" "$DB" "$DB-wal" "$T/key2.db" "$T/key2.db-wal" "$T"/kexp/*; do
    [ -f "$f" ] || continue
    if grep -qa "$KEY" "$f"; then fail "the API key is in $f"; fi
done
sqlite3 "$DB" "SELECT CAST(data AS TEXT) FROM blobs; SELECT error FROM responses; SELECT config_json FROM runs" \
    | grep -q "$KEY" && fail "the API key is in the database"
stop_server

# ---- no choices: retried, streamed or not ----
for mode in --stream --no-stream; do
    start_server --faults "nochoices"
    DB="$T/nc$mode.db"
    "$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model fake --db "$DB" \
        --turns 1 --compile-only $mode $FAST >"$T/nc.out" 2>"$T/nc.err" || { cat "$T/nc.err"; fail "nochoices $mode: run failed"; }
    [ "$(stat requests)" = 2 ] || fail "nochoices $mode: not retried once ($(stat requests) requests)"
    [ "$(sqlite3 "$DB" "SELECT count(*) FROM responses r JOIN blobs b ON b.sha256 = r.content_sha WHERE b.size = 0")" = 0 ] \
        || fail "nochoices $mode: an empty answer was recorded"
    sqlite3 "$DB" "SELECT error FROM responses" | grep -q "no choices" || fail "nochoices $mode: the failed attempt is not recorded"
    stop_server
done

# ---- 400: visible, and asked again once fixed ----
start_server --faults "bad"
DB="$T/bad.db"
run_bad() { "$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model fake --db "$DB" \
            --turns 1 --compile-only $FAST; }
rc=0
run_bad >"$T/b.out" 2>"$T/b.err" || rc=$?
[ $rc -ne 0 ] || fail "a run whose request the endpoint refused (400) exited 0"
grep -q "REFUSED" "$T/b.out" || fail "no summary line for the refused request: $(cat "$T/b.out")"
grep -q "refused.*run the same command again" "$T/b.err" || fail "no error saying what to do: $(cat "$T/b.err")"
[ "$(stat requests)" = 1 ] || fail "a 400 was retried within the run"
run_bad >"$T/b2.out" 2>"$T/b2.err" || { cat "$T/b2.err"; fail "the rerun after the cause was gone failed"; }
[ "$(stat requests)" = 2 ] || fail "the rerun did not ask again"
[ "$(sqlite3 "$DB" "SELECT status || ' ' || stop_reason FROM trajectories")" = "done first_compiled" ] \
    || fail "trajectory after the rerun: $(sqlite3 "$DB" 'SELECT status, stop_reason FROM trajectories')"
stop_server

# ---- answer cap ----
for mode in --stream --no-stream; do
    start_server --faults "huge"
    DB="$T/huge$mode.db"
    "$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model fake --db "$DB" \
        --turns 1 --compile-only --max-answer-bytes 200000 $mode $FAST --attempt-timeout 60 >"$T/h.out" 2>"$T/h.err" \
        || { cat "$T/h.err"; fail "huge $mode: run failed"; }
    row=$(sqlite3 "$DB" "SELECT r.truncated, r.finish_reason, r.answer_bytes > 200000, b.size <= 200000
                          FROM responses r JOIN blobs b ON b.sha256 = r.content_sha")
    [ "$row" = "1|answer_cap|1|1" ] || fail "huge $mode: not capped and recorded as such: $row"
    [ "$(sqlite3 "$DB" "SELECT max(size) FROM blobs")" -le 400000 ] || fail "huge $mode: a blob above the cap was stored"
    "$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run"
    [ "$(sqlite3 "$DB" "SELECT group_concat(truncated) FROM candidate_labels")" = 1 ] \
        || fail "huge $mode: kcurate does not label the capped answer truncated"
    stop_server
done
echo ok
