/* gpu_client: dispatch of candidates to GPU worker processes (see gpu_client.h). */
#include "verify/service/gpu_client.h"
#include "verify/service/gpu_result.h"
#include "verify/service/batch.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/interrupt.h"
#include "verify/service/deadline.h"
#include "verify/service/ipc.h"
#include "verify/service/proc_pool.h"
#include "verify/service/programs.h"
#include "verify/service/sanitizer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define GPU_MAX_WORKERS 16

/* What a worker said of its GPU when it started, and what its start-up cost. */
struct gpu_info {
    char name[128], driver[32], cuda[32];
    double open_ms, cupti_ms; /* the device, context and harness; CUPTI's first use */
    double init_ms, context_ms; /* open_ms's driver load and cuInit; its context */
    double up_at;             /* monotonic ms: when it introduced itself (start-up split) */
};

struct gpu_client {
    kv_options opt;
    int workers;
    proc_pool *procs;
    strbuf exe;
    struct gpu_info info[GPU_MAX_WORKERS];
    json_int_t next_job; /* every job is numbered; the worker echoes the number */
    double kill_ms[GPU_MAX_WORKERS]; /* the replaced worker's end, for its job's evidence */
    pthread_t warm[GPU_MAX_WORKERS];
    struct warm_arg { gpu_client *g; int slot; } warm_args[GPU_MAX_WORKERS];
    pthread_mutex_t held_lock;
    batch_held held[GPU_MAX_WORKERS]; /* the batches each worker may keep outputs of */
};

/* Starts a worker; greet_worker reads its hello (the pool may start one ahead of need). */
static int spawn_worker(void *ctx, int slot, ipc_child *child, strbuf *err)
{
    gpu_client *g = ctx;
    char device[16];
    snprintf(device, sizeof(device), "%d", slot);
    char *argv[] = {g->exe.buf, "worker", "--device", device, NULL};
    return ipc_spawn(argv, child, err);
}

/* A start-up phase the hello reports, in ms (0 when absent or out of range). */
static double start_phase(json_t *start, const char *key)
{
    double v = json_number_value(json_object_get(start, key));
    return v >= 0 && v <= 3.6e6 ? v : 0;
}

static int greet_worker(void *ctx, int slot, ipc_child *child, strbuf *err)
{
    gpu_client *g = ctx;
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
        gpu_json_copy_str(info->name, sizeof(info->name), hello.json, "gpu_name");
        gpu_json_copy_str(info->driver, sizeof(info->driver), hello.json, "driver");
        gpu_json_copy_str(info->cuda, sizeof(info->cuda), hello.json, "cuda");
        json_t *start = json_object_get(hello.json, "start_ms");
        info->open_ms = start_phase(start, "gpu_open");
        info->cupti_ms = start_phase(start, "cupti");
        info->init_ms = start_phase(start, "cuinit");
        info->context_ms = start_phase(start, "context");
        info->up_at = now_ms();
    }
    ipc_msg_free(&hello);
    return rc; /* the pool kills a worker that did not greet */
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

/* Starts one GPU's worker and its memcheck process while the first candidates compile, so the
 * first verification does not wait for CUDA's start-up and the harness compile. A failure is
 * left to the first verification to meet and report. */
static void *warm_gpu(void *arg)
{
    struct warm_arg *a = arg;
    ipc_child *child;
    strbuf err = STRBUF_INIT;
    if (proc_pool_acquire_slot(a->g->procs, a->slot, &child, &err) == 0) {
        proc_pool_release(a->g->procs, a->slot); /* the worker is up: jobs may use it now */
        sanitizer_prepare(&a->g->opt);          /* the harness compile, holding no GPU */
        /* the GPU only: a worker replaced meanwhile is greeted by the job that waits for it */
        proc_pool_hold_slot(a->g->procs, a->slot);
        sanitizer_warm(&a->g->opt, a->slot); /* starts the tool: a fork and exec */
        proc_pool_release(a->g->procs, a->slot);
    }
    sb_free(&err);
    return NULL;
}

