/* worker_check: one verification job on the GPU: for each seed on the default dims, each alt
 * dims set, each random hidden set, each stratified and boundary set the client sent (issue 34)
 * and each value-class run the manifest declares, seeded inputs (params varied in turn,
 * structured where the manifest says), poisoned outputs and scratch, buffers placed flush
 * against their walls front or end in turn, guard bands, input checksums, the candidate, then
 * the trusted reference, the comparison, and the verdict (every candidate stage's deadline
 * derives from the reference's time in the first run, verify/service/deadline.h); a second run
 * of the first seed
 * catches races. Each default-dims seed run is also a timing sample (device events around the
 * unit); when everything passed, the timing takes those samples, with extra checked reps only
 * while they are too few or too noisy (worker_timing.c). A job of a batch (issue 37) starts by
 * overwriting what earlier jobs left on the chip and in the cached tensors, lists its runs, and
 * takes the reference's outputs of a run from those an earlier candidate of its batch left
 * (worker_batch.c) instead of running the reference, when they were kept. */
#include "common/error.h"
#include "common/fsutil.h"
#include "common/hash.h"
#include "verify/service/batch.h"
#include "verify/service/deadline.h"
#include "verify/service/ipc.h"
#include "verify/service/policy.h"
#include "common/timing_stats.h"
#include "verify/worker/worker.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define REFERENCE_DEADLINE_MS DEADLINE_TRUSTED_MS /* candidate stages: deadline_for_run */

/* Whether the last progress report was of a trusted stage (the checks, the reference): the
 * next trusted stage needs no report of its own, since both have the trusted deadline and
 * kverify charges a timeout in either to the verifier (runtime_error), not to the candidate.
 * Four reports a run were two. */
static int trusted_reported;

static int trusted_stage(const char *stage)
{
    return strcmp(stage, "checks") == 0 || strcmp(stage, "reference") == 0;
}

void wk_progress(const char *stage, double deadline_ms)
{
    int trusted = trusted_stage(stage) && deadline_ms == REFERENCE_DEADLINE_MS;
    if (trusted && trusted_reported)
        return;
    trusted_reported = trusted;
    json_t *m = json_pack("{s:s,s:f}", "progress", stage, "deadline_ms", deadline_ms);
    wk_channel_send(m);
    json_decref(m);
}

/* A stage that runs candidate code: its deadline and what it derives from (deadline.h). */
static void progress_candidate(const char *stage, const stage_deadline *d)
{
    trusted_reported = 0;
    json_t *m = deadline_progress(stage, d);
    wk_channel_send(m);
    json_decref(m);
}

/* The reference comes compiled from the client (trusted code, compiled once per problem
 * there), so the GPU never waits for NVRTC; loading a module takes well under a millisecond. */
static int reference_unit(const problem *p, const strbuf *ref_cubin, wk_unit *ref, wk_failure *f)
{
    if (ref_cubin && wk_unit_load(ref, ref_cubin->buf, p->reference_source.buf, p, f) == 0)
        return 0;
    snprintf(f->verdict, sizeof(f->verdict), "runtime_error");
    sb_reset(&f->message);
    sb_addf(&f->message, "internal: the reference of %s %s", p->id,
            ref_cubin ? "does not load" : "was not sent with the job");
    return -1;
}

/* Buffers of one dims set: inputs shared; outputs and scratch per side. */
struct run_buffers {
    int n_in, n_out, n_cscratch, n_rscratch;
    wk_buffer cand[2 * KC_MAX_TENSORS + KC_MAX_SCRATCH]; /* inputs, outputs, scratch */
    wk_buffer ref[2 * KC_MAX_TENSORS + KC_MAX_SCRATCH];  /* aliases inputs; own outputs, scratch */
    wk_watch watch; /* the guard bands checked between the candidate's launches in this run */
};

/* Frees every scratch buffer held on both sides. Scratch is kept across the runs of one job
 * (resized per dims set) and freed when the job ends, so nothing one candidate asked for
 * outlives its verification. */
static void free_scratch(struct run_buffers *b)
{
    int base = b->n_in + b->n_out;
    for (int i = base; i < base + KC_MAX_SCRATCH; i++) {
        wk_buffer_free(&b->cand[i]);
        wk_buffer_free(&b->ref[i]);
    }
    b->n_cscratch = b->n_rscratch = 0;
}

static void free_tensors(struct run_buffers *b)
{
    free_scratch(b);
    for (int i = 0; i < b->n_in + b->n_out; i++)
        wk_buffer_free(&b->cand[i]);
    for (int i = b->n_in; i < b->n_in + b->n_out; i++)
        wk_buffer_free(&b->ref[i]);
    memset(b, 0, sizeof(*b));
}

static int alloc_scratch(wk_gpu *g, wk_buffer *dst, const launch_unit *lu, const dimset *dims, wk_failure *f)
{
    strbuf err = STRBUF_INIT;
    for (int i = 0; i < lu->n_scratch; i++) {
        int64_t n;
        if (expr_eval(lu->scratch[i].count, dims, &n, &err) || n < 0 ||
            wk_buffer_resize(g, &dst[i], lu->scratch[i].dtype, n, &err)) {
            snprintf(f->verdict, sizeof(f->verdict), "launch_error");
            sb_reset(&f->message);
            sb_addf(&f->message, "line %d: scratch %s: %s", lu->scratch[i].line,
                    lu->scratch[i].name, err.len ? err.buf : "negative size");
            sb_free(&err);
            return -1;
        }
    }
    sb_free(&err);
    return 0;
}

/* Gives every tensor of b its size at dims, keeping each mapping that can hold it
 * (wk_buffer_resize); inputs are shared by both sides. */
static int size_tensors(wk_gpu *g, const problem *p, const dimset *dims, struct run_buffers *b,
                        wk_failure *f)
{
    strbuf err = STRBUF_INIT;
    b->n_in = p->n_inputs;
    b->n_out = p->n_outputs;
    for (int i = 0; i < p->n_inputs + p->n_outputs; i++) {
        const tensor_spec *t = i < p->n_inputs ? &p->inputs[i] : &p->outputs[i - p->n_inputs];
        int64_t n;
        if (tensor_numel(t, dims, &n, &err) || wk_buffer_resize(g, &b->cand[i], t->dtype, n, &err) ||
            (i >= p->n_inputs && wk_buffer_resize(g, &b->ref[i], t->dtype, n, &err))) {
            snprintf(f->verdict, sizeof(f->verdict), "runtime_error");
            sb_reset(&f->message);
            sb_addf(&f->message, "internal: %s", err.buf);
            sb_free(&err);
            free_tensors(b);
            return -1;
        }
        if (i < p->n_inputs)
            b->ref[i] = b->cand[i];
    }
    sb_free(&err);
    return 0;
}

static int alloc_tensors(wk_gpu *g, const problem *p, const dimset *dims, struct run_buffers *b, wk_failure *f)
{
    memset(b, 0, sizeof(*b));
    return size_tensors(g, p, dims, b, f);
}

/* Tensor buffers are kept between runs and jobs: slot 0 holds the default dims
 * of the last problem, slot 1 the last other dims set. Allocating several GB
 * costs far more than the checks themselves. */
static struct {
    char *key;
    struct run_buffers b;
} tensor_cache[2];

/* Names alone do not identify a hidden set (drawn anew per job): the values are in the key. */
static void cache_key(const problem *p, const char *dims_name, const dimset *dims, strbuf *key)
{
    sb_addf(key, "%s@%s:", p->id, dims_name);
    dimset_to_json(dims, key);
}

static struct run_buffers *acquire_tensors(wk_gpu *g, const problem *p, const char *dims_name,
                                           const dimset *dims, wk_failure *f)
{
    int slot = strcmp(dims_name, "default") == 0 ? 0 : 1;
    strbuf key = STRBUF_INIT;
    cache_key(p, dims_name, dims, &key);
    if (tensor_cache[slot].key && strcmp(tensor_cache[slot].key, key.buf) == 0) {
        sb_free(&key);
        return &tensor_cache[slot].b;
    }
    /* another dims set of the same problem keeps the mappings that can hold it */
    int same_problem = tensor_cache[slot].key &&
                       strncmp(tensor_cache[slot].key, key.buf, strcspn(key.buf, "@") + 1) == 0;
    free(tensor_cache[slot].key);
    tensor_cache[slot].key = NULL;
    if (!same_problem)
        free_tensors(&tensor_cache[slot].b);
    if ((same_problem ? size_tensors(g, p, dims, &tensor_cache[slot].b, f)
                      : alloc_tensors(g, p, dims, &tensor_cache[slot].b, f))) {
        sb_free(&key);
        return NULL;
    }
    tensor_cache[slot].key = sb_detach(&key);
    return &tensor_cache[slot].b;
}

/* Restores every guard band (a bad candidate may have written into them). */
static int reset_guards(wk_gpu *g, struct run_buffers *b)
{
    int n = b->n_in + b->n_out;
    for (int i = 0; i < n + b->n_cscratch; i++)
        if (wk_buffer_reset_guards(g, &b->cand[i]))
            return -1;
    for (int i = b->n_in; i < n + b->n_rscratch; i++)
        if (wk_buffer_reset_guards(g, &b->ref[i]))
            return -1;
    return 0;
}

