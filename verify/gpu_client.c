/* gpu_client: dispatch of candidates to GPU worker processes (see gpu_client.h). */
#include "verify/gpu_client.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "verify/ipc.h"
#include "verify/proc_pool.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPU_MAX_WORKERS 16

/* What a worker said of its GPU when it started. */
struct gpu_info {
    char name[128], driver[32], cuda[32];
};

struct gpu_client {
    kv_options opt;
    int workers;
    proc_pool *procs;
    strbuf exe;
    struct gpu_info info[GPU_MAX_WORKERS];
};

void kverify_gpu_exe_path(strbuf *out)
{
    sibling_exe_path("KC_KVERIFY_GPU", "kverify-gpu", out);
}

static void copy_str(char *dst, size_t n, json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    snprintf(dst, n, "%s", s ? s : "");
}

static int spawn_worker(void *ctx, int slot, ipc_child *child, strbuf *err)
{
    gpu_client *g = ctx;
    char device[16];
    snprintf(device, sizeof(device), "%d", slot);
    char *argv[] = {g->exe.buf, "worker", "--device", device, NULL};
    if (ipc_spawn(argv, child, err))
        return -1;
    ipc_msg hello;
    enum ipc_status st = ipc_recv(child->from_child, &hello, now_ms() + 120000, err);
    int rc = 0;
    if (st != IPC_OK)
        rc = kc_fail(err, "the GPU worker (%s) did not start", g->exe.buf);
    else if (json_object_get(hello.json, "fatal"))
        rc = kc_fail(err, "GPU worker: %s", json_string_value(json_object_get(hello.json, "fatal")));
    else {
        struct gpu_info *info = &g->info[slot];
        copy_str(info->name, sizeof(info->name), hello.json, "gpu_name");
        copy_str(info->driver, sizeof(info->driver), hello.json, "driver");
        copy_str(info->cuda, sizeof(info->cuda), hello.json, "cuda");
    }
    ipc_msg_free(&hello);
    if (rc)
        ipc_kill(child);
    return rc;
}

/* Counts GPUs by asking kverify-gpu (so that this process never loads libcuda). */
static int count_gpus(const char *exe, strbuf *err)
{
    strbuf cmd = STRBUF_INIT;
    sb_addf(&cmd, "'%s' gpus --count 2>/dev/null", exe);
    FILE *f = popen(cmd.buf, "r");
    sb_free(&cmd);
    int n = -1;
    if (!f || fscanf(f, "%d", &n) != 1)
        n = -1;
    if (f)
        pclose(f);
    if (n <= 0)
        return kc_fail(err, "no usable GPU (kverify-gpu found none); use --compile-only on a machine "
                            "without a GPU");
    return n;
}

int gpu_client_start(const kv_options *o, gpu_client **out, strbuf *err)
{
    gpu_client *g = xcalloc(1, sizeof(*g));
    g->opt = *o;
    kverify_gpu_exe_path(&g->exe);
    int n = count_gpus(g->exe.buf, err);
    if (n < 0) {
        sb_free(&g->exe);
        free(g);
        return -1;
    }
    if (o->gpus > 0 && o->gpus < n)
        n = o->gpus;
    if (n > GPU_MAX_WORKERS)
        n = GPU_MAX_WORKERS;
    g->workers = n;
    g->procs = proc_pool_new(n, spawn_worker, g);
    *out = g;
    return 0;
}

void gpu_client_stop(gpu_client *g)
{
    if (!g)
        return;
    proc_pool_free(g->procs);
    sb_free(&g->exe);
    free(g);
}

int gpu_client_workers(gpu_client *g) { return g ? g->workers : 0; }

int gpu_client_busy(gpu_client *g, int *waiting)
{
    if (waiting)
        *waiting = 0;
    return g ? proc_pool_busy(g->procs, waiting) : 0;
}

