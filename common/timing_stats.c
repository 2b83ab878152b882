/* timing_stats: statistics of a candidate's timing samples (see timing_stats.h). */
#include "common/timing_stats.h"
#include "common/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void kc_sort_doubles(double *v, int n)
{
    if (n > 1)
        qsort(v, (size_t)n, sizeof(double), cmp_double);
}

double kc_quantile(const double *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)floor(pos), hi = (int)ceil(pos);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

double kc_median_noise(const double *times, int n)
{
    if (n <= 0)
        return 0;
    double *s = xmalloc((size_t)n * sizeof(double));
    memcpy(s, times, (size_t)n * sizeof(double));
    kc_sort_doubles(s, n);
    double med = kc_quantile(s, n, 0.5);
    double sigma = (kc_quantile(s, n, 0.75) - kc_quantile(s, n, 0.25)) / 1.349;
    free(s);
    return med > 0 ? 1.2533 * sigma / sqrt((double)n) / med : 0;
}

int kc_timing_enough(const double *times, int n, int min_reps, double noise_target)
{
    return n >= min_reps && kc_median_noise(times, n) < noise_target;
}

int kc_timing_keep_plain(double *times, double *clocks, const int *plain, int n, double noise_target)
{
    if (kc_timing_enough(times, n, KC_TIMING_MIN_REPS, noise_target))
        return n;
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (plain[i]) {
            times[kept] = times[i];
            clocks[kept++] = clocks[i];
        }
    return kept;
}