/* Every buffer flush against the wall before it (front) or ending at the wall after it; the
 * inputs the reference reads are the candidate's. */
static void place_buffers(struct run_buffers *b, int front)
{
    int n = b->n_in + b->n_out;
    for (int i = 0; i < n + b->n_cscratch; i++)
        wk_buffer_place(&b->cand[i], front);
    for (int i = b->n_in; i < n + b->n_rscratch; i++)
        wk_buffer_place(&b->ref[i], front);
    for (int i = 0; i < b->n_in; i++)
        b->ref[i] = b->cand[i];
}

/* Tensors from the cache plus this candidate's and the reference's scratch, placed as front
 * says (the runs of a job alternate). */
static struct run_buffers *prepare_buffers_now(wk_gpu *g, const problem *p, const char *dims_name,
                                               const dimset *dims, const wk_unit *cand,
                                               const wk_unit *ref, int front, wk_failure *f)
{
    wk_guard_rekey(g); /* every guard band of this run is written below under the new key */
    struct run_buffers *b = acquire_tensors(g, p, dims_name, dims, f);
    if (!b && wk_batch_holding()) { /* the memory of the batches' kept outputs, given back */
        wk_batch_drop_all(g);
        b = acquire_tensors(g, p, dims_name, dims, f);
    }
    if (!b)
        return NULL;
    b->watch.near.n_ranges = b->watch.far.n_ranges = b->watch.active = 0;
    int base = p->n_inputs + p->n_outputs;
    b->n_cscratch = cand->lu.n_scratch;
    b->n_rscratch = ref->lu.n_scratch;
    for (int i = base + b->n_cscratch; i < base + KC_MAX_SCRATCH; i++) /* another unit's */
        wk_buffer_free(&b->cand[i]);
    for (int i = base + b->n_rscratch; i < base + KC_MAX_SCRATCH; i++)
        wk_buffer_free(&b->ref[i]);
    int failed = alloc_scratch(g, &b->cand[base], &cand->lu, dims, f) ||
                 alloc_scratch(g, &b->ref[base], &ref->lu, dims, f);
    if (failed && wk_batch_holding()) { /* as above */
        wk_batch_drop_all(g);
        failed = alloc_scratch(g, &b->cand[base], &cand->lu, dims, f) ||
                 alloc_scratch(g, &b->ref[base], &ref->lu, dims, f);
    }
    if (failed) {
        free_scratch(b);
        return NULL;
    }
    place_buffers(b, front);
    if (reset_guards(g, b)) {
        free_scratch(b);
        snprintf(f->verdict, sizeof(f->verdict), "runtime_error");
        sb_reset(&f->message);
        sb_adds(&f->message, "internal: cannot reset guard bands");
        f->fatal = 1;
        return NULL;
    }
    return b;
}

static struct run_buffers *prepare_buffers(wk_gpu *g, const problem *p, const char *dims_name,
                                           const dimset *dims, const wk_unit *cand,
                                           const wk_unit *ref, int front, wk_failure *f)
{
    double t0 = now_ms();
    struct run_buffers *b = prepare_buffers_now(g, p, dims_name, dims, cand, ref, front, f);
    wk_phase_add(WK_PH_BUFFERS, t0);
    return b;
}

static int sync_or_fail(wk_gpu *g, wk_failure *f, const char *what)
{
    CUresult rc = cuStreamSynchronize(g->stream);
    wk_printf_drain();
    return rc == CUDA_SUCCESS ? 0 : wk_fail_cuda(f, "runtime_error", rc, what);
}

/* vary: inputs initialised to a constant get their manifest's "vary" distribution instead
 * (every seed but the first, and the hidden dims), so a kernel cannot assume the constant.
 * sums: each input's checksum, taken as it is generated (compared after the candidate ran). */
static int fill_inputs(wk_gpu *g, const problem *p, const dimset *dims, uint64_t seed, int vary,
                       const wk_fill_mode *mode, struct run_buffers *b, uint64_t *sums,
                       wk_failure *f)
{
    double t0 = now_ms();
    strbuf err = STRBUF_INIT;
    CUresult rc = wk_sums_clear(g, p->n_inputs);
    for (int i = 0; i < p->n_inputs && rc == CUDA_SUCCESS; i++) {
        tensor_spec varied;
        const tensor_spec *t = vary ? tensor_spec_varied(&p->inputs[i], &varied) : &p->inputs[i];
        if (wk_fill_input(g, &b->cand[i], t, dims, seed, (unsigned)i, wk_sum_slot(g, i), mode, &err)) {
            snprintf(f->verdict, sizeof(f->verdict), "runtime_error");
            sb_reset(&f->message);
            sb_addf(&f->message, "internal: %s", err.buf);
            sb_free(&err);
            return -1;
        }
    }
    sb_free(&err);
    if (rc == CUDA_SUCCESS)
        rc = wk_sums_read(g, sums, p->n_inputs);
    wk_printf_drain();
    wk_phase_add(WK_PH_INPUTS, t0);
    return rc == CUDA_SUCCESS ? 0 : wk_fail_cuda(f, "runtime_error", rc, "generating inputs");
}

static int poison_side(wk_gpu *g, wk_buffer *bufs, int from, int to)
{
    for (int i = from; i < to; i++)
        if (wk_buffer_poison(g, &bufs[i]))
            return -1;
    return 0;
}

/* What every execution of the candidate starts from, checked or timed, coverage run or not:
 * poisoned outputs and scratch, a freshly loaded module when it has device globals (no device
 * state from earlier executions, so no execution can tell from its module whether it is the
 * first since a load or a later one; a module without them has no state to lose) and a cold L2
 * (nor from its inputs' load latency).
 * The caller has just written fresh inputs. The L2 flush is left in flight, so the launch that
 * follows queues behind it (no host launch latency inside a timed region). */
static int prepare_execution(wk_gpu *g, wk_unit *cand, struct run_buffers *b, wk_failure *f)
{
    double t0 = now_ms();
    int n = b->n_in + b->n_out + b->n_cscratch;
    if (poison_side(g, b->cand, b->n_in, n))
        return wk_fail_cuda(f, "runtime_error", CUDA_ERROR_UNKNOWN, "poisoning outputs");
    if (cand->keeps_state && (sync_or_fail(g, f, "preparing a run") || wk_unit_reload(cand, f)))
        return -1;
    wk_watch_set(b->cand, n, &b->watch);
    if (cuMemsetD8Async(wk_sum_slot(g, WK_WATCH_SLOT), 0, 8, g->stream) != CUDA_SUCCESS)
        return wk_fail_cuda(f, "runtime_error", CUDA_ERROR_UNKNOWN, "clearing a count");
    if (wk_flush_l2(g))
        return wk_fail_cuda(f, "runtime_error", CUDA_ERROR_UNKNOWN, "flushing L2");
    wk_phase_add(WK_PH_PREPARE, t0);
    return 0;
}

/* One checked execution, prepared and timed by device events exactly as a timed rep is (the
 * checking runs on the default dims are the timing's samples); *device_ms: its kernels' CUPTI
 * device time when with_cupti (0 when unknown). watch: the guard bands are also checked
 * between the launches (never in a timing sample or under CUPTI: the checks would be inside
 * the measured window). */
static int run_candidate(wk_gpu *g, wk_unit *cand, const problem *p, const dimset *dims,
                         struct run_buffers *b, const stage_deadline *deadline, int with_cupti,
                         int watch, float *ms, double *device_ms, double *clock_mhz,
                         wk_failure *f)
{
    progress_candidate("candidate", deadline);
    if (clock_mhz) /* a timing sample */
        wk_scrub_wait();
    if (prepare_execution(g, cand, b, f))
        return -1;
    b->watch.active = watch;
    if (wk_timed_launch(g, cand, p, dims, b->cand, watch ? &b->watch : NULL, WK_PH_CANDIDATE,
                        with_cupti, ms, device_ms, clock_mhz, f))
        return -1;
    wk_progress("checks", REFERENCE_DEADLINE_MS);
    return 0;
}

static const char *buffer_name(const problem *p, const wk_unit *u, int i)
{
    if (i < p->n_inputs)
        return p->inputs[i].name;
    if (i < p->n_inputs + p->n_outputs)
        return p->outputs[i - p->n_inputs].name;
    return u->lu.scratch[i - p->n_inputs - p->n_outputs].name;
}

/* Launches the checksums of n buffers into slots first_slot, first_slot + 1, ... */
static CUresult checksums_into(wk_gpu *g, const wk_buffer *bufs, int n, int first_slot)
{
    for (int i = 0; i < n; i++)
        if (wk_buffer_checksum_into(g, &bufs[i], wk_sum_slot(g, first_slot + i)))
            return CUDA_ERROR_LAUNCH_FAILED;
    return CUDA_SUCCESS;
}

/* The verdict unsafe, its message left empty for the caller to write. */
static strbuf *unsafe(wk_failure *f)
{
    snprintf(f->verdict, sizeof(f->verdict), "unsafe");
    sb_reset(&f->message);
    return &f->message;
}

