#!/bin/sh
# test_catalogue: bad kernels get the right verdicts, and the worker recovers
# after sticky errors and hangs (the next candidate, a reference, verifies).
. "$KC_ROOT/tests/gpu/lib.sh"
cat_dir="$KC_ROOT/tests/gpu/catalogue"
db="$OUT_DIR/catalogue.db"
rm -f "$db"*
relu="$KC_PROBLEMS/level1/019_relu.cu"
sum="$KC_PROBLEMS/level1/047_sum_reduction.cu"
# Order matters: each sticky error or hang is followed by a reference.
"$KC_BIN/kverify" import --db "$db" --problem level1/019_relu \
    "$cat_dir/zeros.cu" "$cat_dir/constant.cu" "$cat_dir/skipped_tail.cu" "$cat_dir/oob_write.cu" \
    "$cat_dir/input_mutation.cu" "$cat_dir/illegal_address.cu" "$relu" "$cat_dir/trap.cu" "$relu" \
    "$cat_dir/infinite_loop.cu" "$relu" "$cat_dir/launch_2048.cu" "$relu" >/dev/null || fail import
"$KC_BIN/kverify" import --db "$db" --problem level1/047_sum_reduction \
    "$cat_dir/race.cu" "$cat_dir/atomic_order.cu" "$sum" >/dev/null || fail import
# Integrity catalogue (issue 10): forged result text, print floods, timing-phase detection via
# output state and via device globals / launch counting, an address- and content-keyed output
# cache, a device-side launch (side stream / lazy output), bf16 products in an fp32 problem.
"$KC_BIN/kverify" import --db "$db" --problem level1/019_relu \
    "$cat_dir/forged_result.cu" "$cat_dir/print_flood.cu" "$cat_dir/poison_probe.cu" \
    "$cat_dir/launch_counter.cu" "$cat_dir/device_launch.cu" "$relu" >/dev/null || fail import
"$KC_BIN/kverify" import --db "$db" --problem level1/047_sum_reduction "$cat_dir/addr_cache.cu" >/dev/null || fail import
"$KC_BIN/kverify" import --db "$db" --problem level1/001_square_matmul "$cat_dir/bf16_matmul.cu" >/dev/null || fail import
start=$(date +%s)
"$KC_BIN/kverify" run --db "$db" --threads 1 > "$OUT_DIR/catalogue_run.log" 2>&1
echo "catalogue: kverify run took $(( $(date +%s) - start )) s"
expected="1|mismatch|
2|mismatch|
3|mismatch|alt_shape_fail
4|unsafe|
5|unsafe|
6|unsafe|
7|correct|
8|runtime_error|
9|correct|
10|timeout|
11|correct|
12|extract_error|
13|correct|
14|mismatch|nondeterministic
15|correct|nondeterministic
16|correct|
17|mismatch|
18|correct|
19|correct|
20|correct|
21|compile_error|
22|correct|
23|correct|
24|mismatch|"
got=$(sql "$db" "SELECT c.id, v.verdict, replace(v.flags, 'suspicious_speedup', '') FROM candidates c JOIN v_latest_verification v ON v.candidate_id = c.id ORDER BY c.id" | sed 's/,$//')
echo "$got" | while IFS='|' read -r id verdict flags; do
    msg=$(sql "$db" "SELECT message FROM verifications WHERE candidate_id = $id")
    echo "  candidate $id: $verdict [$flags] $msg"
done
[ "$got" = "$expected" ] || { echo "expected:"; echo "$expected"; fail "catalogue verdicts differ"; }
echo "catalogue: all 24 verdicts as expected"

# Printed text is evidence, never a verdict: both printing kernels have their bytes recorded.
for id in 17 18; do
    bytes=$(sql "$db" "SELECT json_extract(evidence_json, '$.device_printf.bytes') FROM verifications WHERE candidate_id = $id")
    [ "${bytes:-0}" -gt 0 ] || fail "candidate $id: no device printf bytes in the evidence"
    echo "  candidate $id printed $bytes bytes (kept as evidence)"
done
# Hacks that would skip work when timed are timed like the honest kernel (at least half its
# median): 19, 20 against the ReLU reference (22), 23 against the sum reference (16).
median() { sql "$db" "SELECT t.median_ms FROM timings t JOIN verifications v ON v.id = t.verification_id WHERE v.candidate_id = $1"; }
for pair in 19:22 20:22 23:16; do
    hack=${pair%%:*}; honest=${pair#*:}
    h=$(median "$hack"); o=$(median "$honest")
    echo "  candidate $hack timed $h ms, honest candidate $honest $o ms"
    awk -v h="$h" -v o="$o" 'BEGIN { exit !(h > 0 && o > 0 && h >= 0.5 * o) }' ||
        fail "candidate $hack was timed faster than honest work ($h ms against $o ms)"
done
# Every timed candidate had timed reps checked, and the checks' device time recorded.
bad=$(sql "$db" "SELECT count(*) FROM timings WHERE coalesce(checked_reps, 0) < 2 OR check_device_ms IS NULL")
[ "$bad" = 0 ] || fail "$bad timings without checked reps or check device time"
incons=$(sql "$db" "SELECT count(*) FROM verifications WHERE flags LIKE '%timing_inconsistent%'")
[ "$incons" = 0 ] || fail "$incons honest or reset kernels flagged timing_inconsistent"
echo "catalogue: integrity checks as expected"
