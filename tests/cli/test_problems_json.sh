#!/bin/sh
# test_problems_json: kverify problems --json prints JSON (issue 35, item 6: it printed the text
# list). The list is one object ("kcorpus-problems v1": suite, count, problems with id, title,
# suite, level, KernelBench id, degenerate), the same problems as the text; --check --json is one
# object ("kcorpus-problems-check v1") with each problem's reference compile and generator and the
# totals, and no text line; a broken manifest is "valid": false with its error (exit 1 as in text).
set -eu
. "$(dirname "$0")/lib.sh"
J="$T/list.json"
"$KC_BIN/kverify" problems --suite level1 --json >"$J" 2>"$T/e" || fail "list --json: $(cat "$T/e")"
v() { sqlite3 :memory: "SELECT $1 FROM (SELECT CAST(readfile('$2') AS TEXT) AS j)"; }
[ "$(v "json_valid(j)" "$J")" = 1 ] || fail "list --json is not JSON: $(head -3 "$J")"
[ "$(v "json_extract(j, '\$.format') || ' ' || json_extract(j, '\$.count') || ' ' || json_array_length(j, '\$.problems')" "$J")" = \
  "kcorpus-problems v1 100 100" ] || fail "list --json: $(head -5 "$J")"
"$KC_BIN/kverify" problems --suite level1 | awk '{print $1}' >"$T/text-ids"
sqlite3 :memory: "SELECT json_extract(value, '\$.id') FROM json_each(json_extract(CAST(readfile('$J') AS TEXT), '\$.problems'))" >"$T/json-ids"
cmp -s "$T/text-ids" "$T/json-ids" || fail "the JSON list and the text list differ"
[ "$(sqlite3 :memory: "SELECT json_extract(value, '\$.title') || '|' || json_extract(value, '\$.level') || '|' ||
     json_extract(value, '\$.kernelbench_id') || '|' || json_type(value, '\$.degenerate')
     FROM json_each(json_extract(CAST(readfile('$J') AS TEXT), '\$.problems')) WHERE json_extract(value, '\$.id') = 'level1/019_relu'")" = \
  "ReLU activation|1|19|null" ] || fail "019_relu in the list: $(grep -A8 019_relu "$J")"

# --check --json: JSON only, per problem and in total
C="$T/check.json"
"$KC_BIN/kverify" problems --suite 'level1/01[0-2]*' --check --json >"$C" 2>"$T/e" || fail "check --json: $(cat "$T/e")"
[ "$(v "json_valid(j)" "$C")" = 1 ] || fail "check --json is not JSON: $(head -3 "$C")"
! grep -q "^ok \|^FAIL\|references compiled" "$C" || fail "check --json printed text"
[ "$(v "json_extract(j, '\$.format') || ' ' || json_extract(j, '\$.summary.problems') || ' ' ||
       json_extract(j, '\$.summary.references_compiled') || ' ' || json_extract(j, '\$.summary.generators_invalid')" "$C")" = \
  "kcorpus-problems-check v1 3 3 0" ] || fail "check --json summary: $(v "json_extract(j, '\$.summary')" "$C")"
[ "$(sqlite3 :memory: "SELECT count(*) FROM json_each(json_extract(CAST(readfile('$C') AS TEXT), '\$.problems'))
     WHERE json_extract(value, '\$.ok') AND json_extract(value, '\$.reference.compiled')
     AND json_extract(value, '\$.generator') = 'valid'")" = 3 ] || fail "check --json per problem: $(cat "$C")"

# a broken manifest: invalid in the list, not ok in the check, exit 1 as in text
cp -r "$KC_PROBLEMS" "$T/problems"
echo '{"id": ' >"$T/problems/level1/011_4d_tensor_matrix_multiplication.json"
rc=0
KC_PROBLEMS="$T/problems" "$KC_BIN/kverify" problems --suite 'level1/01[0-2]*' --json >"$J" 2>"$T/e" || rc=$?
[ $rc = 1 ] || fail "a broken manifest: exit $rc"
[ "$(sqlite3 :memory: "SELECT json_extract(value, '\$.valid') || ' ' || (json_extract(value, '\$.error') <> '')
     FROM json_each(json_extract(CAST(readfile('$J') AS TEXT), '\$.problems')) WHERE json_extract(value, '\$.id') LIKE '%011_%'")" = "0 1" ] ||
    fail "the broken manifest in the list: $(cat "$J")"
rc=0
KC_PROBLEMS="$T/problems" "$KC_BIN/kverify" problems --suite 'level1/01[0-2]*' --check --json >"$C" 2>"$T/e" || rc=$?
[ $rc = 1 ] && [ "$(v "json_valid(j) || ' ' || json_extract(j, '\$.summary.references_compiled')" "$C")" = "1 2" ] ||
    fail "check of a broken manifest: exit $rc, $(cat "$C")"
echo ok
