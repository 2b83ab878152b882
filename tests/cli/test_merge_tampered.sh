#!/bin/sh
# test_merge_tampered: `kcurate merge` reads its sources as untrusted input (issue 28). Each
# tampered source (a blob planted under another content's hash, a NULL db_info uuid, a NULL
# merge_map origin, a value of the wrong type, a failing foreign_key_check or integrity_check) is
# refused with the reason, naming table and row, and the destination is unchanged (its dump hashes
# the same; a new destination is not left behind); a clean merge still works; `kcurate verify-db`
# passes the good databases and fails each tampered one. The planted blob used to be copied, the
# NULL uuid and the NULL origin used to crash merge (segfault).
set -eu
. "$(dirname "$0")/lib.sh"
kv="$KC_BIN/kverify"
kc="$KC_BIN/kcurate"
dump_sum() { sqlite3 "$1" .dump | sha256sum | cut -d' ' -f1; }

"$kv" import --db "$T/a.db" --problem level1/019_relu "$KC_PROBLEMS/level1/019_relu.cu" >/dev/null
"$kv" import --db "$T/b.db" --problem level1/023_softmax "$KC_PROBLEMS/level1/023_softmax.cu" >/dev/null
# The destination already holds a's rows.
"$kc" merge "$T/a.db" -o "$T/dst.db" >/dev/null 2>"$T/err" || fail "merge into dst: $(cat "$T/err")"
before=$(dump_sum "$T/dst.db")

# tamper NAME SQL: a copy of b.db with its own identity, changed by SQL.
tamper() {
    cp "$T/b.db" "$T/$1.db"
    sqlite3 "$T/$1.db" "UPDATE db_info SET value = lower(hex(randomblob(16))) WHERE key = 'uuid';" \
        "PRAGMA foreign_keys = OFF;" "$2" >/dev/null || fail "could not build the $1 source"
}
# refused NAME PATTERN: merging b.db and the tampered source fails with PATTERN (grep -E) in the
# message; the destination's dump is the same; a new destination is not created.
refused() {
    rc=0
    "$kc" merge "$T/b.db" "$T/$1.db" -o "$T/dst.db" >"$T/out" 2>"$T/err" || rc=$?
    [ $rc -ne 0 ] && [ $rc -lt 128 ] || fail "$1: merge exited $rc (crash or accepted): $(cat "$T/err")"
    grep -Eq "$2" "$T/err" || fail "$1: the refusal does not say '$2': $(cat "$T/err")"
    [ "$(dump_sum "$T/dst.db")" = "$before" ] || fail "$1: the refused merge changed the destination"
    rc=0
    "$kc" merge "$T/$1.db" -o "$T/new-$1.db" >/dev/null 2>&1 || rc=$?
    [ $rc -ne 0 ] && [ ! -e "$T/new-$1.db" ] || fail "$1: a refused merge left a new destination ($rc)"
}

# 1. A row keyed by the sha256 of a's kernel (not in b) whose data is other bytes.
real=$(sqlite3 "$T/a.db" "SELECT source_sha FROM candidates")
tamper planted "INSERT INTO blobs(sha256, size, data) VALUES ('$real', 7, CAST('planted' AS BLOB));"
refused planted "table blobs row sha256='$real'.*not the sha256 of the data"
# 2. No identity: db_info's uuid is NULL (the table redeclared without NOT NULL).
tamper nulluuid "DROP TABLE db_info; CREATE TABLE db_info (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
                 INSERT INTO db_info VALUES ('uuid', NULL);"
refused nulluuid "database has no identity"
# 3. A NULL origin in the source's merge map, for its candidate.
tamper nullorigin "DROP TABLE merge_map; CREATE TABLE merge_map (origin_uuid TEXT, tbl TEXT NOT NULL,
                       origin_id INTEGER NOT NULL, local_id INTEGER NOT NULL, PRIMARY KEY (origin_uuid, tbl, origin_id));
                   INSERT INTO merge_map VALUES (NULL, 'candidates', 1, (SELECT id FROM candidates));"
refused nullorigin "table merge_map row origin_uuid=NULL.*origin_uuid is NULL"
# 4. A value of the wrong type (a blob where the schema says TEXT).
tamper wrongtype "UPDATE candidates SET origin = CAST('import' AS BLOB);"
refused wrongtype "table candidates row id=[0-9]+: origin is blob, not TEXT"
# 5. A foreign key to a problem the source does not have.
tamper badfk "UPDATE candidates SET problem_id = 'level1/999_nope';"
refused badfk "foreign_key_check: 1 violation.*table candidates row [0-9]+ refers to a missing problems row"
# 6. An index that does not match its table (integrity_check).
tamper badindex "PRAGMA writable_schema = ON;
                 UPDATE sqlite_master SET sql = replace(sql, 'candidates(status)', 'candidates(origin)')
                 WHERE name = 'candidates_by_status';"
refused badindex "integrity_check: .*candidates_by_status"

# A clean merge still works and adds b's rows; the result passes verify-db.
"$kc" merge "$T/b.db" -o "$T/dst.db" >"$T/out" 2>"$T/err" || fail "clean merge: $(cat "$T/err")"
grep -q "1 rows added" "$T/out" || fail "clean merge: $(cat "$T/out")"
[ "$(sqlite3 "$T/dst.db" "SELECT count(*) FROM candidates")" = 2 ] || fail "clean merge lost a candidate"

# verify-db: the good databases pass, each tampered one fails with its reason.
for db in a b dst; do
    "$kc" verify-db --db "$T/$db.db" >"$T/out" 2>&1 || fail "verify-db $db: $(cat "$T/out")"
    grep -q "^verify-db: .*: ok$" "$T/out" && grep -q "^blobs: [0-9]* checked, every key" "$T/out" ||
        fail "verify-db $db: $(cat "$T/out")"
done
for db in planted:"not the sha256 of the data" nulluuid:"database has no identity" \
    nullorigin:"origin_uuid is NULL" wrongtype:"origin is blob" badfk:"foreign_key_check: 1 violation" \
    badindex:"integrity_check: .*candidates_by_status"; do
    name=${db%%:*}; why=${db#*:}
    rc=0
    "$kc" verify-db --db "$T/$name.db" >"$T/out" 2>&1 || rc=$?
    [ $rc -eq 1 ] && grep -Eq "$why" "$T/out" && grep -q "problem(s)" "$T/out" ||
        fail "verify-db $name: rc $rc: $(cat "$T/out")"
done
# A database at another schema version fails (PRAGMA user_version vs this build's).
cp "$T/a.db" "$T/future.db"
sqlite3 "$T/future.db" "PRAGMA user_version = 99"
rc=0
"$kc" verify-db --db "$T/future.db" >"$T/out" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q "schema version: 99, this build expects" "$T/out" || fail "verify-db future: $rc $(cat "$T/out")"
echo ok
