#!/bin/sh
# test_import_problem_ids: `kverify import --jsonl` takes a record's problem_id only when it is
# the problem's own id (issue 28): another path to the same manifest ("./level1/019_relu") and an
# id with control characters (one with embedded newlines used to match the line-based cache of
# ids already found) are rejected in the first pass with the reason, so a file of such lines
# creates no database (it used to pass the first pass, create the database, and fail on the
# foreign key); good lines beside them still import.
set -eu
. "$(dirname "$0")/lib.sh"
kv="$KC_BIN/kverify"
code='extern \"C\" __global__ void k(float *y) {}'

printf '{"problem_id": "./level1/019_relu", "code": "%s", "source": "s"}\n' "$code" >"$T/dot.jsonl"
rc=0
"$kv" import --db "$T/dot.db" --jsonl "$T/dot.jsonl" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "./level1/019_relu: exit $rc: $(cat "$T/err")"
grep -q "dot.jsonl:1: './level1/019_relu' is not a problem id (the problem it names is 'level1/019_relu')" "$T/err" ||
    fail "./level1/019_relu: $(cat "$T/err")"
grep -q "imported 0 of 1 records" "$T/out" || fail "summary: $(cat "$T/out")"
for s in "" -wal -shm -journal; do
    [ ! -e "$T/dot.db$s" ] || fail "a file of rejected ids created dot.db$s"
done

{
    printf '{"problem_id": "level1/019_relu", "code": "%s", "source": "s"}\n' "$code"
    printf '{"problem_id": "level1/023_softmax", "code": "%s", "source": "s"}\n' "$code"
    printf '{"problem_id": "level1/019_relu\\n\\nlevel1/023_softmax", "code": "%s", "source": "s"}\n' "$code"
    printf '{"problem_id": "level1/019_relu\\t", "code": "%s", "source": "s"}\n' "$code"
} >"$T/nl.jsonl"
rc=0
"$kv" import --db "$T/nl.db" --jsonl "$T/nl.jsonl" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "newline ids: exit $rc: $(cat "$T/err")"
grep -q "nl.jsonl:3: problem id has a control character (byte 0x0a)" "$T/err" || fail "line 3: $(cat "$T/err")"
grep -q "nl.jsonl:4: problem id has a control character (byte 0x09)" "$T/err" || fail "line 4: $(cat "$T/err")"
grep -q "imported 2 of 4 records" "$T/out" || fail "summary: $(cat "$T/out")"
[ "$(sqlite3 "$T/nl.db" "SELECT group_concat(problem_id, ' ') FROM (SELECT problem_id FROM candidates ORDER BY id)")" = \
    "level1/019_relu level1/023_softmax" ] || fail "imported: $(sqlite3 "$T/nl.db" "SELECT problem_id FROM candidates")"
echo ok
