#!/bin/sh
# test_timing_noise: --timing-noise reaches the worker and decides the extra timed reps. The
# ReLU reference is checked three times: with the default (target 0.5%), with --timing-noise 100
# (the 5 checking runs' samples always suffice: no extra rep) and with --timing-noise 0.02 (a
# target the samples rarely meet: the worker adds checked reps until it is met or the 1 s cap
# ends the stage). Each time the evidence must carry the target as a fraction and either meet
# it or show the extra reps that tried.
. "$KC_ROOT/tests/gpu/lib.sh"
work="$OUT_DIR/timing_noise"
rm -rf "$work" && mkdir -p "$work"
"$KC_BIN/kverify" problems --show-reference level1/019_relu > "$work/relu.cu" || fail "show-reference"
check() { # label target_fraction [options]
    label=$1 target=$2; shift 2
    "$KC_BIN/kverify" check --problem level1/019_relu "$work/relu.cu" --json "$@" > "$work/$label.json" ||
        fail "$label: the reference is not correct: $(head -c 400 "$work/$label.json")"
    python3 - "$work/$label.json" "$label" "$target" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1])); label, target = sys.argv[2], float(sys.argv[3])
t = d["evidence"]["timing_checks"]
ok = abs(t["noise_target"] - target) < 1e-12 and t["from_checks"] == 5
ok = ok and (t["noise"] < target or t["extra_reps"] > 0)
if label == "loose":
    ok = ok and t["extra_reps"] == 0
print("%s %s: target %.4f%%, noise %.4f%%, samples from checks %d, extra reps %d, median %.4f ms"
      % ("PASS" if ok else "FAIL", label, 100 * t["noise_target"], 100 * t["noise"],
         t["from_checks"], t["extra_reps"], d["timing"]["median_ms"]))
sys.exit(0 if ok else 1)
PY
}
check default 0.005
check loose 1.0 --timing-noise 100
check tight 0.0002 --timing-noise 0.02
echo "timing noise: the worker follows --timing-noise"
