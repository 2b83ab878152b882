#!/bin/sh
# test_audit: the audit tools on the GPU. kcollect with --samples 4 and a per-problem budget on
# a subset of level 1 against the bundled test LLM server (buggy first answer, then the
# reference), kcurate labels, kcurate report (where Chart.js is installed; else the database
# comes back in $OUT and the report is made on the build machine), then kverify reverify of
# every candidate: our own labels must not flip (any flip is printed and fails the test).
# Settings: KC_AUDIT_PROBLEMS (default level1/00*,level1/01*), KC_AUDIT_BUDGET (minutes, 2).
. "$KC_ROOT/tests/gpu/lib.sh"
db="$OUT_DIR/audit.db"
rep="$OUT_DIR/audit-report"
rm -rf "$db"* "$rep"
problems="${KC_AUDIT_PROBLEMS:-level1/00*,level1/01*}"
budget="${KC_AUDIT_BUDGET:-2}"
start=$(date +%s)
"$KC_BIN/kcollect" --problems "$problems" --db "$db" --samples 4 --turns 3 --concurrency 16 \
    --problem-budget "$budget" --fake-args "--bug runtime" >"$OUT_DIR/audit_collect.log" 2>&1 \
    || { tail -20 "$OUT_DIR/audit_collect.log"; fail "kcollect"; }
echo "audit: kcollect $(( $(date +%s) - start )) s"
sed -n '/kcollect summary/,$p' "$OUT_DIR/audit_collect.log"
"$KC_BIN/kcurate" run --db "$db" >/dev/null || fail "kcurate run"
sql "$db" "SELECT 'verdicts: ' || group_concat(verdict || ' ' || n, ', ') FROM
           (SELECT verdict, count(*) AS n FROM v_latest_verification GROUP BY 1 ORDER BY 1)"
sql "$db" "SELECT 'problems solved: ' || sum(s) || ' of ' || count(*) || '; slowest solve ' ||
           printf('%.2f', max(m) / 60000.0) || ' min of the problem clock' FROM
           (SELECT tr.problem_id, max(v.verdict = 'correct') AS s,
                   min(CASE WHEN v.verdict = 'correct' THEN t.problem_elapsed_ms END) AS m
            FROM turns t JOIN trajectories tr ON tr.id = t.trajectory_id
            JOIN v_latest_verification v ON v.candidate_id = t.candidate_id GROUP BY 1)"
[ "$(sql "$db" "SELECT count(*) FROM turns WHERE problem_elapsed_ms IS NULL")" = 0 ] \
    || fail "turns without the problem clock"

# Re-verify everything with the same verifier and GPU: no label may flip.
start=$(date +%s)
"$KC_BIN/kverify" reverify --db "$db" >"$OUT_DIR/audit_reverify.log" 2>&1 \
    || { tail -20 "$OUT_DIR/audit_reverify.log"; fail "kverify reverify"; }
echo "audit: reverify $(( $(date +%s) - start )) s"
grep -E "^(verified|GPU workers|reverify pass)" "$OUT_DIR/audit_reverify.log"
n=$(sql "$db" "SELECT count(*) FROM verifications WHERE reverify_pass IS NOT NULL")
[ "$n" = "$(sql "$db" "SELECT count(*) FROM candidates WHERE source_sha IS NOT NULL")" ] \
    || fail "reverify covered $n candidates"
"$KC_BIN/kcurate" flips --db "$db" >"$OUT_DIR/audit_flips.txt" || fail "kcurate flips"
head -3 "$OUT_DIR/audit_flips.txt"
sql "$db" "SELECT 'mean |timing change| ' || printf('%.2f%%', 100 * avg(d)) || ', max ' ||
           printf('%.2f%%', 100 * max(d)) || ' over ' || count(*) || ' correct pairs' FROM
           (SELECT abs(after_ms - before_ms) / before_ms AS d FROM v_verification_pairs
            WHERE before_verdict = 'correct' AND after_verdict = 'correct')"
flips=$(sql "$db" "SELECT count(*) FROM v_label_flips")
[ "$flips" = 0 ] || { cat "$OUT_DIR/audit_flips.txt"; fail "$flips label flips on a re-verification"; }

# The report (Chart.js from Debian's libjs-chart.js, or KC_CHARTJS=FILE).
cj="${KC_CHARTJS:-/usr/share/javascript/chart.js/chart.min.js}"
if [ -f "$cj" ]; then
    "$KC_BIN/kcurate" report --db "$db" --out "$rep" --chartjs "$cj" || fail "kcurate report"
    if command -v chromium >/dev/null 2>&1; then
        timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
            --no-first-run --user-data-dir="$(mktemp -d)" --hide-scrollbars --window-size=1280,1600 \
            --virtual-time-budget=5000 --screenshot="$OUT_DIR/audit-report.png" \
            "file://$rep/index.html" >/dev/null 2>&1 || echo "audit: screenshot failed"
    else
        echo "audit: no chromium here: make the screenshot from $rep on the build machine"
    fi
else
    echo "audit: no Chart.js on this host: run 'kcurate report --db audit.db --out audit-report' on the build machine"
fi
echo "audit: 0 label flips after re-verifying $n candidates"
