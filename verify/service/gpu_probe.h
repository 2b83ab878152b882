/* gpu_probe: whether this machine has the NVIDIA driver at all, asked before any GPU work starts
 * (kverify gpus, dump and racecheck; kcollect without --compile-only), so that a machine without
 * one hears it at once instead of after a database, a run or a server was started. */
#ifndef KC_GPU_PROBE_H
#define KC_GPU_PROBE_H

/* Whether the driver's libcuda.so.1 loads, tried in a child so that the caller itself never
 * loads libcuda. KC_LIBCUDA names another library to try (tests). 1 when it cannot tell. */
int kv_driver_present(void);
/* The one message of a machine without the driver (no newline). */
#define KV_NO_DRIVER_MESSAGE \
    "no NVIDIA driver found (libcuda.so.1 cannot be loaded): no GPU can be listed or used here"

#endif
