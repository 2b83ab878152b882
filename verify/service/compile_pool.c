/* compile_pool: the compile server process and the thread-safe client pool. */
#include "verify/service/compile_pool.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/interrupt.h"
#include "verify/service/ipc.h"
#include "verify/service/policy.h"
#include "verify/service/proc_pool.h"
#include "verify/service/programs.h"
#include "verify/service/sandbox.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- server ---- */

/* A warm-up like a real candidate (a toolkit header, a loop, shared memory, doubles), so
 * that NVRTC has loaded everything and its heap has grown before the first candidate. */
static const char *warmup_source =
    "#include <cuda_fp16.h>\n"
    "extern \"C\" __global__ void kc_warmup(const float *x, float *y, int n)\n"
    "{\n"
    "    __shared__ double part[256];\n"
    "    double acc = 0.0;\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "        acc += (double)x[i] * (double)__half2float(__float2half(x[i]));\n"
    "    part[threadIdx.x] = acc;\n"
    "    __syncthreads();\n"
    "    for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n"
    "        if (threadIdx.x < s)\n"
    "            part[threadIdx.x] += part[threadIdx.x + s];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    if (threadIdx.x == 0)\n"
    "        y[blockIdx.x] = (float)part[0];\n"
    "}\n";

/* glibc gives the memory NVRTC frees after each compile back to the kernel (heap trim, and
 * mmap for large blocks), and the next compile faults it in again. Keeping it in the heap
 * cut page faults 7x and the compile time of level-1 references by about 30% on the
 * build machine (docs/results/compile-time.md). */
static void keep_heap_between_compiles(void)
{
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
}

static void send_json(json_t *j, const compile_output *o)
{
    if (!o) {
        ipc_send(1, j, NULL, NULL, 0);
        return;
    }
    const void *blobs[2] = {o->log.buf ? o->log.buf : "", o->cubin.buf ? o->cubin.buf : ""};
    size_t lens[2] = {o->log.len, o->cubin.len};
    ipc_send(1, j, blobs, lens, 2);
}

static void serve_one(ipc_msg *job, const char *include_dir)
{
    const char *arch = json_string_value(json_object_get(job->json, "arch"));
    const char *source = job->n_blobs ? job->blobs[0].buf : NULL;
    compile_output out;
    compile_output_init(&out);
    strbuf err = STRBUF_INIT;
    json_t *reply = json_object();
    if (!arch || !source) {
        json_object_set_new(reply, "error", json_string("bad compile job"));
    } else if (nvrtc_compile(source, arch, include_dir, &out, &err)) {
        json_object_set_new(reply, "error", json_string(err.buf));
    } else {
        json_object_set_new(reply, "ok", json_boolean(out.ok));
        json_object_set_new(reply, "ms", json_real(out.ms));
        json_object_set_new(reply, "kernels", json_string(sb_str(&out.kernels_json)));
    }
    send_json(reply, &out);
    json_decref(reply);
    compile_output_free(&out);
    sb_free(&err);
}