static void slugify(const char *name, strbuf *out)
{
    for (const char *c = name; *c; c++) {
        char ch = (char)tolower((unsigned char)*c);
        if (isalnum((unsigned char)ch))
            sb_addch(out, ch);
        else if (out->len && out->buf[out->len - 1] != '-')
            sb_addch(out, '-');
    }
    while (out->len && out->buf[out->len - 1] == '-')
        sb_setlen(out, out->len - 1);
}

void baselines_lookup(const problem *p, const char *gpu_name, double *eager_ms, double *compile_ms)
{
    *eager_ms = *compile_ms = 0;
    strbuf dir = STRBUF_INIT, path = STRBUF_INIT, slug = STRBUF_INIT;
    path_dirname(p->manifest_path, &dir);
    slugify(gpu_name, &slug);
    sb_addf(&path, "%s/baselines/%s.json", dir.buf, slug.buf);
    json_t *root = json_load_file(path.buf, 0, NULL);
    json_t *entry = json_object_get(json_object_get(root, "problems"), p->id);
    if (entry) {
        *eager_ms = json_number_value(json_object_get(entry, "eager_ms"));
        *compile_ms = json_number_value(json_object_get(entry, "compile_ms"));
    }
    json_decref(root);
    sb_free(&dir), sb_free(&path), sb_free(&slug);
}

static json_t *make_job(const gpu_client *g, const problem *p, const uint64_t *seeds, int n)
{
    json_t *job = json_object();
    json_object_set_new(job, "manifest", json_string(p->manifest_path));
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) {
        char buf[32];
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long)seeds[i]);
        json_array_append_new(arr, json_string(buf));
    }
    json_object_set_new(job, "seeds", arr);
    json_object_set_new(job, "timing", json_boolean(!g->opt.no_timing));
    json_object_set_new(job, "timing_cap_ms", json_real(g->opt.timing_cap_ms));
    return job;
}

static double num(json_t *obj, const char *key) { return json_number_value(json_object_get(obj, key)); }

static void fill_timing(const problem *p, json_t *t, kv_result *r)
{
    kv_timing *tm = &r->timing;
    r->timed = 1;
    tm->median_ms = num(t, "median_ms"), tm->mean_ms = num(t, "mean_ms");
    tm->stdev_ms = num(t, "stdev_ms"), tm->min_ms = num(t, "min_ms");
    tm->p10_ms = num(t, "p10_ms"), tm->p90_ms = num(t, "p90_ms");
    tm->n = (int)json_integer_value(json_object_get(t, "n"));
    tm->cupti_ms = num(t, "cupti_ms"), tm->gbps = num(t, "gbps"), tm->tflops = num(t, "tflops");
    baselines_lookup(p, r->gpu_name, &tm->eager_ms, &tm->compile_ms);
    if (tm->median_ms > 0 && tm->eager_ms > 0)
        tm->speedup_eager = tm->eager_ms / tm->median_ms;
    if (tm->median_ms > 0 && tm->compile_ms > 0)
        tm->speedup_compile = tm->compile_ms / tm->median_ms;
    if (tm->speedup_eager > 10) {
        if (r->flags.len)
            sb_addch(&r->flags, ',');
        sb_adds(&r->flags, "suspicious_speedup");
    }
}

static void fill_result(const problem *p, json_t *res, kv_result *r)
{
    copy_str(r->verdict, sizeof(r->verdict), res, "verdict");
    copy_str(r->gpu_name, sizeof(r->gpu_name), res, "gpu_name");
    copy_str(r->driver_version, sizeof(r->driver_version), res, "driver");
    copy_str(r->cuda_version, sizeof(r->cuda_version), res, "cuda");
    sb_reset(&r->message), sb_reset(&r->flags), sb_reset(&r->evidence_json);
    const char *msg = json_string_value(json_object_get(res, "message"));
    sb_adds(&r->message, msg ? msg : "");
    const char *flags = json_string_value(json_object_get(res, "flags"));
    sb_adds(&r->flags, flags ? flags : "");
    json_t *ev = json_object_get(res, "evidence");
    if (ev) {
        char *s = json_dumps(ev, JSON_COMPACT);
        sb_adds(&r->evidence_json, s);
        free(s);
    }
    json_t *errs = json_object_get(res, "errors");
    if (errs) {
        r->has_errors = 1;
        r->max_abs_err = num(errs, "max_abs"), r->max_rel_err = num(errs, "max_rel");
        r->rel_l2_err = num(errs, "rel_l2");
    }
    json_t *t = json_object_get(res, "timing");
    if (json_is_object(t))
        fill_timing(p, t, r);
}