/* Which buffer's guard bands changed (after the one-launch check found some): slots 0.. */
static int name_guard_damage(wk_gpu *g, const problem *p, const wk_unit *cand,
                             struct run_buffers *b, wk_failure *f)
{
    int n_buf = b->n_in + b->n_out + b->n_cscratch;
    uint64_t v[WK_SUM_SLOTS];
    CUresult rc = wk_sums_clear(g, n_buf);
    for (int i = 0; i < n_buf && rc == CUDA_SUCCESS; i++)
        if (wk_buffer_guard_damage_into(g, &b->cand[i], wk_sum_slot(g, i)))
            rc = CUDA_ERROR_LAUNCH_FAILED;
    if (rc == CUDA_SUCCESS)
        rc = wk_sums_read(g, v, n_buf);
    if (rc != CUDA_SUCCESS)
        return wk_fail_cuda(f, "runtime_error", rc, "checking guard bands");
    int i = 0;
    while (i < n_buf - 1 && v[i] == 0)
        i++;
    sb_addf(unsafe(f), "wrote %llu bytes outside buffer '%s' (guard band overwritten)",
            (unsigned long long)v[i], buffer_name(p, cand, i));
    return -1;
}

/* Slots: the inputs' checksums first, then the guard bands' changed bytes (one launch over
 * the run's table); WK_WATCH_SLOT holds what the checks between launches found. */
static int check_safety_now(wk_gpu *g, const problem *p, const wk_unit *cand,
                            struct run_buffers *b, const uint64_t *sums, wk_failure *f)
{
    int n_slots = b->n_in + 1;
    uint64_t v[WK_SUM_SLOTS];
    CUresult rc = wk_sums_clear(g, n_slots); /* not WK_WATCH_SLOT: cleared before the launches */
    if (rc == CUDA_SUCCESS)
        rc = checksums_into(g, b->cand, b->n_in, 0);
    if (rc == CUDA_SUCCESS && wk_watch_count_into(g, &b->watch, wk_sum_slot(g, b->n_in)))
        rc = CUDA_ERROR_LAUNCH_FAILED;
    if (rc == CUDA_SUCCESS)
        rc = wk_sums_read(g, v, WK_SUM_SLOTS);
    if (rc != CUDA_SUCCESS)
        return wk_fail_cuda(f, "runtime_error", rc, "checking guard bands and inputs");
    if (v[b->n_in] > 0)
        return name_guard_damage(g, p, cand, b, f);
    if (b->watch.active && v[WK_WATCH_SLOT] > 0) {
        sb_addf(unsafe(f), "wrote %llu bytes outside its buffers between two launches (a guard "
                           "band was changed, then put back before the unit ended)",
                (unsigned long long)v[WK_WATCH_SLOT]);
        return -1;
    }
    for (int i = 0; i < b->n_in; i++) {
        if (v[i] != sums[i]) {
            sb_addf(unsafe(f), "modified input '%s' (inputs are read-only)", p->inputs[i].name);
            return -1;
        }
    }
    return 0;
}

/* After an execution of the candidate: guard bands intact and inputs unchanged. */
static int check_safety(wk_gpu *g, const problem *p, const wk_unit *cand, struct run_buffers *b,
                        const uint64_t *sums, wk_failure *f)
{
    double t0 = now_ms();
    int rc = check_safety_now(g, p, cand, b, sums, f);
    wk_phase_add(WK_PH_SAFETY, t0);
    return rc;
}

/* The reference into its own outputs; *ms (NULL: not wanted): its launches' time between
 * device events (the poisoning before them excluded). */
static int run_reference(wk_gpu *g, wk_unit *ref, const problem *p, const dimset *dims,
                         struct run_buffers *b, float *ms, wk_failure *f)
{
    int n = b->n_in + b->n_out + b->n_rscratch;
    double t0 = now_ms();
    wk_progress("reference", REFERENCE_DEADLINE_MS);
    if (poison_side(g, b->ref, b->n_in, n) ||
        (ms && cuEventRecord(g->ev_start, g->stream) != CUDA_SUCCESS) ||
        wk_unit_launch(g, ref, p, dims, b->ref, NULL, f) ||
        (ms && cuEventRecord(g->ev_stop, g->stream) != CUDA_SUCCESS) ||
        sync_or_fail(g, f, "running the reference") ||
        (ms && cuEventElapsedTime(ms, g->ev_start, g->ev_stop) != CUDA_SUCCESS)) {
        f->fatal = 1;
        sb_adds(&f->message, " (internal: the reference failed)");
        return -1;
    }
    wk_phase_add(WK_PH_REFERENCE, t0);
    wk_progress("checks", REFERENCE_DEADLINE_MS);
    return 0;
}


static double host_value(const unsigned char *raw, enum kc_dtype t)
{
    float fv;
    uint32_t w;
    switch (t) {
    case KC_F32: memcpy(&fv, raw, 4); return fv;
    case KC_F64: { double d; memcpy(&d, raw, 8); return d; }
    case KC_F16: { /* half to float */
        uint16_t h; memcpy(&h, raw, 2);
        int e = (h >> 10) & 31, m = h & 1023, s = h >> 15;
        double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
        return s ? -v : v; }
    case KC_BF16: { uint16_t h; memcpy(&h, raw, 2); w = (uint32_t)h << 16; memcpy(&fv, &w, 4); return fv; }
    case KC_I32: { int32_t i; memcpy(&i, raw, 4); return i; }
    case KC_I64: { int64_t i; memcpy(&i, raw, 8); return (double)i; }
    default: return raw[0];
    }
}

static void add_multi_index(json_t *o, const tensor_spec *t, const dimset *dims, int64_t flat)
{
    int64_t ext[KC_MAX_RANK];
    json_t *idx = json_array();
    for (int d = 0; d < t->rank; d++)
        if (expr_eval(t->shape[d], dims, &ext[d], NULL))
            ext[d] = 1;
    int64_t pos[KC_MAX_RANK];
    for (int d = t->rank - 1; d >= 0; d--) {
        pos[d] = ext[d] ? flat % ext[d] : 0;
        flat = ext[d] ? flat / ext[d] : 0;
    }
    for (int d = 0; d < t->rank; d++)
        json_array_append_new(idx, json_integer(pos[d]));
    json_object_set_new(o, "index", idx);
}

/* A value in evidence keeps one JSON type: a number, or null when it is not finite, with its
 * text ("nan", "inf", "-inf" or the number) always beside it as KEY_text. */
static void put_value(json_t *o, const char *key, double v)
{
    char text[40], name[32];
    if (isnan(v))
        snprintf(text, sizeof(text), "nan");
    else if (isinf(v))
        snprintf(text, sizeof(text), v > 0 ? "inf" : "-inf");
    else
        snprintf(text, sizeof(text), "%.9g", v);
    snprintf(name, sizeof(name), "%s_text", key);
    json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
    json_object_set_new(o, name, json_string(text));
}

/* Compares one output; adds its statistics to run; returns 1 when it fails. */
static int compare_output(wk_gpu *g, const problem *p, int k, const dimset *dims,
                          struct run_buffers *b, json_t *run, double *worst_err, wk_failure *f)
{
    const tensor_spec *t = &p->outputs[k];
    wk_buffer *out = &b->cand[p->n_inputs + k], *ref = &b->ref[p->n_inputs + k];
    wk_cmp_stats st = {0};
    st.worst_index = ~0ull;
    long long n = out->numel;
    int dtype = (int)t->dtype;
    double atol = p->atol, rtol = p->rtol;
    CUdeviceptr sp = g->scratch_u64;
    void *args[] = {&out->ptr, &ref->ptr, &n, &dtype, &atol, &rtol, &sp};
    CUresult rc = cuMemcpyHtoDAsync(sp, &st, sizeof(st), g->stream);
    if (rc == CUDA_SUCCESS && n && wk_launch_harness(g, g->k_compare, n, args))
        rc = CUDA_ERROR_LAUNCH_FAILED;
    if (rc == CUDA_SUCCESS)
        rc = cuMemcpyDtoHAsync(&st, sp, sizeof(st), g->stream);
    if (rc == CUDA_SUCCESS)
        rc = cuStreamSynchronize(g->stream);
    if (rc == CUDA_SUCCESS && st.n_bad && wk_launch_harness(g, g->k_worst, n, args))
        rc = CUDA_ERROR_LAUNCH_FAILED;
    if (rc == CUDA_SUCCESS && st.n_bad)
        rc = cuMemcpyDtoHAsync(&st, sp, sizeof(st), g->stream);
    if (rc == CUDA_SUCCESS)
        rc = cuStreamSynchronize(g->stream);
    if (rc != CUDA_SUCCESS)
        return wk_fail_cuda(f, "runtime_error", rc, "comparing outputs"), -1;
    double max_abs = wk_bits_to_double(st.max_abs_bits), max_rel = wk_bits_to_double(st.max_rel_bits);
    double rel_l2 = st.sum_sq_ref > 0 ? sqrt(st.sum_sq_diff / st.sum_sq_ref) : sqrt(st.sum_sq_diff);
    json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:f,s:f,s:f}", "output", t->name, "numel", (json_int_t)n,
                          "bad", (json_int_t)st.n_bad, "nan_mismatch", (json_int_t)st.nan_mismatch,
                          "max_abs", max_abs, "max_rel", max_rel, "rel_l2", rel_l2);
    if (st.n_bad && st.worst_index != ~0ull) {
        unsigned char a[8] = {0}, r[8] = {0};
        size_t es = dtype_size(t->dtype);
        cuMemcpyDtoH(a, out->ptr + st.worst_index * es, es);
        cuMemcpyDtoH(r, ref->ptr + st.worst_index * es, es);
        json_object_set_new(o, "worst_flat_index", json_integer((json_int_t)st.worst_index));
        add_multi_index(o, t, dims, (int64_t)st.worst_index);
        double av = host_value(a, t->dtype), rv = host_value(r, t->dtype);
        put_value(o, "got", av);
        put_value(o, "expected", rv);
    }
    json_array_append_new(json_object_get(run, "outputs"), o);
    worst_err[0] = fmax(worst_err[0], max_abs);
    worst_err[1] = fmax(worst_err[1], max_rel);
    worst_err[2] = fmax(worst_err[2], rel_l2);
    return st.n_bad > 0;
}

