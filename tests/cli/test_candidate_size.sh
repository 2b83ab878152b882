#!/bin/sh
# test_candidate_size: one size rule wherever a candidate enters (issue 24): a kernel source over
# 256 KiB (KC_MAX_SOURCE_BYTES) is refused by kverify compile and check, by kverify import (it
# accepted a 50 MB file) and by kverify import --jsonl; one just under the limit is imported.
set -eu
. "$(dirname "$0")/lib.sh"
# A valid candidate: the bundled server's reference echo, taken from a compile-only run.
"$KC_BIN/kcollect" --problems level1/019_relu --compile-only --turns 1 --db "$T/kc.db" >/dev/null 2>&1 \
    || fail "kcollect"
sqlite3 "$T/kc.db" "SELECT CAST(b.data AS TEXT) FROM candidates c JOIN blobs b ON b.sha256 = c.source_sha" >"$T/ok.cu"
grep -q "@launch" "$T/ok.cu" || fail "no candidate source to start from"
# pad with a comment to just under and to over the limit
pad() { # FILE BYTES: ok.cu plus a comment, BYTES long in all
    cp "$T/ok.cu" "$1"
    have=$(wc -c <"$T/ok.cu")
    n=$(( $2 - have - 5 ))
    { printf '/*'; head -c "$n" /dev/zero | tr '\0' 'x'; printf '*/\n'; } >>"$1"
}
pad "$T/small.cu" 262144
pad "$T/big.cu" 262145
head -c 50000000 /dev/zero | tr '\0' 'x' | { cat "$T/ok.cu"; printf '/*'; cat; printf '*/\n'; } >"$T/huge.cu"
"$KC_BIN/kverify" import --db "$T/i.db" --problem level1/019_relu "$T/small.cu" >"$T/o" 2>"$T/e" \
    || fail "a source of exactly 256 KiB was refused: $(cat "$T/e")"
for f in big huge; do
    for cmd in "compile --json --problem level1/019_relu" "import --db $T/i.db --problem level1/019_relu"; do
        rc=0
        "$KC_BIN/kverify" $cmd "$T/$f.cu" >"$T/o" 2>"$T/e" </dev/null || rc=$?
        [ $rc -ne 0 ] || fail "kverify $cmd accepted $f.cu ($(wc -c <"$T/$f.cu") bytes)"
        cat "$T/o" "$T/e" | grep -q "longer than 262144 bytes" || fail "kverify $cmd $f.cu: $(cat "$T/o" "$T/e" | head -5)"
    done
done
[ "$(sqlite3 "$T/i.db" 'SELECT count(*) FROM candidates')" = 1 ] || fail "an oversized candidate was imported"
# --jsonl: a 'code' over the limit is a rejected line
python3 -c "import json,sys; print(json.dumps({'problem_id':'level1/019_relu','code':open(sys.argv[1]).read(),'source':'t'}))" "$T/big.cu" >"$T/c.jsonl"
rc=0
"$KC_BIN/kverify" import --db "$T/i.db" --jsonl "$T/c.jsonl" >"$T/o" 2>"$T/e" || rc=$?
cat "$T/o" "$T/e" | grep -q "longer than 262144 bytes" || fail "--jsonl: $(cat "$T/o" "$T/e")"
[ "$(sqlite3 "$T/i.db" 'SELECT count(*) FROM candidates')" = 1 ] || fail "--jsonl imported an oversized candidate"
echo ok