static void start_warming(gpu_client *g)
{
    for (int i = 0; i < g->workers; i++) {
        g->warm_args[i] = (struct warm_arg){g, i};
        pthread_create(&g->warm[i], NULL, warm_gpu, &g->warm_args[i]);
    }
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
    pthread_mutex_init(&g->held_lock, NULL);
    g->procs = proc_pool_new(n, spawn_worker, g);
    proc_pool_set_greet(g->procs, greet_worker);
    start_warming(g);
    *out = g;
    return 0;
}

void gpu_client_stop(gpu_client *g)
{
    if (g)
        for (int i = 0; i < g->workers; i++)
            pthread_join(g->warm[i], NULL);
    sanitizer_shutdown();
    if (!g)
        return;
    proc_pool_free(g->procs);
    pthread_mutex_destroy(&g->held_lock);
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

/* A secret seed for the hidden draws: the kernel cannot predict the dims it will meet. */
uint64_t gpu_client_hidden_seed(const kv_options *o)
{
    uint64_t v = 0;
    if (o->fixed_hidden_seed)
        return o->hidden_seed;
    if (getrandom(&v, sizeof(v), 0) != sizeof(v))
        v = (uint64_t)(now_ms() * 1e3) ^ (uint64_t)getpid() << 32;
    return v;
}

/* The job's "hidden": {"seed", "sets": [{dim: value}, ...]} drawn from the manifest's
 * generator; a draw that fails (a manifest kverify problems --check would refuse) is noted. */
static void add_hidden_dims(const kv_options *o, const problem *p, uint64_t seed, json_t *job)
{
    if (o->n_hidden <= 0 || !problem_has_hidden(p))
        return;
    char text[32];
    snprintf(text, sizeof(text), "%llu", (unsigned long long)seed);
    json_t *sets = json_array(), *hidden = json_pack("{s:s,s:o}", "seed", text, "sets", sets);
    for (int i = 0; i < o->n_hidden && i < KV_MAX_HIDDEN; i++) {
        dimset d;
        strbuf s = STRBUF_INIT, err = STRBUF_INIT;
        if (problem_draw_dims(p, seed, i, &d, &err) == 0) {
            dimset_to_json(&d, &s);
            json_array_append_new(sets, json_loads(s.buf, 0, NULL));
            dimset_free(&d);
        } else {
            json_object_set_new(hidden, "draw_error", json_string(err.buf));
        }
        sb_free(&s), sb_free(&err);
    }
    json_object_set_new(job, "hidden", hidden);
}

/* Appends each of n sets to a JSON array, freeing them. */
static json_t *sets_json(dimset *sets, int n)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) {
        strbuf s = STRBUF_INIT;
        dimset_to_json(&sets[i], &s);
        json_array_append_new(arr, json_loads(s.buf, 0, NULL));
        sb_free(&s);
        dimset_free(&sets[i]);
    }
    return arr;
}

static dimset cover_sets[KC_MAX_BOUNDARY > KC_MAX_STRATIFIED ? KC_MAX_BOUNDARY : KC_MAX_STRATIFIED];

/* A family's object {"seed", "sets"} (n >= 0 sets, freed) or {"seed", "sets": [], "error"}. */
static json_t *family_json(uint64_t seed, int n, const strbuf *err)
{
    char text[32];
    snprintf(text, sizeof(text), "%llu", (unsigned long long)seed);
    return n < 0 ? json_pack("{s:s,s:[],s:s}", "seed", text, "sets", "error", err->buf)
                 : json_pack("{s:s,s:o}", "seed", text, "sets", sets_json(cover_sets, n));
}

