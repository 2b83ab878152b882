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
# What the worker's device open spends (7-9.6 s on a 4xH200 host against 0.7 s on an H100, while
# cuInit alone takes 0.3 s a GPU): cuInit and a primary context, timed apart, under the worker's
# CUDA_MODULE_LOADING=EAGER and under the driver's default, one GPU alone, then every GPU at once.
ctx_probe() { # MODE GPU
    CUDA_MODULE_LOADING=$1 CUDA_VISIBLE_DEVICES=$2 python3 -c 'import ctypes, time
c = ctypes.CDLL("libcuda.so.1"); t0 = time.time(); c.cuInit(0); t1 = time.time()
d = ctypes.c_int(); c.cuDeviceGet(ctypes.byref(d), 0); x = ctypes.c_void_p()
c.cuDevicePrimaryCtxRetain(ctypes.byref(x), d); c.cuCtxSetCurrent(x); t2 = time.time()
print("cuInit %.2f context %.2f" % (t1 - t0, t2 - t1))'
}
for mode in EAGER LAZY EAGER; do
    echo "context, $mode, GPU 0 alone: $(ctx_probe $mode 0)" >> "$S"
    n=$("$B/kverify-gpu" gpus --count)
    for g in $(seq 0 $((n - 1))); do ctx_probe $mode $g > /tmp/ctx_$g.txt & done; wait
    echo "context, $mode, all $n GPUs at once: $(cat /tmp/ctx_*.txt | tr '\n' ';')" >> "$S"
done