int compile_server_main(int no_sandbox)
{
    pid_t parent = getppid();
    char version[32];
    nvrtc_version_string(version, sizeof(version));
    keep_heap_between_compiles();
    const char *include_dir = cuda_include_dir();
    /* Warm up outside the sandbox: NVRTC loads its builtins library on first use. */
    compile_output warm;
    compile_output_init(&warm);
    strbuf err = STRBUF_INIT;
    nvrtc_compile(warmup_source, "sm_90", include_dir, &warm, &err);
    compile_output_free(&warm);
    /* Nothing the parent knows (API keys in kcollect's environment) stays in this process. */
    strbuf kept_include = STRBUF_INIT;
    sb_adds(&kept_include, include_dir);
    include_dir = kept_include.buf;
    clearenv();
    json_t *hello = json_object();
    if (!no_sandbox) {
        sandbox_limits limits = {.address_space_bytes = 16LL << 30, .file_size_bytes = 1LL << 30};
        header_tree headers;
        int rc = header_tree_collect(include_dir, &headers, &err);
        if (rc == 0)
            rc = sandbox_enter(&headers, &limits, &err);
        header_tree_free(&headers);
        if (rc) {
            json_object_set_new(hello, "fatal", json_string(err.buf));
            send_json(hello, NULL);
            return 1;
        }
        include_dir = SANDBOX_INCLUDE_DIR;
    }
    /* Dropping to nobody (as root) cleared the parent-death signal that ipc_spawn set. */
    ipc_arm_parent_death(parent);
    json_object_set_new(hello, "ready", json_true());
    json_object_set_new(hello, "nvrtc", json_string(version));
    json_object_set_new(hello, "sandbox", json_boolean(!no_sandbox));
    send_json(hello, NULL);
    json_decref(hello);
    sb_free(&err);
    for (;;) {
        ipc_msg job;
        strbuf rerr = STRBUF_INIT;
        enum ipc_status st = ipc_recv(0, &job, -1, &rerr);
        sb_free(&rerr);
        if (st != IPC_OK) {
            ipc_msg_free(&job);
            /* _exit: inside the sandbox there is no /proc for exit-time leak checkers. */
            _exit(st == IPC_EOF ? 0 : 1);
        }
        serve_one(&job, include_dir);
        ipc_msg_free(&job);
    }
}

/* ---- client pool ---- */

/* Servers that may be starting at once (spawned, sandboxed, NVRTC warming up, no hello yet).
 * A batch asks for all its compiles at its start: on a 64-CPU host 50 servers starting together
 * held the GPU workers' own start-up (cuInit and the context) to 5.8 s against 0.6 s alone, and
 * each GPU's first job waited for it (issue 37). In waves, the first compiles finish as soon. */
#define COMPILE_SPAWN_AT_ONCE 8 /* KC_COMPILE_SPAWN_AT_ONCE=N overrides it (1..1024), for A/B runs */

struct compile_pool {
    compile_pool_options opt;
    proc_pool *procs;
    char nvrtc_version[32];
    strbuf exe;
    pthread_mutex_t spawn_lock;
    pthread_cond_t spawn_done;
    int starting;      /* servers between spawn and hello */
    int peak_starting; /* the most starting at once so far (compile_pool_peak_starting) */
    int spawn_at_once; /* COMPILE_SPAWN_AT_ONCE or the environment's */
};

static int spawn_limit(void)
{
    const char *env = getenv("KC_COMPILE_SPAWN_AT_ONCE");
    long n = env ? strtol(env, NULL, 10) : 0;
    return n >= 1 && n <= 1024 ? (int)n : COMPILE_SPAWN_AT_ONCE;
}

/* Waits for a place among the servers starting at once (spawn_gate_leave gives it back). */
static void spawn_gate_enter(compile_pool *pool)
{
    pthread_mutex_lock(&pool->spawn_lock);
    while (pool->starting >= pool->spawn_at_once)
        pthread_cond_wait(&pool->spawn_done, &pool->spawn_lock);
    pool->starting++;
    if (pool->starting > pool->peak_starting)
        pool->peak_starting = pool->starting;
    pthread_mutex_unlock(&pool->spawn_lock);
}

static void spawn_gate_leave(compile_pool *pool)
{
    pthread_mutex_lock(&pool->spawn_lock);
    pool->starting--;
    pthread_cond_signal(&pool->spawn_done);
    pthread_mutex_unlock(&pool->spawn_lock);
}

static int start_server(compile_pool *pool, ipc_child *child, strbuf *err);

static int spawn_server(void *ctx, int slot, ipc_child *child, strbuf *err)
{
    (void)slot;
    compile_pool *pool = ctx;
    spawn_gate_enter(pool);
    int rc = start_server(pool, child, err);
    spawn_gate_leave(pool);
    return rc;
}