/* The job's "boundary" (the kinds of size the manifest implies, each value drawn from a seed
 * of its own) and "stratified" (a Latin hypercube from another): issue 34's coverage. Both
 * seeds derive from the secret hidden seed, so --hidden-seed S reproduces them; they are
 * computed for every job (they depend on the seed, no cache). */
static void add_cover_sets(const kv_options *o, const problem *p, uint64_t hseed, json_t *job)
{
    if (!problem_has_hidden(p) || o->n_hidden <= 0)
        return;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* cover_sets */
    strbuf err = STRBUF_INIT;
    pthread_mutex_lock(&lock);
    uint64_t bseed = hseed ^ 0x424f554e44ull; /* "BOUND" */
    int skipped = 0;
    int n = problem_boundary_sets(p, bseed, cover_sets, KC_MAX_BOUNDARY, &skipped, &err);
    json_t *boundary = family_json(bseed, n, &err);
    if (n >= 0)
        json_object_set_new(boundary, "unreachable", json_integer(skipped));
    sb_reset(&err);
    uint64_t sseed = hseed ^ 0x5354524154ull; /* "STRAT" */
    n = problem_stratified_sets(p, sseed, cover_sets, KC_MAX_STRATIFIED, &err);
    json_t *strat = family_json(sseed, n, &err);
    pthread_mutex_unlock(&lock);
    sb_free(&err);
    json_object_set_new(job, "boundary", boundary);
    json_object_set_new(job, "stratified", strat);
}

/* The job's dims sets ("hidden", "stratified", "boundary"), all from the hidden seed. */
static void add_dims_sets(const kv_options *o, const problem *p, uint64_t hseed, json_t *job)
{
    add_hidden_dims(o, p, hseed, job);
    add_cover_sets(o, p, hseed, job);
}

/* A job of batch b: the batch's dims sets (built by its first job, copied into each) and
 * "batch": its key, the job's index in it and the worker's budget for kept outputs. */
static void add_batch(gpu_client *g, kv_batch *b, const problem *p, json_t *job)
{
    pthread_mutex_lock(&b->lock);
    if (!b->sets) {
        b->sets = json_object();
        add_dims_sets(&g->opt, p, b->hidden_seed, b->sets);
    }
    json_t *sets = json_deep_copy(b->sets);
    int index = b->next_index++;
    pthread_mutex_unlock(&b->lock);
    json_object_update(job, sets);
    json_decref(sets);
    json_object_set_new(job, "batch", json_pack("{s:s,s:i,s:I}", "key", b->key, "index", index,
                                                "budget_bytes", (json_int_t)g->opt.batch_bytes));
}

static json_t *make_job(gpu_client *g, kv_batch *b, const problem *p, const uint64_t *seeds, int n,
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
    if (b)
        add_batch(g, b, p, job);
    else
        add_dims_sets(&g->opt, p, gpu_client_hidden_seed(&g->opt), job);
    json_object_set_new(job, "timing", json_boolean(!g->opt.no_timing));
    json_object_set_new(job, "timing_cap_ms", json_real(g->opt.timing_cap_ms));
    json_object_set_new(job, "timing_noise", json_real(g->opt.timing_noise));
    return job;
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

/* The slot's worker must go (a hang, a sticky error, a death): its replacement starts first,
 * holding no batch's reference outputs. */
static void replace_worker(gpu_client *g, int slot)
{
    g->kill_ms[slot] = proc_pool_replace(g->procs, slot);
    pthread_mutex_lock(&g->held_lock);
    batch_held_clear(&g->held[slot]);
    pthread_mutex_unlock(&g->held_lock);
}

void gpu_client_batch_end(gpu_client *g, const char *key)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->held_lock);
    for (int i = 0; i < g->workers; i++)
        batch_held_end(&g->held[i], key);
    pthread_mutex_unlock(&g->held_lock);
}

/* The job is going to slot's worker: it lists the ended batches that worker may still hold
 * ("batch_ended": the worker scrubs and frees their outputs first), and the worker may hold
 * the job's own batch after it. */
