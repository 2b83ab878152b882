#!/bin/sh
# test_report_fixes: kcurate report (issue 24). The per-problem "trajectories" column counts
# trajectories (it counted changes of trajectory in candidate order: concurrent trajectories
# showed 3 or 4 where the database has 2); the page of a turn that ended its trajectory by
# succeeding does not call its feedback sent, nor tell the model to "fix the problem".
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
start_server --bug compile --delay-ms 30
"$KC_BIN/kcollect" --problems level1/019_relu,level1/023_softmax --endpoint "$URL" --model m \
    --db "$DB" --samples 2 --turns 3 --concurrency 4 --compile-only >"$T/o" 2>"$T/e" || fail "kcollect: $(cat "$T/e")"
stop_server
"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run"
"$KC_BIN/kcurate" report --db "$DB" --out "$T/rep" >/dev/null 2>"$T/e" || fail "kcurate report: $(cat "$T/e")"
got=$(sqlite3 :memory: "SELECT group_concat(json_extract(value, '\$.id') || '=' || json_extract(value, '\$.trajectories'), ' ')
                        FROM json_each(readfile('$T/rep/report.json'), '\$.problems')")
want=$(sqlite3 "$DB" "SELECT group_concat(p || '=' || n, ' ') FROM (SELECT problem_id p, count(*) n FROM trajectories
                      GROUP BY problem_id ORDER BY problem_id)")
[ "$got" = "$want" ] || fail "trajectories column: report says $got, the database has $want"
# a compiled (success) turn that ended its trajectory
id=$(sqlite3 "$DB" "SELECT t.candidate_id FROM turns t JOIN trajectories tr ON tr.id = t.trajectory_id
                    JOIN v_latest_verification v ON v.candidate_id = t.candidate_id
                    WHERE v.verdict = 'compiled' AND tr.stop_reason = 'first_compiled' LIMIT 1")
[ -n "$id" ] || fail "no compiled turn that ended its trajectory"
page="$T/rep/kernels/c$id.html"
[ -f "$page" ] || fail "no page for candidate $id"
! grep -q "Feedback sent to the model" "$page" || fail "a success turn's page says its feedback was sent"
! grep -qi "fix the problem" "$page" || fail "a success turn's page says to fix the problem"
grep -q "not sent: the trajectory ended with this turn" "$page" || fail "the page does not say the feedback was not sent"
# a failed turn that has a page: its feedback was sent
for f in "$T"/rep/kernels/c*.html; do
    id=$(basename "$f" .html | tr -d c)
    [ "$(sqlite3 "$DB" "SELECT v.verdict FROM v_latest_verification v WHERE v.candidate_id = $id")" = compile_error ] || continue
    grep -q "Feedback sent to the model" "$f" || fail "a failed turn's feedback is not called sent ($f)"
done
echo ok
