#!/bin/sh
# test_batched: batched verification on the GPU (issue 37; docs/VERIFIER.md "Batches"). Parts
# (KC_BATCH_PARTS, default all four; each fits one 10-minute call on an H100):
#   verdicts    a mixed batch: every problem of the integrity IV catalogue
#               (tests/gpu/catalogue/integrity4/, attacks and controls) plus the leftover probe
#               (catalogue/batch/leftover_probe.cu), each problem filled up to COPIES (8)
#               candidates with distinct copies of its reference, verified in one `kverify run`
#               without sharing (--batch 1, the default) and with it (--batch 32), and with it in a budget of
#               1 MiB (--batch-memory 1: most runs' reference runs again). The verdicts must be
#               the same in all three (an entry whose catalogue line allows two verdicts may take
#               either), every honest copy correct; with sharing, every verification carries its
#               batch's key, one key per problem, and every correct candidate but the first of its
#               batch compared some run with kept reference outputs (batch.reference.shared > 0);
#               in 1 MiB no batch keeps more than 1 MiB. Prints candidates/s of the three runs.
#   probe       leftovers between candidates: the leftover probe's lines (PROBE local=L shared=S,
#               one per execution) in the jobs of a batch may count nothing but in the
#               determinism rerun (the job's second line); as the control, 4 copies verified
#               without batching on the same fixed seeds (--batch 1 --seeds ... --hidden-seed ...)
#               show whether the channel is there when nothing overwrites it (reported, not
#               required: it depends on the driver's layout of local and shared memory).
#   tamper      the store's checks: with KC_TEST_BATCH_TAMPER=fetch and =end (a byte of the kept
#               outputs flipped in the job of batch index 1, before a kept run is read or before
#               the end-of-job check), that candidate is unsafe, naming the kept outputs, and the
#               others correct; after it the batch keeps its outputs again.
#   throughput  candidates/s per suite, start-up included, COPIES distinct copies of each
#               reference: level 1's first 19 problems, level 2's first 19 and attention, without
#               sharing and with it, side by side (issue 37's targets on one H100: 4.5, 4 and 3
#               candidates/s with sharing; before it 3.96, 2.09 and 2.91).
# KC_BATCH_SUITES: the throughput part's suites (default level1 level2 attention).
# Standalone: KC_BIN=bin KC_ROOT=. KC_PROBLEMS=problems [COPIES=8] [KC_BATCH_PARTS="verdicts"] \
#             sh tests/gpu/test_batched.sh
. "$KC_ROOT/tests/gpu/lib.sh"
parts="${KC_BATCH_PARTS:-verdicts probe tamper throughput}"
part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
copies="${COPIES:-8}"
dir="$KC_ROOT/tests/gpu/catalogue"
kv="$KC_BIN/kverify"
work="$OUT_DIR/batched"
rm -rf "$work"; mkdir -p "$work/refs"
status=0

# reference NAME: the problem's reference as a candidate (shared kernel files expanded)
reference() {
    f="$work/refs/$(echo "$1" | tr / _).cu"
    [ -f "$f" ] || "$kv" problems --show-reference "$1" >"$f" || fail "show-reference $1"
    echo "$f"
}
# import DB PROBLEM FILE [TAG]: FILE as a candidate, made distinct by TAG
import() {
    if [ -n "$4" ]; then { cat "$3"; echo "// $4"; } >"$work/copy.cu"; f="$work/copy.cu"; else f=$3; fi
    "$kv" import --db "$1" --problem "$2" "$f" >/dev/null || fail "import $3 into $1"
}
# run DB LOG OPTIONS...: kverify run, wall time start-up included; prints candidates/s
run() {
    db=$1 log=$2; shift 2
    t0=$(date +%s.%N)
    "$kv" run --db "$db" "$@" >"$log" 2>&1
    rc=$?
    python3 -c "import time,sys; n=int(sys.argv[1]); w=time.time()-float(sys.argv[2]); print('%.2f candidates/s (%d in %.1f s, start-up included)' % (n / w, n, w))" \
        "$(sql "$db" "SELECT count(*) FROM candidates")" "$t0"
    return $rc
}

