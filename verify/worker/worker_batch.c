/* worker_batch: the reference outputs a GPU worker keeps for the jobs of one batch (issue 37;
 * the rules both sides share: verify/service/batch.h). A job that carries a batch key opens its
 * batch's scope, whose id hashes the key with everything the reference's outputs depend on. The
 * scope's first job plans which of its runs are kept (batch_keep_plan: the smallest first within
 * the byte budget, so the largest run the reference again) and maps one store for them between
 * memory walls, like every buffer, and never passed to a candidate. A kept run holds the
 * reference's outputs masked under a key of its own (harness.cu kc_mask; the key lives only in
 * this process's memory) with the checksums of the plain outputs and of the inputs they were
 * computed from. A later candidate's run on the same inputs (compared by checksum) gets them
 * unmasked into the reference's own output buffers after the candidate ran, checksummed as they
 * are written, and scrubbed after the compare as ever. Every kept run is checked again at the
 * end of every job: the store was intact after the job before, so a change is the job's
 * candidate's doing (unsafe), and every batch's outputs are dropped. A scope ends when the
 * client says its batch ended, when the worker has been idle WK_BATCH_IDLE_MS, when another
 * batch needs the budget (the least recently used goes first), or with the process; its store
 * is scrubbed (0xFF) before it is unmapped. */
#include "common/error.h"
#include "common/fsutil.h"
#include "verify/service/batch.h"
#include "verify/worker/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

_Static_assert(sizeof(((wk_batch_job *)0)->key) == BATCH_KEY_HEX + 1, "a batch key fits");

/* One run's reference outputs in the store: each output from offset + the rounded sizes of the
 * outputs before it. */
struct kept_run {
    int planned, filled;
    uint64_t offset, bytes;            /* place and size (rounded) in the store */
    char *key;                         /* the run it was kept for (wk_batch_fetch's run_key) */
    int n_out, n_in;
    uint64_t out_bytes[KC_MAX_TENSORS], out_sum[KC_MAX_TENSORS], in_sum[KC_MAX_TENSORS];
    uint64_t mask_key, mask_id;
    double reference_ms;
    char from[17];
};

struct wk_scope {
    char batch[BATCH_KEY_HEX + 1];
    char id[65];
    wk_buffer store; /* the kept runs, masked; between walls */
    uint64_t bytes;  /* the plan's total (0: nothing kept) */
    struct kept_run *runs;
    int n_runs;
    double last_used;
};

static struct wk_scope *scopes[WK_BATCH_SCOPES];
static int n_scopes;
static wk_batch_job *current; /* the job in progress that has a scope open */

static uint64_t random64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof(v), 0) != sizeof(v))
        v = (uint64_t)(now_ms() * 1e3) * 0x9E3779B97F4A7C15ull;
    return v;
}

/* Scrubs and unmaps the store, forgets its keys. */
static void scope_free(wk_gpu *g, struct wk_scope *sc)
{
    if (sc->store.base)
        cuMemsetD8Async(sc->store.base, 0xFF, sc->store.map_bytes, g->stream);
    wk_buffer_free(&sc->store); /* waits for the scrub */
    for (int i = 0; i < sc->n_runs; i++)
        free(sc->runs[i].key);
    memset(sc->runs, 0, (size_t)sc->n_runs * sizeof(*sc->runs));
    free(sc->runs);
    memset(sc, 0, sizeof(*sc));
    free(sc);
}

static void scope_drop(wk_gpu *g, int i)
{
    if (current && current->scope == scopes[i]) /* its later runs run the reference */
        current->scope = NULL;
    scope_free(g, scopes[i]);
    memmove(&scopes[i], &scopes[i + 1], (size_t)(n_scopes - i - 1) * sizeof(scopes[0]));
    scopes[--n_scopes] = NULL;
}

void wk_batch_drop_all(wk_gpu *g)
{
    while (n_scopes)
        scope_drop(g, n_scopes - 1);
}

int wk_batch_holding(void) { return n_scopes > 0; }

