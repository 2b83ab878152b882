#!/bin/sh
# test_candidate_rules: one rule for what a candidate is, the same in kcollect, kverify check,
# kverify import and kexport (issue 15).
# - An answer of prose without a code block says there is no ```cuda block (it said "no
#   // @launch line"); two ```cuda blocks are an extract_error that says the format takes
#   exactly one (the last was taken silently); the model reads both in its feedback.
# - Invalid UTF-8 (one 0xFF byte in a comment) is an extract_error naming the line and byte in
#   kcollect and kverify check (it became a launch_error), kverify import refuses the file, and
#   kexport names a candidate whose kernel is not UTF-8 and fails, or leaves it out with
#   --skip-bad-text (it aborted the whole export).
set -eu
. "$(dirname "$0")/lib.sh"

# kcollect: turn 0 prose, turn 1 two blocks, turn 2 a 0xFF byte, turn 3 the reference.
printf '{"answers": [{"content": "I would write a kernel with one thread per element."},
  {"content": "First try:\\n```cuda\\n// @launch a<<<1,1>>>(x, y);\\n```\\nBetter:\\n{{reference}}"},
  {"content": "{{reference}}"}, {"content": "{{reference}}"}]}\n' >"$T/script.json"
start_server --script "$T/script.json"
DB="$T/kc.db"
"$KC_BIN/kcollect" --problems level1/019_relu --endpoint "$URL" --model fake --db "$DB" \
    --turns 4 --samples 2 --compile-only >"$T/c.out" 2>"$T/c.err" || { cat "$T/c.err"; fail "kcollect"; }
msg() { sqlite3 "$DB" "SELECT c.extract_error FROM turns t JOIN candidates c ON c.id = t.candidate_id WHERE t.turn_index = $1 LIMIT 1"; }
msg 0 | grep -q 'no ```cuda code block' || fail "turn 0 (prose): $(msg 0)"
msg 1 | grep -q '2 ```cuda code blocks; the format takes exactly one' || fail "turn 1 (two blocks): $(msg 1)"
sqlite3 "$DB" "SELECT CAST(b.data AS TEXT) FROM turns t JOIN blobs b ON b.sha256 = t.prompt_sha WHERE t.turn_index = 2 LIMIT 1" \
    | grep -q 'exactly one' || fail "the model was not told about the two blocks in its next prompt"
[ "$(sqlite3 "$DB" "SELECT group_concat(v.verdict) FROM turns t JOIN v_latest_verification v ON v.candidate_id = t.candidate_id WHERE t.turn_index = 2")" = compiled,compiled ] \
    || fail "turn 2 (the reference) did not compile"
stop_server

# kverify check and compile: the same rule and the same words.
printf 'Here:\n```cuda\n// caf\377\nextern "C" __global__ void k(float *y) {}\n// @launch k<<<1, 1>>>(y);\n```\n' >"$T/bad.cu"
printf '```cuda\nint a;\n// @launch k<<<1,1>>>(y);\n```\nor\n```cuda\nint b;\n// @launch k<<<1,1>>>(y);\n```\n' >"$T/two.cu"
printf 'I cannot write this kernel.\n' >"$T/prose.cu"
for cmd in "check --compile-only" compile; do
    for f in bad two prose; do
        rc=0
        "$KC_BIN/kverify" $cmd --problem level1/019_relu "$T/$f.cu" --json >"$T/$f.json" 2>"$T/$f.err" || rc=$?
        [ "$(sqlite3 :memory: "SELECT json_extract(readfile('$T/$f.json'), '\$.verdict')")" = extract_error ] \
            || fail "kverify $cmd $f.cu: $(cat "$T/$f.json" "$T/$f.err")"
    done
    grep -q 'line 1: byte 0xFF is not valid UTF-8' "$T/bad.json" || fail "kverify $cmd: the 0xFF byte is not named"
    grep -q '2 ```cuda code blocks' "$T/two.json" || fail "kverify $cmd: two blocks"
    grep -q 'no ```cuda code block' "$T/prose.json" || fail "kverify $cmd: prose"
done

# kverify import: refused, nothing imported.
rc=0
"$KC_BIN/kverify" import --db "$T/imp.db" --problem level1/019_relu "$T/bad.cu" >"$T/i.out" 2>"$T/i.err" || rc=$?
[ $rc -ne 0 ] && grep -q "bad.cu: line 3: byte 0xFF is not valid UTF-8.*nothing imported" "$T/i.err" \
    || fail "kverify import accepted text that is not UTF-8 ($rc): $(cat "$T/i.err")"
[ ! -e "$T/imp.db" ] || fail "the refused import left a database behind"

# kexport: a kernel that is not UTF-8 (as an older import stored it) is named; skipped on request.
printf '// caf\377\nextern "C" __global__ void k(float *y) {}\n' >"$T/raw.cu"
SHA=$(sha256sum "$T/raw.cu" | cut -d' ' -f1)
BAD=$(sqlite3 "$DB" "INSERT INTO blobs(sha256, size, data) VALUES ('$SHA', $(wc -c <"$T/raw.cu"), readfile('$T/raw.cu'));
                     UPDATE candidates SET source_sha = '$SHA' WHERE id = (SELECT min(candidate_id) FROM turns WHERE turn_index = 2);
                     SELECT min(candidate_id) FROM turns WHERE turn_index = 2;")
"$KC_BIN/kcurate" run --db "$DB" >/dev/null 2>&1 || fail "kcurate run"
EXPORT="--db $DB --no-gzip --format sft --every-turn --verdict compiled --dedup none"
rc=0
"$KC_BIN/kexport" $EXPORT --out "$T/e1" >"$T/e1.out" 2>"$T/e1.err" || rc=$?
[ $rc -ne 0 ] && grep -q "candidate $BAD (level1/019_relu): its kernel is not UTF-8 text (line 1: byte 0xFF" "$T/e1.err" \
    || fail "kexport did not name the candidate ($rc): $(cat "$T/e1.err")"
"$KC_BIN/kexport" $EXPORT --out "$T/e2" --skip-bad-text >"$T/e2.out" 2>"$T/e2.err" \
    || fail "kexport --skip-bad-text failed: $(cat "$T/e2.err")"
grep -q "left out candidate $BAD (level1/019_relu)" "$T/e2.err" || fail "the left-out candidate is not named: $(cat "$T/e2.err")"
grep -q "exported 1 sft records" "$T/e2.out" || fail "expected the other compiled kernel exported: $(cat "$T/e2.out")"
echo ok
