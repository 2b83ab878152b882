#!/bin/sh
# test_interrupt: Ctrl-C, as a terminal sends it (SIGINT to the whole foreground process group),
# never turns into a label (issue 21). Each tool runs in a process group of its own (setsid) and
# the signal goes to the group, so anything left in the tool's group would be hit too.
# 1. kcollect (compile-only, fake LLM) interrupted mid-run: exit 130, the resume command printed,
#    no lock file, no compile server left, no "compiler crashed / killed by a signal" label; the
#    printed command finishes the run; kverify reverify (interrupted once, then resumed by its
#    printed command) and kcurate flips find every label reproduced.
# 2. Two SIGINTs in quick succession: exit 130 at once (no summary), lock file removed, the
#    database passes PRAGMA integrity_check and still opens.
# 3. kill -9 of kcollect while a compile server is stopped (it cannot read its pipe's EOF): the
#    server dies too (parent-death signal), no orphan.
# 4. kverify run --compile-only interrupted: exit 130, resume command printed, nothing labelled
#    wrongly (every candidate is a reference, so anything but 'compiled' is wrong), the rest pending.
set -euf   # -f: the problem globs go to the tools unexpanded
. "$(dirname "$0")/lib.sh"
q() { sqlite3 "$1" "$2"; }

# wait_count DB SQL N: until the query (on an existing database) gives at least N.
wait_count() {
    i=0
    while :; do
        n=0
        [ -s "$1" ] && n=$(sqlite3 "$1" "$2" 2>/dev/null || echo 0)
        [ "${n:-0}" -ge "$3" ] && return 0
        i=$((i + 1)); [ $i -lt 1200 ] || fail "timed out waiting for $2 >= $3 (at $n)"; sleep 0.05
    done
}
# start_grouped OUT ERR CMD...: CMD in a new session (its own process group) with SIGINT at its
# default, as in a terminal's foreground (a script's background job starts with SIGINT ignored,
# which the tools respect); sets PID.
start_grouped() {
    out=$1; err=$2; shift 2
    setsid env --default-signal=INT,TERM "$@" >"$out" 2>"$err" &
    PID=$!
    sleep 0.1
    [ "$(ps -o pgid= -p $PID | tr -d ' ')" = "$PID" ] || fail "setsid did not make $PID a group leader"
}
# servers PID: the compile servers the tool runs now.
servers() { pgrep -P "$1" -f compile-server | tr '\n' ' '; }
# gone PID...: every process has exited (a zombie waiting for its new parent counts as gone).
gone() {
    for p in "$@"; do
        [ -e /proc/$p ] && ! grep -q '^[0-9]* ([^)]*) Z' /proc/$p/stat 2>/dev/null && return 1
    done
    return 0
}
wait_gone() {
    i=0
    until gone "$@"; do i=$((i + 1)); [ $i -lt 100 ] || return 1; sleep 0.05; done
}
# crash_labels DB: recorded compiles whose log says the compiler crashed or was killed.
crash_labels() {
    q "$1" "SELECT count(*) FROM compiles c JOIN blobs b ON b.sha256 = c.log_sha
            WHERE CAST(b.data AS TEXT) LIKE '%crashed%' OR CAST(b.data AS TEXT) LIKE '%killed by%'
               OR CAST(b.data AS TEXT) LIKE '%died%'"
}
# has_lock DB: kcollect's run lock file beside the database exists.
has_lock() { [ -n "$(find "$(dirname "$1")" -maxdepth 1 -name "$(basename "$1").kcollect-*.lock")" ]; }
no_lock() { ! has_lock "$1"; }

start_server --bug compile
PROBLEMS='level1/00*,level1/01*'   # 19 problems
DB="$T/kc.db"
ARGS="--problems $PROBLEMS --endpoint $URL --model fake --db $DB --samples 2 --turns 2 --compile-only --concurrency 4"
NTRAJ=38

# ---- 1. kcollect interrupted mid-run, then resumed with the printed command ----
start_grouped "$T/c1.out" "$T/c1.err" "$KC_BIN/kcollect" $ARGS
wait_count "$DB" "SELECT count(*) FROM verifications" 8
S=$(servers $PID)
[ -n "$S" ] || fail "no compile server found under kcollect"
kill -INT -$PID
rc=0; wait $PID || rc=$?
[ $rc -eq 130 ] || fail "kcollect after SIGINT: exit $rc, expected 130: $(tail -5 "$T/c1.err")"
grep -q "run the same command again to resume:" "$T/c1.out" || fail "no resume hint: $(cat "$T/c1.out")"
RESUME=$(sed -n '/run the same command again to resume:/{n;s/^ *//;p;}' "$T/c1.out")
case "$RESUME" in *kcollect\ --problems\ *"$PROBLEMS"*--compile-only*) ;;
    *) fail "the resume hint is not the command: '$RESUME'" ;; esac
