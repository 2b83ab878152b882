/* worker_timing: timing of a correct candidate's launch unit on the default
 * dims: L2 flushed (2x its size written) before every rep, device events
 * around the unit, warm-up, adaptive repetitions until a noise criterion or a
 * time cap, order statistics; CUPTI activity records give the per-kernel
 * device time; bytes and flops of the manifest give GB/s and FLOP/s. */
#include "common/error.h"
#include "common/fsutil.h"
#include "verify/worker.h"

#include <cupti.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_REPS 10
#define MAX_REPS 1000
#define NOISE_TARGET 0.005 /* relative standard error of the median */
#define CUPTI_REPS 5

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

static int timed_rep(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims, wk_buffer *bufs,
                     CUevent start, CUevent stop, float *ms, wk_failure *f)
{
    CUresult rc = cuMemsetD32Async(g->flush, 0x5a5a5a5a, g->flush_bytes / 4, g->stream);
    if (rc == CUDA_SUCCESS)
        rc = cuEventRecord(start, g->stream);
    if (rc != CUDA_SUCCESS)
        return wk_fail_cuda(f, "runtime_error", rc, "timing");
    if (wk_unit_launch(g, u, p, dims, bufs, f))
        return -1;
    rc = cuEventRecord(stop, g->stream);
    if (rc == CUDA_SUCCESS)
        rc = cuEventSynchronize(stop);
    if (rc == CUDA_SUCCESS)
        rc = cuEventElapsedTime(ms, start, stop);
    return rc == CUDA_SUCCESS ? 0 : wk_fail_cuda(f, "runtime_error", rc, "timing");
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

/* Device time of the unit's kernels per rep (ms), or 0 when CUPTI is unavailable. */
static double cupti_unit_time(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims,
                              wk_buffer *bufs, double median_ms, wk_failure *f)
{
    /* Up to CUPTI_REPS reps, fewer for slow units (about 50 ms in all, at least one). */
    int reps = median_ms > 0 ? (int)(50.0 / median_ms) : CUPTI_REPS;
    reps = reps < 1 ? 1 : reps > CUPTI_REPS ? CUPTI_REPS : reps;
    static int registered;
    if (!registered) {
        if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS)
            return 0;
        registered = 1;
    }
    memset(&cupti_acc, 0, sizeof(cupti_acc));
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
        return 0;
    int ok = 1;
    for (int i = 0; i < reps && ok; i++)
        ok = wk_unit_launch(g, u, p, dims, bufs, f) == 0;
    ok = ok && cuStreamSynchronize(g->stream) == CUDA_SUCCESS;
    cuptiActivityFlushAll(1);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (!ok || cupti_acc.records == 0)
        return 0;
    return cupti_acc.kernel_ns / reps / 1e6;
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

int wk_time_unit(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims, wk_buffer *bufs,
                 double cap_ms, json_t *out, wk_failure *f)
{
    CUevent start, stop;
    if (cuEventCreate(&start, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
        cuEventCreate(&stop, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
        return wk_fail_cuda(f, "runtime_error", CUDA_ERROR_UNKNOWN, "creating events");
    double *times = xmalloc(MAX_REPS * sizeof(double));
    int n = 0, rc = 0;
    float ms;
    /* One warm-up rep: the unit already ran several times in the correctness stage. */
    rc = timed_rep(g, u, p, dims, bufs, start, stop, &ms, f);
    double t0 = now_ms();
    while (rc == 0 && n < MAX_REPS) {
        rc = timed_rep(g, u, p, dims, bufs, start, stop, &ms, f);
        if (rc == 0)
            times[n++] = ms;
        double spent = now_ms() - t0;
        if (n >= MIN_REPS && median_noise(times, n) < NOISE_TARGET)
            break;
        if (spent > cap_ms && n >= 3)
            break;
    }
    if (rc == 0) {
        double noise = median_noise(times, n);
        put_stats(out, times, n);
        json_object_set_new(out, "noise", json_real(noise));
        double median = json_real_value(json_object_get(out, "median_ms"));
        put_roofline(out, p, dims, median);
        json_object_set_new(out, "cupti_ms", json_real(cupti_unit_time(g, u, p, dims, bufs, median, f)));
    }
    free(times);
    cuEventDestroy(start);
    cuEventDestroy(stop);
    return rc;
}
