#!/bin/sh
# test_collect_empty_db: `kcollect --db FILE` with an empty existing file (mktemp's) makes it a new
# database, as sqlite3 does (issue 24); a non-empty file that is not ours is still refused, and
# reading tools still refuse the empty file.
set -eu
. "$(dirname "$0")/lib.sh"
DB=$(mktemp "$T/kc.XXXXXX")
"$KC_BIN/kcollect" --problems level1/019_relu --compile-only --turns 1 --db "$DB" >"$T/o" 2>"$T/e" \
    || fail "an empty file was refused: $(cat "$T/e")"
[ "$(sqlite3 "$DB" 'SELECT count(*) FROM turns')" = 1 ] || fail "no turn recorded in the new database"
echo "not a database" >"$T/text"
rc=0
"$KC_BIN/kcollect" --problems level1/019_relu --compile-only --turns 1 --db "$T/text" >"$T/o" 2>"$T/e" || rc=$?
[ $rc -ne 0 ] || fail "a non-empty foreign file was accepted"
[ "$(cat "$T/text")" = "not a database" ] || fail "the foreign file was changed"
: >"$T/empty2"
rc=0
"$KC_BIN/kcurate" stats --db "$T/empty2" >"$T/o" 2>"$T/e" || rc=$?
[ $rc -ne 0 ] || fail "kcurate stats accepted an empty file"
echo ok