static void note_batches(gpu_client *g, int slot, json_t *job)
{
    const char *key = json_string_value(json_object_get(json_object_get(job, "batch"), "key"));
    pthread_mutex_lock(&g->held_lock);
    json_object_set_new(job, "batch_ended", batch_held_take_ended(&g->held[slot]));
    if (key)
        batch_held_add(&g->held[slot], key);
    pthread_mutex_unlock(&g->held_lock);
}

/* A missed deadline: the worker is replaced; the verdict, a message saying which deadline
 * (the model reads it), and the evidence "timeout" (deadline.h) from the last progress report
 * (NULL: none yet), which came waited_ms ago. */
static void set_timed_out(gpu_client *g, int slot, json_t *last, double waited_ms, kv_result *r)
{
    replace_worker(g, slot);
    const char *stage = last ? json_string_value(json_object_get(last, "progress")) : "setup";
    const char *run = json_string_value(json_object_get(last, "run"));
    double ref_ms = json_number_value(json_object_get(last, "reference_ms")) *
                    json_number_value(json_object_get(last, "work_ratio"));
    strbuf msg = STRBUF_INIT;
    sb_addf(&msg, "the %s did not finish within its deadline", stage);
    if (run && ref_ms > 0)
        sb_addf(&msg, " of %.0f ms on the %s dims (the reference takes about %.3g ms there)",
                json_number_value(json_object_get(last, "deadline_ms")), run, ref_ms);
    sb_adds(&msg, "; the worker was killed and restarted");
    /* the worker reports a run of trusted stages once (worker_check.c wk_progress) */
    int trusted = strcmp(stage, "reference") == 0 || strcmp(stage, "checks") == 0;
    if (strcmp(stage, "layers") == 0) { /* the diagnosis after a mismatch: the verdict stands */
        sb_reset(&msg);
        sb_adds(&msg, "output differs from the reference (the rerun that looks for the first "
                      "layer that differs did not finish within its deadline; the worker was "
                      "killed and restarted)");
    }
    set_lost_worker(r, strcmp(stage, "layers") == 0 ? "mismatch"
                       : trusted                    ? "runtime_error"
                                                    : "timeout",
                    msg.buf);
    sb_free(&msg);
    kv_result_set_evidence(r, "timeout", deadline_timeout_evidence(last, waited_ms));
}

/* Follows progress messages until the result; replaces the worker on a missed deadline or a
 * sticky error. */
static int await_result(gpu_client *g, int slot, const problem *p, ipc_child *child,
                        json_int_t job_id, const char *batch_key, kv_result *r, strbuf *err)
{
    double since = now_ms(), deadline = since + DEADLINE_SETUP_MS; /* until the first progress */
    json_t *last = NULL; /* the last progress report */
    int rc = 0;
    for (;;) {
        ipc_msg m;
        enum ipc_status st = ipc_recv(child->from_child, &m, deadline, err);
        if (st == IPC_TIMEOUT) {
            ipc_msg_free(&m);
            set_timed_out(g, slot, last, now_ms() - since, r);
            break;
        }
        if (st == IPC_ERROR) {
            char why[256];
            snprintf(why, sizeof(why), "%s", sb_str(err));
            sb_reset(err);
            rc = protocol_error(child, &m, why, err);
            break;
        }
        if (st != IPC_OK) {
            ipc_msg_free(&m);
            int status = ipc_reap_lost(child, 1000);
            if (kc_interrupted()) { /* killed beside the tool's interrupt: no label */
                strbuf how = STRBUF_INIT;
                ipc_describe_exit(status, &how);
                rc = kc_fail(err, "interrupted: the GPU worker stopped (%s); the candidate was "
                                  "not labelled", how.buf);
                sb_free(&how);
                break;
            }
            replace_worker(g, slot);
            set_lost_worker(r, "runtime_error",
                            "the GPU worker died while running the candidate and was restarted");
            break;
        }
        const char *why;
        enum gpu_message_kind kind = gpu_message_check(m.json, job_id, &why);
        if (kind == GPU_MSG_BAD) {
            rc = protocol_error(child, &m, why, err);
            break;
        }
        if (kind == GPU_MSG_RESULT &&
            !gpu_result_batch_valid(json_object_get(m.json, "result"), batch_key, &why)) {
            rc = protocol_error(child, &m, why, err);
            break;
        }
        if (kind == GPU_MSG_RESULT) {
            json_t *res = json_object_get(m.json, "result");
            r->ipc_at[1] = now_ms();
            gpu_result_fill(p, res, r);
            r->ipc_at[2] = now_ms();
            if (json_is_true(json_object_get(res, "fatal")))
                replace_worker(g, slot); /* a sticky CUDA error: a fresh process */
            ipc_msg_free(&m);
            break;
        }
        json_decref(last);
        last = json_incref(m.json);
        since = now_ms();
        deadline = since + json_number_value(json_object_get(m.json, "deadline_ms"));
        ipc_msg_free(&m);
    }
    json_decref(last);
    return rc;
}

