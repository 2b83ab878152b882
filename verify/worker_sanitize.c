/* worker_sanitize: `kverify-gpu sanitize --device N`, the process that compute-sanitizer
 * watches (see verify/sanitizer.c). It takes one job on stdin like the worker does (the
 * problem's manifest path, dims, a seed; the candidate's source and cubin and the harness
 * module, compiled once by the client, as payloads: no NVRTC start-up here), runs
 * the candidate's launch unit once on seeded inputs with every buffer an exact-size plain
 * allocation (no guard bands, no padding: the tool's bounds checks are then byte-exact), and
 * answers {"ok": true} or {"error": ...} on the private result descriptor. */
#include "common/error.h"
#include "verify/ipc.h"
#include "verify/worker.h"

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
        if (wk_fill_input(g, &x->b[i], &p->inputs[i], dims, seed, (unsigned)i, err))
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
    if (wk_unit_launch(g, &u, p, dims, x.b, &f)) {
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

static int load_job_dims(const problem *p, json_t *job, dimset *dims, strbuf *err)
{
    enum kc_dims_kind kind;
    int alt;
    const char *name = json_string_value(json_object_get(job, "dims"));
    if (!name || dims_kind_parse(name, &kind, &alt) || !problem_dims(p, kind, alt))
        return kc_fail(err, "unknown dims set '%s'", name ? name : "(none)");
    dimset_copy(dims, problem_dims(p, kind, alt));
    return 0;
}

int wk_sanitize_serve(int device)
{
    strbuf err = STRBUF_INIT;
    if (wk_channel_open(&err))
        return 1;
    ipc_msg job;
    wk_gpu g;
    problem p;
    dimset dims = {0};
    int loaded = 0, rc = 1;
    const char *manifest, *seed;
    if (ipc_recv(0, &job, -1, &err) != IPC_OK || job.n_blobs < 3) {
        kc_fail(&err, "no job on stdin");
        goto reply;
    }
    manifest = json_string_value(json_object_get(job.json, "manifest"));
    seed = json_string_value(json_object_get(job.json, "seed"));
    if (!manifest || !seed || problem_load(manifest, &p, &err))
        goto reply_job;
    loaded = 1;
    if (load_job_dims(&p, job.json, &dims, &err) || wk_gpu_open(&g, device, &job.blobs[2], &err))
        goto reply_job;
    rc = run_once(&g, &p, &dims, strtoull(seed, NULL, 10), job.blobs[0].buf, job.blobs[1].buf, &err);
reply_job:
    ipc_msg_free(&job);
reply:;
    json_t *msg = rc == 0 ? json_pack("{s:b}", "ok", 1) : json_pack("{s:s}", "error", sb_str(&err));
    wk_channel_send(msg);
    json_decref(msg);
    dimset_free(&dims);
    if (loaded)
        problem_free(&p);
    sb_free(&err);
    return rc == 0 ? 0 : 3;
}