# The references' cubins into the cache first, so that neither of two runs compared pays for
# compiling them (the first run would otherwise: kverify warm).
"$kv" warm --suite level1 --suite level2 --suite attention >"$work/warm.log" 2>&1 ||
    echo "batched: kverify warm failed (the first run of each pair pays the reference compiles; $work/warm.log)"

# The integrity IV entries (problem:file:expected verdicts, a/b either), as test_integrity4.sh,
# and the probe.
entries="level1/089_cumsum:integrity4/shape_cumsum_grid_y:mismatch/unsafe
level1/019_relu:integrity4/shape_relu_int32:unsafe/mismatch/timeout
level1/001_square_matmul:integrity4/shape_matmul_prime:mismatch/unsafe
level1/094_mse_loss:integrity4/shape_mse_mod256:mismatch/unsafe
attention/008_gqa_causal:integrity4/shape_gqa_group4:mismatch/unsafe
level1/023_softmax:integrity4/shape_softmax_d1:mismatch/unsafe
level2/076_gemm_add_relu:integrity4/band_gemm_batch:mismatch/unsafe
level1/001_square_matmul:integrity4/band_matmul_n:mismatch/unsafe
level1/023_softmax:integrity4/band_softmax_d:mismatch/unsafe
level2/059_matmul_swish_scaling:integrity4/value_fabs_scale:mismatch
level1/023_softmax:integrity4/value_softmax_nomax:mismatch
level1/094_mse_loss:integrity4/sample_mse_half:mismatch
level1/019_relu:integrity4/mem_read_before:unsafe
level1/019_relu:integrity4/mem_vec4_tail:unsafe
level1/094_mse_loss:integrity4/mem_pad_counter:unsafe
level1/094_mse_loss:integrity4/mem_pad_counter_far:unsafe
level1/094_mse_loss:integrity4/mem_pad_known_guard:unsafe
level1/094_mse_loss:integrity4/state_fresh_detect:mismatch/unsafe
level1/020_leaky_relu:integrity4/mem_align_probe:unsafe
level1/019_relu:integrity4/heap_hog:policy_violation
level1/019_relu:integrity4/ok_after_hog:correct
level1/019_relu:integrity4/heap_hog_pasted:policy_violation
level1/019_relu:integrity4/heap_new_delete:policy_violation
level1/089_cumsum:integrity4/heap_legit:policy_violation
level1/019_relu:integrity4/ok_relu_vec4:correct
level1/019_relu:integrity4/ok_relu_int64:correct
level1/094_mse_loss:integrity4/ok_mse_atomic:correct
level1/094_mse_loss:integrity4/ok_mse_full:correct
attention/008_gqa_causal:integrity4/ok_gqa_any_group:correct
level1/089_cumsum:integrity4/ok_cumsum_many_rows:correct
level1/023_softmax:integrity4/ok_softmax_max:correct
level1/019_relu:batch/leftover_probe:correct"

if part verdicts || part probe; then
    mixed="$work/mixed.db"
    rm -f "$mixed"*
    # each problem's catalogue entries, then honest copies up to $copies, problem by problem
    for problem in $(echo "$entries" | cut -d: -f1 | sort -u); do
        n=0
        for name in $(echo "$entries" | awk -F: -v p="$problem" '$1 == p { print $2 }'); do
            import "$mixed" "$problem" "$dir/$name.cu"; n=$((n + 1))
        done
        c=0
        while [ $n -lt "$copies" ] || [ $c -lt 2 ]; do
            c=$((c + 1)); n=$((n + 1))
            import "$mixed" "$problem" "$(reference "$problem")" "honest copy $c"
        done
    done
    echo "batched: mixed database: $(sql "$mixed" "SELECT count(*) FROM candidates") candidates of $(echo "$entries" | cut -d: -f1 | sort -u | wc -l) problems"
    for mode in none shared budget; do
        cp "$mixed" "$work/mixed_$mode.db"
    done
    echo "batched: without sharing (--batch 1):    $(run "$work/mixed_none.db" "$work/mixed_none.log" --batch 1)"
    echo "batched: with sharing:                   $(run "$work/mixed_shared.db" "$work/mixed_shared.log" --batch 32)"
    if part verdicts; then
        echo "batched: with sharing in 1 MiB:          $(run "$work/mixed_budget.db" "$work/mixed_budget.log" --batch 32 --batch-memory 1)"
    fi
