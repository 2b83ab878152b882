/* worker_timing: timing of a correct candidate's launch unit on the default dims. Every
 * rep is prepared exactly as a checked run is (fresh inputs from a seed no check used, drawn
 * anew before every rep, poisoned outputs and scratch, a freshly loaded module, cold L2), and
 * every rep is checked after it, outside the timed window (inputs unchanged, guard bands
 * intact, outputs matching the reference's on that rep's inputs): no state a kernel keeps
 * between executions can make a timed rep do less work than a checked one. Device events
 * around the unit, adaptive reps until a noise criterion or a time cap, order statistics.
 * CUPTI gives the per-kernel device time of a random early rep and of the final rep, compared
 * with that of the checking runs. Bytes and flops of the manifest give GB/s and FLOP/s. */
#include "common/error.h"
#include "common/fsutil.h"
#include "verify/worker/worker.h"

#include <cupti.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define MIN_REPS 5 /* then the noise criterion decides: every rep is checked, so reps are dear */
#define MAX_REPS 1000
#define NOISE_TARGET 0.005 /* relative standard error of the median */
#define INCONSISTENT_RATIO 0.5     /* timed device time below half the checking runs' ... */
#define INCONSISTENT_SLACK_MS 0.005 /* ... by more than launch jitter is flagged */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(const double *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)floor(pos), hi = (int)ceil(pos);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/* Robust relative standard error of the median, from the interquartile range. */
static double median_noise(double *times, int n)
{
    double *s = xmalloc((size_t)n * sizeof(double));
    memcpy(s, times, (size_t)n * sizeof(double));
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    double med = quantile(s, n, 0.5), sigma = (quantile(s, n, 0.75) - quantile(s, n, 0.25)) / 1.349;
    free(s);
    return med > 0 ? 1.2533 * sigma / sqrt((double)n) / med : 0;
}

/* One rep, checked after its timed window; with_cupti also measures its kernels' device time. */
static int timed_rep(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims, wk_buffer *bufs,
                     const wk_rep_hooks *h, int rep, int with_cupti, CUevent start, CUevent stop,
                     float *ms, double *device_ms, wk_failure *f)
{
    if (h->prepare(h->ctx, rep, f))
        return -1;
    int begun = with_cupti ? wk_cupti_begin() : 0;
    CUresult rc = cuEventRecord(start, g->stream);
    if (rc != CUDA_SUCCESS) {
        wk_cupti_end(begun);
        return wk_fail_cuda(f, "runtime_error", rc, "timing");
    }
    int launched = wk_unit_launch(g, u, p, dims, bufs, f) == 0;
    rc = cuEventRecord(stop, g->stream);
    if (rc == CUDA_SUCCESS)
        rc = cuEventSynchronize(stop);
    *device_ms = wk_cupti_end(begun);
    wk_printf_drain();
    if (!launched)
        return -1;
    if (rc != CUDA_SUCCESS)
        return wk_fail_candidate(f, rc, "a timed run");
    rc = cuEventElapsedTime(ms, start, stop);
    if (rc != CUDA_SUCCESS)
        return wk_fail_cuda(f, "runtime_error", rc, "timing");
    return h->check(h->ctx, rep, f);
}

/* ---- CUPTI ---- */

static struct {
    double kernel_ns; /* summed over records */
    int records;
} cupti_acc;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 1 << 20;
    *buffer = aligned_alloc(8, *size);
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *rec = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
            cupti_acc.kernel_ns += (double)(k->end - k->start);
            cupti_acc.records++;
        }
    }
    free(buffer);
}

int wk_cupti_begin(void)
{
    static int registered;
    if (!registered) {
        if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS)
            return 0;
        registered = 1;
    }
    memset(&cupti_acc, 0, sizeof(cupti_acc));
    return cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
}

double wk_cupti_end(int begun)
{
    if (!begun)
        return 0;
    cuptiActivityFlushAll(1);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    return cupti_acc.records ? cupti_acc.kernel_ns / 1e6 : 0;
}

static void put_stats(json_t *out, double *times, int n)
{
    qsort(times, (size_t)n, sizeof(double), cmp_double);
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++)
        sum += times[i];
    double mean = sum / n;
    for (int i = 0; i < n; i++)
        sq += (times[i] - mean) * (times[i] - mean);
    json_object_set_new(out, "median_ms", json_real(quantile(times, n, 0.5)));
    json_object_set_new(out, "mean_ms", json_real(mean));
    json_object_set_new(out, "stdev_ms", json_real(n > 1 ? sqrt(sq / (n - 1)) : 0));
    json_object_set_new(out, "min_ms", json_real(times[0]));
    json_object_set_new(out, "p10_ms", json_real(quantile(times, n, 0.1)));
    json_object_set_new(out, "p90_ms", json_real(quantile(times, n, 0.9)));
    json_object_set_new(out, "n", json_integer(n));
}

