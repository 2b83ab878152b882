/* service: the verification pipeline behind kv_verify (see verify.h):
 * extract -> parse launch lines -> policy -> sandboxed compile -> GPU worker. */
#include "common/candidate.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/hash.h"
#include "common/verdicts.h"
#include "verify/service/batch.h"
#include "verify/service/compile_pool.h"
#include "verify/service/cubin_cache.h"
#include "verify/service/gpu_client.h"
#include "verify/service/nvrtc_compile.h"
#include "verify/service/policy.h"
#include "verify/service/verify.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* A reference's cubin, by problem, arch and reference source, kept for the run (the cubin cache
 * keeps them across runs). */
struct ref_cubin {
    char key[SHA256_HEX_LEN + 1];
    strbuf cubin;
};

struct kv_service {
    kv_options opt;
    compile_pool *compiles;
    gpu_client *gpus;
    cubin_cache *cubins;
    pthread_mutex_t refs_lock;
    struct ref_cubin *refs;
    int n_refs, cap_refs;
};

void kv_options_default(kv_options *o)
{
    memset(o, 0, sizeof(*o));
    o->n_seeds = 5;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    /* one compile server per CPU: a GPU verifies level-2 candidates faster than 8 CPUs compile
     * them (about 1.6 s of NVRTC each), and every further GPU needs as many again */
    o->compile_procs = cpus < 1 ? 1 : cpus > 64 ? 64 : (int)cpus;
    o->timing_cap_ms = 1000;
    o->timing_noise = KV_TIMING_NOISE;
    o->arch = "sm_90";
    o->sanitize = 1;
    o->n_hidden = 2;
    o->batch_max = BATCH_DEFAULT_MAX;
    o->batch_bytes = BATCH_DEFAULT_BYTES;
}

void kv_result_init(kv_result *r)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->verdict, sizeof(r->verdict), "pending");
}

void kv_result_free(kv_result *r)
{
    sb_free(&r->flags), sb_free(&r->message), sb_free(&r->source), sb_free(&r->compile_log);
    sb_free(&r->kernels_json), sb_free(&r->evidence_json), sb_free(&r->seeds);
    memset(r, 0, sizeof(*r));
}

int kv_verdict_exit_code(const char *verdict)
{
    return kc_verdict_exit_code(verdict); /* common/verdicts.c; 2 for an unknown one */
}

int kv_service_start(const kv_options *o, kv_service **out, strbuf *err)
{
    kv_service *s = xcalloc(1, sizeof(*s));
    s->opt = *o;
    pthread_mutex_init(&s->refs_lock, NULL);
    if (s->opt.n_seeds < 1 || s->opt.n_seeds > KV_MAX_SEEDS)
        s->opt.n_seeds = 5;
    compile_pool_options co = {.servers = o->compile_procs,
                               .no_sandbox = getenv("KC_UNSAFE_NO_SANDBOX") != NULL};
    /* The GPU workers first: their start-up (CUDA's, on threads of their own) then overlaps the
     * first compile server's, which compile_pool_start waits for; each GPU's first job needs
     * both (issue 37's start-up split). */
    if (!o->compile_only && gpu_client_start(o, &s->gpus, err)) {
        free(s);
        return -1;
    }
    if (compile_pool_start(&co, &s->compiles, err)) {
        gpu_client_stop(s->gpus);
        free(s);
        return -1;
    }
    s->cubins = cubin_cache_open();
    *out = s;
    return 0;
}

int kv_service_gpu_workers(kv_service *s) { return s && s->gpus ? gpu_client_workers(s->gpus) : 0; }

int kv_service_gpu_busy(kv_service *s, int *waiting)
{
    if (waiting)
        *waiting = 0;
    return s && s->gpus ? gpu_client_busy(s->gpus, waiting) : 0;
}

void kv_service_stop(kv_service *s)
{
    if (!s)
        return;
    gpu_client_stop(s->gpus);
    compile_pool_stop(s->compiles);
    cubin_cache_close(s->cubins);
    for (int i = 0; i < s->n_refs; i++)
        sb_free(&s->refs[i].cubin);
    free(s->refs);
    pthread_mutex_destroy(&s->refs_lock);
    free(s);
}

/* References are compiled here, in the trusted client, by the verifying thread, once per problem
 * and run, and only when the cubin cache has none from an earlier run: the GPU worker never waits
 * for NVRTC, and no compile server that has seen a candidate ever produces a reference. */
static void reference_key(const problem *p, const char *arch, char *key)
{
    sha256_stream *h = sha256_begin();
    sha256_update(h, p->id, strlen(p->id) + 1);
    sha256_update(h, arch, strlen(arch) + 1);
    sha256_update(h, p->reference_source.buf, p->reference_source.len);
    sha256_finish(h, key);
}

