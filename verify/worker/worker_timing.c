/* worker_timing: timing of a correct candidate's launch unit on the default dims. Its samples
 * are the checking runs on the default dims (one per seed): each is prepared as any execution
 * is (fresh inputs from its seed, poisoned outputs and scratch, a freshly loaded module, cold
 * L2), timed by device events around the unit, and checked after it (inputs unchanged, guard
 * bands intact, outputs matching the reference's on those inputs). Only while the noise
 * criterion is unmet do extra reps follow, each on fresh inputs from seed_base + rep, a seed no
 * check used, prepared and checked alike: no state a kernel keeps between executions can make a
 * timed run do less work than a checked one, since every timed run is a checked one. Samples
 * at varied constants or on structured inputs are dropped when they spread the samples (they
 * can time another workload). Order
 * statistics over all samples; CUPTI's device time of the checking rerun of the first seed is
 * compared with the timed median. Bytes and flops of the manifest give GB/s and FLOP/s. Just
 * before each sample's window a probe measures the SM clock, recorded with the timing: the GPU
 * changes it on its own, and a kernel bound by it changes speed in proportion. */
#include "common/error.h"
#include "common/fsutil.h"
#include "common/timing_stats.h"
#include "verify/worker/worker.h"

#include <cupti.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPS 1000
#define INCONSISTENT_RATIO 0.5     /* timed device time below half the checking runs' ... */
#define INCONSISTENT_SLACK_MS 0.005 /* ... by more than launch jitter is flagged */

/* The candidate's launch unit between two device events, the preparation already in flight
 * (the unit queues behind the L2 flush: no host launch latency in the window); the checking
 * runs and the extra timed reps alike. with_cupti also measures its kernels' device time. */
int wk_timed_launch(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims, wk_buffer *bufs,
                    wk_watch *watch, enum wk_phase phase, int with_cupti, float *ms,
                    double *device_ms, double *clock_mhz, wk_failure *f)
{
    int begun = with_cupti ? wk_cupti_begin() : 0;
    double t0 = now_ms();
    int probed = clock_mhz && wk_clock_probe_launch(g) == 0;
    CUresult rc = cuEventRecord(g->ev_start, g->stream);
    if (rc != CUDA_SUCCESS) {
        wk_cupti_end(begun);
        return wk_fail_cuda(f, "runtime_error", rc, "timing");
    }
    int launched = wk_unit_launch(g, u, p, dims, bufs, watch, f) == 0;
    rc = cuEventRecord(g->ev_stop, g->stream);
    if (rc == CUDA_SUCCESS)
        rc = cuEventSynchronize(g->ev_stop);
    double t1 = wk_phase_add(phase, t0);
    *device_ms = wk_cupti_end(begun);
    wk_phase_add(WK_PH_CUPTI, t1);
    if (clock_mhz)
        *clock_mhz = probed && rc == CUDA_SUCCESS ? wk_clock_probe_mhz(g) : 0;
    wk_printf_drain();
    if (!launched)
        return -1;
    if (rc != CUDA_SUCCESS)
        return wk_fail_candidate(f, rc, phase == WK_PH_TIMED ? "a timed run" : "running the candidate");
    rc = cuEventElapsedTime(ms, g->ev_start, g->ev_stop);
    return rc == CUDA_SUCCESS ? 0 : wk_fail_cuda(f, "runtime_error", rc, "timing");
}

/* One extra rep, checked after its timed window. */
static int timed_rep(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims, wk_buffer *bufs,
                     const wk_rep_hooks *h, int rep, float *ms, double *clock_mhz, wk_failure *f)
{
    double device_ms;
    wk_scrub_wait();
    if (h->prepare(h->ctx, rep, f) ||
        wk_timed_launch(g, u, p, dims, bufs, NULL, WK_PH_TIMED, 0, ms, &device_ms, clock_mhz, f))
        return -1;
    return h->check(h->ctx, rep, f);
}

/* ---- CUPTI ---- */

static struct {
    double kernel_ns; /* summed over records */
    int records;
} cupti_acc;
static wk_kernel_profile *cupti_profile; /* kverify dump --profile's table, or NULL */

void wk_cupti_profile_into(wk_kernel_profile *profile) { cupti_profile = profile; }

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
            if (cupti_profile)
                wk_profile_add(cupti_profile, k->name ? k->name : "(unnamed)",
                               (double)(k->end - k->start));
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
    kc_sort_doubles(times, n);
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++)
        sum += times[i];
    double mean = sum / n;
    for (int i = 0; i < n; i++)
        sq += (times[i] - mean) * (times[i] - mean);
    json_object_set_new(out, "median_ms", json_real(kc_quantile(times, n, 0.5)));
    json_object_set_new(out, "mean_ms", json_real(mean));
    json_object_set_new(out, "stdev_ms", json_real(n > 1 ? sqrt(sq / (n - 1)) : 0));
    json_object_set_new(out, "min_ms", json_real(times[0]));
    json_object_set_new(out, "p10_ms", json_real(kc_quantile(times, n, 0.1)));
    json_object_set_new(out, "p90_ms", json_real(kc_quantile(times, n, 0.9)));
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