static void put_roofline(json_t *out, const problem *p, const dimset *dims, double median_ms)
{
    int64_t bytes = 0, flops = 0;
    if (median_ms <= 0)
        return;
    if (expr_eval(p->bytes_expr, dims, &bytes, NULL) == 0)
        json_object_set_new(out, "gbps", json_real((double)bytes / (median_ms * 1e-3) / 1e9));
    if (expr_eval(p->flops_expr, dims, &flops, NULL) == 0)
        json_object_set_new(out, "tflops", json_real((double)flops / (median_ms * 1e-3) / 1e12));
}

/* A rep chosen at random among the first three (every timing has at least three before its
 * final rep) for CUPTI's device time. */
static int random_rep(void)
{
    unsigned r = 0;
    if (getrandom(&r, sizeof(r), 0) != sizeof(r))
        r = (unsigned)now_ms();
    return 1 + (int)(r % 3);
}

/* Timed device time far below the checking runs' means the kernel did less work when timed. */
static void compare_with_checks(json_t *out, double check_ms, double cupti_ms, double median_ms)
{
    if (check_ms <= 0)
        return;
    json_object_set_new(out, "check_device_ms", json_real(check_ms));
    /* the lower of the timed reps' event median and the checked reps' CUPTI time: either far
     * below the checking runs' device time means less work when timed */
    double timed = cupti_ms > 0 && cupti_ms < median_ms ? cupti_ms : median_ms;
    double ratio = timed / check_ms;
    json_object_set_new(out, "timed_vs_check", json_real(ratio));
    if (timed < INCONSISTENT_RATIO * check_ms - INCONSISTENT_SLACK_MS) {
        char why[256];
        snprintf(why, sizeof(why), "timed runs took %.4f ms of device time against %.4f ms in the "
                 "checking runs (%.2fx): the kernel did less work when timed", timed, check_ms, ratio);
        json_object_set_new(out, "inconsistent", json_string(why));
    }
}

int wk_time_unit(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims, wk_buffer *bufs,
                 double cap_ms, const wk_rep_hooks *h, double check_device_ms, json_t *out,
                 wk_failure *f)
{
    CUevent start, stop;
    if (cuEventCreate(&start, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
        cuEventCreate(&stop, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
        return wk_fail_cuda(f, "runtime_error", CUDA_ERROR_UNKNOWN, "creating events");
    double *times = xmalloc((MAX_REPS + 1) * sizeof(double)), device[2] = {0, 0}, dev = 0;
    int n = 0, rc, cupti_at = random_rep(), measured = 0, final = 0;
    float ms;
    /* No warm-up rep: the checking runs have just run the unit on the same GPU, and every rep
     * starts from the same state (fresh module, cold L2) as they did. */
    rc = 0;
    double t0 = now_ms();
    /* Reps 1, 2, ... until the noise criterion or the cap (the cap counts the checks too);
     * then one more, the final rep, measured by CUPTI like the random early one. */
    while (rc == 0) {
        int with_cupti = final || n + 1 == cupti_at;
        rc = timed_rep(g, u, p, dims, bufs, h, n + 1, with_cupti, start, stop, &ms, &dev, f);
        if (rc != 0)
            break;
        times[n++] = ms;
        if (with_cupti && dev > 0 && measured < 2)
            device[measured++] = dev;
        if (final)
            break;
        final = (n >= MIN_REPS && median_noise(times, n) < NOISE_TARGET) ||
                (now_ms() - t0 > cap_ms && n >= 3) || n == MAX_REPS;
    }
    if (rc == 0) {
        double noise = median_noise(times, n);
        double window = 0;
        for (int i = 0; i < n; i++)
            window += times[i];
        json_object_set_new(out, "timed_window_ms", json_real(window)); /* the rest: checks */
        put_stats(out, times, n);
        json_object_set_new(out, "noise", json_real(noise));
        json_object_set_new(out, "checked_reps", json_integer(n)); /* every rep */
        double median = json_real_value(json_object_get(out, "median_ms"));
        put_roofline(out, p, dims, median);
        /* device time of the checked reps: the median of two is their mean */
        double cupti = device[0] > 0 && device[1] > 0 ? (device[0] + device[1]) / 2 : device[0] + device[1];
        json_object_set_new(out, "cupti_ms", json_real(cupti));
        compare_with_checks(out, check_device_ms, cupti, median);
    }
    free(times);
    cuEventDestroy(start);
    cuEventDestroy(stop);
    return rc;
}