static int cached_reference(kv_service *s, const char *key, strbuf *out)
{
    int found = 0;
    pthread_mutex_lock(&s->refs_lock);
    for (int i = 0; i < s->n_refs && !found; i++) {
        if (strcmp(s->refs[i].key, key) == 0) {
            sb_reset(out);
            sb_add(out, s->refs[i].cubin.buf, s->refs[i].cubin.len);
            found = 1;
        }
    }
    pthread_mutex_unlock(&s->refs_lock);
    return found;
}

static void remember_reference(kv_service *s, const char *key, const strbuf *cubin)
{
    pthread_mutex_lock(&s->refs_lock);
    if (s->n_refs == s->cap_refs) {
        s->cap_refs = s->cap_refs ? 2 * s->cap_refs : 64;
        s->refs = xrealloc(s->refs, (size_t)s->cap_refs * sizeof(*s->refs));
    }
    struct ref_cubin *e = &s->refs[s->n_refs++];
    snprintf(e->key, sizeof(e->key), "%s", key);
    sb_init(&e->cubin);
    sb_add(&e->cubin, cubin->buf, cubin->len);
    pthread_mutex_unlock(&s->refs_lock);
}

/* Two threads verifying the same new problem at once may both compile its reference;
 * the cache then holds two equal entries, which is harmless. */
static int reference_cubin(kv_service *s, const problem *p, const char *arch, strbuf *out,
                           strbuf *err)
{
    char key[SHA256_HEX_LEN + 1];
    reference_key(p, arch, key);
    if (cached_reference(s, key, out))
        return 0;
    strbuf log = STRBUF_INIT;
    if (cubin_cache_trusted(s->cubins, p->reference_source.buf, arch, out, NULL, &log)) {
        kc_fail(err, "the reference of %s (%s) does not compile: %s", p->id, p->reference_path,
                log.buf);
        sb_free(&log);
        return -1;
    }
    sb_free(&log);
    remember_reference(s, key, out);
    return 0;
}

/* The reference's compile, on a thread of its own beside the candidate's sandboxed compile
 * (the first candidate of a problem waits for the slower of the two, not for both). */
struct reference_job {
    kv_service *s;
    const problem *p;
    const char *arch;
    strbuf cubin, err;
    int rc;
    pthread_t thread;
    int started;
};

static void *reference_thread(void *arg)
{
    struct reference_job *j = arg;
    j->rc = reference_cubin(j->s, j->p, j->arch, &j->cubin, &j->err);
    return NULL;
}

static void reference_start(struct reference_job *j, kv_service *s, const problem *p, const char *arch)
{
    *j = (struct reference_job){.s = s, .p = p, .arch = arch, .rc = -1};
    sb_init(&j->cubin), sb_init(&j->err);
    j->started = pthread_create(&j->thread, NULL, reference_thread, j) == 0;
    if (!j->started)
        reference_thread(j);
}

/* Waits for the reference; returns its compile's status (on failure, err gets why, when given). */
static int reference_finish(struct reference_job *j, strbuf *err)
{
    if (j->started)
        pthread_join(j->thread, NULL);
    j->started = 0;
    if (j->rc && err)
        sb_adds(err, sb_str(&j->err));
    sb_free(&j->err);
    return j->rc;
}

static void set_verdict(kv_result *r, const char *verdict, const char *message)
{
    snprintf(r->verdict, sizeof(r->verdict), "%s", verdict);
    sb_reset(&r->message);
    sb_adds(&r->message, message);
}

static int extract_source(const char *response, kv_result *r)
{
    strbuf err = STRBUF_INIT;
    int rc = 0;
    if (candidate_source(response, &r->source, &err)) { /* the one rule (candidate.h) */
        set_verdict(r, "extract_error", err.buf);
        rc = -1;
    }
    sb_free(&err);
    return rc;
}

static void choose_seeds(const kv_service *s, uint64_t *seeds)
{
    for (int i = 0; i < s->opt.n_seeds; i++) {
        if (s->opt.fixed_seeds) {
            seeds[i] = s->opt.seeds[i];
            continue;
        }
        if (getrandom(&seeds[i], sizeof(seeds[i]), 0) != sizeof(seeds[i]))
            seeds[i] = (uint64_t)now_ms() * 2654435761u + (uint64_t)i;
    }
}

kv_batch *kv_batch_new(kv_service *s, const problem *p)
{
    _Static_assert(BATCH_MAX_SEEDS == KV_MAX_SEEDS, "a batch holds every seed");
    kv_batch *b = xcalloc(1, sizeof(*b));
    batch_new_key(b->key);
    b->problem_id = xstrdup(p->id);
    b->n_seeds = s->opt.n_seeds;
    choose_seeds(s, b->seeds);
    b->hidden_seed = gpu_client_hidden_seed(&s->opt); /* the job's own, shared by the batch */
    pthread_mutex_init(&b->lock, NULL);
    return b;
}