/* Compares every output with the reference's, then scrubs the reference's outputs (poison).
 * Returns 1 when one differs, 0 when all match, -1 on failure. */
static int compare_outputs(wk_gpu *g, const problem *p, const dimset *dims, struct run_buffers *b,
                           json_t *run, double *worst_err, wk_failure *f)
{
    double t0 = now_ms();
    int bad = 0;
    for (int k = 0; k < p->n_outputs; k++) {
        int r = compare_output(g, p, k, dims, b, run, worst_err, f);
        if (r < 0)
            return -1;
        bad |= r;
    }
    poison_side(g, b->ref, b->n_in, b->n_in + b->n_out);
    wk_phase_add(WK_PH_COMPARE, t0);
    return bad;
}

/* One fingerprint of all outputs (the determinism rerun compares two). */
static int checksum_outputs(wk_gpu *g, struct run_buffers *b, uint64_t *sum, wk_failure *f)
{
    uint64_t v[KC_MAX_TENSORS];
    double t0 = now_ms();
    CUresult rc = wk_sums_clear(g, b->n_out);
    if (rc == CUDA_SUCCESS)
        rc = checksums_into(g, b->cand + b->n_in, b->n_out, 0);
    if (rc == CUDA_SUCCESS)
        rc = wk_sums_read(g, v, b->n_out);
    wk_phase_add(WK_PH_COMPARE, t0);
    if (rc != CUDA_SUCCESS)
        return wk_fail_cuda(f, "runtime_error", rc, "checksumming outputs");
    *sum = 0;
    for (int i = 0; i < b->n_out; i++)
        *sum = *sum * 31 + v[i];
    return 0;
}

struct job_state {
    wk_gpu *g;
    const problem *p;
    problem pv; /* p with the run's param values and tolerance (shallow copy: p's strings) */
    wk_unit *cand, *ref;
    struct {
        double reference_ms; /* before the first candidate run (0: not yet), on its dims */
        int shared;          /* taken from the run of an earlier candidate of the batch */
        char run[16];
        dimset dims;
    } measured;
    double rerun_device_ms; /* CUPTI time of the first seed's rerun (0: unknown) */
    wk_samples samples; /* each seed's checking run on the default dims */
    double worst_err[3];
    int nondeterministic;
    int runs_started; /* placement alternates: odd runs start flush against a wall */
    int run_index;    /* one_run calls so far: the run's place in the job (batches' plans) */
    int planning;     /* run_all only lists each run's output bytes into plan_bytes */
    int n_plan;
    uint64_t plan_bytes[WK_MAX_RUNS];
    wk_batch_job batch; /* the job's part in its batch (batch.key "": none) */
    int varied_runs;  /* param values are used in turn across the runs that vary them */
    json_t *runs;
    json_t *first_failure;
    struct { /* the first run whose outputs differed: the layer diagnosis reruns it */
        int set;
        char name[32], seed[32];
        dimset dims;
        uint64_t seed_value;
        int vary;
        problem pv;
        wk_fill_mode mode;
        stage_deadline deadline;
    } failed;
};

/* What one checked run is: its dims, seed, and the value classes its inputs get. */
struct run_spec {
    const char *name;
    const dimset *dims;
    uint64_t seed;
    int determinism; /* run twice: differing outputs flag a race */
    int vary;        /* constant inputs and params take their "vary" values */
    int values;      /* WK_FILL_* classes */
    int cover;       /* a coverage run (boundary, stratified, value class): compact evidence */
};

/* Runs the candidate once more on the same inputs; differing outputs flag a race. */
static int rerun_for_determinism(struct job_state *s, const dimset *dims,
                                 struct run_buffers *b, const stage_deadline *deadline,
                                 wk_failure *f)
{
    uint64_t first, second;
    float ms;
    if (checksum_outputs(s->g, b, &first, f) ||
        run_candidate(s->g, s->cand, &s->pv, dims, b, deadline, 1, 0, &ms,
                      &s->rerun_device_ms, NULL, f) ||
        checksum_outputs(s->g, b, &second, f))
        return -1;
    s->nondeterministic = first != second;
    return 0;
}

/* Whether a varied run gives any of the problem's constants another value. */
static int params_vary(const problem *p)
{
    for (int i = 0; i < p->n_params; i++)
        if (p->params[i].n_vary)
            return 1;
    return 0;
}

/* The run's problem (params varied in turn, tolerance widened for a value class) into s->pv,
 * its fill mode into m; notes both in run. */
static void set_run_values(struct job_state *s, const struct run_spec *rs, wk_fill_mode *m,
                           json_t *run)
{
    const problem_values *v = &s->p->values;
    s->pv = *s->p;
    memset(m, 0, sizeof(*m));
    if (rs->vary && s->p->n_params) {
        json_t *params = json_object();
        for (int i = 0; i < s->p->n_params; i++) {
            param_spec *ps = &s->pv.params[i];
            if (ps->n_vary)
                ps->value = ps->vary[s->varied_runs % ps->n_vary];
            json_object_set_new(params, ps->name, json_real(ps->value));
        }
        s->varied_runs++;
        json_object_set_new(run, "params", params);
    }
    m->mode = rs->values;
    if (m->mode & WK_FILL_STRUCTURE) {
        s->pv.atol *= v->structure_atol > 0 ? v->structure_atol : 1;
        m->spike = v->spike;
        if (v->spike > 0)
            m->mode |= WK_FILL_SPIKES;
    }
    if (m->mode & WK_FILL_LARGE) {
        m->large = v->large;
        s->pv.atol *= v->large_atol > 0 ? v->large_atol : 1;
    }
    if (m->mode & WK_FILL_SPECIAL) {
        m->specials = v->n_special;
        for (int i = 0; i < v->n_special; i++)
            m->specials |= (int)v->special[i] << (4 * (i + 1));
    }
    if (m->mode)
        json_object_set_new(run, "values", json_pack("{s:b,s:f,s:f,s:i,s:f}", "structure",
                                                     (m->mode & WK_FILL_STRUCTURE) != 0, "spike",
                                                     m->spike, "large", m->large, "specials",
                                                     v->n_special * !!(m->mode & WK_FILL_SPECIAL),
                                                     "atol", s->pv.atol));
}

/* The reference's time on the first run's dims: every later candidate stage's deadline derives
 * from it (verify/service/deadline.h). */
static void measured_reference(struct job_state *s, const struct run_spec *rs, double ms)
{
    s->measured.reference_ms = ms > 0 ? ms : 1e-6;
    snprintf(s->measured.run, sizeof(s->measured.run), "%s", rs->name);
    dimset_copy(&s->measured.dims, rs->dims);
}

/* A batch's plan (s->planning): the bytes of the run's outputs, each rounded as they are kept
 * (0 when a size does not evaluate: never kept). */
static int plan_run(struct job_state *s, const struct run_spec *rs, int index)
{
    uint64_t bytes = 0;
    for (int k = 0; k < s->p->n_outputs; k++) {
        int64_t n;
        if (tensor_numel(&s->p->outputs[k], rs->dims, &n, NULL) || n < 0) {
            bytes = 0;
            break;
        }
        bytes += batch_round((uint64_t)n * dtype_size(s->p->outputs[k].dtype));
    }
    if (index < WK_MAX_RUNS)
        s->plan_bytes[s->n_plan++] = bytes;
    return 0;
}

/* What the reference's outputs of a run depend on besides the job's batch scope: the run's
 * dims, seed, value classes and param values (worker_batch.c keeps them under it). */
static void run_key(const struct job_state *s, const struct run_spec *rs, strbuf *key)
{
    sb_addf(key, "%s|%llu|%d|%d|", rs->name, (unsigned long long)rs->seed, rs->vary, rs->values);
    dimset_to_json(rs->dims, key);
    for (int i = 0; i < s->pv.n_params; i++)
        sb_addf(key, "|%s=%.17g", s->pv.params[i].name, s->pv.params[i].value);
}