/* An event-timed median far below the candidate's CUPTI device time at the same dims (the
 * rerun of the first seed) means the kernel did less work in the timed runs. */
static void compare_with_checks(json_t *out, double check_ms, double median_ms)
{
    if (check_ms <= 0)
        return;
    json_object_set_new(out, "check_device_ms", json_real(check_ms));
    double ratio = median_ms / check_ms;
    json_object_set_new(out, "timed_vs_check", json_real(ratio));
    if (median_ms < INCONSISTENT_RATIO * check_ms - INCONSISTENT_SLACK_MS) {
        char why[256];
        snprintf(why, sizeof(why), "timed runs took %.4f ms against %.4f ms of device time in the "
                 "checking rerun (%.2fx): the kernel did less work when timed", median_ms, check_ms,
                 ratio);
        json_object_set_new(out, "inconsistent", json_string(why));
    }
}

/* The SM clock over the samples that have a reading: median, min and max in MHz. */
static void put_clock(json_t *out, const double *clock_mhz, int n)
{
    double *c = xmalloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    int k = 0;
    for (int i = 0; i < n; i++)
        if (clock_mhz[i] > 0)
            c[k++] = clock_mhz[i];
    if (k > 0) {
        kc_sort_doubles(c, k);
        json_object_set_new(out, "sm_clock_mhz", json_real(kc_quantile(c, k, 0.5)));
        json_object_set_new(out, "sm_clock_min_mhz", json_real(c[0]));
        json_object_set_new(out, "sm_clock_max_mhz", json_real(c[k - 1]));
    }
    free(c);
}

int wk_time_unit(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims, wk_buffer *bufs,
                 double cap_ms, double noise_target, const wk_rep_hooks *h,
                 const wk_samples *samples, double check_device_ms, json_t *out, wk_failure *f)
{
    double *times = xmalloc((MAX_REPS + WK_MAX_SAMPLES) * sizeof(double));
    double *clocks = xmalloc((MAX_REPS + WK_MAX_SAMPLES) * sizeof(double));
    int n = 0, rc = 0, extra = 0, dropped = 0;
    for (int i = 0; i < samples->n && i < WK_MAX_SAMPLES; i++, n++) {
        times[n] = samples->ms[i];
        clocks[n] = samples->clock_mhz[i];
    }
    /* Samples at varied constants or on structured inputs can time another workload (in a
     * softcap kernel a cap of 3, or rows scaled up to 4x, send tanh down its slow path: 26.4
     * and 25.5 against 24.1 ms): when they spread the samples beyond the criterion, only the
     * plain ones stay (the manifest's constants, unstructured inputs, as KernelBench times),
     * and the extra reps, which are plain, add to them until KC_TIMING_MIN_PLAIN samples
     * meet the noise criterion. */
    int before = n;
    n = kc_timing_keep_plain(times, clocks, samples->plain, n, noise_target);
    dropped = before - n;
    int min_reps = dropped ? KC_TIMING_MIN_PLAIN : KC_TIMING_MIN_REPS;
    double t0 = now_ms();
    /* Extra reps, each on fresh inputs, until the noise criterion or the cap (the cap counts
     * the checks too). */
    while (!kc_timing_enough(times, n, min_reps, noise_target) && !(now_ms() - t0 > cap_ms && n >= 3) &&
           extra < MAX_REPS) {
        float ms;
        rc = timed_rep(g, u, p, dims, bufs, h, extra + 1, &ms, &clocks[n], f);
        if (rc != 0)
            break;
        times[n++] = ms;
        extra++;
    }
    if (rc == 0 && n > 0) {
        double noise = kc_median_noise(times, n);
        double window = 0;
        for (int i = 0; i < n; i++)
            window += times[i];
        json_object_set_new(out, "timed_window_ms", json_real(window));
        put_stats(out, times, n);
        json_object_set_new(out, "noise", json_real(noise));
        json_object_set_new(out, "noise_target", json_real(noise_target));
        put_clock(out, clocks, n);
        json_object_set_new(out, "checked_reps", json_integer(n)); /* every sample was checked */
        json_object_set_new(out, "from_checks", json_integer(n < extra ? 0 : n - extra));
        json_object_set_new(out, "extra_reps", json_integer(extra));
        if (dropped)
            json_object_set_new(out, "dropped_varied", json_integer(dropped));
        double median = json_real_value(json_object_get(out, "median_ms"));
        put_roofline(out, p, dims, median);
        json_object_set_new(out, "cupti_ms", json_real(check_device_ms));
        compare_with_checks(out, check_device_ms, median);
    }
    free(times);
    free(clocks);
    return rc;
}
