/* gpu_probe: whether this machine has the NVIDIA driver at all, asked before any GPU work starts
 * (kverify gpus, dump and racecheck; kcollect without --compile-only), so that a machine without
 * one hears it at once instead of after a database, a run or a server was started; and the name of
 * the driver library, which kverify-gpu loads at run time (verify/worker/worker_driver.c). */
#ifndef KC_GPU_PROBE_H
#define KC_GPU_PROBE_H

/* The driver library: libcuda.so.1, or the one KC_LIBCUDA names (tests). */
const char *kv_libcuda_name(void);
/* Whether the driver library (kv_libcuda_name) loads, tried in a child so that the caller itself
 * never loads libcuda. 1 when it cannot tell. */
int kv_driver_present(void);
/* The one message of a machine without the driver (no newline). */
#define KV_NO_DRIVER_MESSAGE \
    "no NVIDIA driver found (libcuda.so.1 cannot be loaded): no GPU can be listed or used here"

#endif