no_lock "$DB" || fail "the lock file is left after an interrupted run"
wait_gone $S || fail "compile servers $S outlived kcollect"
[ "$(crash_labels "$DB")" = 0 ] || fail "the interrupt became compile_error labels (compiler crashed/killed)"
[ "$(q "$DB" "SELECT status FROM runs")" = interrupted ] || fail "run status $(q "$DB" 'SELECT status FROM runs')"
DONE1=$(q "$DB" "SELECT count(*) FROM trajectories WHERE status = 'done'")
[ "$DONE1" -lt $NTRAJ ] || fail "the run finished before the interrupt: the test proves nothing"
echo "interrupted after $(q "$DB" 'SELECT count(*) FROM verifications') verifications, $DONE1 trajectories done"

sh -c "$RESUME" >"$T/c2.out" 2>"$T/c2.err" || fail "the printed resume command failed: $(tail -5 "$T/c2.err")"
[ "$(q "$DB" "SELECT count(*) FROM trajectories WHERE status = 'done' AND stop_reason = 'first_compiled'")" = $NTRAJ ] \
    || fail "trajectories: $(q "$DB" 'SELECT stop_reason, count(*) FROM trajectories GROUP BY 1')"
# Bug then fix in every trajectory: turn 0 compile_error (NVRTC's), turn 1 compiled; none lost or twice.
[ "$(q "$DB" "SELECT count(*) FROM turns t JOIN v_latest_verification v ON v.candidate_id = t.candidate_id
        WHERE (t.turn_index = 0 AND v.verdict = 'compile_error') OR (t.turn_index = 1 AND v.verdict = 'compiled')")" \
    = $((2 * NTRAJ)) ] || fail "verdicts after resume: $(q "$DB" 'SELECT verdict, count(*) FROM verifications GROUP BY 1')"
[ "$(q "$DB" "SELECT count(*) FROM verifications")" = $((2 * NTRAJ)) ] || fail "a candidate verified twice"
[ "$(crash_labels "$DB")" = 0 ] || fail "crash labels after resume"

# reverify interrupted once, resumed with its printed command; every label reproduces.
start_grouped "$T/r1.out" "$T/r1.err" "$KC_BIN/kverify" reverify --db "$DB" --compile-only
wait_count "$DB" "SELECT count(*) FROM verifications WHERE reverify_pass = 1" 6
kill -INT -$PID
rc=0; wait $PID || rc=$?
[ $rc -eq 130 ] || fail "reverify after SIGINT: exit $rc: $(tail -3 "$T/r1.err")"
RESUME=$(sed -n 's/^kverify: interrupted: resume with: //p' "$T/r1.out")
[ -n "$RESUME" ] || fail "reverify printed no resume command: $(cat "$T/r1.out")"
grep -q "(run the same command again to resume)" "$T/r1.out" || fail "reverify pass finished before the interrupt"
[ "$(crash_labels "$DB")" = 0 ] || fail "the interrupted reverify recorded crash labels"
sh -c "$RESUME" >"$T/r2.out" 2>"$T/r2.err" || fail "reverify resume failed: $(tail -3 "$T/r2.err")"
grep -q "reverify pass 1: $((2 * NTRAJ)) of $((2 * NTRAJ)) candidates re-verified (pass finished); 0 label flips" "$T/r2.out" \
    || fail "reverify: $(cat "$T/r2.out")"
"$KC_BIN/kcurate" flips --db "$DB" >"$T/flips" || fail "kcurate flips failed"
grep -q "^label flips: 0 " "$T/flips" || fail "flips: $(cat "$T/flips")"