/* One server: spawned, then its hello (sent once its NVRTC has warmed up). */
static int start_server(compile_pool *pool, ipc_child *child, strbuf *err)
{
    char *argv[] = {pool->exe.buf, "compile-server", pool->opt.no_sandbox ? "--no-sandbox" : NULL,
                    NULL};
    if (ipc_spawn(argv, child, err))
        return -1;
    ipc_msg hello;
    enum ipc_status st = ipc_recv(child->from_child, &hello, now_ms() + 60000, err);
    int rc = 0;
    if (st != IPC_OK) {
        rc = kc_fail(err, "the compile server (%s) did not start", pool->exe.buf);
    } else if (json_object_get(hello.json, "fatal")) {
        rc = kc_fail(err, "%s", json_string_value(json_object_get(hello.json, "fatal")));
    } else {
        const char *v = json_string_value(json_object_get(hello.json, "nvrtc"));
        snprintf(pool->nvrtc_version, sizeof(pool->nvrtc_version), "%s", v ? v : "?");
    }
    ipc_msg_free(&hello);
    if (rc)
        ipc_kill(child);
    return rc;
}

int compile_pool_start(const compile_pool_options *o, compile_pool **out, strbuf *err)
{
    compile_pool *pool = xcalloc(1, sizeof(*pool));
    pool->opt = *o;
    pool->spawn_at_once = spawn_limit();
    pthread_mutex_init(&pool->spawn_lock, NULL);
    pthread_cond_init(&pool->spawn_done, NULL);
    if (pool->opt.servers < 1)
        pool->opt.servers = 1;
    if (pool->opt.timeout_ms <= 0)
        pool->opt.timeout_ms = 20000;
    kverify_exe_path(&pool->exe);
    pool->procs = proc_pool_new(pool->opt.servers, spawn_server, pool);
    /* Start one server now so that a missing sandbox is reported at once. */
    int slot;
    ipc_child *child;
    if (proc_pool_acquire(pool->procs, &slot, &child, err)) {
        compile_pool_stop(pool);
        return -1;
    }
    proc_pool_release(pool->procs, slot);
    *out = pool;
    return 0;
}

static void fail_output(compile_output *out, const char *why)
{
    out->ok = 0;
    sb_reset(&out->log);
    sb_adds(&out->log, why);
}

/* How a compile on one server ended. */
enum attempt_end {
    ATTEMPT_ANSWERED,    /* out holds the compiler's answer, or the time limit was exceeded */
    ATTEMPT_LOST_IDLE,   /* the server died before it had the source */
    ATTEMPT_LOST_BUSY,   /* the server died while it had the source */
    ATTEMPT_ERROR,       /* err says why */
};

static void copy_reply(const ipc_msg *reply, compile_output *out)
{
    out->ok = json_is_true(json_object_get(reply->json, "ok"));
    out->ms = json_real_value(json_object_get(reply->json, "ms"));
    sb_reset(&out->kernels_json);
    sb_adds(&out->kernels_json, json_string_value(json_object_get(reply->json, "kernels")));
    sb_reset(&out->log), sb_reset(&out->cubin);
    sb_add(&out->log, reply->blobs[0].buf ? reply->blobs[0].buf : "", reply->blobs[0].len);
    sb_add(&out->cubin, reply->blobs[1].buf ? reply->blobs[1].buf : "", reply->blobs[1].len);
}

