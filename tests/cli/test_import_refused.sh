#!/bin/sh
# test_import_refused: a refused `kverify import` (a file that is not UTF-8, one with a NUL byte, a
# missing file; each after a good one) leaves no database behind (it created a schema-only one
# before checking the files) and leaves an existing database byte for byte as it was.
set -eu
. "$(dirname "$0")/lib.sh"
kv="$KC_BIN/kverify"
ref="$KC_PROBLEMS/level1/019_relu.cu"
printf '// caf\377\nextern "C" __global__ void k(float *y) {}\n// @launch k<<<1, 1>>>(y);\n' >"$T/bad.cu"
printf 'extern "C" __global__ void k(float *y) {}\0\n// @launch k<<<1, 1>>>(y);\n' >"$T/nul.cu"

for f in bad.cu nul.cu missing.cu; do
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
for f in bad.cu nul.cu missing.cu; do
    rc=0
    "$kv" import --db "$T/old.db" --problem level1/019_relu "$ref" "$T/$f" >/dev/null 2>&1 || rc=$?
    [ $rc -eq 4 ] || fail "import of $f into an existing database exited $rc"
    [ "$(sha256sum "$T/old.db" | cut -d' ' -f1)" = "$before" ] || fail "a refused import of $f changed old.db"
done
[ "$(sqlite3 "$T/old.db" "SELECT count(*) FROM candidates")" = 1 ] || fail "old.db lost or gained candidates"
echo "ok"