void wk_batch_forget(wk_gpu *g, json_t *ended)
{
    for (size_t k = 0; k < json_array_size(ended); k++) {
        const char *key = json_string_value(json_array_get(ended, k));
        for (int i = n_scopes - 1; key && i >= 0; i--)
            if (strcmp(scopes[i]->batch, key) == 0)
                scope_drop(g, i);
    }
}

static uint64_t kept_total(void)
{
    uint64_t t = 0;
    for (int i = 0; i < n_scopes; i++)
        t += scopes[i]->bytes;
    return t;
}

/* Room for need more bytes within budget, and a free scope place: the least recently used
 * scopes go. */
static void make_room(wk_gpu *g, uint64_t need, uint64_t budget)
{
    while (n_scopes && (n_scopes == WK_BATCH_SCOPES || kept_total() > budget - need)) {
        int lru = 0;
        for (int i = 1; i < n_scopes; i++)
            if (scopes[i]->last_used < scopes[lru]->last_used)
                lru = i;
        scope_drop(g, lru);
    }
}

/* A new scope for the batch: the plan, and a store for it (none when it cannot be mapped). */
static struct wk_scope *scope_new(wk_gpu *g, const wk_batch_job *bj, const char *id,
                                  const uint64_t *run_bytes, int n)
{
    struct wk_scope *sc = xcalloc(1, sizeof(*sc));
    snprintf(sc->batch, sizeof(sc->batch), "%s", bj->key);
    snprintf(sc->id, sizeof(sc->id), "%s", id);
    sc->n_runs = n;
    sc->runs = xcalloc((size_t)(n > 0 ? n : 1), sizeof(*sc->runs));
    unsigned char *keep = xcalloc((size_t)(n > 0 ? n : 1), 1);
    uint64_t total = batch_keep_plan(run_bytes, n, bj->budget, keep);
    make_room(g, total, bj->budget);
    strbuf err = STRBUF_INIT;
    if (total > 0 && wk_buffer_alloc(g, &sc->store, KC_U8, (int64_t)total, &err) == 0) {
        wk_buffer_place(&sc->store, 1);
        sc->bytes = total;
        uint64_t at = 0;
        for (int i = 0; i < n; i++) {
            sc->runs[i].planned = keep[i];
            sc->runs[i].offset = at;
            sc->runs[i].bytes = keep[i] ? batch_round(run_bytes[i]) : 0;
            at += sc->runs[i].bytes;
        }
    }
    sb_free(&err);
    free(keep);
    return sc;
}

void wk_batch_open(wk_gpu *g, wk_batch_job *bj, const char *id, const uint64_t *run_bytes, int n)
{
    bj->scope = NULL;
    for (int i = 0; i < n_scopes; i++)
        if (strcmp(scopes[i]->id, id) == 0)
            bj->scope = scopes[i];
    if (!bj->scope) {
        bj->scope = scope_new(g, bj, id, run_bytes, n);
        scopes[n_scopes++] = bj->scope; /* make_room left a place */
    }
    bj->scope->last_used = now_ms();
    current = bj;
}

void wk_batch_close(wk_batch_job *bj)
{
    if (current == bj)
        current = NULL;
}

/* The kept run at index run of the job's scope (NULL: not planned). */
static struct kept_run *kept_at(const wk_batch_job *bj, int run)
{
    struct wk_scope *sc = bj->scope;
    if (!sc || run < 0 || run >= sc->n_runs || !sc->runs[run].planned)
        return NULL;
    return &sc->runs[run];
}

/* Whether k was kept for this run: the same run key, inputs (checksums) and output sizes. */
static int kept_matches(const struct kept_run *k, const char *run_key, const uint64_t *in_sums,
                        int n_in, const wk_buffer *outs, int n_out)
{
    if (!k->filled || strcmp(k->key, run_key) != 0 || k->n_in != n_in || k->n_out != n_out ||
        memcmp(k->in_sum, in_sums, (size_t)n_in * sizeof(*in_sums)) != 0)
        return 0;
    for (int i = 0; i < n_out; i++)
        if (outs[i].bytes != k->out_bytes[i])
            return 0;
    return 1;
}