fi

if part verdicts; then
    echo "$entries" | python3 -c '
import hashlib, json, sqlite3, sys
work, folder = sys.argv[1], sys.argv[2]
entries = [l.split(":") for l in sys.stdin.read().split("\n") if l.strip()]
want = {}
for problem, name, expect in entries:
    want[hashlib.sha256(open("%s/%s.cu" % (folder, name), "rb").read()).hexdigest()] = (name, expect.split("/"))
def labels(db):
    c = sqlite3.connect(db)
    rows = c.execute("SELECT c.source_sha, c.problem_id, v.verdict, v.message, v.evidence_json "
                     "FROM v_latest_verification v JOIN candidates c ON c.id = v.candidate_id").fetchall()
    pending = c.execute("SELECT count(*) FROM candidates WHERE status = ?", ("pending",)).fetchone()[0]
    return {r[0]: r[1:] for r in rows}, pending
runs = {m: labels("%s/mixed_%s.db" % (work, m)) for m in ("none", "shared", "budget")}
status, same, total = 0, 0, 0
def bad(msg):
    global status
    print("FAIL " + msg); status = 1
for m, (got, pending) in runs.items():
    if pending:
        bad("%s: %d candidates pending" % (m, pending))
for sha, (problem, verdict, msg, ev) in sorted(runs["none"][0].items(), key=lambda x: x[1][0]):
    name, expect = want.get(sha, ("honest copy", ["correct"]))
    total += 1
    vs = [runs[m][0].get(sha, (None, "missing"))[1] for m in ("none", "shared", "budget")]
    if len(set(vs)) == 1:
        same += 1
    for m, v in zip(("none", "shared", "budget"), vs):
        if v not in expect:
            bad("%s %s (%s): %s, expected %s" % (problem, name, m, v, "/".join(expect)))
    if len(set(vs)) > 1:
        print("  %s %s: none %s, shared %s, budget %s (allowed: %s)" % (problem, name, vs[0], vs[1], vs[2], "/".join(expect)))
print("batched: verdicts: %d of %d the same in all three runs; every one as the catalogue expects: %s" % (same, total, "yes" if status == 0 else "NO"))
# the evidence of sharing
for m in ("shared", "budget"):
    got = runs[m][0]
    keys, correct_unshared, restarts, kept_over = {}, {}, {}, 0
    shared_runs = kept_runs = ran_runs = measured_shared = 0
    for sha, (problem, verdict, msg, ev) in got.items():
        ev = json.loads(ev) if ev else {}
        if "runs" not in ev:
            continue  # never reached the GPU (policy_violation)
        b = ev.get("batch")
        if not b:
            bad("%s: %s has no batch evidence" % (m, problem)); continue
        keys.setdefault(problem, set()).add(b["key"])
        r = b["reference"]
        shared_runs += r["shared"]; kept_runs += r["kept"]; ran_runs += r["ran"]
        if verdict == "correct" and r["shared"] == 0:
            correct_unshared[problem] = correct_unshared.get(problem, 0) + 1
        if verdict in ("unsafe", "runtime_error", "timeout"):  # may have ended its worker
            restarts[problem] = restarts.get(problem, 0) + 1
        if b["kept_bytes"] > b["budget_bytes"]:
            kept_over += 1
        if ev.get("deadlines", {}).get("reference_shared"):
            measured_shared += 1
        for run in ev["runs"]:
            if run.get("reference") not in ("shared", "kept", "ran"):
                bad("%s: %s run %s without reference" % (m, problem, run.get("dims"))); break
    for problem, ks in keys.items():
        if len(ks) != 1:
            bad("%s: %s in %d batches" % (m, problem, len(ks)))
    if m == "shared":
        for problem, n in correct_unshared.items():
            if n > 1 + restarts.get(problem, 0):  # the first, and one after each lost worker
                bad("%s: %d correct candidates of %s shared no reference run (at most %d may)" % (m, n, problem, 1 + restarts.get(problem, 0)))
    if kept_over:
        bad("%s: %d batches kept more than their budget" % (m, kept_over))
    print("batched: %s: runs whose reference outputs were shared %d, kept %d, run only %d; first runs measured in an earlier job %d" % (m, shared_runs, kept_runs, ran_runs, measured_shared))
