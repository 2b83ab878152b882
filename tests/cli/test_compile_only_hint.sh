#!/bin/sh
# test_compile_only_hint: a compile-only corpus whose first turns are broken near-duplicates of
# the compiled second turns (fake server --bug compile). The default sft export gives nothing and
# its hint names one flag; that one command exports records: a duplicate cluster's
# representative is its best member by verdict class (compiled over compile_error), then speed,
# not its earliest (issue 24). Before, it took --verdict compiled, then --dedup none.
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
"$KC_BIN/kcollect" --problems 'level1/01*' --db "$DB" --compile-only --turns 2 --fake-args "--bug compile" \
    >"$T/o" 2>"$T/e" || fail "kcollect: $(cat "$T/e")"
"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run"
"$KC_BIN/kexport" --db "$DB" --out "$T/ds" >"$T/o" 2>"$T/e" || true
! grep -q "^exported [1-9]" "$T/o" || fail "the default sft export of a compile-only corpus exported records: $(cat "$T/o")"
hint=$(sed -n 's/^ *try: \(--[a-z-]* [a-z,]*\).*/\1/p' "$T/e" | head -1)
[ -n "$hint" ] || fail "no hint: $(cat "$T/e")"
"$KC_BIN/kexport" --db "$DB" --out "$T/ds2" $hint >"$T/o2" 2>"$T/e2" || fail "the hinted '$hint' exported nothing: $(cat "$T/e2")"
grep -q "^exported 10 sft records" "$T/o2" || fail "'$hint': $(cat "$T/o2")"
# the compiled turns represent their clusters
[ "$(sqlite3 "$DB" "SELECT count(*) FROM candidate_labels WHERE verdict_class = 'compile_fail'
     AND near_rep_id IS NOT NULL AND near_rep_id != candidate_id")" -ge 1 ] \
    || fail "no broken turn points at a better representative"
[ "$(sqlite3 "$DB" "SELECT count(*) FROM candidate_labels l JOIN candidate_labels r ON r.candidate_id = l.near_rep_id
     WHERE l.verdict_class = 'compiled' AND r.verdict_class = 'compile_fail'")" = 0 ] \
    || fail "a compiled kernel is represented by a broken one"
echo ok