static void set_lost_worker(kv_result *r, const char *verdict, const char *message)
{
    snprintf(r->verdict, sizeof(r->verdict), "%s", verdict);
    sb_reset(&r->message);
    sb_adds(&r->message, message);
}

/* Follows progress messages until the result; kills the worker on a missed deadline. */
static int await_result(gpu_client *g, const problem *p, ipc_child *child, kv_result *r, strbuf *err)
{
    (void)g;
    double deadline = now_ms() + 120000; /* until the first progress message */
    const char *stage = "setup";
    char stage_buf[64] = "setup";
    for (;;) {
        ipc_msg m;
        enum ipc_status st = ipc_recv(child->from_child, &m, deadline, err);
        if (st == IPC_TIMEOUT) {
            ipc_kill(child);
            strbuf msg = STRBUF_INIT;
            sb_addf(&msg, "the %s did not finish within its deadline; the worker was killed and "
                          "restarted", stage);
            set_lost_worker(r, strcmp(stage, "reference") ? "timeout" : "runtime_error", msg.buf);
            sb_free(&msg);
            return 0;
        }
        if (st != IPC_OK) {
            ipc_msg_free(&m);
            ipc_kill(child);
            set_lost_worker(r, "runtime_error",
                            "the GPU worker died while running the candidate and was restarted");
            return 0;
        }
        json_t *res = json_object_get(m.json, "result");
        if (res) {
            fill_result(p, res, r);
            if (json_is_true(json_object_get(res, "fatal")))
                ipc_kill(child); /* a sticky CUDA error: the next job gets a fresh process */
            ipc_msg_free(&m);
            return 0;
        }
        const char *pg = json_string_value(json_object_get(m.json, "progress"));
        snprintf(stage_buf, sizeof(stage_buf), "%s", pg ? pg : "stage");
        stage = stage_buf;
        deadline = now_ms() + json_number_value(json_object_get(m.json, "deadline_ms"));
        ipc_msg_free(&m);
    }
}

int gpu_client_verify(gpu_client *g, const problem *p, const strbuf *ref_cubin,
                      const uint64_t *seeds, int n_seeds,
                      kv_result *r, strbuf *err)
{
    int slot;
    ipc_child *child;
    if (proc_pool_acquire(g->procs, &slot, &child, err))
        return -1;
    const struct gpu_info *info = &g->info[slot];
    snprintf(r->gpu_name, sizeof(r->gpu_name), "%s", info->name);
    snprintf(r->driver_version, sizeof(r->driver_version), "%s", info->driver);
    snprintf(r->cuda_version, sizeof(r->cuda_version), "%s", info->cuda);
    sb_reset(&r->seeds);
    for (int i = 0; i < n_seeds; i++)
        sb_addf(&r->seeds, "%s%llu", i ? "," : "", (unsigned long long)seeds[i]);
    json_t *job = make_job(g, p, seeds, n_seeds);
    const void *blobs[3] = {r->source.buf, r->cubin.buf, ref_cubin->buf};
    size_t lens[3] = {r->source.len, r->cubin.len, ref_cubin->len};
    int rc = 0;
    if (ipc_send(child->to_child, job, blobs, lens, 3) != 0) {
        ipc_kill(child);
        rc = kc_fail(err, "the GPU worker died before taking the job");
    } else {
        double t0 = now_ms();
        rc = await_result(g, p, child, r, err);
        r->gpu_ms = now_ms() - t0;
    }
    json_decref(job);
    proc_pool_release(g->procs, slot);
    return rc;
}
