#!/bin/sh
# test_network_candidates: candidates with // @for loops and NAME[INDEX] offsets (issue 38,
# docs/CANDIDATE_FORMAT.md) through kverify check --compile-only: the parser accepts them and
# NVRTC compiles them (tests/fixtures/candidates/relu_loops.cu, relu_loops_cap.cu: the files a
# GPU session runs without --compile-only); a loop error is an extract_error (exit 2) with its
# line in the message, in text and --json. Nothing runs on a GPU here.
set -eu
. "$(dirname "$0")/lib.sh"

C="$KC_ROOT/tests/fixtures/candidates"
for f in relu_loops relu_loops_cap; do
    "$KC_BIN/kverify" check --problem level1/019_relu --compile-only "$C/$f.cu" >"$T/$f.out" 2>&1 ||
        fail "$f: $(cat "$T/$f.out")"
    grep -q 'level1/019_relu: compiled' "$T/$f.out" || fail "$f: $(cat "$T/$f.out")"
done

# the cap at the default dims (B*16 + 1 = 65537 trips of one launch at B=4096): refused before
# compiling, naming the loop and the counts
sed -e 's/min(B, 70000)/B*16 + 1/' "$C/relu_loops_cap.cu" >"$T/over.cu"
rc=0
"$KC_BIN/kverify" check --problem level1/019_relu --compile-only --json "$T/over.cu" >"$T/over.json" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "over the cap: exit $rc, want 2: $(cat "$T/over.json")"
grep -q '"verdict": *"extract_error"' "$T/over.json" || fail "over the cap: $(cat "$T/over.json")"
grep -q 'line 12: at dims default (B=4096, D=393216) the launch unit would issue 65537 launches, 65537 of them in @for r (65537 trips of 1); one execution may issue at most 65536' "$T/over.json" ||
    fail "over the cap: $(cat "$T/over.json")"

# an offset past the end of y at the last row: the line, the argument, the dims, the row
sed -e 's/y\[r\*D\]/y[r*D + D + 1]/' "$C/relu_loops_cap.cu" >"$T/past.cu"
rc=0
"$KC_BIN/kverify" check --problem level1/019_relu --compile-only "$T/past.cu" >"$T/past.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "offset past the end: exit $rc, want 2: $(cat "$T/past.out")"
grep -q 'line 13: argument 2 of relu_row at dims default (B=4096, D=393216) with r=4095: y\[r\*D + D + 1\] is element 1610612737 of a tensor of 1610612736 elements' "$T/past.out" ||
    fail "offset past the end: $(cat "$T/past.out")"

# an unclosed loop
sed -e '/@end/d' "$C/relu_loops_cap.cu" >"$T/open.cu"
rc=0
"$KC_BIN/kverify" check --problem level1/019_relu --compile-only "$T/open.cu" >"$T/open.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q "line 12: @for r is not closed: put '// @end' after its last @launch line" "$T/open.out" ||
    fail "unclosed loop: exit $rc: $(cat "$T/open.out")"
echo "ok"