/* Launches kc_mask over output i of k: dst NULL (check only), an output buffer (unmask) or the
 * store (mask, from the plain output src), its plain checksum added to slot. */
static int mask_launch(wk_gpu *g, const struct wk_scope *sc, const struct kept_run *k, int i,
                       CUdeviceptr out, int keeping, CUdeviceptr slot)
{
    CUdeviceptr at = sc->store.ptr + k->offset;
    for (int j = 0; j < i; j++)
        at += batch_round(k->out_bytes[j]);
    CUdeviceptr dst = keeping ? at : out, src = keeping ? out : at;
    long long n = (long long)k->out_bytes[i];
    unsigned long long key = k->mask_key, id = k->mask_id;
    int plain_src = keeping;
    void *args[] = {&dst, &src, &n, &key, &id, &plain_src, &slot, &g->sum_key};
    return n > 0 ? wk_launch_harness(g, g->k_mask, n / 8 + 1, args) : 0;
}

/* KC_TEST_BATCH_TAMPER=fetch|end, for tests/gpu/test_batched.sh only: stands in for a candidate
 * that writes into the store (none can find it but by guessing addresses), so the GPU test sees
 * the checks catch one: in the job of batch index 1, one byte of the first kept run is flipped
 * just before a kept run is read (fetch) or before the end-of-job check (end), once per
 * process. It can only make a verdict stricter. */
static void test_tamper(wk_gpu *g, const wk_batch_job *bj, const char *when)
{
    static int done;
    const char *mode = getenv("KC_TEST_BATCH_TAMPER");
    if (done || !mode || strcmp(mode, when) != 0 || !bj || bj->index != 1 || !bj->scope)
        return;
    for (int r = 0; r < bj->scope->n_runs; r++) {
        const struct kept_run *k = &bj->scope->runs[r];
        unsigned char byte;
        if (!k->planned || !k->filled ||
            cuMemcpyDtoH(&byte, bj->scope->store.ptr + k->offset, 1) != CUDA_SUCCESS)
            continue;
        byte ^= 0x01;
        cuMemcpyHtoDAsync(bj->scope->store.ptr + k->offset, &byte, 1, g->stream);
        cuStreamSynchronize(g->stream);
        done = 1;
        return;
    }
}

static int store_changed(wk_gpu *g, wk_failure *f)
{
    wk_batch_drop_all(g);
    snprintf(f->verdict, sizeof(f->verdict), "unsafe");
    sb_reset(&f->message);
    sb_adds(&f->message, "wrote into memory outside its buffers: the reference outputs the "
                         "verifier keeps for the other candidates of its batch changed");
    return -1;
}

int wk_batch_fetch(wk_gpu *g, wk_batch_job *bj, int run, const char *run_key, const uint64_t *in_sums,
                   int n_in, wk_buffer *outs, int n_out, double *reference_ms, const char **from,
                   wk_failure *f)
{
    struct kept_run *k = kept_at(bj, run);
    if (!k || !k->filled)
        return 0;
    if (!kept_matches(k, run_key, in_sums, n_in, outs, n_out)) { /* never expected: run again */
        bj->stale++;
        k->filled = 0;
        return 0;
    }
    uint64_t sums[KC_MAX_TENSORS];
    test_tamper(g, bj, "fetch");
    CUresult rc = wk_sums_clear(g, n_out);
    for (int i = 0; i < n_out && rc == CUDA_SUCCESS; i++)
        if (mask_launch(g, bj->scope, k, i, outs[i].ptr, 0, wk_sum_slot(g, i)))
            rc = CUDA_ERROR_LAUNCH_FAILED;
    if (rc == CUDA_SUCCESS)
        rc = wk_sums_read(g, sums, n_out);
    if (rc != CUDA_SUCCESS)
        return wk_fail_cuda(f, "runtime_error", rc, "reading the batch's kept reference outputs");
    if (memcmp(sums, k->out_sum, (size_t)n_out * sizeof(*sums)) != 0)
        return store_changed(g, f);
    *reference_ms = k->reference_ms;
    *from = k->from;
    bj->shared++;
    bj->scope->last_used = now_ms();
    return 1;
}