#define MEMCHECK_MAX_BYTES (64LL << 20) /* inputs + outputs of memcheck's drawn set */

/* Whether every input and output of p has an odd element count above 1 at set (its last
 * element is then never at a 16-byte boundary: a vector over-read reaches past it); *bytes:
 * their bytes. */
static int all_tails_odd(const problem *p, json_t *set, int64_t *bytes)
{
    dimset d;
    strbuf why = STRBUF_INIT;
    int odd = problem_dims_from_json(p, set, &d, &why) == 0;
    *bytes = 0;
    for (int i = 0; i < p->n_inputs + p->n_outputs && odd; i++) {
        const tensor_spec *t = i < p->n_inputs ? &p->inputs[i] : &p->outputs[i - p->n_inputs];
        int64_t n;
        odd = tensor_numel(t, &d, &n, &why) == 0 && n > 1 && n % 2 == 1;
        *bytes += n * (int64_t)dtype_size(t->dtype);
    }
    dimset_free(&d);
    sb_free(&why);
    return odd;
}

/* The dims memcheck runs at besides the small ones: the smallest boundary set whose every
 * tensor ends off a 16-byte boundary (so an over-read of a vector tail is an error there in
 * every verification), else the job's small random draw; NULL when there is none. */
static json_t *memcheck_set(const problem *p, json_t *job)
{
    json_t *sets = json_object_get(json_object_get(job, "boundary"), "sets"), *best = NULL;
    int64_t best_bytes = MEMCHECK_MAX_BYTES + 1, bytes;
    for (size_t i = 0; i < json_array_size(sets); i++)
        if (all_tails_odd(p, json_array_get(sets, i), &bytes) && bytes < best_bytes)
            best = json_array_get(sets, i), best_bytes = bytes;
    if (best)
        return best;
    sets = json_object_get(json_object_get(job, "hidden"), "sets");
    return json_array_get(sets, 1) ? json_array_get(sets, 1) : json_array_get(sets, 0);
}

/* The time this client held the GPU for the candidate (worker stages, sanitizer, IPC and
 * message checks), beside the worker's own stage times: make bench's per-phase table. What a
 * kill costs (issue 37): how long the job waited for its worker to start (after a kill, the
 * part of the restart that did not overlap the old worker's end) with what the worker's
 * start-up spent, and, for the job whose worker was replaced, how long the old one took to end
 * once killed. */
