/* worker_profile: a reference's device time by kernel (kverify dump --profile): the table
 * worker_timing.c's CUPTI records fill, and its JSON. No CUDA here (a unit test links it). */
#ifndef KC_WORKER_PROFILE_H
#define KC_WORKER_PROFILE_H
#include <jansson.h>

#define WK_PROFILE_KERNELS 128 /* names kept; later ones are added up under "(others)" */
typedef struct wk_kernel_profile {
    int n;
    struct {
        char name[96];
        int launches;
        double ns;
    } k[WK_PROFILE_KERNELS + 1]; /* the last: "(others)" */
} wk_kernel_profile;

/* One kernel execution of ns nanoseconds, under its name. */
void wk_profile_add(wk_kernel_profile *t, const char *name, double ns);
/* For runs executions: {"runs", "device_ms" and "launches" per execution, "kernels": [{"kernel",
 * "launches", "ms"} per execution, the costliest first]}. */
json_t *wk_profile_json(const wk_kernel_profile *t, int runs);

#endif
