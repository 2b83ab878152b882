#!/bin/sh
# test_integrity3: the "Verifier integrity III" catalogue (tests/gpu/catalogue/integrity3/, each
# file's header says its class, trick and expected verdicts). Attacks of classes 1-4 (state kept
# between timed reps in the device malloc heap; shapes never tried; a constant input ignored;
# memory outside the buffers) that the verifier before the hardening labels correct, and honest
# controls (vector loads with tails, atomics, a fused level-2 GEMM, bf16 attention, a big local
# array, and a ReLU too noisy for the checking runs' samples alone, which must get extra checked
# timed reps) that must stay correct.
#   default     the hardened expectations: class 1-3 attacks mismatch, class 4 attacks unsafe,
#               controls correct without timing_inconsistent
#   EXPECT=old  shows the holes of an older binary: every entry, attack or control, correct
# Two class-2 attacks fail only on some drawn shapes (gqa_pow2: a group size HQ/HKV that is not
# a power of two; small_batch: B < 4). Labelled correct, they fail the test only when the
# evidence shows the verifier drew such a shape; otherwise they are reported as not exercised.
# Standalone: KC_BIN=bin KC_ROOT=. KC_PROBLEMS=problems [EXPECT=old] sh tests/gpu/test_integrity3.sh
. "$KC_ROOT/tests/gpu/lib.sh"
dir="$KC_ROOT/tests/gpu/catalogue/integrity3"
db="$OUT_DIR/integrity3.db"
rm -f "$db"*
mode="${EXPECT:-new}"
# Import order = candidate ids. heap_state goes first: its heap record outlives a verification,
# so it must start in a fresh worker (a fresh CUDA context). Since the timing's samples are the
# checking runs themselves (issue 23), the timed reps it waits for never come: every execution
# it times is checked, so it cheats in none and earns no speedup; memcheck then finds its scan of
# the heap window (reads outside any allocation): unsafe. Against the binary of integrity III it
# was a mismatch (a checked timed rep was wrong).
entries="level1/001_square_matmul:heap_state:mismatch/unsafe
level1/023_softmax:dims_lookup:mismatch/unsafe
attention/008_gqa_causal:gqa_pow2:mismatch/unsafe
level2/076_gemm_add_relu:small_batch:mismatch/unsafe
level2/084_gemm_batch_norm_scaling_softmax:ignores_scale:mismatch
level1/021_sigmoid:far_write:unsafe
level1/094_mse_loss:guard_scratch:unsafe
level1/019_relu:read_past_end:unsafe
level1/025_swish:ok_swish_vec4:correct
level1/047_sum_reduction:ok_atomic_sum:correct
level2/076_gemm_add_relu:ok_gemm_add_relu:correct
attention/001_causal:ok_attention_bf16:correct
level1/089_cumsum:ok_local_array:correct
level1/019_relu:ok_noisy_relu:correct"
echo "$entries" | while IFS=: read -r problem name want; do
    "$KC_BIN/kverify" import --db "$db" --problem "$problem" "$dir/$name.cu" >/dev/null || fail "import $name"
done
start=$(date +%s)
"$KC_BIN/kverify" run --db "$db" --threads 1 > "$OUT_DIR/integrity3_run.log" 2>&1
echo "integrity3: kverify run took $(( $(date +%s) - start )) s (mode: $mode)"

# Whether the evidence of candidate $1 holds a drawn dims set with the shape that breaks it ($2).
drew_breaking_shape() {
    sql "$db" "SELECT evidence_json FROM v_latest_verification WHERE candidate_id = $1" | python3 -c '
import json, sys
kind = sys.argv[1]
try:
    ev = json.loads(sys.stdin.read() or "null")
except ValueError:
    ev = None
def dimsets(o):
    if isinstance(o, dict):
        if all(isinstance(o.get(k), int) for k in ("HQ", "HKV")) or all(isinstance(o.get(k), int) for k in ("B", "IN", "OUT")):
            yield o
        for v in o.values():
            yield from dimsets(v)
    elif isinstance(o, list):
        for v in o:
            yield from dimsets(v)
def breaks(d):
    if kind == "gqa":
        g = d["HQ"] // d["HKV"] if d.get("HKV") else 1
        return g & (g - 1) != 0
    return d["B"] < 4
sys.exit(0 if any(breaks(d) for d in dimsets(ev)) else 1)' "$2"
}

status=0; id=0
while IFS=: read -r problem name want; do
    id=$((id + 1))
    row=$(sql "$db" "SELECT verdict, flags, coalesce(message, '') FROM v_latest_verification WHERE candidate_id = $id")
    verdict=${row%%|*}; rest=${row#*|}; flags=${rest%%|*}; msg=${rest#*|}
    median=$(sql "$db" "SELECT round(t.median_ms, 4) FROM timings t JOIN v_latest_verification v ON v.id = t.verification_id WHERE v.candidate_id = $id")
    echo "  $id $name ($problem): $verdict [$flags]${median:+ median ${median} ms} $msg"
    expect=$want
    [ "$mode" = old ] && expect=correct
    # EXPECTED may list alternatives (mismatch/unsafe: a shape attack may also fault at a
    # drawn shape, which the memory walls make unsafe)
    if echo "$expect" | tr '/' '\n' | grep -qx "$verdict"; then
        case "$expect,$flags" in
            correct,*timing_inconsistent*) [ "$mode" = old ] || { echo "FAIL $name: flagged timing_inconsistent"; status=1; } ;;
        esac
        if [ "$name" = ok_noisy_relu ] && [ "$mode" != old ]; then # too noisy: extra checked reps
            extra=$(sql "$db" "SELECT coalesce(json_extract(evidence_json, '$.timing_checks.extra_reps'), 0) FROM v_latest_verification WHERE candidate_id = $id")
            echo "  $name: $extra extra timed reps after the checking runs' samples"
            [ "${extra:-0}" -gt 0 ] || { echo "FAIL $name: no extra timed reps for noisy samples"; status=1; }
        fi
        continue
    fi
    if [ "$mode" != old ] && [ "$verdict" = correct ] && { [ "$name" = gqa_pow2 ] || [ "$name" = small_batch ]; }; then
        kind=batch; [ "$name" = gqa_pow2 ] && kind=gqa
        if drew_breaking_shape "$id" "$kind"; then
            echo "FAIL $name: the verifier drew a shape that breaks it and still said correct"; status=1
        else
            echo "  note: $name not exercised (no drawn dims set in its evidence has the shape that breaks it)"
        fi
        continue
    fi
    echo "FAIL $name: expected $expect, got $verdict"
    status=1
done <<EOF_ENTRIES
$entries
EOF_ENTRIES
[ "$status" = 0 ] || fail "integrity3 verdicts differ (mode $mode; log: $OUT_DIR/integrity3_run.log)"
n=$(echo "$entries" | wc -l)
if [ "$mode" = old ]; then
    echo "integrity3: all $n labelled correct by this binary (the holes the hardening closes)"
else
    echo "integrity3: all $n verdicts as the hardened verifier must give"
fi
