#!/bin/sh
# device_session.sh: what one call of the GPU machine runs (binaries built on
# the build machine are carried in .devbuild/bin). Steps are chosen by
# arguments: env catalogue references degenerate crosscheck[:DIMS] bench baselines[:SECONDS]
# integrity4 (REPEAT, default 20) integrity3
# Logs go to $OUT (the device tool brings them back).
set -u
OUT="${OUT:-/tmp/kc-out}"
mkdir -p "$OUT"
export KC_ROOT="$(pwd)" KC_PROBLEMS="$(pwd)/problems" KC_BIN="$(pwd)/.devbuild/bin" OUT
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
step() { echo "=== $1 ($(date +%T))"; }
for s in "$@"; do
    case "$s" in
    env)
        step env
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
        ldd "$KC_BIN/kverify-gpu" | grep -i "not found"
        "$KC_BIN/kverify" gpus
        python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)';;
    catalogue) step catalogue; timeout 300 sh tests/gpu/test_catalogue.sh 2>&1 | tee "$OUT/catalogue.txt";;
    references) step references; timeout 400 sh tests/gpu/test_references.sh 2>&1 | tee "$OUT/references.txt";;
    degenerate) step degenerate; timeout 300 sh tests/gpu/test_degenerate.sh 2>&1 | tee "$OUT/degenerate.txt";;
    crosscheck*)
        dims="${s#crosscheck}"; dims="${dims#:}"; dims="${dims:-small,alt}"
        step "crosscheck $dims"
        timeout 500 python3 tools/baselines/crosscheck.py --bin "$KC_BIN" --dims "$dims" --report "$OUT/crosscheck_$(echo "$dims" | tr , _).json" 2>&1 | tee "$OUT/crosscheck_$(echo "$dims" | tr , _).txt" | tail -120;;
    bench) step bench; timeout 500 sh tests/bench/bench_verify.sh 2>&1 | tee "$OUT/bench.txt";;
    integrity4) step "integrity4 x${REPEAT:-20}"; REPEAT="${REPEAT:-20}" timeout 560 sh tests/gpu/test_integrity4.sh 2>&1 | tee "$OUT/integrity4.txt";;
    integrity3) step integrity3; timeout 200 sh tests/gpu/test_integrity3.sh 2>&1 | tee "$OUT/integrity3.txt";;
    baselines*)
        secs="${s#baselines}"; secs="${secs#:}"; secs="${secs:-300}"
        step "baselines $secs s"
        timeout $((secs + 120)) python3 tools/baselines/baselines.py --eager --compile --budget-s "$secs" 2>&1 | tail -30
        cp problems/level1/baselines/*.json "$OUT/" 2>/dev/null;;
    esac
done
step done
