#!/bin/sh
# init_probe.sh: is a GPU's first open after idle what a batch's workers wait for (issue 37:
# 9.7 s before each GPU's first job on a 4-GPU host, 2.3 s on a 2-GPU one, while a worker that
# replaces another starts in 0.2 s)? Times `kverify-gpu gpus --count` (cuInit on every visible
# GPU, then exit) three times in a row, then three times while another process holds CUDA
# initialised (python3 and ctypes, no PyTorch), then once per GPU alone (CUDA_VISIBLE_DEVICES).
# Appends to $S (tools/device/common.sh). Reads the card's state only (nvidia-smi -q).
. tools/device/common.sh
t() { python3 -c 'import subprocess, sys, time
t0 = time.time(); subprocess.run(sys.argv[1:], capture_output=True); print("%.2f" % (time.time() - t0))' "$@"; }
note "init probe: persistence mode $(nvidia-smi --query-gpu=persistence_mode --format=csv,noheader | tr '\n' ' ')"
echo "gpus --count, idle: $(t "$B/kverify-gpu" gpus --count) $(t "$B/kverify-gpu" gpus --count) $(t "$B/kverify-gpu" gpus --count) s" >> "$S"
python3 -c 'import ctypes, time; c = ctypes.CDLL("libcuda.so.1"); c.cuInit(0); time.sleep(20)' &
holder=$!
sleep 5
echo "gpus --count, CUDA held by another process: $(t "$B/kverify-gpu" gpus --count) $(t "$B/kverify-gpu" gpus --count) $(t "$B/kverify-gpu" gpus --count) s" >> "$S"
kill $holder 2>/dev/null; wait $holder 2>/dev/null
for g in $(seq 0 $(( $("$B/kverify-gpu" gpus --count) - 1 ))); do
    echo "gpus --count with GPU $g alone: $(CUDA_VISIBLE_DEVICES=$g t "$B/kverify-gpu" gpus --count) s" >> "$S"
done
