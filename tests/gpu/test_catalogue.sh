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
start=$(date +%s)
"$KC_BIN/kverify" run --db "$db" --threads 1 > "$OUT_DIR/catalogue_run.log" 2>&1
echo "catalogue: kverify run took $(( $(date +%s) - start )) s"
expected="1|mismatch|
2|mismatch|
3|mismatch|alt_shape_fail
4|unsafe|
5|unsafe|
6|runtime_error|
7|correct|
8|runtime_error|
9|correct|
10|timeout|
11|correct|
12|launch_error|
13|correct|
14|mismatch|nondeterministic
15|correct|nondeterministic
16|correct|"
got=$(sql "$db" "SELECT c.id, v.verdict, replace(v.flags, 'suspicious_speedup', '') FROM candidates c JOIN v_latest_verification v ON v.candidate_id = c.id ORDER BY c.id" | sed 's/,$//')
echo "$got" | while IFS='|' read -r id verdict flags; do
    msg=$(sql "$db" "SELECT message FROM verifications WHERE candidate_id = $id")
    echo "  candidate $id: $verdict [$flags] $msg"
done
[ "$got" = "$expected" ] || { echo "expected:"; echo "$expected"; fail "catalogue verdicts differ"; }
echo "catalogue: all 16 verdicts as expected"
