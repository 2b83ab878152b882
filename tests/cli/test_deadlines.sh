#!/bin/sh
# test_deadlines: kverify's side of issue 37 with a stand-in worker (fixtures/fake_kverify_gpu.sh)
# whose candidate stage never ends after a progress report with a scaled deadline (300 ms: a
# level-1 reference of 4.5 ms; before issue 37 the first run's deadline was a fixed 20 s).
#   - the worker is killed after that deadline, not later: `kverify check` says timeout (exit 3)
#     within seconds; the message names the deadline and the dims, and the evidence's "timeout"
#     keeps the stage, the deadline, how long kverify waited and the basis the worker sent;
#   - the replacement starts as soon as the old worker is killed: in a `kverify run`, the next
#     candidate is labelled by it, and its evidence says how long it still waited for the
#     replacement's start-up (client_ms.worker_start; the stand-in takes FAKE_START_DELAY to
#     start, part of which overlapped the label's recording and the next compile);
#   - the evidence keeps what a kill cost: how long the killed worker took to end
#     (client_ms.worker_kill) and the replacement's start-up as it reported it (worker_init);
#   - kverify check ends at once after the timeout (the replacement it no longer needs is
#     killed, not waited for);
#   - a worker that ignores its input's end (or hangs on the way out) does not hold kverify's
#     exit: it gets IPC_EXIT_GRACE_MS (3 s) and is killed. On a loaded CI machine the replacement
#     above was greeted by the warm-up thread, hung up, and reaped without a limit: 62 s.
. "$KC_ROOT/tests/cli/lib.sh"
export KC_KVERIFY_GPU="$KC_ROOT/tests/cli/fixtures/fake_kverify_gpu.sh"
relu="$KC_PROBLEMS/level1/019_relu.cu"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
ev() { sqlite3 "$db" "SELECT json_extract(v.evidence_json, '$2') FROM verifications v WHERE v.candidate_id = $1"; }

t0=$(now)
FAKE_MODE=hang FAKE_START_DELAY=1 "$KC_BIN/kverify" check --sanitizer none --problem level1/019_relu \
    "$relu" >"$T/out" 2>"$T/err"
rc=$?
secs=$(since "$t0")
[ $rc -eq 3 ] || { cat "$T/out" "$T/err"; fail "a hang: exit $rc, expected 3 (timeout)"; }
grep -q "level1/019_relu: timeout" "$T/out" || { cat "$T/out"; fail "a hang is not labelled timeout"; }
grep -q "within its deadline of 300 ms on the default dims (the reference takes about 4.5 ms" "$T/out" ||
    { cat "$T/out"; fail "the message does not name the deadline"; }
grep -q '"timeout":{"stage":"candidate","deadline_ms":300,"waited_ms":' "$T/out" ||
    { cat "$T/out"; fail "no timeout evidence"; }
# 1 s of worker start-up, the compile and the 300 ms deadline; the replacement is not awaited
awk -v s="$secs" 'BEGIN { exit !(s < 6) }' || fail "kverify check took $secs s for a 300 ms deadline"

db="$T/kc.db"
{ cat "$relu"; echo "// a second candidate"; } >"$T/relu2.cu"
"$KC_BIN/kverify" import --db "$db" --problem level1/019_relu "$relu" "$T/relu2.cu" >/dev/null || fail import
mkdir "$T/state"
FAKE_STATE="$T/state" FAKE_MODE=hang_once FAKE_START_DELAY=1 FAKE_DEADLINE_MS=250 \
    "$KC_BIN/kverify" run --db "$db" --threads 1 --sanitizer none >"$T/out" 2>&1 ||
    { cat "$T/out"; fail "kverify run"; }
got=$(sqlite3 "$db" "SELECT group_concat(verdict, ' ') FROM (SELECT verdict FROM verifications ORDER BY candidate_id)")
[ "$got" = "timeout correct" ] || { cat "$T/out"; fail "verdicts '$got', expected 'timeout correct'"; }
[ "$(ev 1 '$.timeout.stage')|$(ev 1 '$.timeout.deadline_ms')|$(ev 1 '$.timeout.run')" = "candidate|250|default" ] ||
    fail "timeout evidence: $(ev 1 '$')"
waited=$(ev 1 '$.timeout.waited_ms')
awk -v w="$waited" 'BEGIN { exit !(w >= 240 && w < 3000) }' || fail "killed after $waited ms for a 250 ms deadline"
[ "$(ev 1 '$.timeout.reference_ms')|$(ev 1 '$.timeout.work_ratio')|$(ev 1 '$.timeout.launches')" = "4.5|1|1" ] ||
    fail "timeout basis: $(ev 1 '$.timeout')"
start=$(ev 2 '$.client_ms.worker_start')
[ -n "$start" ] || fail "the candidate after the kill does not say how long it waited for the new worker: $(ev 2 '$')"
# what is left of the replacement's 1 s start-up, with a loaded machine's slack
awk -v s="$start" 'BEGIN { exit !(s > 0 && s < 2500) }' || fail "waited $start ms for a worker that starts in 1000"
[ -z "$(ev 1 '$.client_ms.worker_start')" ] || fail "the first candidate waited for a worker the warm start had up"
# what the kill cost, for the GPU runs to break down: the old worker's end, the new one's start-up
[ -n "$(ev 1 '$.client_ms.worker_kill')" ] || fail "the timed-out job does not say how long its worker took to end"
[ -n "$(ev 2 '$.client_ms.worker_init.gpu_open')" ] || fail "no worker_init: $(ev 2 '$.client_ms')"
mkdir "$T/stuck"
t0=$(now)
FAKE_STATE="$T/stuck" FAKE_MODE=stuck_exit "$KC_BIN/kverify" check --sanitizer none \
    --problem level1/019_relu "$relu" >"$T/out" 2>&1 || { cat "$T/out"; fail "stuck_exit: the check itself"; }
secs=$(since "$t0")
grep -q "level1/019_relu: correct" "$T/out" || { cat "$T/out"; fail "stuck_exit: not labelled correct"; }
awk -v s="$secs" 'BEGIN { exit !(s < 20) }' || fail "kverify waited $secs s for a worker that ignores its input's end (3 s grace; 60 s: no limit)"
pid=$(cat "$T/stuck/stuck.pid") || fail "the stuck worker did not run"
! kill -0 "$pid" 2>/dev/null || { kill "$pid"; fail "the worker that ignored its input's end still runs"; }
echo "ok: a hang killed after $waited ms (deadline 250), the next candidate waited $start ms for the replacement (1000 ms start-up); a worker stuck on its way out was killed, kverify ended after $secs s"