/* The reference's outputs of the run into b's reference side: in a job of a batch, those an
 * earlier candidate's job kept (unmasked and checksummed; inputs equal by checksum), else the
 * reference runs (its time measured into *ms for the job's first run) and, where the batch's
 * plan keeps the run, its outputs are kept for the batch's next candidates. The evidence's
 * runs[].reference says which ("shared" with reference_from, "kept", "ran"). */
static int reference_outputs(struct job_state *s, const struct run_spec *rs, int index,
                             struct run_buffers *b, const uint64_t *sums, float *ms, json_t *run,
                             wk_failure *f)
{
    wk_batch_job *bj = &s->batch;
    int measure = s->measured.reference_ms <= 0, r = 0;
    if (!bj->key[0]) /* not a job of a batch */
        return run_reference(s->g, s->ref, &s->pv, rs->dims, b, measure ? ms : NULL, f);
    strbuf key = STRBUF_INIT;
    run_key(s, rs, &key);
    double kept_ms = 0, t0 = now_ms();
    const char *from = NULL;
    r = wk_batch_fetch(s->g, bj, index, key.buf, sums, b->n_in, &b->ref[b->n_in], b->n_out,
                       &kept_ms, &from, f);
    wk_phase_add(WK_PH_REFERENCE, t0);
    if (r > 0) { /* index 0, every job's first run, is kept by the job that measured it */
        *ms = (float)kept_ms;
        s->measured.shared = measure;
        json_object_set_new(run, "reference", json_string("shared"));
        json_object_set_new(run, "reference_from", json_string(from));
    } else if (r == 0 && run_reference(s->g, s->ref, &s->pv, rs->dims, b, measure ? ms : NULL, f)) {
        r = -1;
    } else if (r == 0) {
        bj->ran++;
        r = wk_batch_keep(s->g, bj, index, key.buf, sums, b->n_in, &b->ref[b->n_in], b->n_out,
                          measure ? (*ms > 0 ? *ms : 1e-6) : 0);
        if (r < 0)
            wk_fail_cuda(f, "runtime_error", CUDA_ERROR_LAUNCH_FAILED,
                         "internal: keeping the reference's outputs for the batch");
        else
            json_object_set_new(run, "reference", json_string(r ? "kept" : "ran"));
    }
    sb_free(&key);
    return r < 0 ? -1 : 0;
}

/* The first run whose outputs differ, as it ran: its dims, seed, values and deadline. */
static void remember_failure(struct job_state *s, const struct run_spec *rs, const char *seed,
                             const wk_fill_mode *mode, const stage_deadline *deadline)
{
    if (s->failed.set)
        return;
    s->failed.set = 1;
    snprintf(s->failed.name, sizeof(s->failed.name), "%s", rs->name);
    snprintf(s->failed.seed, sizeof(s->failed.seed), "%s", seed);
    dimset_copy(&s->failed.dims, rs->dims);
    s->failed.seed_value = rs->seed;
    s->failed.vary = rs->vary;
    s->failed.pv = s->pv;
    s->failed.mode = *mode;
    s->failed.deadline = *deadline;
    s->failed.deadline.run = s->failed.name;
}

/* One checked run. Returns 0 pass, 1 mismatch, -1 failure (f says which). */
static int one_run(struct job_state *s, const struct run_spec *rs, wk_failure *f)
{
    int index = s->run_index++;
    if (s->planning)
        return plan_run(s, rs, index);
    struct run_buffers *bp;
    json_t *run = json_pack("{s:s,s:s,s:[]}", "dims", rs->name, "seed", "", "outputs");
    char seed_str[32];
    snprintf(seed_str, sizeof(seed_str), "%llu", (unsigned long long)rs->seed);
    json_object_set_new(run, "seed", json_string(seed_str));
    json_array_append_new(s->runs, run);
    int result = -1, front = s->runs_started++ % 2;
    wk_phase_family(rs->name);
    json_object_set_new(run, "placement", json_string(front ? "front" : "end"));
    wk_fill_mode mode;
    set_run_values(s, rs, &mode, run);
    const problem *p = &s->pv;
    double t0 = now_ms();
    if (!(bp = prepare_buffers(s->g, p, rs->name, rs->dims, s->cand, s->ref, front, f)))
        goto out;
    json_object_set_new(run, "setup_ms", json_real(now_ms() - t0));
    uint64_t sums[KC_MAX_TENSORS];
    if (rs->vary)
        json_object_set_new(run, "varied_constants", json_true());
    if (fill_inputs(s->g, p, rs->dims, rs->seed, rs->vary, &mode, bp, sums, f))
        goto out;
    stage_deadline deadline;
    if (s->measured.reference_ms > 0)
        deadline_for_run(s->p, &s->cand->lu, rs->name, rs->dims, &s->measured.dims,
                         s->measured.reference_ms, &deadline);
    else /* the first run: the reference has not run yet */
        deadline_for_run(s->p, &s->cand->lu, rs->name, rs->dims, rs->dims,
                         deadline_estimate_reference_ms(s->p, rs->dims, s->g->name), &deadline);
    json_object_set_new(run, "deadline_ms", json_real(deadline.ms));
    /* a default-dims seed run is a timing sample (no CUPTI inside its window); the others
     * record their kernels' device time */
    int sample = strcmp(rs->name, "default") == 0;
    float ms;
    double device_ms, clock_mhz = 0;
    int with_cupti = strncmp(rs->name, "alt", 3) == 0; /* the cover sets skip CUPTI's cost */
    if (run_candidate(s->g, s->cand, p, rs->dims, bp, &deadline, with_cupti,
                      !sample && !with_cupti, &ms, &device_ms, sample ? &clock_mhz : NULL, f) ||
        check_safety(s->g, p, s->cand, bp, sums, f))
        goto out;
    json_object_set_new(run, "candidate_ms", json_real(ms));
    if (device_ms > 0)
        json_object_set_new(run, "device_ms", json_real(device_ms));
    if (clock_mhz > 0)
        json_object_set_new(run, "sm_clock_mhz", json_real(clock_mhz));
    t0 = now_ms();
    float ref_ms = 0;
    int measure = s->measured.reference_ms <= 0;
    if (reference_outputs(s, rs, index, bp, sums, &ref_ms, run, f))
        goto out;
    json_object_set_new(run, "reference_ms", json_real(now_ms() - t0));
    if (measure) /* the later runs' deadlines derive from this one */
        measured_reference(s, rs, ref_ms);
    int bad = compare_outputs(s->g, p, rs->dims, bp, run, s->worst_err, f);
    if (bad < 0)
        goto out;
    if (sample && s->samples.n < WK_MAX_SAMPLES) {
        s->samples.clock_mhz[s->samples.n] = clock_mhz;
        s->samples.plain[s->samples.n] = !(rs->vary && params_vary(s->p)) && !rs->values;
        s->samples.ms[s->samples.n++] = ms;
    }
    if (rs->determinism && rerun_for_determinism(s, rs->dims, bp, &deadline, f))
        goto out;
    if (rs->cover && !bad) /* a passing coverage run: its dims and seed say enough */
        json_object_del(run, "outputs");
    json_object_set_new(run, "ok", json_boolean(!bad));
    if (bad)
        remember_failure(s, rs, seed_str, &mode, &deadline);
    result = bad;
out:
    if (result != 0 && !s->first_failure)
        s->first_failure = json_incref(run);
    return result;
}

static json_t *result_base(const wk_gpu *g)
{
    return json_pack("{s:s,s:s,s:s,s:b}", "gpu_name", g->name, "driver", g->driver, "cuda", g->cuda,
                     "pageable_memory_access", g->pageable_access != 0);
}

static json_t *failure_result(const wk_gpu *g, const wk_failure *f, json_t *evidence)
{
    json_t *r = result_base(g);
    json_object_set_new(r, "verdict", json_string(f->verdict));
    json_object_set_new(r, "message", json_string(sb_str(&f->message)));
    json_object_set_new(r, "fatal", json_boolean(f->fatal));
    if (evidence)
        json_object_set(r, "evidence", evidence);
    return r;
}

static void add_flag(strbuf *flags, const char *flag)
{
    if (flags->len)
        sb_addch(flags, ',');
    sb_adds(flags, flag);
}

/* A family of dims sets the client sent with the job (job[key].sets): the random draws
 * ("hidden"), the stratified draws and the boundary sets. */
struct set_family {
    const char *key, *prefix, *flag;
    int max, vary, values, cover;
    const char *what; /* for the message: "the dims drawn at verification time" */
};

static const struct set_family families[] = {
    {"hidden", "hidden", "hidden_shape_fail", WK_MAX_HIDDEN, 1, WK_FILL_STRUCTURE, 0,
     "the dims drawn at verification time"},
    {"stratified", "strat", "hidden_shape_fail", WK_MAX_COVER, 1, 0, 1,
     "the stratified dims drawn at verification time"},
    {"boundary", "bound", "boundary_shape_fail", WK_MAX_COVER, 1, 0, 1,
     "the boundary dims every verification runs"},
};

static int internal_set_error(wk_failure *f, const char *name, const char *why)
{
    snprintf(f->verdict, sizeof(f->verdict), "runtime_error");
    sb_reset(&f->message);
    sb_addf(&f->message, "internal: dims set %s: %s", name, why);
    return -1;
}