# ---- 2. two SIGINTs in quick succession ----
DB2="$T/kc2.db"
start_grouped "$T/d.out" "$T/d.err" "$KC_BIN/kcollect" $(echo "$ARGS" | sed "s|$DB|$DB2|") --concurrency 8
wait_count "$DB2" "SELECT count(*) FROM verifications" 4
S=$(servers $PID)
has_lock "$DB2" || fail "no lock file while kcollect runs"
kill -INT -$PID
i=0
until grep -q "interrupted: finishing" "$T/d.err"; do i=$((i + 1)); [ $i -lt 40 ] || break; sleep 0.05; done
kill -INT -$PID 2>/dev/null || true
rc=0; wait $PID || rc=$?
[ $rc -eq 130 ] || fail "two SIGINTs: exit $rc, expected 130"
! grep -q "kcollect summary" "$T/d.out" || fail "the second SIGINT did not exit at once (a summary was printed)"
no_lock "$DB2" || fail "the second SIGINT left the lock file"
wait_gone $S || fail "compile servers $S outlived kcollect's second SIGINT"
[ "$(q "$DB2" "PRAGMA integrity_check")" = ok ] || fail "integrity_check after two SIGINTs"
[ "$(crash_labels "$DB2")" = 0 ] || fail "crash labels after two SIGINTs"
"$KC_BIN/kcurate" flips --db "$DB2" >/dev/null || fail "the database does not open after two SIGINTs"

# ---- 3. kill -9 leaves no compile server behind, even one that cannot see its pipe close ----
DB3="$T/kc3.db"
start_grouped "$T/k.out" "$T/k.err" "$KC_BIN/kcollect" $(echo "$ARGS" | sed "s|$DB|$DB3|")
wait_count "$DB3" "SELECT count(*) FROM verifications" 2
S=$(servers $PID)
[ -n "$S" ] || fail "no compile server found under kcollect"
for s in $S; do kill -STOP "$s"; done
kill -9 $PID
wait $PID 2>/dev/null || true
if ! wait_gone $S; then
    for s in $S; do kill -9 "$s" 2>/dev/null || true; done
    fail "compile servers $S survived a kill -9 of kcollect (orphans)"
fi

# ---- 4. kverify run --compile-only interrupted ----
DB4="$T/kc4.db"
mkdir "$T/cand"
for f in $(cd "$KC_PROBLEMS/level1" && find . -maxdepth 1 -name '0[01]*.json' | sort); do
    p=level1/$(basename "$f" .json)
    f="$T/cand/$(basename "$p").cu"
    "$KC_BIN/kverify" problems --show-reference "$p" >"$f"
    "$KC_BIN/kverify" import --db "$DB4" --problem "$p" "$f" "$f" "$f" >/dev/null || fail "import $p"
done
N4=$(q "$DB4" "SELECT count(*) FROM candidates WHERE status = 'pending'")
start_grouped "$T/v1.out" "$T/v1.err" "$KC_BIN/kverify" run --db "$DB4" --compile-only
wait_count "$DB4" "SELECT count(*) FROM verifications" 6
kill -INT -$PID
rc=0; wait $PID || rc=$?
[ $rc -eq 130 ] || fail "kverify run after SIGINT: exit $rc"
RESUME=$(sed -n 's/^kverify: interrupted: resume with: //p' "$T/v1.out")
case "$RESUME" in *kverify\ run\ --db\ "$DB4"\ --compile-only) ;;
    *) fail "kverify run: resume command '$RESUME': $(tail -3 "$T/v1.out")" ;; esac
[ "$(q "$DB4" "SELECT count(*) FROM verifications WHERE verdict <> 'compiled'")" = 0 ] \
    || fail "the interrupt labelled references: $(q "$DB4" "SELECT verdict, message FROM verifications WHERE verdict <> 'compiled'")"
LEFT=$(q "$DB4" "SELECT count(*) FROM candidates WHERE status = 'pending'")
[ "$LEFT" -gt 0 ] || fail "kverify run finished before the interrupt: the test proves nothing"
[ "$(q "$DB4" "SELECT count(*) FROM candidates WHERE status = 'pending' AND id IN (SELECT candidate_id FROM verifications)")" = 0 ] \
    || fail "a pending candidate has a verification"
sh -c "$RESUME" >"$T/v2.out" 2>"$T/v2.err" || fail "kverify run resume failed: $(tail -3 "$T/v2.err")"
[ "$(q "$DB4" "SELECT count(*) FROM verifications WHERE verdict = 'compiled'")" = "$N4" ] \
    || fail "after resume: $(q "$DB4" 'SELECT verdict, count(*) FROM verifications GROUP BY 1') of $N4"
echo "ok"