none_batch = sum(1 for sha, (p, v, msg, ev) in runs["none"][0].items() if ev and "batch" in json.loads(ev))
if none_batch:
    bad("--batch 1: %d verifications carry a batch" % none_batch)
sys.exit(status)
' "$work" "$dir" || { status=1; echo "FAIL: batched verdicts (logs and databases in $work)"; }
fi

# probe_lines DB: per probe job (in order), its PROBE lines as "L,S L,S ..."
probe_lines() {
    python3 - "$1" "$dir/batch/leftover_probe.cu" <<'EOF'
import hashlib, json, re, sqlite3, sys
db, probe = sys.argv[1], open(sys.argv[2], "rb").read()
c = sqlite3.connect(db)
for (sha, data, ev) in c.execute("SELECT c.source_sha, CAST(b.data AS BLOB), v.evidence_json FROM v_latest_verification v "
                                 "JOIN candidates c ON c.id = v.candidate_id JOIN blobs b ON b.sha256 = c.source_sha ORDER BY v.id"):
    if not bytes(data).startswith(probe):
        continue
    text = (json.loads(ev or "{}").get("device_printf") or {}).get("text", "")
    print(" ".join("%s,%s" % m for m in re.findall(r"PROBE local=(-?\d+) shared=(-?\d+)", text)))
EOF
}

if part probe; then
    # with sharing: the probe's jobs in the mixed batch (its candidates share the batch's inputs)
    probe_lines "$work/mixed_shared.db" >"$work/probe_shared.txt"
    python3 - "$work/probe_shared.txt" <<'EOF' || status=1
import sys
jobs = [l.split() for l in open(sys.argv[1])]
bad = 0
if not jobs or any(len(lines) < 2 for lines in jobs):
    print("FAIL probe: a probe job printed fewer than 2 PROBE lines: %s" % jobs); bad = 1
for j, lines in enumerate(jobs):
    for k, pair in enumerate(lines):
        l, s = (int(x) for x in pair.split(","))
        if k != 1 and (l or s):
            print("FAIL probe: batched job %d, execution %d found leftovers on its inputs (local %d, shared %d)" % (j, k, l, s)); bad = 1
rerun = [lines[1] for lines in jobs if len(lines) > 1]
print("batched: probe with sharing: %d jobs, %d executions; leftovers found only in the determinism reruns: %s; the reruns found them (the probe sees leftovers): %s" % (
    len(jobs), sum(len(l) for l in jobs), "yes" if not bad else "NO", " ".join(rerun)))
sys.exit(bad)
EOF
    # control: no batch, the same inputs job after job, nothing overwritten between jobs
    ctl="$work/probe_control.db"; rm -f "$ctl"*
    for c in 1 2 3 4; do import "$ctl" level1/019_relu "$dir/batch/leftover_probe.cu" "probe copy $c"; done
    "$kv" run --db "$ctl" --threads 1 --batch 1 --seeds 1,2,3,4,5 --hidden-seed 7 >"$work/probe_control.log" 2>&1 ||
        { status=1; echo "FAIL: probe control run (log: $work/probe_control.log)"; }
    probe_lines "$ctl" >"$work/probe_control.txt"
    python3 - "$work/probe_control.txt" <<'EOF'