/* Runs every set of one family, each on a seed of its own; the first wrong one ends the job. */
static int run_family(struct job_state *s, json_t *job, const struct set_family *fam,
                      uint64_t seed, wk_failure *f, strbuf *flags, strbuf *message)
{
    json_t *sets = json_object_get(json_object_get(job, fam->key), "sets");
    for (size_t k = 0; k < json_array_size(sets) && k < (size_t)fam->max; k++) {
        char name[32];
        dimset d;
        strbuf why = STRBUF_INIT;
        snprintf(name, sizeof(name), "%s%zu", fam->prefix, k);
        if (problem_dims_from_json(s->p, json_array_get(sets, k), &d, &why)) {
            internal_set_error(f, name, why.buf);
            sb_free(&why);
            dimset_free(&d);
            return -1;
        }
        sb_free(&why);
        int values = fam->values & (s->p->values.structure ? ~0 : ~WK_FILL_STRUCTURE);
        struct run_spec rs = {name, &d, seed + 1 + k, 0, fam->vary, values, fam->cover};
        int r = one_run(s, &rs, f);
        if (r != 0)
            add_flag(flags, fam->flag);
        if (r > 0) {
            snprintf(f->verdict, sizeof(f->verdict), "mismatch");
            sb_addf(message, "correct on the default and alternative dims but wrong on %s %s ",
                    fam->what, name);
            dimset_to_json(&d, message);
            sb_adds(message, " (sizes the fixed sets never use: a hard-coded size, a missing "
                             "bounds guard or tail, a grid dimension past its limit, 32-bit "
                             "indices?)");
        }
        dimset_free(&d);
        if (r != 0)
            return r;
    }
    return 0;
}

/* The value-class runs the manifest declares: large magnitudes on the first alt dims (the
 * small dims without one) and special values on the small dims. */
static int run_value_classes(struct job_state *s, uint64_t first_seed, wk_failure *f,
                             strbuf *flags, strbuf *message)
{
    const problem_values *v = &s->p->values;
    struct run_spec runs[2];
    int n = 0;
    if (v->large > 0)
        runs[n++] = (struct run_spec){"large", s->p->n_alt ? &s->p->dims_alt[0] : &s->p->dims_small,
                                      first_seed + 0x1a46e, 0, 0, WK_FILL_LARGE, 1};
    if (v->n_special > 0)
        runs[n++] = (struct run_spec){"special", &s->p->dims_small, first_seed + 0x59ec, 0, 0,
                                      WK_FILL_SPECIAL, 1};
    for (int i = 0; i < n; i++) {
        int r = one_run(s, &runs[i], f);
        if (r != 0)
            add_flag(flags, "value_class_fail");
        if (r > 0) {
            snprintf(f->verdict, sizeof(f->verdict), "mismatch");
            sb_addf(message, "correct on ordinary inputs but wrong on %s",
                    i == 0 && v->large > 0 ? "large-magnitude inputs (overflow, or a missing "
                                             "max subtraction or rescaling?)"
                                           : "inputs holding special values (NaN, inf or -0 "
                                             "handled unlike the operator)");
        }
        if (r != 0)
            return r;
    }
    return 0;
}

/* The default dims: seed 1 plain (and run twice), seeds 2 and 3 with constants varied, the
 * rest (4 and 5 by default) varied and structured. Returns 0, 1 mismatch, -1. */
static int run_default(struct job_state *s, json_t *seeds, wk_failure *f, strbuf *message)
{
    for (size_t i = 0; i < json_array_size(seeds); i++) {
        uint64_t seed = strtoull(json_string_value(json_array_get(seeds, i)), NULL, 10);
        int values = i >= 3 && s->p->values.structure ? WK_FILL_STRUCTURE : 0;
        struct run_spec rs = {"default", &s->p->dims_default, seed, i == 0, i > 0, values, 0};
        int r = one_run(s, &rs, f);
        if (r > 0) {
            snprintf(f->verdict, sizeof(f->verdict), "mismatch");
            sb_addf(message, "output differs from the reference beyond atol=%g, rtol=%g on the "
                             "default dims (seed %llu%s)", s->pv.atol, s->p->rtol,
                    (unsigned long long)seed, values ? ", structured inputs" : "");
        }
        if (r != 0)
            return r;
    }
    return 0;
}

/* Runs every seed on the default dims, then each alt set, the random draws, the stratified
 * draws, the boundary sets and the value classes; sets verdict and flags. The number of runs
 * is fixed by the job, never by how long the candidate takes. */
static int run_all(struct job_state *s, json_t *job, wk_failure *f, strbuf *flags, strbuf *message)
{
    json_t *seeds = json_object_get(job, "seeds");
    uint64_t first_seed = strtoull(json_string_value(json_array_get(seeds, 0)), NULL, 10);
    int r = run_default(s, seeds, f, message);
    wk_release_deferred(); /* after the timing samples: the clear overlaps untimed runs */
    if (r != 0)
        return r;
    for (int a = 0; a < s->p->n_alt; a++) {
        char name[16];
        snprintf(name, sizeof(name), "alt%d", a);
        struct run_spec rs = {name, &s->p->dims_alt[a], first_seed, 0, 0, 0, 0};
        r = one_run(s, &rs, f);
        if (r != 0)
            add_flag(flags, "alt_shape_fail");
        if (r > 0) {
            snprintf(f->verdict, sizeof(f->verdict), "mismatch");
            sb_addf(message, "correct on the default dims but wrong on the alternative dims %s "
                             "(hard-coded sizes or a missing bounds guard?)", name);
        }
        if (r != 0)
            return r;
    }
    for (size_t k = 0; k < sizeof(families) / sizeof(families[0]); k++)
        if ((r = run_family(s, job, &families[k], first_seed + 0x100 * (k + 1), f, flags, message)))
            return r;
    return run_value_classes(s, first_seed, f, flags, message);
}

/* The timed reps' deadline: a checking run's on the default dims. */
static void timed_rep_deadline(const struct job_state *s, stage_deadline *d)
{
    deadline_for_run(s->p, &s->cand->lu, "default", &s->p->dims_default, &s->measured.dims,
                     s->measured.reference_ms, d);
}

/* The evidence's "deadlines" (deadline.h; runs[].deadline_ms has each run's). */
static json_t *job_deadlines(const struct job_state *s)
{
    stage_deadline measured, timed;
    deadline_for_run(s->p, &s->cand->lu, s->measured.run, &s->measured.dims, &s->measured.dims,
                     s->measured.reference_ms, &measured);
    timed_rep_deadline(s, &timed);
    return deadline_evidence(&measured, &timed);
}

static json_t *finish(struct job_state *s, json_t *job, wk_failure *f, int outcome, strbuf *flags,
                      strbuf *message)
{
    json_t *evidence = json_pack("{s:O}", "runs", s->runs);
    for (size_t k = 0; k < sizeof(families) / sizeof(families[0]); k++) {
        json_t *fam = json_object_get(job, families[k].key);
        if (json_is_object(fam)) /* the seed and the dims drawn: a label can be reproduced */
            json_object_set(evidence, families[k].key, fam);
    }
    if (s->first_failure)
        json_object_set(evidence, "first_failure", s->first_failure);
    if (s->measured.reference_ms > 0) {
        json_t *d = job_deadlines(s);
        if (s->measured.shared) /* measured in the job of an earlier candidate of the batch */
            json_object_set_new(d, "reference_shared", json_true());
        json_object_set_new(evidence, "deadlines", d);
    }
    if (s->nondeterministic)
        add_flag(flags, "nondeterministic");
    json_t *r;
    if (outcome < 0) {
        r = failure_result(s->g, f, evidence);
    } else {
        r = result_base(s->g);
        if (outcome == 0) {
            snprintf(f->verdict, sizeof(f->verdict), "correct");
            sb_addf(message, "matches the reference on %zu seeds, %d alternative, %zu hidden, "
                             "%zu stratified and %zu boundary dims sets%s",
                    json_array_size(json_object_get(job, "seeds")), s->p->n_alt,
                    json_array_size(json_object_get(json_object_get(job, "hidden"), "sets")),
                    json_array_size(json_object_get(json_object_get(job, "stratified"), "sets")),
                    json_array_size(json_object_get(json_object_get(job, "boundary"), "sets")),
                    s->p->values.large > 0 || s->p->values.n_special ? " and the value classes" : "");
        }
        json_object_set_new(r, "verdict", json_string(f->verdict));
        json_object_set_new(r, "message", json_string(message->buf ? message->buf : ""));
        json_object_set(r, "evidence", evidence);
    }
    json_object_set_new(r, "flags", json_string(sb_str(flags)));
    json_object_set_new(r, "errors", json_pack("{s:f,s:f,s:f}", "max_abs", s->worst_err[0],
                                               "max_rel", s->worst_err[1], "rel_l2", s->worst_err[2]));
    json_decref(evidence);
    return r;
}

/* The timing stage's state: every rep's inputs are drawn afresh from seed_base + rep, a seed
 * no check used; every rep is checked against the reference on those inputs. */
