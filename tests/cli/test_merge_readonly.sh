#!/bin/sh
# test_merge_readonly: `kcurate merge` only reads its sources. Sources at the newest schema and one
# at an older schema (which merge used to migrate in place) are byte for byte the same afterwards
# (sha256), read-only source files merge, and a source from before databases had an identity
# (schema version 1) is refused with a message that says what to do, and left as it was.
set -eu
. "$(dirname "$0")/lib.sh"
kv="$KC_BIN/kverify"
sum() { sha256sum "$1" | cut -d' ' -f1; }

"$kv" import --db "$T/a.db" --problem level1/019_relu "$KC_PROBLEMS/level1/019_relu.cu" >/dev/null
"$kv" import --db "$T/b.db" --problem level1/023_softmax "$KC_PROBLEMS/level1/023_softmax.cu" >/dev/null
newest=$(sqlite3 "$T/a.db" "PRAGMA user_version")
# An older database: the schema's migrations 1 .. newest-1, as an older kcorpus left it.
old_schema() { # VERSION FILE
    awk -v stop="$1" '/^-- migration [0-9]+/ { n = $3 + 0 } n <= stop { print }' \
        "$KC_ROOT/schemas/kc.sql" >"$T/schema$1.sql"
    { echo "PRAGMA journal_mode = WAL;"; cat "$T/schema$1.sql"; echo "PRAGMA user_version = $1;"; } |
        sqlite3 "$2" >/dev/null
}
old_schema $((newest - 1)) "$T/old.db"
[ "$(sqlite3 "$T/old.db" "PRAGMA user_version")" = $((newest - 1)) ] || fail "could not build an older database"
old_schema 1 "$T/v1.db"

a=$(sum "$T/a.db"); b=$(sum "$T/b.db"); o=$(sum "$T/old.db"); v=$(sum "$T/v1.db")
"$KC_BIN/kcurate" merge "$T/a.db" "$T/b.db" "$T/old.db" -o "$T/all.db" >"$T/out" 2>"$T/err" ||
    fail "merge failed: $(cat "$T/err")"
[ "$(sum "$T/a.db")" = "$a" ] && [ "$(sum "$T/b.db")" = "$b" ] || fail "merge changed a source"
[ "$(sum "$T/old.db")" = "$o" ] || fail "merge changed (migrated) the older source in place"
[ "$(sqlite3 "$T/old.db" "PRAGMA user_version")" = $((newest - 1)) ] || fail "the older source was migrated"
[ "$(sqlite3 "$T/all.db" "SELECT count(*) FROM candidates")" = 2 ] || fail "merged candidates: $(sqlite3 "$T/all.db" "SELECT count(*) FROM candidates")"

# Read-only source files (and the older one again, its temporary copy in a TMPDIR of our own).
chmod 444 "$T/a.db" "$T/b.db" "$T/old.db"
mkdir "$T/tmp"
TMPDIR="$T/tmp" "$KC_BIN/kcurate" merge "$T/a.db" "$T/b.db" "$T/old.db" -o "$T/all2.db" >/dev/null 2>"$T/err" ||
    fail "merge of read-only sources failed: $(cat "$T/err")"
[ "$(sum "$T/a.db")" = "$a" ] && [ "$(sum "$T/b.db")" = "$b" ] && [ "$(sum "$T/old.db")" = "$o" ] ||
    fail "merge changed a read-only source"
[ -z "$(ls -A "$T/tmp")" ] || fail "the temporary copy was left behind: $(ls -A "$T/tmp")"
[ "$(sqlite3 "$T/all2.db" "SELECT count(*) FROM candidates")" = 2 ] || fail "read-only merge lost candidates"
# Merging the same sources again adds nothing (the older one keeps its identity in the copy).
"$KC_BIN/kcurate" merge "$T/a.db" "$T/b.db" "$T/old.db" -o "$T/all2.db" >"$T/out2" 2>&1 || fail "second merge"
grep -q " 0 rows added" "$T/out2" || fail "the second merge added rows: $(cat "$T/out2")"

rc=0
"$KC_BIN/kcurate" merge "$T/v1.db" -o "$T/all3.db" >/dev/null 2>"$T/err" || rc=$?
[ $rc -ne 0 ] && grep -q "schema version 1.*merge the copy" "$T/err" || fail "version 1 source: rc $rc, $(cat "$T/err")"
[ "$(sum "$T/v1.db")" = "$v" ] || fail "the refused version 1 source changed"
echo ok