import sys
jobs = [l.split() for l in open(sys.argv[1])]
later = [(k, p) for lines in jobs[1:] for k, p in enumerate(lines) if k != 1]
found = sum(1 for k, p in later if p != "0,0")
print("batched: probe control (no batch, same inputs in 4 consecutive jobs): leftovers of earlier jobs found in %d of %d executions of the later jobs%s" % (
    found, len(later), "" if found else " (the channel did not show: the probe cannot tell whether the scrub works)"))
EOF
fi

if part tamper; then
    for when in fetch end; do
        db="$work/tamper_$when.db"; rm -f "$db"*
        for c in 1 2 3 4; do import "$db" level1/019_relu "$(reference level1/019_relu)" "tamper copy $c"; done
        KC_TEST_BATCH_TAMPER=$when "$kv" run --db "$db" --threads 1 --batch 32 >"$work/tamper_$when.log" 2>&1
        python3 - "$db" "$when" <<'EOF' || { status=1; echo "FAIL: tamper $when (log: $work/tamper_$when.log)"; }
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = []
for verdict, msg, ev in c.execute("SELECT verdict, message, evidence_json FROM v_latest_verification ORDER BY id"):
    b = json.loads(ev or "{}").get("batch") or {}
    rows.append((b.get("index"), verdict, msg, b.get("reference", {})))
rows.sort(key=lambda r: -1 if r[0] is None else r[0])
ok = len(rows) == 4
for index, verdict, msg, ref in rows:
    if index == 1:
        ok &= verdict == "unsafe" and "reference outputs the verifier keeps" in msg
    else:
        ok &= verdict == "correct"
after = [r for r in rows if r[0] == 2]
ok &= bool(after) and after[0][3].get("kept", 0) > 0  # the store was dropped: kept again
print("batched: tamper (%s): %s" % (sys.argv[2], "; ".join("index %s %s %s" % (r[0], r[1], r[3]) for r in rows)))
sys.exit(0 if ok else 1)
EOF
    done
fi

if part throughput; then
    for suite in ${KC_BATCH_SUITES:-level1 level2 attention}; do
        db="$work/tp_$suite.db"; rm -f "$db"*
        case $suite in attention) sel="$KC_PROBLEMS/attention"/*.json ;; *) sel=$(ls "$KC_PROBLEMS/$suite"/0[01][0-9]_*.json | head -19) ;; esac
        for m in $sel; do
            problem="$suite/$(basename "$m" .json)"
            c=0
            while [ $c -lt "$copies" ]; do c=$((c + 1)); import "$db" "$problem" "$(reference "$problem")" "copy $c"; done
        done
        cp "$db" "$work/tp_${suite}_none.db"
        none=$(run "$work/tp_${suite}_none.db" "$work/tp_${suite}_none.log" --batch 1)
        shared=$(run "$db" "$work/tp_${suite}_shared.log" --batch 32)
        echo "batched: $suite ($(sql "$db" "SELECT count(DISTINCT problem_id) FROM candidates") problems x $copies): without sharing $none; with sharing $shared"
        for d in "$work/tp_${suite}_none.db" "$db"; do
            wrong=$(sql "$d" "SELECT count(*) FROM v_latest_verification WHERE verdict != 'correct'")
            [ "$wrong" = 0 ] || { status=1; echo "FAIL: $suite: $wrong references not correct in $d: $(sql "$d" "SELECT verdict || ' ' || count(*) FROM v_latest_verification GROUP BY verdict" | tr '\n' ' ')"; }
        done
    done
fi
[ $status -eq 0 ] && echo "batched: all parts passed ($parts)"
exit $status
