#!/bin/sh
# test_batch_jobs: the client's side of batched verification (issue 37), against a fake
# kverify-gpu (fixtures/fake_batch_gpu.py) that logs every job it is sent. In one `kverify run`:
# the jobs of one problem's candidates carry one batch key, the same secret seeds and the same
# drawn, stratified and boundary dims sets, and indexes 0, 1, 2...; another problem's batch has
# another key and other seeds and sets; a problem with one candidate is verified alone (no batch);
# --batch N splits a problem's candidates into batches of N (a last one alone); --batch 1 turns
# batching off; a second run (reverify) never reuses a key or a seed; the job after a batch's
# last one tells the worker that batch ended (batch_ended); --batch-memory sets the budget the
# jobs carry; run --seeds fixes the input seeds; the batch key reaches the recorded evidence, and
# a worker's answer that names another batch (or one for a job of none) labels nothing.
# With two GPUs, the jobs of a batch go to one worker and the next batch to the other. In
# `kverify serve`, the items of one request for one problem form a batch, and two requests never
# share one.
. "$KC_ROOT/tests/cli/lib.sh"
export KC_KVERIFY_GPU="$KC_ROOT/tests/cli/fixtures/fake_batch_gpu.py"
export FAKE_LOG="$T/jobs.jsonl"
kv="$KC_BIN/kverify"
relu="$KC_PROBLEMS/level1/019_relu.cu"
leaky="$KC_PROBLEMS/level1/020_leaky_relu.cu"
softmax="$KC_PROBLEMS/level1/023_softmax.cu"

# import DB FILE PROBLEM COUNT: COUNT distinct copies of FILE
import() {
    i=0
    while [ $i -lt "$4" ]; do
        i=$((i + 1))
        { cat "$2"; echo "// copy $i"; } >"$T/copy.cu"
        "$kv" import --db "$1" --problem "$3" "$T/copy.cu" >/dev/null || fail "import $3 copy $i"
    done
}
db="$T/kc.db"
import "$db" "$relu" level1/019_relu 3
import "$db" "$leaky" level1/020_leaky_relu 2
import "$db" "$softmax" level1/023_softmax 1
"$kv" run --db "$db" --threads 1 --sanitizer none --batch 32 >"$T/run.out" 2>&1 || { cat "$T/run.out"; fail "run"; }
grep -q "verified 6 of 6" "$T/run.out" || fail "run summary: $(cat "$T/run.out")"

# check.py LOG EXPECT...: each EXPECT is problem:sizes (the batch sizes of that problem's jobs in
# order, 1 for a job verified alone); prints the keys it saw, one per line.
cat >"$T/check.py" <<'EOF'
import json, sys
jobs = [json.loads(l) for l in open(sys.argv[1])]
def fail(msg):
    print("FAIL: " + msg); sys.exit(1)
by_problem = {}
for j in jobs:
    # the boundary sets' values are drawn from a seed of their own, derived from the hidden seed
    # (so --hidden-seed S reproduces them) and recorded beside them
    bseed = j.get("boundary") and j["boundary"]["seed"]
    if bseed and int(bseed) != int(j["hidden"]["seed"]) ^ 0x424f554e44:
        fail("job %s: boundary seed %s not from the hidden seed" % (j["job"], bseed))
    by_problem.setdefault(j["manifest"].split("/")[-1].replace(".json", ""), []).append(j)
keys = []
for spec in sys.argv[2:]:
    name, sizes = spec.split(":")
    sizes = [int(x) for x in sizes.split(",")]
    js = by_problem.get(name, [])
    if len(js) != sum(sizes):
        fail("%s: %d jobs, expected %d" % (name, len(js), sum(sizes)))
    at = 0
    for size in sizes:
        group = js[at:at + size]
        at += size
        if size == 1:
            if group[0].get("batch"):
                fail("%s: a candidate alone carries a batch: %s" % (name, group[0]["batch"]))
            continue
        b0 = group[0]["batch"] or fail("%s: no batch in a batch's job" % name)
        if len(b0["key"]) != 32 or any(c not in "0123456789abcdef" for c in b0["key"]):
            fail("%s: batch key %r" % (name, b0["key"]))
        for i, j in enumerate(group):
            b = j.get("batch") or fail("%s: job %d has no batch" % (name, i))
            if b["key"] != b0["key"]:
                fail("%s: two keys in one batch" % name)
            if b["index"] != i:
                fail("%s: index %d for the batch's job %d" % (name, b["index"], i))
            for field in ("seeds", "hidden", "stratified", "boundary"):
                if j[field] != group[0][field]:
                    fail("%s: %s differ within a batch" % (name, field))
            if b["budget_bytes"] != b0["budget_bytes"]:
                fail("%s: budgets differ within a batch" % name)
        keys.append((b0["key"], group[0]["seeds"], group[0]["hidden"]["seed"], b0["budget_bytes"]))
