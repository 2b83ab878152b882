/* worker_profile: the per-kernel table of kverify dump --profile (see worker_profile.h). */
#include "verify/worker/worker_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wk_profile_add(wk_kernel_profile *t, const char *name, double ns)
{
    int i = 0;
    while (i < t->n && strcmp(t->k[i].name, name) != 0)
        i++;
    if (i == t->n && t->n < WK_PROFILE_KERNELS)
        snprintf(t->k[t->n++].name, sizeof t->k[0].name, "%s", name);
    else if (i == t->n) {
        i = WK_PROFILE_KERNELS;
        snprintf(t->k[i].name, sizeof t->k[0].name, "(others)");
    }
    t->k[i].launches++;
    t->k[i].ns += ns;
}

typedef struct profile_row {
    const char *name;
    int launches;
    double ns;
} profile_row;

/* qsort: the costliest first */
static int by_time(const void *a, const void *b)
{
    double x = ((const profile_row *)a)->ns, y = ((const profile_row *)b)->ns;
    return x < y ? 1 : x > y ? -1 : 0;
}

json_t *wk_profile_json(const wk_kernel_profile *t, int runs)
{
    profile_row rows[WK_PROFILE_KERNELS + 1];
    int n = 0;
    for (int i = 0; i <= WK_PROFILE_KERNELS; i++) /* "(others)", the last, once the table is full */
        if (i < t->n || (i == WK_PROFILE_KERNELS && t->k[i].launches > 0))
            rows[n++] = (profile_row){t->k[i].name, t->k[i].launches, t->k[i].ns};
    qsort(rows, (size_t)n, sizeof(*rows), by_time);
    json_t *list = json_array();
    double total = 0;
    long launches = 0;
    for (int i = 0; i < n; i++) {
        total += rows[i].ns, launches += rows[i].launches;
        json_array_append_new(list, json_pack("{s:s,s:f,s:f}", "kernel", rows[i].name, "launches",
                                              (double)rows[i].launches / runs, "ms",
                                              rows[i].ns / 1e6 / runs));
    }
    return json_pack("{s:i,s:f,s:f,s:o}", "runs", runs, "device_ms", total / 1e6 / runs,
                     "launches", (double)launches / runs, "kernels", list);
}
