#!/bin/sh
# test_racecheck: the race-check gate of issue 34, without a GPU. `kverify racecheck` option
# handling (its own --help; usage errors one line, kverify's usage status 4), its exit status 3
# and message on a machine without a GPU (as `kverify gpus`), and "nothing to race-check" (exit
# 0, no GPU needed) when no correct label waits. kexport refuses correct labels that use shared
# memory or cross-block communication and have no clean race check, naming the count and the
# command; --no-racecheck exports them and says so in the manifest; a clean check (recorded, or
# inline in the evidence of `--sanitizer all`) lets a label through; a hazard (a new unsafe
# verification, as racecheck records it) makes the labels stale and, relabelled, keeps the
# kernel out of the correct records. The pass with a stand-in GPU and compute-sanitizer: a
# hazard's new verification and race_checks row, a job that never ran (no check, exit 1), an
# interrupt (what finished recorded, exit 130). kcurate merge copies the race checks.
set -eu
. "$(dirname "$0")/lib.sh"
DB="$T/kc.db"
kv="$KC_BIN/kverify"
q() { sqlite3 "$DB" "$1"; }
NO_DRIVER=libkc-no-such-driver.so.1

# --help: its own usage on stdout, exit 0
"$kv" racecheck --help >"$T/help" 2>"$T/help.err" || fail "racecheck --help failed"
grep -q "^usage: kverify racecheck --db PATH" "$T/help" && [ ! -s "$T/help.err" ] ||
    fail "racecheck --help: $(cat "$T/help" "$T/help.err")"
"$kv" --help | grep -q "racecheck --db PATH" || fail "kverify --help does not list racecheck"

usage_err() { # name pattern args...: one line on stderr, kverify's usage status 4
    name=$1 pat=$2; shift 2
    rc=0
    "$kv" racecheck "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    [ $rc -eq 4 ] || fail "$name: exit $rc: $(cat "$T/$name.err")"
    [ "$(wc -l <"$T/$name.err")" -eq 1 ] || fail "$name: not one line: $(cat "$T/$name.err")"
    grep -Eq -- "^kverify racecheck: error: $pat; see 'kverify racecheck --help'\$" "$T/$name.err" ||
        fail "$name: $(cat "$T/$name.err")"
}
usage_err wat "unknown option '--wat'" --db x --wat
usage_err nodb "racecheck needs --db PATH"
usage_err novalue "--db needs a value" --db
usage_err gpus0 "--gpus takes a whole number from 1 to 16, not '0'" --db x --gpus 0
usage_err gpus17 "--gpus takes a whole number from 1 to 16, not '17'" --db x --gpus 17
usage_err limit "--limit takes a whole number from 1 to [0-9]+, not 'x'" --db x --limit x
usage_err extra "unexpected argument 'more'" --db x more

