/* gpu_client: dispatch of candidates to GPU worker processes (see gpu_client.h). */
#include "verify/gpu_client.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/interrupt.h"
#include "verify/ipc.h"
#include "verify/proc_pool.h"

#include <ctype.h>
#include <math.h>
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
    json_int_t next_job; /* every job is numbered; the worker echoes the number */
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
    else if (!json_is_string(json_object_get(hello.json, "gpu_name")) &&
             !json_is_string(json_object_get(hello.json, "fatal")))
        rc = kc_fail(err, "the GPU worker (%s) did not introduce itself", g->exe.buf);
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

static json_t *make_job(gpu_client *g, const problem *p, const uint64_t *seeds, int n,
                        json_int_t *job_id)
{
    json_t *job = json_object();
    *job_id = __atomic_add_fetch(&g->next_job, 1, __ATOMIC_RELAXED);
    json_object_set_new(job, "job", json_integer(*job_id));
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
    tm->check_device_ms = num(t, "check_device_ms");
    tm->checked_reps = (int)json_integer_value(json_object_get(t, "checked_reps"));
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

/* The evidence as recorded: the worker's, with the device printf output and the checked timed
 * reps beside it. */
static void fill_evidence(json_t *res, kv_result *r)
{
    json_t *ev = json_object_get(res, "evidence");
    json_t *merged = json_is_object(ev) ? json_copy(ev) : json_object();
    json_t *printed = json_object_get(res, "device_printf");
    if (json_is_object(printed))
        json_object_set(merged, "device_printf", printed);
    json_t *timed = json_object_get(res, "timed_checks");
    if (json_is_array(timed))
        json_object_set(merged, "timed_checks", timed);
    json_t *hmm = json_object_get(res, "pageable_memory_access");
    if (json_is_boolean(hmm)) /* whether the kernel could reach host memory (docs/INTEGRITY.md) */
        json_object_set_new(merged, "gpu", json_pack("{s:O}", "pageable_memory_access", hmm));
    json_t *t = json_object_get(res, "timing");
    if (json_is_object(t)) { /* how the timed runs were checked */
        static const char *const keys[] = {"checked_runs", "seed_base", "check_device_ms",
                                           "timed_vs_check", "inconsistent", NULL};
        json_t *tc = json_object();
        for (const char *const *k = keys; *k; k++)
            if (json_object_get(t, *k))
                json_object_set(tc, *k, json_object_get(t, *k));
        json_object_set_new(merged, "timing_checks", tc);
    }
    if (json_object_size(merged)) {
        char *s = json_dumps(merged, JSON_COMPACT);
        sb_adds(&r->evidence_json, s);
        free(s);
    }
    json_decref(merged);
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
    fill_evidence(res, r);
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

/* ---- what a worker may say: anything else is a protocol error, never a verdict ---- */

static int is_one_of(const char *s, const char *const *set)
{
    for (; s && *set; set++)
        if (strcmp(s, *set) == 0)
            return 1;
    return 0;
}

static const char *const worker_verdicts[] = {"extract_error", "launch_error", "runtime_error",
                                              "timeout", "mismatch", "unsafe", "correct", NULL};
static const char *const worker_flags[] = {"alt_shape_fail", "nondeterministic",
                                           "timing_inconsistent", NULL};

static int flags_valid(const char *flags)
{
    if (!flags)
        return 0;
    char *copy = xstrdup(flags), *save = NULL;
    int ok = 1;
    for (char *tok = strtok_r(copy, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save))
        ok = is_one_of(tok, worker_flags);
    free(copy);
    return ok;
}

static int number_in(json_t *obj, const char *key, double lo, double hi, int required)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return !required;
    return json_is_number(v) && json_number_value(v) >= lo && json_number_value(v) <= hi;
}

static int timing_valid(json_t *t)
{
    static const char *const times[] = {"median_ms", "mean_ms", "stdev_ms", "min_ms", "p10_ms",
                                        "p90_ms", NULL};
    for (const char *const *k = times; *k; k++)
        if (!number_in(t, *k, 0, 3.6e6, 1))
            return 0;
    json_t *n = json_object_get(t, "n");
    return json_is_integer(n) && json_integer_value(n) >= 1 && json_integer_value(n) <= 1000000 &&
           number_in(t, "cupti_ms", 0, 3.6e6, 0) && number_in(t, "gbps", 0, 1e9, 0) &&
           number_in(t, "tflops", 0, 1e9, 0) && number_in(t, "check_device_ms", 0, 3.6e6, 0);
}

/* Checks a result message's shape; *why says what is wrong. */
static int result_valid(json_t *res, const char **why)
{
    json_t *t = json_object_get(res, "timing");
    json_t *errs = json_object_get(res, "errors");
    *why = "not an object";
    if (!json_is_object(res))
        return 0;
    *why = "unknown verdict";
    if (!is_one_of(json_string_value(json_object_get(res, "verdict")), worker_verdicts))
        return 0;
    *why = "unknown flags";
    if (!flags_valid(json_string_value(json_object_get(res, "flags"))) &&
        json_object_get(res, "flags"))
        return 0;
    *why = "malformed message, evidence or errors";
    json_t *hmm = json_object_get(res, "pageable_memory_access");
    if (!json_is_string(json_object_get(res, "message")) || (hmm && !json_is_boolean(hmm)) ||
        (json_object_get(res, "evidence") && !json_is_object(json_object_get(res, "evidence"))) ||
        (errs && (!json_is_object(errs) || !number_in(errs, "max_abs", 0, INFINITY, 1) ||
                  !number_in(errs, "max_rel", 0, INFINITY, 1) ||
                  !number_in(errs, "rel_l2", 0, INFINITY, 1))))
        return 0;
    *why = "malformed timing";
    if (t && (!json_is_object(t) || !timing_valid(t)))
        return 0;
    *why = "a timed result whose verdict is not correct";
    if (t && strcmp(json_string_value(json_object_get(res, "verdict")), "correct") != 0)
        return 0;
    return 1;
}

/* A progress message: a stage name and a deadline in (0 ms, 1 day]. */
static int progress_valid(json_t *m)
{
    const char *stage = json_string_value(json_object_get(m, "progress"));
    return stage && strlen(stage) < 64 && number_in(m, "deadline_ms", 0, 86400000.0, 1);
}

static int protocol_error(ipc_child *child, ipc_msg *m, const char *why, strbuf *err)
{
    ipc_msg_free(m);
    ipc_kill(child);
    return kc_fail(err, "the GPU worker sent a malformed message (%s); it was restarted and the "
                        "candidate was not labelled", why);
}

static void set_lost_worker(kv_result *r, const char *verdict, const char *message)
{
    snprintf(r->verdict, sizeof(r->verdict), "%s", verdict);
    sb_reset(&r->message);
    sb_adds(&r->message, message);
}

/* Follows progress messages until the result; kills the worker on a missed deadline. */
static int await_result(const problem *p, ipc_child *child, json_int_t job_id, kv_result *r,
                        strbuf *err)
{
    double deadline = now_ms() + 120000; /* until the first progress message */
    char stage[64] = "setup";
    for (;;) {
        ipc_msg m;
        enum ipc_status st = ipc_recv(child->from_child, &m, deadline, err);
        if (st == IPC_TIMEOUT) {
            ipc_msg_free(&m);
            ipc_kill(child);
            strbuf msg = STRBUF_INIT;
            sb_addf(&msg, "the %s did not finish within its deadline; the worker was killed and "
                          "restarted", stage);
            set_lost_worker(r, strcmp(stage, "reference") ? "timeout" : "runtime_error", msg.buf);
            sb_free(&msg);
            return 0;
        }
        if (st == IPC_ERROR) {
            char why[256];
            snprintf(why, sizeof(why), "%s", sb_str(err));
            sb_reset(err);
            return protocol_error(child, &m, why, err);
        }
        if (st != IPC_OK) {
            ipc_msg_free(&m);
            int status = ipc_reap_lost(child, 1000);
            if (kc_interrupted()) { /* killed beside the tool's interrupt: no label */
                strbuf how = STRBUF_INIT;
                ipc_describe_exit(status, &how);
                kc_fail(err, "interrupted: the GPU worker stopped (%s); the candidate was not "
                             "labelled", how.buf);
                sb_free(&how);
                return -1;
            }
            set_lost_worker(r, "runtime_error",
                            "the GPU worker died while running the candidate and was restarted");
            return 0;
        }
        json_t *job = json_object_get(m.json, "job");
        if (!json_is_integer(job) || json_integer_value(job) != job_id)
            return protocol_error(child, &m, "a message for another job", err);
        json_t *res = json_object_get(m.json, "result");
        if (res) {
            const char *why;
            if (!result_valid(res, &why))
                return protocol_error(child, &m, why, err);
            fill_result(p, res, r);
            if (json_is_true(json_object_get(res, "fatal")))
                ipc_kill(child); /* a sticky CUDA error: the next job gets a fresh process */
            ipc_msg_free(&m);
            return 0;
        }
        if (!progress_valid(m.json))
            return protocol_error(child, &m, "neither a result nor a progress report", err);
        snprintf(stage, sizeof(stage), "%s", json_string_value(json_object_get(m.json, "progress")));
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
    json_int_t job_id;
    json_t *job = make_job(g, p, seeds, n_seeds, &job_id);
    const void *blobs[3] = {r->source.buf, r->cubin.buf, ref_cubin->buf};
    size_t lens[3] = {r->source.len, r->cubin.len, ref_cubin->len};
    int rc = 0;
    if (ipc_send(child->to_child, job, blobs, lens, 3) != 0) {
        ipc_kill(child);
        rc = kc_fail(err, "the GPU worker died before taking the job");
    } else {
        double t0 = now_ms();
        rc = await_result(p, child, job_id, r, err);
        r->gpu_ms = now_ms() - t0;
    }
    json_decref(job);
    proc_pool_release(g->procs, slot);
    return rc;
}