int wk_batch_keep(wk_gpu *g, wk_batch_job *bj, int run, const char *run_key, const uint64_t *in_sums,
                  int n_in, const wk_buffer *outs, int n_out, double reference_ms)
{
    struct kept_run *k = kept_at(bj, run);
    uint64_t need = 0;
    for (int i = 0; k && i < n_out; i++)
        need += batch_round(outs[i].bytes);
    if (!k || k->filled || need != k->bytes || n_out > KC_MAX_TENSORS || n_in > KC_MAX_TENSORS)
        return 0;
    free(k->key);
    k->key = xstrdup(run_key);
    k->n_out = n_out, k->n_in = n_in;
    for (int i = 0; i < n_out; i++)
        k->out_bytes[i] = outs[i].bytes;
    memcpy(k->in_sum, in_sums, (size_t)n_in * sizeof(*in_sums));
    k->mask_key = random64(), k->mask_id = random64();
    CUresult rc = wk_sums_clear(g, n_out);
    for (int i = 0; i < n_out && rc == CUDA_SUCCESS; i++)
        if (mask_launch(g, bj->scope, k, i, outs[i].ptr, 1, wk_sum_slot(g, i)))
            rc = CUDA_ERROR_LAUNCH_FAILED;
    if (rc == CUDA_SUCCESS)
        rc = wk_sums_read(g, k->out_sum, n_out);
    if (rc != CUDA_SUCCESS)
        return -1;
    k->reference_ms = reference_ms;
    snprintf(k->from, sizeof(k->from), "%s", bj->from);
    k->filled = 1;
    bj->kept++;
    return 1;
}

int wk_batch_check(wk_gpu *g, wk_failure *f)
{
    uint64_t want = 0, got = 0;
    test_tamper(g, current, "end");
    CUresult rc = wk_sums_clear(g, 1);
    for (int s = 0; s < n_scopes && rc == CUDA_SUCCESS; s++)
        for (int r = 0; r < scopes[s]->n_runs && rc == CUDA_SUCCESS; r++) {
            const struct kept_run *k = &scopes[s]->runs[r];
            for (int i = 0; k->planned && k->filled && i < k->n_out; i++) {
                want += k->out_sum[i]; /* the slot adds modulo 2^64 too */
                if (mask_launch(g, scopes[s], k, i, 0, 0, wk_sum_slot(g, 0)))
                    rc = CUDA_ERROR_LAUNCH_FAILED;
            }
        }
    if (rc == CUDA_SUCCESS)
        rc = wk_sums_read(g, &got, 1);
    if (rc != CUDA_SUCCESS) {
        wk_batch_drop_all(g);
        return wk_fail_cuda(f, "runtime_error", rc, "checking the batch's kept reference outputs");
    }
    return got == want ? 0 : store_changed(g, f);
}

json_t *wk_batch_evidence(const wk_batch_job *bj)
{
    const struct wk_scope *sc = bj->scope;
    json_t *o = json_pack("{s:s,s:i,s:{s:i,s:i,s:i},s:I,s:I,s:b,s:I}", "key", bj->key, "index",
                          bj->index, "reference", "shared", bj->shared, "kept", bj->kept, "ran",
                          bj->ran, "kept_bytes", (json_int_t)(sc ? sc->bytes : 0),
                          "budget_bytes", (json_int_t)bj->budget, "scrubbed", bj->scrubbed != 0,
                          "local_bytes", (json_int_t)bj->local_bytes);
    if (sc) {
        char scope[17];
        snprintf(scope, sizeof(scope), "%.16s", sc->id);
        json_object_set_new(o, "scope", json_string(scope));
    }
    if (bj->stale)
        json_object_set_new(o, "stale", json_integer(bj->stale));
    if (bj->restart)
        json_object_set_new(o, "restart",
                            json_string("a kernel of the job may use more local memory per "
                                        "thread than the scrub between a batch's jobs "
                                        "overwrites: the worker ends after the job"));
    return o;
}