# Three kernels, labelled correct as kverify run would have labelled them: a shared-memory
# reduction and a split-k atomic sum (both need a race check) and an elementwise ReLU (needs none).
cat >"$T/shared.cu" <<'EOF'
extern "C" __global__ void colsum(const float *x, float *y, long long B, long long D1, long long D2)
{
    __shared__ float part[256];
    long long j = blockIdx.x, b = blockIdx.y;
    float s = 0.0f;
    for (long long k = threadIdx.x; k < D1; k += blockDim.x)
        s += x[(b * D1 + k) * D2 + j];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        y[b * D2 + j] = part[0];
}
// @launch colsum<<<dim3(D2, B), 256>>>(x, y, B, D1, D2);
EOF
cat >"$T/atomic.cu" <<'EOF'
extern "C" __global__ void zero(float *y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = 0.0f;
}
extern "C" __global__ void splitk(const float *x, float *y, long long B, long long D1, long long D2)
{
    long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x, k = blockIdx.y, b = blockIdx.z;
    if (j < D2) atomicAdd(&y[b * D2 + j], x[(b * D1 + k) * D2 + j]);
}
// @launch zero<<<cdiv(B*D2, 256), 256>>>(y, B*D2);
// @launch splitk<<<dim3(cdiv(D2, 256), D1, B), 256>>>(x, y, B, D1, D2);
EOF
cat >"$T/relu.cu" <<'EOF'
extern "C" __global__ void relu(const float *x, float *y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
// @launch relu<<<cdiv(B*D, 256), 256>>>(x, y, B*D);
EOF
"$kv" import --db "$DB" --problem level1/019_relu "$T/relu.cu" >/dev/null || fail "import relu"
label_correct() { # the candidates without a verification: compiled and correct
    q "INSERT INTO compiles(candidate_id, ok, stage, arch, kernels_json)
       SELECT id, 1, 'compile', 'sm_90', '[]' FROM candidates WHERE status = 'pending';
       INSERT INTO verifications(candidate_id, verdict, seeds, verifier_version, evidence_json)
       SELECT id, 'correct', '7,8,9', 'test', '{\"sanitizer\":{\"runs\":[{\"tool\":\"memcheck\",\"exit\":0}]}}'
       FROM candidates WHERE status = 'pending';
       UPDATE candidates SET status = 'verified' WHERE status = 'pending'"
}
label_correct

# Nothing waits: exit 0 without a GPU, and nothing recorded.
rc=0
KC_LIBCUDA=$NO_DRIVER "$kv" racecheck --db "$DB" >"$T/none.out" 2>"$T/none.err" || rc=$?
[ $rc -eq 0 ] && grep -q "^nothing to race-check" "$T/none.out" ||
    fail "nothing to check: exit $rc: $(cat "$T/none.out" "$T/none.err")"
KC_LIBCUDA=$NO_DRIVER "$kv" racecheck --db "$DB" --json >"$T/none.json" || fail "--json, nothing to check"
[ "$(sqlite3 :memory: "SELECT json_extract(readfile('$T/none.json'), '\$.selected')")" = 0 ] ||
    fail "--json: $(cat "$T/none.json")"

"$kv" import --db "$DB" --problem level1/047_sum_reduction "$T/shared.cu" "$T/atomic.cu" >/dev/null ||
    fail "import the reductions"
label_correct

# Without a GPU: the GPU subcommands' message and status (3), nothing recorded.
rc=0
KC_LIBCUDA=$NO_DRIVER "$kv" racecheck --db "$DB" >"$T/nogpu.out" 2>"$T/nogpu.err" || rc=$?
[ $rc -eq 3 ] || fail "racecheck without a GPU: exit $rc: $(cat "$T/nogpu.err")"
grep -q "^kverify: no NVIDIA driver found" "$T/nogpu.err" || fail "no-GPU message: $(cat "$T/nogpu.err")"
rc=0
KC_LIBCUDA=$NO_DRIVER "$kv" gpus 2>"$T/gpus.err" || rc=$?
[ $rc -eq 3 ] && cmp -s "$T/nogpu.err" "$T/gpus.err" || fail "racecheck and gpus say different things without a GPU"
[ "$(q 'SELECT count(*) FROM race_checks')" = 0 ] || fail "racecheck without a GPU recorded checks"
[ "$(q "SELECT count(*) FROM v_latest_verification WHERE verdict = 'correct'")" = 3 ] ||
    fail "racecheck without a GPU changed labels"

# kexport refuses the two that need a check; nothing written.
"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run"
X="--db $DB --no-gzip --format sft --every-turn --dedup none --split train,valid,test,heldout"
records() { cat "$1"/*.jsonl 2>/dev/null | wc -l; }
rc=0
"$KC_BIN/kexport" $X --out "$T/e1" >"$T/e1.out" 2>"$T/e1.err" || rc=$?
[ $rc -eq 1 ] || fail "kexport exported correct labels without race checks (exit $rc)"
[ "$(wc -l <"$T/e1.err")" -eq 1 ] || fail "the refusal is not one line: $(cat "$T/e1.err")"
grep -q "^kexport: error: 2 correct labels need a race check .*kverify racecheck --db $DB.*--no-racecheck" "$T/e1.err" ||
    fail "the refusal does not say how many and what to run: $(cat "$T/e1.err")"
[ ! -e "$T/e1/manifest.json" ] || fail "a refused export wrote files"
"$KC_BIN/kexport" --help | grep -q -- "--no-racecheck" || fail "kexport --help does not list --no-racecheck"

# --no-racecheck: exported, and the manifest says checks were skipped for 2.
"$KC_BIN/kexport" $X --out "$T/e2" --no-racecheck >/dev/null 2>"$T/e2.err" || fail "--no-racecheck: $(cat "$T/e2.err")"
grep -q "warning: exporting 2 correct labels without the race check" "$T/e2.err" || fail "no warning: $(cat "$T/e2.err")"
[ "$(records "$T/e2")" = 3 ] || fail "--no-racecheck: $(records "$T/e2") records, expected 3"
m="json_extract(readfile('$T/e2/manifest.json'), '\$.provenance.race_checks')"
[ "$(sqlite3 :memory: "SELECT json_extract($m, '\$.skipped') || ' ' || json_extract($m, '\$.candidates_without')")" = "1 2" ] ||
    fail "the manifest does not record the skipped race checks: $(sqlite3 :memory: "SELECT $m")"

# A clean check of the shared-memory reduction's label (as racecheck records it): one left.
vid() { q "SELECT max(v.id) FROM verifications v JOIN candidates c ON c.id = v.candidate_id
           JOIN blobs b ON b.sha256 = c.source_sha WHERE CAST(b.data AS TEXT) LIKE '%$1%'"; }
cid() { q "SELECT c.id FROM candidates c JOIN blobs b ON b.sha256 = c.source_sha WHERE CAST(b.data AS TEXT) LIKE '%$1%'"; }
q "INSERT INTO race_checks(verification_id, tool, result, report, seed, verifier_version)
   VALUES ($(vid colsum), 'compute-sanitizer racecheck', 'clean', 'RACECHECK SUMMARY: 0 hazards', '7', 'test')"
rc=0
"$KC_BIN/kexport" $X --out "$T/e3" >/dev/null 2>"$T/e3.err" || rc=$?
[ $rc -eq 1 ] && grep -q "1 correct label needs a race check .* has none" "$T/e3.err" ||
    fail "after one clean check: exit $rc: $(cat "$T/e3.err")"
# An error is no check.
q "INSERT INTO race_checks(verification_id, tool, result, report, verifier_version)
   VALUES ($(vid splitk), 'compute-sanitizer racecheck', 'error', 'compute-sanitizer not found', 'test')"
"$KC_BIN/kexport" $X --out "$T/e3" >/dev/null 2>&1 && fail "an error counted as a race check"

# The atomic sum: a hazard, recorded as racecheck records it (a new verification, unsafe).
a=$(cid splitk); old=$(vid splitk)
q "INSERT INTO verifications(candidate_id, verdict, flags, message, evidence_json, seeds, verifier_version)
   VALUES ($a, 'unsafe', '', 'compute-sanitizer racecheck at the small dims: found errors (hazard)',
           '{\"racecheck\":{\"dims\":\"small\",\"runs\":[{\"tool\":\"racecheck\",\"exit\":86}]}}', '7,8,9', 'test');
   INSERT INTO race_checks(verification_id, tool, result, report, new_verification_id, verifier_version)
   VALUES ($old, 'compute-sanitizer racecheck', 'hazard', 'Error: Potential RAW hazard', last_insert_rowid(), 'test')"
rc=0
"$KC_BIN/kexport" $X --out "$T/e4" >/dev/null 2>"$T/e4.err" || rc=$?
[ $rc -eq 1 ] && grep -q "the labels are stale: 0 candidate(s) collected and 1 verified again" "$T/e4.err" ||
    fail "a hazard did not make the labels stale: $(cat "$T/e4.err")"
"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run after the hazard"
"$KC_BIN/kexport" $X --out "$T/e5" >/dev/null 2>"$T/e5.err" || fail "export after relabelling: $(cat "$T/e5.err")"
[ "$(records "$T/e5")" = 2 ] || fail "expected the 2 correct records, got $(records "$T/e5")"
grep -q "splitk" "$T"/e5/*.jsonl && fail "the kernel with a hazard was exported as correct"
[ "$(q "SELECT verdict_class FROM candidate_labels WHERE candidate_id = $a")" != correct ] ||
    fail "kcurate still labels the kernel with a hazard correct"
[ "$(q "SELECT count(*) FROM v_label_flips WHERE candidate_id = $a AND kind = 'verdict_class'")" = 1 ] ||
    fail "the hazard is not a flip"

# An inline racecheck (kverify run --sanitizer all) that exited 0 is a clean check.
sed 's/colsum/colsum2/g' "$T/shared.cu" >"$T/shared2.cu"
"$kv" import --db "$DB" --problem level1/047_sum_reduction "$T/shared2.cu" >/dev/null || fail "import"
q "INSERT INTO compiles(candidate_id, ok, stage, kernels_json) SELECT id, 1, 'compile', '[]' FROM candidates WHERE status = 'pending';
   INSERT INTO verifications(candidate_id, verdict, verifier_version, evidence_json) SELECT id, 'correct', 'test',
     '{\"sanitizer\":{\"dims\":\"small\",\"runs\":[{\"tool\":\"memcheck\",\"exit\":0},{\"tool\":\"racecheck\",\"exit\":0}]}}'
   FROM candidates WHERE status = 'pending'; UPDATE candidates SET status = 'verified' WHERE status = 'pending'"
"$KC_BIN/kcurate" run --db "$DB" >/dev/null || fail "kcurate run"
"$KC_BIN/kexport" $X --out "$T/e6" >/dev/null 2>"$T/e6.err" || fail "an inline racecheck was not taken: $(cat "$T/e6.err")"

# The pass itself, with a stand-in GPU (KC_LIBCUDA: a library that loads; KC_KVERIFY_GPU: a
# `gpus` that lists one) and a stand-in compute-sanitizer (KC_COMPUTE_SANITIZER) that runs
# nothing: it exits 86 with a racecheck report (a hazard), or 0 without running the job (no
# check), or sleeps first (interrupted). The candidates are compiled again in the sandbox.
P="$T/pass.db"
printf '%s\n' '#!/bin/sh' \
    '[ "$1" = gpus ] && echo "0: Stand-in GPU, 1.0 GiB, kernels cannot reach pageable host memory (HMM/ATS)"' \
    >"$T/fake-gpu"
printf '%s\n' '#!/bin/sh' 'log=' \
    'while [ $# -gt 0 ]; do case $1 in --log-file) log=$2; shift 2;; *) shift;; esac; done' \
    'touch "$KC_FAKE_DIR/started"' \
    'case $KC_FAKE_RACECHECK in' \
    'hazard) printf "%s\n" "========= COMPUTE-SANITIZER" "========= Warning: Race reported between Read access at colsum+0x1510" "=========     and Write access at colsum+0x14e0 [1024 hazards]" >"$log"; exit 86;;' \
    'slow) sleep 3;;' \
    'esac' 'exit 0' >"$T/fake-sanitizer"
chmod +x "$T/fake-gpu" "$T/fake-sanitizer"
fake() { # mode args...: kverify racecheck on $P with the stand-ins
    mode=$1; shift
    rm -f "$T/started"
    KC_LIBCUDA=libc.so.6 KC_KVERIFY_GPU="$T/fake-gpu" KC_COMPUTE_SANITIZER="$T/fake-sanitizer" \
        KC_FAKE_RACECHECK=$mode KC_FAKE_DIR="$T" "$kv" racecheck --db "$P" "$@"
}
qp() { sqlite3 "$P" "$1"; }
"$kv" import --db "$P" --problem level1/047_sum_reduction "$T/shared.cu" "$T/atomic.cu" "$T/shared2.cu" >/dev/null ||
    fail "import (pass)"
DB_MAIN="$DB"; DB="$P"; label_correct; DB="$DB_MAIN"
# A hazard: --limit 1 checks the first (by problem and id); a new verification says unsafe.
rc=0
fake hazard --limit 1 >"$T/p1.out" 2>"$T/p1.err" || rc=$?
[ $rc -eq 0 ] || fail "racecheck (hazard): exit $rc: $(cat "$T/p1.out" "$T/p1.err")"
grep -q "^candidate 1 .* hazard: now unsafe (racecheck [0-9.]* s): compute-sanitizer racecheck at the small dims: found errors (Warning: Race reported between Read access at colsum+0x1510)" "$T/p1.out" ||
    fail "racecheck (hazard) says: $(cat "$T/p1.out")"
grep -q "^race-checked 1 of 1 candidates .* 0 clean, 1 hazard (now unsafe), 0 errors" "$T/p1.out" &&
    grep -q "kcurate run --db $P" "$T/p1.out" || fail "racecheck summary: $(cat "$T/p1.out")"
[ "$(qp "SELECT verdict || ' ' || json_extract(evidence_json, '\$.racecheck.runs[0].exit') || ' ' || gpu_name
      FROM v_latest_verification WHERE candidate_id = 1")" = "unsafe 86 Stand-in GPU" ] ||
    fail "after a hazard: $(qp "SELECT * FROM v_latest_verification WHERE candidate_id = 1")"
[ "$(qp "SELECT r.result || ' ' || r.seed || ' ' || (r.new_verification_id = v.id) || ' ' ||
      (r.report LIKE '%Race reported%') FROM race_checks r, v_latest_verification v WHERE v.candidate_id = 1")" = "hazard 7 1 1" ] ||
    fail "race_checks after a hazard: $(qp 'SELECT * FROM race_checks')"
[ "$(qp "SELECT count(*) FROM compiles WHERE candidate_id = 1")" = 2 ] || fail "the compile again is not recorded"
# A tool that exits 0 without running the job: no check (error), exit 1, the label stays.
rc=0
fake silent --limit 1 --json >"$T/p2.json" 2>"$T/p2.err" || rc=$?
[ $rc -eq 1 ] || fail "racecheck (job never ran): exit $rc: $(cat "$T/p2.err")"
[ "$(sqlite3 :memory: "SELECT json_extract(readfile('$T/p2.json'), '\$.results[0].result') || ' ' ||
      json_extract(readfile('$T/p2.json'), '\$.results[0].candidate_id')")" = "error 2" ] ||
    fail "--json after a job that never ran: $(cat "$T/p2.json")"
[ "$(qp "SELECT verdict FROM v_latest_verification WHERE candidate_id = 2")" = correct ] ||
    fail "a check that did not run changed the label"
# Interrupted while the first of two is in the tool: it is recorded, the other does not start.
# (In its own session with SIGINT at its default, as a terminal's foreground job, and not in a
# subshell of this script, whose EXIT trap would remove $T.)
rm -f "$T/started"
KC_LIBCUDA=libc.so.6 KC_KVERIFY_GPU="$T/fake-gpu" KC_COMPUTE_SANITIZER="$T/fake-sanitizer" \
    KC_FAKE_RACECHECK=slow KC_FAKE_DIR="$T" \
    setsid env --default-signal=INT,TERM "$kv" racecheck --db "$P" >"$T/p3.out" 2>"$T/p3.err" &
pid=$!
i=0
while [ ! -e "$T/started" ]; do
    i=$((i + 1))
    [ $i -lt 400 ] || { kill $pid; fail "the stand-in compute-sanitizer never started"; }
    sleep 0.05
done
kill -INT -$pid
rc=0
wait $pid || rc=$?
[ $rc -eq 130 ] || fail "interrupted racecheck: exit $rc: $(cat "$T/p3.out" "$T/p3.err")"
grep -q "^interrupted: 1 of 2 candidates not checked" "$T/p3.out" && grep -q "resume with: .*racecheck --db" "$T/p3.out" ||
    fail "interrupted racecheck says: $(cat "$T/p3.out")"
[ "$(qp "SELECT count(*) FROM race_checks")" = 3 ] || fail "interrupted: $(qp 'SELECT * FROM race_checks')"

# kcurate merge keeps the race checks (their verifications mapped), and verify-db accepts them.
"$KC_BIN/kcurate" merge "$DB" -o "$T/m.db" >/dev/null 2>"$T/m.err" || fail "merge: $(cat "$T/m.err")"
[ "$(sqlite3 "$T/m.db" "SELECT group_concat(x, ' ') FROM (SELECT r.result || ':' || v.verdict || ':' ||
      coalesce(n.verdict, '-') AS x FROM race_checks r JOIN verifications v ON v.id = r.verification_id
      LEFT JOIN verifications n ON n.id = r.new_verification_id ORDER BY r.id)")" = "clean:correct:- error:correct:- hazard:correct:unsafe" ] ||
    fail "merged race checks: $(sqlite3 "$T/m.db" 'SELECT * FROM race_checks')"
"$KC_BIN/kcurate" verify-db --db "$T/m.db" >/dev/null 2>"$T/v.err" || fail "verify-db of the merge: $(cat "$T/v.err")"
echo ok
