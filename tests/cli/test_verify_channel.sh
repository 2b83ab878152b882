#!/bin/sh
# test_verify_channel: what a GPU worker says is validated before it becomes a label. A fake
# kverify-gpu (fixtures/fake_kverify_gpu.sh) answers with a message for another job, an unknown
# verdict or flag, impossible timing, a negative or huge payload length, a message cut short,
# a non-object, a bad progress deadline: each must be an error that labels nothing (exit 4),
# never a verdict; the valid answer (the control) is labelled correct.
. "$KC_ROOT/tests/cli/lib.sh"
export KC_KVERIFY_GPU="$KC_ROOT/tests/cli/fixtures/fake_kverify_gpu.sh"
relu="$KC_PROBLEMS/level1/019_relu.cu"
check() { FAKE_MODE=$1 "$KC_BIN/kverify" check --problem level1/019_relu "$relu" >"$T/out" 2>"$T/err"; }

check valid; rc=$?
[ $rc -eq 0 ] && grep -q "level1/019_relu: correct" "$T/out" || { cat "$T/out" "$T/err"; fail "control: a valid result must be labelled correct (rc $rc)"; }

for mode in wrongjob badverdict badflag badhmm badtiming negblob hugeblob truncated notobject junk_first; do
    check $mode; rc=$?
    [ $rc -eq 4 ] || { cat "$T/out" "$T/err"; fail "$mode: exit $rc, expected 4 (an error, no label)"; }
    grep -Eq "malformed message|did not introduce itself" "$T/err" || { cat "$T/err"; fail "$mode: no malformed-message error"; }
    ! grep -q ": correct" "$T/out" || fail "$mode: labelled correct"
done

# kverify run records nothing for a malformed answer: the candidate stays pending.
db="$T/kc.db"
"$KC_BIN/kverify" import --db "$db" --problem level1/019_relu "$relu" >/dev/null || fail import
FAKE_MODE=badverdict "$KC_BIN/kverify" run --db "$db" --threads 1 >"$T/out" 2>&1
n=$(sqlite3 "$db" "SELECT count(*) FROM verifications")
[ "$n" = 0 ] || fail "a malformed worker answer was recorded as a verification ($n rows)"
FAKE_MODE=valid "$KC_BIN/kverify" run --db "$db" --threads 1 >"$T/out" 2>&1 || { cat "$T/out"; fail "run after the fault"; }
[ "$(sqlite3 "$db" "SELECT verdict FROM verifications")" = correct ] || fail "the retried candidate was not labelled"
# whether the GPU could reach the worker's host memory (HMM) is kept in the evidence
[ "$(sqlite3 "$db" "SELECT json_type(evidence_json, '$.gpu.pageable_memory_access') FROM verifications")" = "" ] ||
    fail "a worker that did not say recorded a pageable_memory_access"
{ cat "$relu"; echo "// a second candidate"; } >"$T/relu2.cu"
"$KC_BIN/kverify" import --db "$db" --problem level1/019_relu "$T/relu2.cu" >/dev/null || fail "import 2"
FAKE_MODE=hmm "$KC_BIN/kverify" run --db "$db" --threads 1 >"$T/out" 2>&1 || { cat "$T/out"; fail "run (hmm)"; }
[ "$(sqlite3 "$db" "SELECT json_extract(evidence_json, '$.gpu.pageable_memory_access') FROM verifications ORDER BY id DESC LIMIT 1")" = 1 ] ||
    fail "pageable_memory_access not kept in the evidence: $(sqlite3 "$db" "SELECT evidence_json FROM verifications")"
echo "ok: worker answers validated (2 controls, 10 malformed)"