seen_keys = [k[0] for k in keys]
if len(set(seen_keys)) != len(seen_keys):
    fail("a batch key used by two batches")
seeds = [s for k in keys for s in k[1]]
if len(set(seeds)) != len(seeds):
    fail("two batches share a seed")
hseeds = [k[2] for k in keys]
if len(set(hseeds)) != len(hseeds):
    fail("two batches share a hidden seed")
for k in keys:
    print(k[0], k[3], " ".join(k[1]))
EOF
python3 "$T/check.py" "$FAKE_LOG" 019_relu:3 020_leaky_relu:2 023_softmax:1 >"$T/keys1" || { cat "$T/keys1"; fail "batches of the first run"; }
[ "$(wc -l <"$T/keys1")" -eq 2 ] || fail "expected 2 batches: $(cat "$T/keys1")"
awk '{ print $2 }' "$T/keys1" | sort -u | grep -qx 4294967296 || fail "default budget not 4 GiB: $(cat "$T/keys1")"

# the job after a batch's last one says it ended, to the worker that ran it
python3 - "$FAKE_LOG" <<'EOF' || fail "batch_ended"
import json, sys
jobs = [json.loads(l) for l in open(sys.argv[1])]
relu_key = jobs[0]["batch"]["key"]
ended = [k for j in jobs for k in (j.get("batch_ended") or [])]
if relu_key not in ended:
    print("FAIL: the relu batch's end was never sent: %s" % ended); sys.exit(1)
first = next(i for i, j in enumerate(jobs) if relu_key in (j.get("batch_ended") or []))
if any(j.get("batch", {}) and j["batch"]["key"] == relu_key for j in jobs[first:]):
    print("FAIL: a job of the relu batch after its end"); sys.exit(1)
if len(ended) != len(set(ended)):
    print("FAIL: an end sent twice: %s" % ended); sys.exit(1)
EOF

# the key is in the recorded evidence
n=$(sqlite3 "$db" "SELECT count(DISTINCT json_extract(evidence_json, '$.batch.key')) FROM verifications WHERE json_extract(evidence_json, '$.batch.key') IS NOT NULL")
[ "$n" = 2 ] || fail "recorded batch keys: $n, expected 2"

# reverify: new batches, new keys and seeds; --batch 2 splits relu 2 + 1; --batch-memory
: >"$FAKE_LOG"
"$kv" reverify --db "$db" --threads 1 --batch 2 --batch-memory 64 >"$T/re.out" 2>&1 || { cat "$T/re.out"; fail "reverify"; }
python3 "$T/check.py" "$FAKE_LOG" 019_relu:2,1 020_leaky_relu:2 023_softmax:1 >"$T/keys2" || { cat "$T/keys2"; fail "batches of reverify --batch 2"; }
awk '{ print $2 }' "$T/keys2" | sort -u | grep -qx 67108864 || fail "--batch-memory 64 not 64 MiB: $(cat "$T/keys2")"
cat "$T/keys1" "$T/keys2" | awk '{ print $1 }' | sort | uniq -d | grep -q . && fail "a key reused across runs"
cat "$T/keys1" "$T/keys2" | cut -d' ' -f3- | tr ' ' '\n' | sort | uniq -d | grep -q . && fail "a seed reused across runs"

# --batch 1: no batches at all
: >"$FAKE_LOG"
"$kv" reverify --db "$db" --threads 1 --batch 1 >"$T/re1.out" 2>&1 || { cat "$T/re1.out"; fail "reverify --batch 1"; }
grep -q '"batch": {' "$FAKE_LOG" && fail "--batch 1 sent a batch: $(grep -m1 batch "$FAKE_LOG")"
# no --batch: none either (the default until sharing is measured on a GPU)
: >"$FAKE_LOG"
"$kv" reverify --db "$db" --threads 1 >"$T/re0.out" 2>&1 || { cat "$T/re0.out"; fail "reverify without --batch"; }
grep -q '"job"' "$FAKE_LOG" || fail "reverify without --batch sent no job"
grep -q '"batch": {' "$FAKE_LOG" && fail "the default sent a batch: $(grep -m1 batch "$FAKE_LOG")"
"$kv" run --db "$db" --batch 0 >/dev/null 2>&1 && fail "--batch 0 accepted"
"$kv" run --db "$db" --batch-memory x >/dev/null 2>&1 && fail "--batch-memory x accepted"

# a worker that names another batch, or a batch for a job of none, labels nothing
for lie in key unbatched; do
    dbl="$T/lie_$lie.db"
    import "$dbl" "$relu" level1/019_relu 2
    [ $lie = unbatched ] && opt="--batch 1" || opt="--batch 32"
    FAKE_BATCH_LIE=$lie "$kv" run --db "$dbl" --threads 1 --sanitizer none $opt >"$T/lie.out" 2>&1 &&
        fail "FAKE_BATCH_LIE=$lie: the run succeeded"
    grep -q "malformed message (batch evidence" "$T/lie.out" || fail "FAKE_BATCH_LIE=$lie: $(cat "$T/lie.out")"
    [ "$(sqlite3 "$dbl" "SELECT count(*) FROM verifications")" = 0 ] || fail "FAKE_BATCH_LIE=$lie: recorded"