#define TIMED_RUNS_KEPT 2 /* timed reps kept whole in the evidence, besides any that failed */

struct timing_state {
    struct job_state *s;
    struct run_buffers *b;
    uint64_t seed_base;
    uint64_t input_sums[KC_MAX_TENSORS]; /* before the rep */
    json_t *checked; /* the first TIMED_RUNS_KEPT reps and any wrong one, as runs */
};

static uint64_t rep_seed(const struct timing_state *t, int rep)
{
    return t->seed_base + (uint64_t)rep;
}

static int prepare_timed_rep(void *ctx, int rep, wk_failure *f)
{
    struct timing_state *t = ctx;
    struct job_state *s = t->s;
    if (fill_inputs(s->g, s->p, &s->p->dims_default, rep_seed(t, rep), 0, NULL, t->b, t->input_sums, f) ||
        prepare_execution(s->g, s->cand, t->b, f))
        return -1;
    stage_deadline deadline; /* each timed rep has its own: the stage's grows with its reps */
    timed_rep_deadline(s, &deadline);
    progress_candidate("timing", &deadline);
    return 0;
}

/* Checks the rep just timed: its inputs unchanged, no guard band damaged, and its outputs
 * matching the reference's on those inputs. */
static int check_timed_rep(void *ctx, int rep, wk_failure *f)
{
    struct timing_state *t = ctx;
    struct job_state *s = t->s;
    const dimset *dims = &s->p->dims_default;
    struct run_buffers *b = t->b;
    wk_progress("checks", REFERENCE_DEADLINE_MS);
    if (check_safety(s->g, s->p, s->cand, b, t->input_sums, f))
        return -1;
    if (run_reference(s->g, s->ref, s->p, dims, b, NULL, f))
        return -1;
    char seed[32];
    snprintf(seed, sizeof(seed), "%llu", (unsigned long long)rep_seed(t, rep));
    json_t *run = json_pack("{s:s,s:s,s:i,s:[]}", "dims", "default", "seed", seed, "timed_rep", rep,
                            "outputs");
    int bad = compare_outputs(s->g, s->p, dims, b, run, s->worst_err, f);
    if (bad < 0) {
        json_decref(run);
        return -1;
    }
    json_object_set_new(run, "ok", json_boolean(!bad));
    if (bad && !s->first_failure)
        s->first_failure = json_incref(run);
    if (bad || rep <= TIMED_RUNS_KEPT)
        json_array_append(t->checked, run);
    json_decref(run);
    return bad;
}

static uint64_t fresh_seed_base(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof(v), 0) != sizeof(v))
        v = (uint64_t)now_ms() * 0x9E3779B97F4A7C15ull;
    return v >> 1; /* room for the rep index */
}

/* Returns 0 timed, 1 when a checked timed rep was wrong (the result becomes a mismatch),
 * -1 on failure. */
static int time_candidate(struct job_state *s, json_t *job, json_t *result, wk_failure *f)
{
    json_t *timing = json_object();
    double cap = json_number_value(json_object_get(job, "timing_cap_ms"));
    double noise = json_number_value(json_object_get(job, "timing_noise"));
    noise = noise > 0 ? noise : WK_TIMING_NOISE; /* a job from an older client */
    struct timing_state t = {.s = s, .seed_base = fresh_seed_base(), .checked = json_array()};
    int rc = -1, enough = kc_timing_enough(s->samples.ms, s->samples.n, KC_TIMING_MIN_REPS, noise);
    /* extra reps (and their buffers) only while the checking runs' samples are too few or noisy */
    if (!enough)
        t.b = prepare_buffers(s->g, s->p, "default", &s->p->dims_default, s->cand, s->ref,
                              s->runs_started++ % 2, f);
    if (enough || t.b) {
        wk_rep_hooks h = {.prepare = prepare_timed_rep, .check = check_timed_rep, .ctx = &t};
        rc = wk_time_unit(s->g, s->cand, s->p, &s->p->dims_default, t.b ? t.b->cand : NULL,
                          cap > 0 ? cap : 1000, noise, &h, &s->samples,
                          s->rerun_device_ms, timing, f);
    }
    char base[32];
    snprintf(base, sizeof(base), "%llu", (unsigned long long)t.seed_base);
    json_object_set_new(timing, "seed_base", json_string(base));
    json_object_set(timing, "checked_runs", t.checked);
    if (rc == 0)
        json_object_set(result, "timing", timing);
    else if (rc == 1)
        json_object_set(result, "timed_checks", t.checked);
    json_decref(timing);
    json_decref(t.checked);
    return rc;
}

static void append_result_flag(json_t *result, const char *flag)
{
    strbuf flags = STRBUF_INIT;
    sb_adds(&flags, json_string_value(json_object_get(result, "flags")));
    add_flag(&flags, flag);
    json_object_set_new(result, "flags", json_string(flags.buf));
    sb_free(&flags);
}

/* Times a correct candidate; what the timed runs show can still change its verdict: a wrong
 * output in a checked timed rep is a mismatch, damage or input changes are unsafe, and device
 * time far below the checking runs' is flagged. */
static json_t *timing_outcome(struct job_state *s, json_t *job, json_t *result, wk_failure *f)
{
    int rc = time_candidate(s, job, result, f);
    json_t *ev = json_object_get(result, "evidence");
    if (rc < 0) {
        json_t *failed = failure_result(s->g, f, ev);
        json_decref(result);
        return failed;
    }
    if (rc == 1) {
        json_object_set_new(result, "verdict", json_string("mismatch"));
        json_object_set_new(result, "message",
                            json_string("correct in the checking runs, but the output of a timed "
                                        "run differs from the reference: a kernel must do the same "
                                        "work when timed as when checked"));
        if (ev && s->first_failure)
            json_object_set(ev, "first_failure", s->first_failure);
        return result;
    }
    json_t *why = json_object_get(json_object_get(result, "timing"), "inconsistent");
    if (json_is_string(why)) {
        append_result_flag(result, "timing_inconsistent");
        strbuf m = STRBUF_INIT;
        sb_addf(&m, "%s; but %s", json_string_value(json_object_get(result, "message")),
                json_string_value(why));
        json_object_set_new(result, "message", json_string(m.buf));
        sb_free(&m);
    }
    return result;
}

/* Every tensor the cache keeps (both dims slots, both sides) poisoned: the last job's outputs,
 * which a kernel could find by address, are gone before a job of a batch meets the same
 * inputs. */
static int poison_cached_tensors(wk_gpu *g)
{
    for (int slot = 0; slot < 2; slot++) {
        struct run_buffers *b = &tensor_cache[slot].b;
        int n = b->n_in + b->n_out;
        if (tensor_cache[slot].key && (poison_side(g, b->cand, 0, n) || poison_side(g, b->ref, b->n_in, n)))
            return -1;
    }
    return 0;
}

/* What the reference's outputs of a job's runs depend on besides each run (run_key): the batch
 * key, the manifest, the reference's module, the seeds and the dims sets. Jobs of one batch
 * with equal ids share kept outputs. */
static void scope_id(const problem *p, json_t *job, const char *key, const strbuf *ref_cubin,
                     char *out)
{
    static const char *const fields[] = {"seeds", "hidden", "stratified", "boundary", NULL};
    sha256_stream *h = sha256_begin();
    sha256_update(h, key, strlen(key) + 1);
    sha256_update(h, sb_str(&p->manifest_text), p->manifest_text.len + 1);
    if (ref_cubin)
        sha256_update(h, ref_cubin->buf, ref_cubin->len);
    for (const char *const *k = fields; *k; k++) {
        char *text = json_dumps(json_object_get(job, *k), JSON_COMPACT | JSON_SORT_KEYS |
                                                          JSON_ENCODE_ANY);
        sha256_update(h, *k, strlen(*k) + 1);
        if (text)
            sha256_update(h, text, strlen(text) + 1);
        free(text);
    }
    sha256_finish(h, out);
}

/* A job of a batch (job "batch": key, index, budget_bytes; batch.h): the candidates of a batch
 * meet the same inputs, so first what earlier jobs left where a kernel could read it is
 * overwritten (every SM's shared memory, every thread slot's local memory up to
 * WK_SCRUB_LOCAL_BYTES, the cached tensors); then the job's runs are listed (run_all with
 * s->planning: only their output bytes) and the batch's scope opened (worker_batch.c). 0, or
 * -1 with f (a CUDA failure: fatal). Not a job of a batch: 0, nothing done. */
