#!/bin/sh
# test_attention: the attention suite (problems/attention) on the GPU, in three parts.
# (c) every reference passes its own verification (5 seeds on the default dims plus every alt
#     set), verified without timing to measure throughput (target >= 1 candidate/s), then
#     timed: one line per problem with the reference's median ms and TFLOP/s.
# (b) the catalogue tests/gpu/catalogue/attention: each entry's lines + base.cu make one
#     candidate; ok_* (an independent float32 kernel) must be correct, nm_* (near misses:
#     window off by one, no 1/sqrt(D), wrong GQA head mapping, causal as q > k, ALiBi sign,
#     soft-cap missing, neighbourhood rows/cols swapped or unclamped, document without causal,
#     bias table sign) must get mismatch.
# (a) PyTorch's SDPA and compiled flex_attention, run on the dumped inputs in the problem's
#     dtype, must agree with the reference within the manifest's tolerance
#     (tools/baselines/attention_torch.py check; needs python3 with torch; ATTN_TORCH_DIMS picks the dims
#     sets, default small,alt,default).
# Standalone: KC_BIN=build/bin KC_ROOT=. KC_PROBLEMS=problems sh tests/gpu/test_attention.sh
. "$KC_ROOT/tests/gpu/lib.sh"
cat_dir="$KC_ROOT/tests/gpu/catalogue/attention"
work="$OUT_DIR/attention"
rm -rf "$work"
mkdir -p "$work/cands"
status=0

# ---- (c) references ----
db="$work/references.db"
for m in "$KC_PROBLEMS"/attention/*.json; do
    id="attention/$(basename "$m" .json)"
    "$KC_BIN/kverify" problems --show-reference "$id" > "$work/reference.cu" || fail "load $id"
    "$KC_BIN/kverify" import --db "$db" --problem "$id" "$work/reference.cu" >/dev/null || fail "import $id"
done
n=$(sql "$db" "SELECT count(*) FROM candidates")
now() { python3 -c 'import time; print(time.time())'; }
start=$(now)
"$KC_BIN/kverify" run --db "$db" --no-timing > "$work/references_run.log" 2>&1
secs=$(python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$(now)" "$start")
python3 -c "import sys; n, s = int(sys.argv[1]), float(sys.argv[2]); print('references: %d verified in %.1f s without timing: %.2f candidates/s (target >= 1)' % (n, s, n / s))" "$n" "$secs"
bad=$(sql "$db" "SELECT c.problem_id || ': ' || v.verdict || ' ' || coalesce(v.message, '') FROM candidates c JOIN v_latest_verification v ON v.candidate_id = c.id WHERE v.verdict <> 'correct'")
if [ -n "$bad" ]; then
    echo "$bad" | sed 's/^/FAIL reference /'
    status=1
else
    echo "PASS references: $n of $n pass their own verification"
fi
# timed: reset the verdicts by importing again into a fresh database
tdb="$work/references_timed.db"
for m in "$KC_PROBLEMS"/attention/*.json; do
    id="attention/$(basename "$m" .json)"
    "$KC_BIN/kverify" problems --show-reference "$id" > "$work/reference.cu"
    "$KC_BIN/kverify" import --db "$tdb" --problem "$id" "$work/reference.cu" >/dev/null
done
"$KC_BIN/kverify" run --db "$tdb" > "$work/references_timed.log" 2>&1
sql "$tdb" "SELECT c.problem_id, v.verdict, printf('%.3f', t.median_ms), printf('%.2f', t.tflops) FROM candidates c JOIN v_latest_verification v ON v.candidate_id = c.id LEFT JOIN timings t ON t.verification_id = v.id ORDER BY c.problem_id" |
    while IFS='|' read -r id verdict ms tf; do
        echo "TIME reference $id: $ms ms on the default dims ($tf TFLOP/s in double), verdict $verdict"
    done

# ---- (b) catalogue ----
cdb="$work/catalogue.db"
: > "$work/expected.txt"
for e in "$cat_dir"/ok_*.cu "$cat_dir"/nm_*.cu; do
    name=$(basename "$e" .cu)
    id=$(sed -n 's|^// problem: ||p' "$e")
    want=$(sed -n 's|^// expect: ||p' "$e")
    [ -n "$id" ] && [ -n "$want" ] || fail "$e lacks its '// problem:' or '// expect:' line"
    cat "$e" "$cat_dir/base.cu" > "$work/cands/$name.cu"
    "$KC_BIN/kverify" import --db "$cdb" --problem "$id" "$work/cands/$name.cu" >/dev/null || fail "import $name"
    echo "$name|$want" >> "$work/expected.txt"
done
start=$(date +%s)
"$KC_BIN/kverify" run --db "$cdb" --no-timing > "$work/catalogue_run.log" 2>&1
echo "catalogue: kverify run took $(( $(date +%s) - start )) s"
i=0
while IFS='|' read -r name want; do
    i=$((i + 1))
    got=$(sql "$cdb" "SELECT v.verdict FROM v_latest_verification v WHERE v.candidate_id = $i")
    msg=$(sql "$cdb" "SELECT substr(coalesce(v.message, ''), 1, 160) FROM v_latest_verification v WHERE v.candidate_id = $i")
    if [ "$got" = "$want" ]; then
        echo "PASS catalogue $name: $got ($msg)"
    else
        echo "FAIL catalogue $name: expected $want, got $got ($msg)"
        status=1
    fi
done < "$work/expected.txt"

# ---- (a) PyTorch's kernels as candidates ----
if python3 -c "import torch, numpy; assert torch.cuda.is_available()" 2>/dev/null; then
    if ! python3 "$KC_ROOT/tools/baselines/attention_torch.py" check --bin "$KC_BIN" --problems "$KC_PROBLEMS" \
        --dims "${ATTN_TORCH_DIMS:-small,alt,default}" --out "$work/torch"; then
        status=1
    fi
else
    echo "SKIP torch: python3 with torch and CUDA not found; PyTorch's kernels were not run"
fi
[ "$status" -eq 0 ] || fail "attention: see the FAIL lines above"
echo "attention: all parts pass"