done

# run --seeds: every candidate's jobs carry those input seeds (batched or not)
db3="$T/seeds.db"
import "$db3" "$relu" level1/019_relu 2
import "$db3" "$softmax" level1/023_softmax 1
: >"$FAKE_LOG"
"$kv" run --db "$db3" --threads 1 --sanitizer none --batch 32 --seeds 11,12,13 >"$T/seeds.out" 2>&1 || { cat "$T/seeds.out"; fail "run --seeds"; }
[ "$(grep -c '"seeds": \["11", "12", "13"\]' "$FAKE_LOG")" = 3 ] || fail "run --seeds: $(cat "$FAKE_LOG")"

# two GPUs: a batch's jobs on one worker, the next batch on the other
db2="$T/two.db"
import "$db2" "$relu" level1/019_relu 3
import "$db2" "$leaky" level1/020_leaky_relu 3
: >"$FAKE_LOG"
FAKE_GPUS=2 "$kv" run --db "$db2" --threads 1 --sanitizer none --batch 32 >"$T/two.out" 2>&1 || { cat "$T/two.out"; fail "run on 2 GPUs"; }
python3 - "$FAKE_LOG" <<'EOF' || fail "affinity on two GPUs"
import json, sys
jobs = [json.loads(l) for l in open(sys.argv[1])]
devices = {}
for j in jobs:
    devices.setdefault(j["batch"]["key"], set()).add(j["device"])
if any(len(d) != 1 for d in devices.values()):
    print("FAIL: a batch's jobs on several workers: %s" % devices); sys.exit(1)
if len(set(next(iter(d)) for d in devices.values())) != 2:
    print("FAIL: both batches on one worker while the other was free: %s" % devices); sys.exit(1)
EOF

# serve: one request's items of one problem form a batch; two requests, two batches
: >"$FAKE_LOG"
"$kv" serve --port 0 --compile-procs 2 --sanitizer none --batch 32 >"$T/serve.out" 2>"$T/serve.err" &
SERVE=$!
trap 'kill "$SERVE" 2>/dev/null; cleanup' EXIT
i=0
while ! grep -q 'listening on http://127.0.0.1:[0-9]*$' "$T/serve.out" 2>/dev/null; do
    kill -0 "$SERVE" 2>/dev/null || fail "kverify serve exited: $(cat "$T/serve.err")"
    i=$((i + 1)); [ $i -lt 400 ] || fail "kverify serve did not start"; sleep 0.05
done
base="http://127.0.0.1:$(sed -n 's/.*:\([0-9]*\)$/\1/p' "$T/serve.out")"
python3 - "$base" "$relu" "$softmax" <<'EOF' || fail "serve requests"
import json, sys, urllib.request
base, relu, softmax = sys.argv[1], open(sys.argv[2]).read(), open(sys.argv[3]).read()
def post(items):
    req = urllib.request.Request(base + "/v1/verify", json.dumps({"items": items}).encode(),
                                 {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=120))
items = [{"problem_id": "level1/019_relu", "completion": relu + "// %d\n" % i} for i in range(3)]
items.append({"problem_id": "level1/023_softmax", "completion": softmax})
for r in (post(items), post(items[:2])):
    if [x.get("verdict") for x in r["results"]] != ["correct"] * len(r["results"]):
        print("FAIL: %s" % r); sys.exit(1)
EOF
kill "$SERVE"; wait "$SERVE" 2>/dev/null
python3 - "$FAKE_LOG" <<'EOF' || fail "serve batches"
import json, sys
jobs = [json.loads(l) for l in open(sys.argv[1])]
relu = [j for j in jobs if "019_relu" in j["manifest"]]
soft = [j for j in jobs if "023_softmax" in j["manifest"]]
keys = [j["batch"]["key"] for j in relu if j.get("batch")]
if len(relu) != 5 or len(keys) != 5 or len(set(keys)) != 2 or sorted([keys.count(k) for k in set(keys)]) != [2, 3]:
    print("FAIL: relu jobs' batches: %s" % keys); sys.exit(1)
if any(j.get("batch") for j in soft):
    print("FAIL: a lone softmax item in a batch"); sys.exit(1)
for k in set(keys):
    group = [j for j in relu if j["batch"]["key"] == k]
    if any(j["seeds"] != group[0]["seeds"] or j["stratified"] != group[0]["stratified"] for j in group):
        print("FAIL: a serve batch's jobs differ in seeds or sets"); sys.exit(1)
    if sorted(j["batch"]["index"] for j in group) != list(range(len(group))):
        print("FAIL: serve batch indexes"); sys.exit(1)
EOF
echo "ok: batches of run, reverify and serve (keys, seeds, sets, indexes, ends, budget, affinity)"
