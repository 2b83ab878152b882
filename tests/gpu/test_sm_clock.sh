#!/bin/sh
# test_sm_clock: every timing records the SM clock it ran at, measured in-kernel just before each
# timed window (the GPU changes it on its own: an H100 runs at 1980 or 1995 MHz while nvidia-smi
# shows 1980 for both, and a kernel bound by the SM clock is 0.73% slower at the lower one). The
# ReLU reference is checked twice, with the default target and with --timing-noise 0.02 (extra
# reps, which are probed too). Each evidence must carry a clock per default-dims checking run
# and median/min/max over every sample, in order and within 60-110% of the board's maximum SM
# clock as nvidia-smi reports it; the JSON timing and the text report must show it.
. "$KC_ROOT/tests/gpu/lib.sh"
work="$OUT_DIR/sm_clock"
rm -rf "$work" && mkdir -p "$work"
"$KC_BIN/kverify" problems --show-reference level1/019_relu > "$work/relu.cu" || fail "show-reference"
max=$(nvidia-smi -i "${CUDA_VISIBLE_DEVICES:-0}" --query-gpu=clocks.max.sm --format=csv,noheader,nounits 2>/dev/null | head -1)
case "$max" in ''|*[!0-9]*) fail "nvidia-smi gave no maximum SM clock ($max)" ;; esac
check() { # label [options]
    label=$1; shift
    "$KC_BIN/kverify" check --problem level1/019_relu "$work/relu.cu" --json "$@" > "$work/$label.json" ||
        fail "$label: the reference is not correct: $(head -c 400 "$work/$label.json")"
    python3 - "$work/$label.json" "$label" "$max" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1])); label, board_max = sys.argv[2], float(sys.argv[3])
t = d["evidence"]["timing_checks"]
runs = [r for r in d["evidence"]["runs"] if r["dims"] == "default"]
per_run = [r.get("sm_clock_mhz", 0) for r in runs]
lo, hi = 0.6 * board_max, 1.1 * board_max
ok = len(runs) >= 5 and all(lo <= c <= hi for c in per_run)
ok = ok and t["sm_clock_min_mhz"] <= t["sm_clock_mhz"] <= t["sm_clock_max_mhz"]
ok = ok and lo <= t["sm_clock_min_mhz"] and t["sm_clock_max_mhz"] <= hi
ok = ok and abs(d["timing"]["sm_clock_mhz"] - t["sm_clock_mhz"]) < 1e-9
if t["extra_reps"] == 0:  # the samples are the checking runs alone
    ok = ok and abs(min(per_run) - t["sm_clock_min_mhz"]) < 1e-9 and abs(max(per_run) - t["sm_clock_max_mhz"]) < 1e-9
print("%s %s: SM clock %.2f MHz (%.2f-%.2f) over %d checking runs and %d extra reps; board maximum %d MHz"
      % ("PASS" if ok else "FAIL", label, t["sm_clock_mhz"], t["sm_clock_min_mhz"], t["sm_clock_max_mhz"],
         len(runs), t["extra_reps"], board_max))
sys.exit(0 if ok else 1)
PY
}
check default
check tight --timing-noise 0.02
"$KC_BIN/kverify" check --problem level1/019_relu "$work/relu.cu" > "$work/report.txt" 2>&1 ||
    fail "text report: the reference is not correct"
grep -q "SM clock [0-9]* MHz, measured" "$work/report.txt" || fail "the text report does not show the SM clock: $(grep -A3 "time " "$work/report.txt")"
echo "sm clock: every timing records the SM clock it was measured at"
