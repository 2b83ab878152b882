#!/bin/sh
# test_verify_cli: kverify's commands on a machine without a GPU: the suite check of level1,
# level2 and attention (every manifest loads, every reference compiles in the sandbox), compile
# --json and exit statuses, check without a GPU, run --compile-only on a database, and the GPU
# suite skipping cleanly.
set -u
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kv="$KC_BIN/kverify"
# Until every suite has hidden-dims generators, --check reports those missing without failing
# (the switch goes when they land; tests/cli/test_hidden_dims.sh checks attention strictly).

# every suite: each manifest loads and each reference compiles in the sandbox (level 2 takes
# about 45 s on two cores)
for suite in level1 level2 attention; do
    n=$(ls "$KC_PROBLEMS/$suite"/*.json | wc -l)
    [ "$n" -gt 0 ] || fail "no manifests in $KC_PROBLEMS/$suite"
    out=$("$kv" problems --suite "$suite" --check) ||
        fail "problems --suite $suite --check failed: $(echo "$out" | grep -A3 FAIL)"
    echo "$out" | tail -1 | grep -qx "$n problems, $n references compiled" ||
        fail "$suite: unexpected summary (want $n): $(echo "$out" | tail -1)"
done

printf 'extern "C" __global__ void k(float *y) { y[0] = oops; }\n// @launch k<<<1, 1>>>(y);\n' > "$tmp/bad.cu"
"$kv" compile --problem level1/019_relu "$tmp/bad.cu" --json > "$tmp/bad.json"
[ $? -eq 2 ] || fail "compile error should exit 2"
grep -q '"verdict": "compile_error"' "$tmp/bad.json" || fail "no compile_error verdict in JSON"
grep -q 'oops' "$tmp/bad.json" || fail "compile log missing from JSON"

"$kv" compile --problem level1/019_relu "$KC_PROBLEMS/level1/019_relu.cu" > "$tmp/ok.txt" || fail "reference should compile"
grep -q "level1/019_relu: compiled" "$tmp/ok.txt" || fail "readable report missing"

"$kv" compile --problem level1/999_nope "$tmp/bad.cu" 2> "$tmp/err.txt"
[ $? -eq 4 ] || fail "unknown problem should exit 4"
grep -q "no problem 'level1/999_nope'" "$tmp/err.txt" || fail "unclear error for an unknown problem"

if ! "$KC_BIN/kverify-gpu" gpus --count >/dev/null 2>&1; then
    "$kv" check --problem level1/019_relu "$KC_PROBLEMS/level1/019_relu.cu" 2> "$tmp/nogpu.txt"
    [ $? -eq 4 ] || fail "check without a GPU should exit 4"
    grep -q "use --compile-only" "$tmp/nogpu.txt" || fail "check without a GPU should say so"
    sh "$KC_ROOT/tests/gpu/run.sh" "$(dirname "$KC_BIN")" | grep -q "^SKIP: no usable GPU" || fail "GPU suite did not skip cleanly"
fi

db="$tmp/kc.db"
"$kv" import --db "$db" --problem level1/023_softmax "$KC_PROBLEMS/level1/023_softmax.cu" "$tmp/bad.cu" >/dev/null || fail import
"$kv" run --db "$db" --compile-only > "$tmp/run.txt" || true
grep -q "verified 2 of 2 pending" "$tmp/run.txt" || fail "run did not verify both: $(cat "$tmp/run.txt")"
verdicts=$(sqlite3 "$db" "SELECT v.verdict FROM verifications v ORDER BY v.candidate_id" | tr '\n' ' ')
[ "$verdicts" = "compiled compile_error " ] || fail "verdicts recorded: $verdicts"
pending=$(sqlite3 "$db" "SELECT count(*) FROM candidates WHERE status = 'pending'")
[ "$pending" = 0 ] || fail "candidates left pending"
audit=$(sqlite3 "$db" "SELECT count(*) FROM v_candidate_audit WHERE compile_log IS NOT NULL")
[ "$audit" = 2 ] || fail "audit view lacks compile logs"
echo "kverify CLI: ok"
