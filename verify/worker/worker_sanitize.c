/* worker_sanitize: `kverify-gpu sanitize --device N`, the process that compute-sanitizer
 * watches (see verify/service/sanitizer.c). It takes one job on stdin like the worker does (the
 * problem's manifest path, dims, a seed; the candidate's source and cubin and the harness
 * module, compiled once by the client, as payloads: no NVRTC start-up here), runs
 * the candidate's launch unit once on seeded inputs with every buffer an exact-size plain
 * allocation (no guard bands, no padding: the tool's bounds checks are then byte-exact at the
 * end), starting at a random 16-byte offset into its allocation, as a buffer of the checking
 * runs that ends at its wall starts (so a kernel cannot tell this run by a buffer address's
 * alignment; docs/INTEGRITY.md "Walls"), and
 * answers {"ok": true} or {"error": ...} on the private result descriptor; then the next job,
 * so one watched process (the tool's start-up paid once) serves many candidates. */
#include "common/error.h"
#include "verify/service/ipc.h"
#include "verify/worker/worker.h"

#include <stdlib.h>
#include <string.h>

#define SANITIZE_BUFFERS (2 * KC_MAX_TENSORS + KC_MAX_SCRATCH)

struct exact_buffers {
    wk_buffer b[SANITIZE_BUFFERS];
    int n;
};

static void free_exact(struct exact_buffers *x)
{
    for (int i = 0; i < x->n; i++)
        wk_buffer_free(&x->b[i]);
    x->n = 0;
}

/* Inputs, outputs, then the candidate's scratch, as candidate.h indexes tensors. */
static int alloc_exact(const problem *p, const launch_unit *lu, const dimset *dims,
                       struct exact_buffers *x, strbuf *err)
{
    for (int i = 0; i < p->n_inputs + p->n_outputs; i++) {
        const tensor_spec *t = i < p->n_inputs ? &p->inputs[i] : &p->outputs[i - p->n_inputs];
        int64_t n;
        if (tensor_numel(t, dims, &n, err) || wk_buffer_alloc_exact(&x->b[x->n], t->dtype, n, err))
            return -1;
        x->n++;
    }
    for (int i = 0; i < lu->n_scratch; i++) {
        int64_t n;
        if (expr_eval(lu->scratch[i].count, dims, &n, err) || n < 0 ||
            wk_buffer_alloc_exact(&x->b[x->n], lu->scratch[i].dtype, n, err))
            return err->len ? -1 : kc_fail(err, "scratch %s: negative size", lu->scratch[i].name);
        x->n++;
    }
    return 0;
}

static int prepare_inputs(wk_gpu *g, const problem *p, const dimset *dims, uint64_t seed,
                          struct exact_buffers *x, strbuf *err)
{
    for (int i = 0; i < p->n_inputs; i++)
        if (wk_fill_input(g, &x->b[i], &p->inputs[i], dims, seed, (unsigned)i, 0, NULL, err))
            return -1;
    for (int i = p->n_inputs; i < x->n; i++)
        if (wk_buffer_poison(g, &x->b[i]))
            return kc_fail(err, "cannot poison buffer %d", i);
    return 0;
}

/* One execution of the launch unit; a CUDA error is reported in err. */
static int run_once(wk_gpu *g, const problem *p, const dimset *dims, uint64_t seed,
                    const char *source, const char *cubin, strbuf *err)
{
    wk_unit u = {0};
    wk_failure f = {0};
    struct exact_buffers x = {0};
    int rc = -1;
    if (wk_unit_load(&u, cubin, source, p, &f)) {
        kc_fail(err, "%s", sb_str(&f.message));
        goto out;
    }
    if (alloc_exact(p, &u.lu, dims, &x, err) || prepare_inputs(g, p, dims, seed, &x, err))
        goto out;
    if (wk_unit_launch(g, &u, p, dims, x.b, NULL, &f)) {
        kc_fail(err, "%s", sb_str(&f.message));
        goto out;
    }
    CUresult cr = cuStreamSynchronize(g->stream);
    wk_printf_drain();
    rc = cr == CUDA_SUCCESS ? 0 : kc_fail(err, "running the candidate: %s", wk_cuda_error(cr));
out:
    free_exact(&x);
    wk_unit_free(&u);
    sb_free(&f.message);
    return rc;
}

/* The job's dims: a named set ("small", "alt0") or a drawn one ("dims_set": {name: value}). */
static int load_job_dims(const problem *p, json_t *job, dimset *dims, strbuf *err)
{
    enum kc_dims_kind kind;
    int alt;
    json_t *set = json_object_get(job, "dims_set");
    if (json_is_object(set))
        return problem_dims_from_json(p, set, dims, err);
    const char *name = json_string_value(json_object_get(job, "dims"));
    if (!name || dims_kind_parse(name, &kind, &alt) || !problem_dims(p, kind, alt))
        return kc_fail(err, "unknown dims set '%s'", name ? name : "(none)");
    dimset_copy(dims, problem_dims(p, kind, alt));
    return 0;
}

/* One job: its problem, dims and seed; the GPU opened on the first job with the harness the
 * client sent. Returns 0, or -1 with err set (the candidate's failure or a bad job). */
static int sanitize_job(wk_gpu *g, int *gpu_open, int device, ipc_msg *job, strbuf *err)
{
    const char *manifest = json_string_value(json_object_get(job->json, "manifest"));
    const char *seed = json_string_value(json_object_get(job->json, "seed"));
    problem p;
    dimset dims = {0};
    if (job->n_blobs < 3 || !manifest || !seed)
        return kc_fail(err, "malformed job");
    if (problem_load(manifest, &p, err))
        return -1;
    int rc = load_job_dims(&p, job->json, &dims, err);
    if (rc == 0 && !*gpu_open) {
        rc = wk_gpu_open(g, device, &job->blobs[2], err);
        *gpu_open = rc == 0;
    }
    if (rc == 0)
        rc = run_once(g, &p, &dims, strtoull(seed, NULL, 10), job->blobs[0].buf, job->blobs[1].buf, err);
    dimset_free(&dims);
    problem_free(&p);
    return rc;
}

/* Serves jobs until stdin ends (exit 0). A failed job is answered, then the process ends
 * (exit 3): after a fault the context is unusable, and the tool's report is complete only once
 * the process has ended. */
int wk_sanitize_serve(int device)
{
    strbuf err = STRBUF_INIT;
    if (wk_channel_open(&err))
        return 1;
    wk_gpu g;
    int gpu_open = 0, rc = 0;
    while (rc == 0) {
        ipc_msg job;
        sb_reset(&err);
        if (ipc_recv(0, &job, -1, &err) != IPC_OK)
            break;
        json_t *id = json_object_get(job.json, "job");
        wk_channel_set_job(json_is_integer(id) ? json_integer_value(id) : 0);
        wk_printf_reset();
        rc = sanitize_job(&g, &gpu_open, device, &job, &err);
        ipc_msg_free(&job);
        json_t *msg = rc == 0 ? json_pack("{s:b}", "ok", 1) : json_pack("{s:s}", "error", sb_str(&err));
        wk_channel_send(msg);
        json_decref(msg);
    }
    sb_free(&err);
    return rc == 0 ? 0 : 3;
}