static void note_client_time(gpu_client *g, int slot, kv_result *r)
{
    double start_ms = proc_pool_start_ms(g->procs, slot), kill_ms = g->kill_ms[slot];
    g->kill_ms[slot] = 0;
    if (!r->evidence_json.len) /* a lost worker's empty evidence */
        return;
    json_t *t = json_pack("{s:f,s:f,s:i}", "gpu", r->gpu_ms, "sanitizer", r->sanitizer_ms, "slot",
                          slot);
    if (start_ms > 0)
        json_object_set_new(t, "worker_start", json_real(start_ms));
    if (start_ms > 0 || g->info[slot].up_at > 0) /* what the worker's start-up spent */
        json_object_set_new(t, "worker_init",
                            json_pack("{s:f,s:f,s:f,s:f}", "gpu_open", g->info[slot].open_ms,
                                      "cuinit", g->info[slot].init_ms, "context",
                                      g->info[slot].context_ms, "cupti", g->info[slot].cupti_ms));
    if (kill_ms > 0)
        json_object_set_new(t, "worker_kill", json_real(kill_ms));
    if (r->ipc_at[2] > 0) /* beside the worker's stage_ms.ipc_at: where IPC's time goes */
        json_object_set_new(t, "ipc_at", json_pack("[f,f,f]", r->ipc_at[0], r->ipc_at[1],
                                                   r->ipc_at[2]));
    /* on the same clock: what a GPU's first job waited for (tests/bench/phases.py) */
    if (r->compiled_at > 0)
        json_object_set_new(t, "compiled_at", json_real(r->compiled_at));
    if (g->info[slot].up_at > 0)
        json_object_set_new(t, "worker_up_at", json_real(g->info[slot].up_at));
    kv_result_set_evidence(r, "client_ms", t);
}

int gpu_client_verify(gpu_client *g, kv_batch *b, const problem *p, const strbuf *ref_cubin,
                      const uint64_t *seeds, int n_seeds, kv_result *r, strbuf *err)
{
    int slot;
    ipc_child *child;
    json_int_t job_id; /* the job (its coverage sets take CPU time) is built before the GPU is held */
    json_t *job = make_job(g, b, p, seeds, n_seeds, &job_id);
    /* a job of a batch goes to the worker that holds the batch's reference outputs, if free */
    if (proc_pool_acquire_keyed(g->procs, b ? b->key : NULL, &slot, &child, err)) {
        json_decref(job);
        return -1;
    }
    note_batches(g, slot, job);
    const struct gpu_info *info = &g->info[slot];
    snprintf(r->gpu_name, sizeof(r->gpu_name), "%s", info->name);
    snprintf(r->driver_version, sizeof(r->driver_version), "%s", info->driver);
    snprintf(r->cuda_version, sizeof(r->cuda_version), "%s", info->cuda);
    sb_reset(&r->seeds);
    for (int i = 0; i < n_seeds; i++)
        sb_addf(&r->seeds, "%s%llu", i ? "," : "", (unsigned long long)seeds[i]);
    const void *blobs[3] = {r->source.buf, r->cubin.buf, ref_cubin->buf};
    size_t lens[3] = {r->source.len, r->cubin.len, ref_cubin->len};
    int rc = 0;
    if (ipc_send(child->to_child, job, blobs, lens, 3) != 0) {
        ipc_kill(child);
        rc = kc_fail(err, "the GPU worker died before taking the job");
    } else {
        double t0 = now_ms();
        r->ipc_at[0] = t0, r->ipc_at[1] = r->ipc_at[2] = 0;
        rc = await_result(g, slot, p, child, job_id, b ? b->key : NULL, r, err);
        /* the second memory wall, while this GPU's worker waits (nothing else runs on it) */
        double t_san = now_ms();
        if (rc == 0 && g->opt.sanitize && strcmp(r->verdict, "correct") == 0)
            rc = sanitizer_check(&g->opt, slot, p, seeds[0], memcheck_set(p, job), r, err);
        r->sanitizer_ms = now_ms() - t_san;
        r->gpu_ms = now_ms() - t0;
        note_client_time(g, slot, r);
    }
    json_decref(job);
    proc_pool_release(g->procs, slot);
    return rc;
}