static int batch_begin(struct job_state *s, json_t *job, const char *source,
                       const strbuf *ref_cubin, wk_failure *f)
{
    json_t *b = json_object_get(job, "batch");
    const char *key = json_string_value(json_object_get(b, "key"));
    json_int_t budget = json_integer_value(json_object_get(b, "budget_bytes"));
    if (!batch_key_valid(key))
        return 0;
    wk_batch_job *bj = &s->batch;
    snprintf(bj->key, sizeof(bj->key), "%s", key);
    bj->index = (int)json_integer_value(json_object_get(b, "index"));
    bj->budget = budget > 0 ? (uint64_t)budget : 0;
    char sha[SHA256_HEX_LEN + 1];
    sha256_hex(source, strlen(source), sha);
    snprintf(bj->from, sizeof(bj->from), "%.16s", sha);
    double t0 = now_ms();
    if (wk_scrub_on_chip(s->g) || poison_cached_tensors(s->g) ||
        sync_or_fail(s->g, f, "overwriting leftovers before a job of a batch")) {
        wk_fail_cuda(f, "runtime_error", CUDA_ERROR_LAUNCH_FAILED,
                     "internal: overwriting leftovers before a job of a batch");
        f->fatal = 1;
        return -1;
    }
    bj->scrubbed = 1;
    wk_phase_add(WK_PH_PREPARE, t0);
    size_t cand_local = wk_unit_local_bytes(s->cand), ref_local = wk_unit_local_bytes(s->ref);
    bj->local_bytes = cand_local > ref_local ? cand_local : ref_local;
    bj->restart = bj->local_bytes > WK_SCRUB_LOCAL_BYTES;
    wk_failure ignored = {0}; /* a set that does not parse fails the same way when it runs */
    strbuf flags = STRBUF_INIT, message = STRBUF_INIT;
    s->planning = 1;
    run_all(s, job, &ignored, &flags, &message);
    s->planning = 0;
    s->run_index = 0;
    sb_free(&flags), sb_free(&message), sb_free(&ignored.message);
    char id[SHA256_HEX_LEN + 1];
    scope_id(s->p, job, key, ref_cubin, id);
    wk_batch_open(s->g, bj, id, s->plan_bytes, s->n_plan);
    return 0;
}

/* After the job, in a worker that keeps a batch's outputs: whether the job's candidate changed
 * them (the result becomes unsafe, with the evidence it had); the job's "batch" evidence; a
 * candidate whose kernels may use more local memory than the scrub covers ends the worker
 * (fatal: a fresh context for the next job). */
static json_t *batch_end(struct job_state *s, json_t *result)
{
    wk_failure tf = {0};
    json_t *ev = json_object_get(result, "evidence");
    if (!json_is_true(json_object_get(result, "fatal")) && wk_batch_holding() &&
        wk_batch_check(s->g, &tf) < 0) {
        json_t *failed = failure_result(s->g, &tf, ev);
        json_object_set(failed, "flags", json_object_get(result, "flags"));
        json_decref(result);
        result = failed;
        ev = json_object_get(result, "evidence");
    }
    sb_free(&tf.message);
    if (!s->batch.key[0])
        return result;
    wk_batch_close(&s->batch);
    if (ev)
        json_object_set_new(ev, "batch", wk_batch_evidence(&s->batch));
    if (s->batch.restart)
        json_object_set_new(result, "fatal", json_true());
    return result;
}

/* Frees the scratch the job's runs kept (both cached dims slots). */
static void release_job_scratch(void)
{
    for (int slot = 0; slot < 2; slot++)
        if (tensor_cache[slot].key)
            free_scratch(&tensor_cache[slot].b);
}

/* Both units once more on the failing run's inputs, their layer points copied (worker_layers.c):
 * the reference, then the candidate, prepared as a checked run. */
static int run_layers(struct job_state *s, wk_layers *L, struct run_buffers *b, wk_failure *f)
{
    const problem *p = &s->failed.pv;
    const dimset *dims = &s->failed.dims;
    uint64_t sums[KC_MAX_TENSORS];
    stage_deadline d = s->failed.deadline;
    d.ms *= 2; /* the reference and the candidate, each within the failing run's deadline */
    if (fill_inputs(s->g, p, dims, s->failed.seed_value, s->failed.vary, &s->failed.mode, b, sums,
                    f))
        return -1;
    progress_candidate("layers", &d);
    wk_layers_side(L, 0);
    if (wk_unit_launch_layers(s->g, s->ref, p, dims, b->ref, L, f) ||
        sync_or_fail(s->g, f, "running the reference for the layers") ||
        prepare_execution(s->g, s->cand, b, f))
        return -1;
    wk_layers_side(L, 1);
    int rc = wk_unit_launch_layers(s->g, s->cand, p, dims, b->cand, L, f) ||
             sync_or_fail(s->g, f, "running the candidate for the layers");
    wk_progress("checks", REFERENCE_DEADLINE_MS);
    return rc ? -1 : 0;
}

/* After a mismatch, when the candidate names layers the reference also has: which layer went
 * wrong first (docs/LEVEL3.md), as evidence.layers of result. Never changes the verdict, flags
 * or timing: a failure leaves the evidence out, and a sticky CUDA error (the context is lost)
 * marks the result fatal so that the worker is replaced after reporting it. */
static void diagnose_layers(struct job_state *s, json_t *result)
{
    json_t *ev = json_object_get(result, "evidence");
    if (!s->failed.set || !json_is_object(ev) ||
        strcmp(json_string_value(json_object_get(result, "verdict")), "mismatch") != 0)
        return;
    wk_layers *L = wk_layers_plan(&s->ref->lu, &s->cand->lu, &s->failed.dims);
    if (!L)
        return;
    double t0 = now_ms();
    wk_failure f = {0};
    struct run_buffers *b = prepare_buffers(s->g, &s->failed.pv, s->failed.name, &s->failed.dims,
                                            s->cand, s->ref, 0, &f);
    if (b && run_layers(s, L, b, &f) == 0) {
        json_t *layers = wk_layers_evidence(s->g, L, s->failed.name, s->failed.seed,
                                            s->failed.pv.atol, s->failed.pv.rtol);
        json_object_set_new(layers, "ms", json_real(now_ms() - t0));
        json_object_set_new(ev, "layers", layers);
    } else {
        json_object_set_new(ev, "layers_error", json_string(sb_str(&f.message)));
        if (f.fatal || cuCtxSynchronize() != CUDA_SUCCESS)
            json_object_set_new(result, "fatal", json_true());
    }
    if (b)
        poison_side(s->g, b->ref, b->n_in, b->n_in + b->n_out);
    sb_free(&f.message);
    wk_layers_free(L);
}

json_t *wk_verify_job(wk_gpu *g, json_t *job, const char *source, const strbuf *cubin,
                      const strbuf *ref_cubin)
{
    problem p;
    strbuf err = STRBUF_INIT, flags = STRBUF_INIT, message = STRBUF_INIT;
    wk_failure f = {0};
    wk_unit cand = {0}, ref = {0};
    json_t *result = NULL;
    double t_start = now_ms();
    wk_phase_reset();
    trusted_reported = 0; /* a job's first report is always sent */
    wk_batch_forget(g, json_object_get(job, "batch_ended")); /* their outputs scrubbed and freed */
    const char *manifest = json_string_value(json_object_get(job, "manifest"));
    if (!manifest || problem_load(manifest, &p, &err)) {
        snprintf(f.verdict, sizeof(f.verdict), "runtime_error");
        sb_addf(&f.message, "internal: cannot load the problem: %s", err.buf);
        result = failure_result(g, &f, NULL);
        goto out_noproblem;
    }
    if (wk_unit_load(&cand, cubin->buf, source, &p, &f) || reference_unit(&p, ref_cubin, &ref, &f)) {
        result = failure_result(g, &f, NULL);
        goto out;
    }
    cand.keeps_state = policy_module_keeps_state(cubin->buf, cubin->len);
    struct job_state s = {.g = g, .p = &p, .cand = &cand, .ref = &ref, .runs = json_array()};
    double t_checks = now_ms();
    wk_phase_add(WK_PH_LOAD, t_start);
    int outcome = batch_begin(&s, job, source, ref_cubin, &f);
    if (outcome == 0)
        outcome = run_all(&s, job, &f, &flags, &message);
    result = finish(&s, job, &f, outcome, &flags, &message);
    json_t *stages = json_pack("{s:f,s:f}", "load_ms", t_checks - t_start, "checks_ms",
                               now_ms() - t_checks);
    if (outcome == 1) /* its own time: evidence.layers.ms */
        diagnose_layers(&s, result);
    double t_timing = now_ms();
    wk_phase_family("timing");
    if (outcome == 0 && json_is_true(json_object_get(job, "timing")))
        result = timing_outcome(&s, job, result, &f);
    json_object_set_new(stages, "timing_ms", json_real(now_ms() - t_timing));
    json_object_set_new(stages, "phases", wk_phase_json());
    json_object_set_new(stages, "families", wk_phase_families_json());
    json_t *ev = json_object_get(result, "evidence");
    if (ev)
        json_object_set_new(ev, "stage_ms", stages);
    else
        json_decref(stages);
    result = batch_end(&s, result);
    json_decref(s.runs);
    json_decref(s.first_failure);
    dimset_free(&s.measured.dims);
    dimset_free(&s.failed.dims);
out:
    release_job_scratch();
    wk_unit_free(&cand);
    wk_unit_free(&ref);
    problem_free(&p);
    ev = result ? json_object_get(result, "evidence") : NULL;
    if (json_object_get(ev, "stage_ms")) /* the whole job, release included (make bench) */
        json_object_set_new(json_object_get(ev, "stage_ms"), "job_ms",
                            json_real(now_ms() - t_start));
out_noproblem:
    sb_free(&err), sb_free(&flags), sb_free(&message), sb_free(&f.message);
    return result;
}