void kv_batch_end(kv_service *s, kv_batch *b)
{
    if (!b)
        return;
    if (s && s->gpus)
        gpu_client_batch_end(s->gpus, b->key);
    json_decref(b->sets);
    pthread_mutex_destroy(&b->lock);
    free(b->problem_id);
    free(b);
}

/* A launch naming a kernel the module does not define fails before any GPU work. */
static int check_entry_points(const launch_unit *u, kv_result *r)
{
    for (int i = 0; i < u->n_launches; i++) {
        strbuf quoted = STRBUF_INIT;
        sb_addf(&quoted, "\"name\":\"%s\"", u->launches[i].kernel);
        int found = strstr(sb_str(&r->kernels_json), quoted.buf) != NULL;
        sb_free(&quoted);
        if (!found) {
            strbuf msg = STRBUF_INIT;
            sb_addf(&msg, "line %d: @launch names kernel '%s', which the code does not define as "
                          "an extern \"C\" __global__ function",
                    u->launches[i].line, u->launches[i].kernel);
            set_verdict(r, "launch_error", msg.buf);
            sb_free(&msg);
            return -1;
        }
    }
    return 0;
}

static int compile_stage(kv_service *s, kv_result *r, strbuf *err)
{
    compile_output co;
    compile_output_init(&co);
    if (compile_pool_compile(s->compiles, r->source.buf, r->arch, &co, err)) {
        compile_output_free(&co);
        return -1;
    }
    r->compile_stage_ok = co.ok;
    r->compile_ms = co.ms;
    sb_reset(&r->compile_log), sb_reset(&r->kernels_json);
    sb_add(&r->compile_log, sb_str(&co.log), co.log.len);
    sb_add(&r->kernels_json, sb_str(&co.kernels_json), co.kernels_json.len);
    strbuf why = STRBUF_INIT;
    if (!co.ok)
        set_verdict(r, "compile_error", "NVRTC rejected the code (see the compile log)");
    else if (policy_check_module(co.cubin.buf, co.cubin.len, &why))
        set_verdict(r, "policy_violation", why.buf); /* compiled, never run */
    else {
        r->keeps_state = policy_module_keeps_state(co.cubin.buf, co.cubin.len);
        r->cubin = co.cubin, sb_init(&co.cubin);
    }
    sb_free(&why);
    compile_output_free(&co);
    return 0;
}

int kv_verify(kv_service *s, const problem *p, const char *response, kv_result *r, strbuf *err)
{
    return kv_verify_in(s, NULL, p, response, r, err);
}

int kv_verify_in(kv_service *s, kv_batch *b, const problem *p, const char *response, kv_result *r,
                 strbuf *err)
{
    if (b && strcmp(b->problem_id, p->id) != 0)
        return kc_fail(err, "internal: a candidate of %s in a batch of %s", p->id, b->problem_id);
    snprintf(r->arch, sizeof(r->arch), "%s", s->opt.arch ? s->opt.arch : "sm_90");
    snprintf(r->nvrtc_version, sizeof(r->nvrtc_version), "%s",
             compile_pool_nvrtc_version(s->compiles));
    if (extract_source(response, r))
        return 0;
    launch_unit unit;
    strbuf perr = STRBUF_INIT;
    int rc = 0;
    if (candidate_parse(r->source.buf, p, &unit, &perr)) {
        set_verdict(r, "extract_error", perr.buf);
        goto out;
    }
    if (policy_check(r->source.buf, &perr)) {
        set_verdict(r, "policy_violation", perr.buf);
        goto out;
    }
    if (s->opt.compile_only) {
        if (compile_stage(s, r, err))
            rc = -1;
        else if (r->compile_stage_ok && r->cubin.len && check_entry_points(&unit, r) == 0)
            set_verdict(r, "compiled", "compiled for the GPU; not run (compile-only)");
        goto out;
    }
    struct reference_job ref;
    reference_start(&ref, s, p, r->arch);
    int compile_failed = compile_stage(s, r, err);
    int ref_rc = reference_finish(&ref, compile_failed == 0 && r->compile_stage_ok ? err : NULL);
    r->compiled_at = now_ms();
    if (compile_failed || (r->compile_stage_ok && ref_rc)) {
        rc = -1;
    } else if (r->compile_stage_ok && r->cubin.len && check_entry_points(&unit, r) == 0) {
        uint64_t seeds[KV_MAX_SEEDS];
        if (b) /* the batch's: every candidate of it meets the same secret inputs */
            memcpy(seeds, b->seeds, sizeof(seeds));
        else
            choose_seeds(s, seeds);
        rc = gpu_client_verify(s->gpus, b, p, &ref.cubin, seeds, s->opt.n_seeds, r, err);
    }
    sb_free(&ref.cubin);
out:
    launch_unit_free(&unit);
    sb_free(&r->cubin);
    sb_free(&perr);
    return rc;
}
