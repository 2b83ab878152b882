#!/bin/sh
# test_bench_phases: tests/bench/phases.py, which make bench runs after each throughput batch,
# reads the worker's per-phase sums (stage_ms.phases) and, since the cost work on integrity IV,
# its per-family sums (stage_ms.families): a database with two verifications of known evidence
# must give the summed phases, the per-family table with each family's run count, the IPC
# and client remainder (client_ms.gpu minus the worker's job, warm-up and sanitizer check), the
# worker's release (stage_ms.job_ms minus its stages), each GPU client's share (client_ms.slot)
# and the IPC remainder split by both sides' monotonic stamps (stage_ms.ipc_at, client_ms.ipc_at),
# and each GPU's first job against the worker's and the compiles' stamps (first_jobs).
set -eu
. "$(dirname "$0")/lib.sh"
db="$T/b.db"
sqlite3 "$db" < "$KC_ROOT/schemas/kc.sql"
ev() { # $1: ms of each phase of family "bound", $2: client gpu ms, $3: extra stage_ms fields,
       # $4: extra client_ms fields (the second verification: a newer worker and client)
    cat <<J | tr -d '\n'
{"runs": [{"dims": "default"}, {"dims": "bound0"}, {"dims": "bound1"}, {"dims": "bound17"}],
 "stage_ms": {"load_ms": 0, "checks_ms": $((2 * $1 + 8)), "timing_ms": 0$3,
  "phases": {"inputs": $((2 * $1)), "reference": 8},
  "families": {"default": {"reference": 8}, "bound": {"inputs": $((2 * $1))}}},
 "sanitizer": {"runs": [{"ms": 1}]}, "client_ms": {"gpu": $2$4}}
J
}
sqlite3 "$db" "INSERT INTO problems(id) SELECT 'level1/019_relu' WHERE 0;" 2>/dev/null || true
for i in 1 2; do
    sqlite3 "$db" "PRAGMA foreign_keys=OFF;
        INSERT INTO candidates(id, problem_id, origin, status) VALUES ($i, 'level1/019_relu', 'import', 'verified');
        INSERT INTO verifications(candidate_id, verdict, evidence_json, verifier_version)
        VALUES ($i, 'correct', '$(if [ $i = 1 ]; then ev 500 1100 "" ", \"slot\": 0, \"ipc_at\": [500, 1500, 1550]"; else
            ev 1000 3100 ", \"job_ms\": 2308, \"warmup_ms\": 500, \"ipc_at\": [1010, 1516, 3830]" ", \"sanitizer\": 200, \"slot\": 1, \"ipc_at\": [1000, 3870, 3890]"; fi)', 't');" ||
        fail "cannot write the test database"
done
out=$(python3 "$KC_ROOT/tests/bench/phases.py" "$db")
echo "$out" | grep -q 'per-phase time over 2 verifications' || fail "no header: $out"
# inputs: 2*500 + 2*1000 = 3000 ms
echo "$out" | grep -Eq 'input setup +3\.0 s' || fail "input setup not summed: $out"
# IPC and client: (1100 - 1008 - 1) + (3100 - 2308 - 500 - 200) = 183 ms: the second
# verification's job_ms (its release after the stages: 300 ms), warm-up (500 ms) and whole
# sanitizer check (client_ms.sanitizer, 200 ms, instead of its runs' 1 ms) are apart
echo "$out" | grep -Eq 'IPC and client +0\.2 s' || fail "IPC and client not the remainder: $out"
echo "$out" | grep -Eq 'worker release +0\.3 s' || fail "worker release not job_ms minus stages: $out"
echo "$out" | grep -Eq 'warm-up +0\.5 s' || fail "warm-up not counted: $out"
echo "$out" | grep -Eq 'sanitizer +0\.2 s' || fail "sanitizer not the client's whole check: $out"
# the second verification's IPC split by both sides' stamps: 10 + 6 + 6 + 40 + 20 + 10 = 92 ms
echo "$out" | grep -q 'split: job to worker 0.01 s, worker before job 0.01 s, worker after job 0.01 s, result to client 0.04 s, result filled in 0.02 s, client after 0.01 s' ||
    fail "IPC split wrong: $out"
# two GPU clients: one verification each, their held seconds
echo "$out" | grep -Eq '^  GPU 0 +1 +1\.1 s' || fail "GPU 0's line wrong: $out"
echo "$out" | grep -Eq '^  GPU 1 +1 +3\.1 s' || fail "GPU 1's line wrong: $out"
echo "$out" | grep -q 'per family of runs' || fail "no family table: $out"
# the idle time split by the clients' stamps: GPU 0 held 500..1600 ms, GPU 1 1000..4100 ms, the
# batch 5 s long to 4100 ms: before 1.4 + 1.9 s, after 2.5 s (and 10 - 4.2 s idle in all)
out=$(python3 "$KC_ROOT/tests/bench/phases.py" "$db" --wall 5 --workers 2)
echo "$out" | grep -Eq 'compile wait +5\.8 s' || fail "idle time wrong: $out"
echo "$out" | grep -q "split: before each GPU's first job 3.3 s, between jobs 0.0 s, after its last job 2.5 s" ||
    fail "idle split wrong: $out"
# between jobs, and a GPU that held none: idle the whole wall
split=$(cd "$KC_ROOT/tests/bench" && python3 -c 'from phases import idle_split; print(idle_split({0: [(0, 1000), (3000, 4000)], 1: [(500, 4000)]}, 5, 3))')
[ "$split" = "(7500.0, 2000.0, 0.0)" ] || fail "idle_split: $split"
# each GPU's first job against the batch's start (end 4000 ms, wall 5 s: start -1000 ms): its
# worker up, its candidate and reference compiled, the job sent; the batch's first compile
firsts=$(cd "$KC_ROOT/tests/bench" && python3 -c 'from phases import first_jobs
rows, first = first_jobs({0: [(3000, 4000, 2500, 800, 0, 0), (1000, 2000, 900, 800, 1500, 400)],
                          1: [(1500, 4000, 1200, 700, 1300, 600, 200, 900)]}, 5)
print(" ".join("%d:%.1f/%.1f/%.1f/%.1f/%.1f/%.1f/%.1f" % r for r in rows), "%.1f" % first)')
[ "$firsts" = "0:1.8/1.9/2.0/1.5/0.4/0.0/0.0 1:1.7/2.2/2.5/1.3/0.6/0.2/0.9 1.9" ] || fail "first_jobs: $firsts"
# evidence without the stamps (older clients) gives no start-up line
echo "$out" | grep -q "start-up" && fail "a start-up line without stamps: $out"
# bound: 6 runs (3 per verification), inputs 3.00 s; default: 2 runs, reference 0.02 s
echo "$out" | grep -Eq '^  bound +6 +0\.00 +3\.00 ' || fail "bound row wrong: $out"
echo "$out" | grep -Eq '^  default +2 .* 0\.02 +0\.00$' || fail "default row wrong: $out"
echo ok