/* One compile on one server; a lost server is reaped and *how says how it died. */
static enum attempt_end compile_attempt(compile_pool *pool, ipc_child *child, const char *source,
                                        const char *arch, compile_output *out, strbuf *how,
                                        strbuf *err)
{
    json_t *job = json_object();
    json_object_set_new(job, "arch", json_string(arch));
    const void *blobs[1] = {source};
    size_t lens[1] = {strlen(source)};
    double start = now_ms();
    int sent = ipc_send(child->to_child, job, blobs, lens, 1);
    json_decref(job);
    if (sent != 0) {
        ipc_describe_exit(ipc_reap_lost(child, 1000), how);
        return ATTEMPT_LOST_IDLE;
    }
    ipc_msg reply;
    strbuf rerr = STRBUF_INIT;
    enum ipc_status st = ipc_recv(child->from_child, &reply, start + pool->opt.timeout_ms, &rerr);
    sb_free(&rerr);
    enum attempt_end end = ATTEMPT_ANSWERED;
    if (st == IPC_TIMEOUT) {
        ipc_kill(child);
        strbuf why = STRBUF_INIT;
        sb_addf(&why, "compilation exceeded the time limit of %.0f s", pool->opt.timeout_ms / 1000);
        fail_output(out, why.buf);
        sb_free(&why);
    } else if (st != IPC_OK) {
        ipc_describe_exit(ipc_reap_lost(child, 1000), how);
        end = ATTEMPT_LOST_BUSY;
    } else if (json_object_get(reply.json, "error")) {
        kc_fail(err, "compile server: %s", json_string_value(json_object_get(reply.json, "error")));
        end = ATTEMPT_ERROR;
    } else {
        copy_reply(&reply, out);
    }
    ipc_msg_free(&reply);
    return end;
}

/* A server that dies is not taken at its word: it may have been killed from outside (a stray
 * kill, the Ctrl-C of an interrupted tool, the OOM killer for another process's sake). Only a
 * second server dying while compiling the same source makes a label (compile_error, the compiler
 * crashed); servers dying before they get the source are an error, never a label; and while the
 * tool is interrupted a lost server labels nothing: that candidate stays unverified. */
int compile_pool_compile(compile_pool *pool, const char *source, const char *arch,
                         compile_output *out, strbuf *err)
{
    strbuf how = STRBUF_INIT;
    int rc = 0, lost_busy = 0, lost_idle = 0;
    for (;;) {
        int slot;
        ipc_child *child;
        if (proc_pool_acquire(pool->procs, &slot, &child, err)) {
            rc = -1;
            break;
        }
        sb_reset(&how);
        enum attempt_end end = compile_attempt(pool, child, source, arch, out, &how, err);
        proc_pool_release(pool->procs, slot);
        if (end == ATTEMPT_ANSWERED || end == ATTEMPT_ERROR) {
            rc = end == ATTEMPT_ERROR ? -1 : 0;
            break;
        }
        if (kc_interrupted()) {
            rc = kc_fail(err, "interrupted: the compile server stopped (%s); the candidate was "
                              "not labelled", how.buf);
            break;
        }
        lost_busy += end == ATTEMPT_LOST_BUSY;
        lost_idle += end == ATTEMPT_LOST_IDLE;
        if (lost_idle == 2) {
            rc = kc_fail(err, "compile servers keep dying before they get a source (%s)", how.buf);
            break;
        }
        if (lost_busy == 2) {
            strbuf why = STRBUF_INIT;
            sb_addf(&why, "the compiler crashed on this source (killed by a signal or out of "
                          "memory): on two compile servers, the last %s", how.buf);
            fail_output(out, why.buf);
            sb_free(&why);
            break;
        }
    }
    sb_free(&how);
    return rc;
}

const char *compile_pool_nvrtc_version(compile_pool *pool) { return pool->nvrtc_version; }

int compile_pool_peak_starting(compile_pool *pool)
{
    pthread_mutex_lock(&pool->spawn_lock);
    int n = pool->peak_starting;
    pthread_mutex_unlock(&pool->spawn_lock);
    return n;
}

void compile_pool_stop(compile_pool *pool)
{
    if (!pool)
        return;
    proc_pool_free(pool->procs);
    sb_free(&pool->exe);
    pthread_mutex_destroy(&pool->spawn_lock);
    pthread_cond_destroy(&pool->spawn_done);
    free(pool);
}
