#!/bin/sh
# test_import_refused: a refused `kverify import` (a file that is not UTF-8, one with a NUL byte, a
# missing file, an answer with two ```cuda blocks; each after a good one) leaves no database
# behind (it created a schema-only one before checking the files) and leaves an existing database
# byte for byte as it was; the two-block file is refused under the one candidate rule (it was
# imported and only became an extract_error at `kverify run`), while a bare .cu file and a
# markdown answer with one block still import. `kverify import --jsonl` of a file whose every
# line is rejected creates no database and changes none either (exit 1, each line reported); a
# file with some good lines imports those (exit 1).
set -eu
. "$(dirname "$0")/lib.sh"
kv="$KC_BIN/kverify"
ref="$KC_PROBLEMS/level1/019_relu.cu"
printf '// caf\377\nextern "C" __global__ void k(float *y) {}\n// @launch k<<<1, 1>>>(y);\n' >"$T/bad.cu"
printf 'extern "C" __global__ void k(float *y) {}\0\n// @launch k<<<1, 1>>>(y);\n' >"$T/nul.cu"
{ printf 'First try:\n```cuda\n'; cat "$ref"; printf '```\nOr this:\n```cuda\n'; cat "$ref"; printf '```\n'; } >"$T/two.md"
{ printf 'Here it is:\n```cuda\n'; cat "$ref"; printf '```\n'; } >"$T/one.md"

for f in bad.cu nul.cu missing.cu two.md; do
    rc=0
    "$kv" import --db "$T/new.db" --problem level1/019_relu "$ref" "$T/$f" >/dev/null 2>"$T/err" || rc=$?
    [ $rc -eq 4 ] || fail "import of $f exited $rc, not 4"
    [ -s "$T/err" ] || fail "import of $f said nothing"
    for s in "" -wal -shm -journal; do
        [ ! -e "$T/new.db$s" ] || fail "a refused import of $f left new.db$s behind"
    done
done

"$kv" import --db "$T/old.db" --problem level1/019_relu "$ref" >/dev/null || fail "import of the reference"
before=$(sha256sum "$T/old.db" | cut -d' ' -f1)
for f in bad.cu nul.cu missing.cu two.md; do
    rc=0
    "$kv" import --db "$T/old.db" --problem level1/019_relu "$ref" "$T/$f" >/dev/null 2>&1 || rc=$?
    [ $rc -eq 4 ] || fail "import of $f into an existing database exited $rc"
    [ "$(sha256sum "$T/old.db" | cut -d' ' -f1)" = "$before" ] || fail "a refused import of $f changed old.db"
done
[ "$(sqlite3 "$T/old.db" "SELECT count(*) FROM candidates")" = 1 ] || fail "old.db lost or gained candidates"

# the two-block answer: the file and the rule are named
rc=0
"$kv" import --db "$T/new.db" --problem level1/019_relu "$T/two.md" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 4 ] || fail "the two-block answer was not refused ($rc)"
grep -q "two.md: the answer has 2 \`\`\`cuda code blocks; the format takes exactly one" "$T/err" &&
    grep -q "nothing imported" "$T/err" && grep -q "exactly one \`\`\`cuda block" "$T/err" ||
    fail "the refusal of two.md does not name the file and the rule: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "a refused import printed a summary: $(cat "$T/out")"
# a bare .cu file and a one-block answer still import
"$kv" import --db "$T/ok.db" --problem level1/019_relu "$ref" "$T/one.md" >"$T/out" ||
    fail "a .cu file and a one-block answer were refused"
grep -q "imported 2 candidates" "$T/out" || fail "import summary: $(cat "$T/out")"

# --jsonl with every line rejected: no database, an existing one unchanged, every line reported
printf '{"bogus": 1}\nnot json\n\n{"problem_id": "level1/999_nope", "code": "x", "source": "s"}\n' >"$T/bad.jsonl"
for db in new.db old.db; do
    [ "$db" = old.db ] || rm -f "$T/new.db"*
    rc=0
    "$kv" import --db "$T/$db" --jsonl "$T/bad.jsonl" >"$T/out" 2>"$T/err" || rc=$?
    [ $rc -eq 1 ] || fail "--jsonl with every line rejected exited $rc into $db"
    for l in 1 2 4; do
        grep -q "bad.jsonl:$l: " "$T/err" || fail "line $l not reported: $(cat "$T/err")"
    done
    grep -q "bad.jsonl:4: unknown problem 'level1/999_nope'" "$T/err" || fail "line 4: $(cat "$T/err")"
    grep -q "imported 0 of 3 records.*(3 rejected)" "$T/out" || fail "summary: $(cat "$T/out")"
done
for s in "" -wal -shm -journal; do
    [ ! -e "$T/new.db$s" ] || fail "--jsonl with every line rejected left new.db$s behind"
done
[ "$(sha256sum "$T/old.db" | cut -d' ' -f1)" = "$before" ] || fail "--jsonl with every line rejected changed old.db"
# ... nor migrates a database at an older schema (the old code opened it first, migrating it)
newest=$(sqlite3 "$T/old.db" "PRAGMA user_version")
awk -v stop=$((newest - 1)) '/^-- migration [0-9]+/ { n = $3 + 0 } n <= stop { print }' \
    "$KC_ROOT/schemas/kc.sql" >"$T/older.sql"
{ echo "PRAGMA journal_mode = WAL;"; cat "$T/older.sql"; echo "PRAGMA user_version = $((newest - 1));"; } |
    sqlite3 "$T/older.db" >/dev/null
older=$(sha256sum "$T/older.db" | cut -d' ' -f1)
"$kv" import --db "$T/older.db" --jsonl "$T/bad.jsonl" >/dev/null 2>&1 && fail "--jsonl into older.db succeeded"
"$kv" import --db "$T/older.db" --problem level1/019_relu "$ref" "$T/two.md" >/dev/null 2>&1 &&
    fail "two.md into older.db succeeded"
[ "$(sha256sum "$T/older.db" | cut -d' ' -f1)" = "$older" ] &&
    [ "$(sqlite3 "$T/older.db" "PRAGMA user_version")" = $((newest - 1)) ] ||
    fail "a refused import migrated or changed older.db"

# --jsonl with one good line among bad ones: the good one is imported, the others reported, exit 1
REF=$(sed 's/\\/\\\\/g; s/"/\\"/g' "$ref" | awk '{printf "%s\\n", $0}')
printf '{"bogus": 1}\n{"problem_id": "level1/019_relu", "code": "%s", "claimed_correct": true, "source": "s", "id": "g"}\nnot json\n' \
    "$REF" >"$T/some.jsonl"
rc=0
"$kv" import --db "$T/some.db" --jsonl "$T/some.jsonl" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "--jsonl with rejected lines exited $rc"
grep -q "imported 1 of 3 records.*(2 rejected)" "$T/out" || fail "summary: $(cat "$T/out")"
grep -q "some.jsonl:1: " "$T/err" && grep -q "some.jsonl:3: not valid JSON" "$T/err" || fail "errors: $(cat "$T/err")"
[ "$(sqlite3 "$T/some.db" "SELECT line || ':' || external_id FROM third_party_claims")" = "2:g" ] ||
    fail "claims: $(sqlite3 "$T/some.db" 'SELECT * FROM third_party_claims')"
echo "ok"
