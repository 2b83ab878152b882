/* loop: trajectories, turns, stop rules, budgets and the per-turn
 * transaction (see loop.h). */
#include "collect/loop.h"
#include "collect/progress.h"
#include "collect/prompt.h"
#include "collect/record.h"
#include "collect/strategy_mtmc.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/hash.h"
#include "common/interrupt.h"
#include "common/problem.h"
#include "verify/service/verify.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct job {
    int problem;
    int sample;
} job;

/* A problem's budget clock: the wall time of all its samples together, counted from its first
 * turn (in this process: start_ms; before a resume: base_ms), and its tokens. */
typedef struct problem_clock {
    double base_ms, start_ms;
    long tokens;
} problem_clock;

typedef struct collector {
    const collect_config *cfg;
    const char *endpoint_label;
    sqlite3 *db;
    pthread_mutex_t db_lock;
    kv_service *verifier; /* started at the first answer to verify */
    pthread_mutex_t verifier_lock;
    int verifier_failed;
    llm_endpoint endpoints[CC_MAX_ENDPOINTS];
    int n_endpoints;
    llm_client client;
    ratelimit limits;
    problem *problems;
    char **specs;
    int n_problems;
    int *problem_solved;
    problem_clock *clocks; /* --problem-budget: per problem, under lock */
    job *jobs;
    int n_jobs, next_job;
    int64_t run_id;
    int run_is_new; /* open_run started it (not a continuation) */
    int unreachable; /* stopped because no endpoint could be reached */
    volatile sig_atomic_t *cancel;
    pthread_mutex_t lock; /* jobs, summary, fatal */
    collect_summary sum;
    progress *progress;
    strbuf fatal;
    strbuf refused; /* the first request an endpoint refused (HTTP 400, 413, 422) */
    int lock_fd;
    char *lock_path;
} collector;

/* ---- helpers ---- */

/* Test hook: KC_COLLECT_CRASH=<point>:<n> kills the process (SIGKILL, as kill -9
 * would) the n-th time it passes <point>: response_stored (a paid answer is in
 * the cache, its turn not yet recorded) or turn_recorded. */
static void crash_point(const char *point)
{
    static int hits;
    const char *spec = getenv("KC_COLLECT_CRASH");
    size_t n = strlen(point);
    if (!spec || strncmp(spec, point, n) != 0 || spec[n] != ':')
        return;
    if (__atomic_add_fetch(&hits, 1, __ATOMIC_SEQ_CST) == atoi(spec + n + 1))
        raise(SIGKILL);
}

static void db_lock(collector *c) { pthread_mutex_lock(&c->db_lock); }
static void db_unlock(collector *c) { pthread_mutex_unlock(&c->db_lock); }

static void add_stat(collector *c, long *field, long n)
{
    pthread_mutex_lock(&c->lock);
    *field += n;
    pthread_mutex_unlock(&c->lock);
}

static void add_time(collector *c, double *field, double ms)
{
    pthread_mutex_lock(&c->lock);
    *field += ms / 1000.0;
    pthread_mutex_unlock(&c->lock);
}

static int is_success(const collect_config *cfg, const char *verdict)
{
    return !strcmp(verdict, "correct") || (cfg->compile_only && !strcmp(verdict, "compiled"));
}

/* The per-trajectory budget (turns, tokens, minutes) spent after turns_done turns, or NULL. */
static const char *budget_stop(const collect_config *cfg, const trajectory_state *t, int turns_done)
{
    if (turns_done >= cfg->turns)
        return "turns";
    if (cfg->budget_tokens > 0 && t->tokens >= cfg->budget_tokens)
        return "tokens";
    if (cfg->budget_minutes > 0 && t->wall_ms >= cfg->budget_minutes * 60000.0)
        return "minutes";
    return NULL;
}

/* Why the trajectory stops after this turn, or NULL to go on. */
static const char *stop_reason(const collect_config *cfg, const trajectory_state *t,
                               const kv_result *r, int turns_done)
{
    if (is_success(cfg, r->verdict)) {
        /* compile-only: nothing ran, so a compiled turn is not called correct */
        if (cfg->target_speedup <= 0)
            return cfg->compile_only ? "first_compiled" : "first_correct";
        if (r->timed && r->timing.speedup_eager >= cfg->target_speedup)
            return "target_speedup";
    }
    return budget_stop(cfg, t, turns_done);
}

/* A limit an open trajectory has already reached (turns, tokens, minutes), or NULL. */
static const char *limit_reached(const collect_config *cfg, const trajectory_state *t)
{
    if (t->n_turns >= cfg->turns)
        return "turns";
    if (cfg->budget_tokens > 0 && t->tokens >= cfg->budget_tokens)
        return "tokens";
    if (cfg->budget_minutes > 0 && t->wall_ms >= cfg->budget_minutes * 60000.0)
        return "minutes";
    return NULL;
}

/* The problem's clock now (it starts with the problem's first turn in this process). */
static double problem_elapsed(collector *c, int pi, long add_tokens, long *tokens)
{
    pthread_mutex_lock(&c->lock);
    problem_clock *k = &c->clocks[pi];
    double now = now_ms();
    if (k->start_ms <= 0)
        k->start_ms = now;
    k->tokens += add_tokens;
    if (tokens)
        *tokens = k->tokens;
    double ms = k->base_ms + now - k->start_ms;
    pthread_mutex_unlock(&c->lock);
    return ms;
}

/* Why the problem's shared budget stops its trajectories, or NULL. */
static const char *problem_budget_stop(const collect_config *cfg, double elapsed_ms, long tokens)
{
    if (cfg->problem_budget_minutes > 0 && elapsed_ms >= cfg->problem_budget_minutes * 60000.0)
        return "problem_minutes";
    if (cfg->problem_budget_tokens > 0 && tokens >= cfg->problem_budget_tokens)
        return "problem_tokens";
    return NULL;
}

/* After a resume the clock goes on from the latest recorded turn of each problem in this run. */
static int load_problem_clocks(collector *c, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(c->db,
        "SELECT max(t.problem_elapsed_ms), max(t.problem_tokens) FROM turns t "
        "JOIN trajectories tr ON tr.id = t.trajectory_id WHERE tr.run_id = ? AND tr.problem_id = ?",
        err);
    if (!st)
        return -1;
    for (int i = 0; i < c->n_problems; i++) {
        sqlite3_bind_int64(st, 1, c->run_id);
        sqlite3_bind_text(st, 2, c->problems[i].id, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) {
            c->clocks[i].base_ms = sqlite3_column_double(st, 0);
            c->clocks[i].tokens = (long)sqlite3_column_int64(st, 1);
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return 0;
}

static void set_fatal(collector *c, const char *msg)
{
    pthread_mutex_lock(&c->lock);
    if (!c->fatal.len)
        sb_adds(&c->fatal, msg);
    c->sum.fatal = 1;
    pthread_mutex_unlock(&c->lock);
    *c->cancel = 1;
}

/* ---- one turn ---- */

typedef struct turn_ctx {
    collector *c;
    const problem *p;
    const char *spec;
    int sample;
    trajectory_state *t;
    const char *label; /* "level1/019_relu#0" */
    double problem_ms;  /* the problem's clock and tokens at the end of the turn */
    long problem_tokens;
} turn_ctx;

/* The response cache key (requests.request_hash, response_cache, answers_received): the request's
 * hash within the run's endpoints, so that an answer is reused only from the endpoints (and API,
 * and bundled-server arguments) that gave it: a synthetic answer is never labelled as a real
 * model's. Keys of databases written before this (the bare request hash) simply no longer match. */
static void cache_key(const collect_config *cfg, const llm_request *q, char *out)
{
    char req[SHA256_HEX_LEN + 1];
    llm_request_hash(q, req);
    strbuf scope = STRBUF_INIT, s = STRBUF_INIT;
    config_cache_scope(cfg, &scope);
    sb_addf(&s, "kcorpus response cache 2\n%s\n%s", scope.buf, req);
    sha256_hex(s.buf, s.len, out);
    sb_free(&scope), sb_free(&s);
}

/* Paid twice: an answer is committed raw (answers_received) the moment it has arrived, from
 * inside the client, before it is parsed, checked, stored as a response or verified. */
typedef struct received_ctx {
    collector *c;
    const char *hash;
} received_ctx;

static void commit_received(void *arg, const llm_endpoint *e, const llm_reply *r, int stream)
{
    received_ctx *rx = arg;
    collector *c = rx->c;
    strbuf err = STRBUF_INIT;
    db_lock(c);
    int rc = rec_answer_received(c->db, rx->hash, config_is_bundled(c->cfg) ? c->endpoint_label : e->url,
                                 llm_api_name(e->api), stream, &r->raw, &err);
    db_unlock(c);
    if (rc < 0) /* the response row still follows; only the window stays open */
        progress_error(c->progress, "answer", sb_str(&err));
    else
        crash_point("answer_received");
    sb_free(&err);
}

/* An answer a killed process committed raw and never stored as a response: parsed and stored
 * now (paid once, used now). 1 when there was one, 0 when not. */
static int recover_received(turn_ctx *x, const llm_request *q, const char *hash, llm_reply *r,
                            int64_t *request_id, int64_t *response_id, double *cost, strbuf *err)
{
    collector *c = x->c;
    const collect_config *cfg = c->cfg;
    strbuf endpoint = STRBUF_INIT, raw = STRBUF_INIT, perr = STRBUF_INIT, body = STRBUF_INIT;
    enum llm_api api;
    int stream = 0;
    int found = rec_answer_received_load(c->db, hash, &endpoint, &api, &stream, &raw, err);
    if (found == 1) {
        llm_reply_reset(r);
        if (llm_parse_raw(api, stream, sb_str(&raw), raw.len, r, &perr) < 0) {
            found = 0; /* not an answer after all (a retry would have followed): ask again */
        } else {
            llm_cap_answer(r, cfg->client.max_answer_bytes);
            sb_reset(&r->raw);
            sb_add(&r->raw, sb_str(&raw), raw.len);
            r->http_status = 200;
            r->outcome = LLM_OK;
            *cost = config_cost(cfg, r->prompt_tokens, r->completion_tokens, r->reasoning_tokens);
            llm_request_body(q, api, &body);
            response_record rr = {hash, endpoint.buf, llm_api_name(api), cfg->model, body.buf, r,
                                  *cost, 0};
            if (rec_store_response(c->db, &rr, request_id, response_id, err) < 0)
                found = -1;
            else
                rec_answer_received_drop(c->db, hash, NULL);
        }
    }
    sb_free(&endpoint), sb_free(&raw), sb_free(&perr), sb_free(&body);
    return found;
}

/* Gets the response for q: from the cache, or from the endpoint (then stored
 * and cached at once). */
static int obtain_response(turn_ctx *x, const llm_request *q, const char *hash, llm_reply *r,
                           int64_t *request_id, int64_t *response_id, double *cost, int *cached,
                           strbuf *err)
{
    collector *c = x->c;
    const collect_config *cfg = c->cfg;
    db_lock(c);
    int hit = rec_cache_lookup(c->db, hash, response_id, err);
    int rc = 0;
    if (hit == 1) {
        rc = rec_response_load(c->db, *response_id, r, err);
        if (rc == 0 && rec_response_used(c->db, *response_id)) {
            /* Answered before, for another turn or run: recorded again as a free cache hit. */
            strbuf body = STRBUF_INIT;
            llm_request_body(q, cfg->api, &body);
            response_record rr = {hash, c->endpoint_label, llm_api_name(cfg->api), cfg->model,
                                  body.buf, r, 0, 1};
            rc = rec_store_response(c->db, &rr, request_id, response_id, err);
            *cost = 0;
            sb_free(&body);
        } else if (rc == 0) {
            /* Stored by a process that died before recording the turn: paid once, used now. */
            *request_id = rec_response_request(c->db, *response_id);
            *cost = config_cost(cfg, r->prompt_tokens, r->completion_tokens, r->reasoning_tokens);
        }
        *cached = 1;
    }
    if (hit == 0) {
        hit = recover_received(x, q, hash, r, request_id, response_id, cost, err);
        *cached = hit == 1;
    }
    db_unlock(c);
    if (hit < 0 || hit == 1)
        return hit < 0 ? -1 : rc;

    *cached = 0;
    strbuf body = STRBUF_INIT;
    double t0 = now_ms();
    received_ctx rx = {c, hash};
    llm_request qr = *q;
    qr.on_received = commit_received;
    qr.on_received_arg = &rx;
    rc = llm_call(&c->client, &qr, r, &body, err);
    add_time(c, &c->sum.llm_s, now_ms() - t0);
    add_stat(c, &c->sum.requests_sent, r->attempts);
    if (rc == 0) {
        *cost = config_cost(cfg, r->prompt_tokens, r->completion_tokens, r->reasoning_tokens);
        const llm_endpoint *e = &c->endpoints[r->endpoint];
        response_record rr = {hash, config_is_bundled(cfg) ? c->endpoint_label : e->url,
                              llm_api_name(e->api), cfg->model, body.buf, r, *cost, 0};
        db_lock(c);
        rc = rec_store_response(c->db, &rr, request_id, response_id, err);
        if (rc == 0)
            rec_answer_received_drop(c->db, hash, NULL);
        db_unlock(c);
        if (rc == 0)
            crash_point("response_stored");
    }
    sb_free(&body);
    return rc;
}

/* Starts the verification service once, when the first answer needs it: a
 * rerun with nothing left to do never spawns compile servers or GPU workers. */
static kv_service *verifier(collector *c, strbuf *err)
{
    pthread_mutex_lock(&c->verifier_lock);
    if (!c->verifier && !c->verifier_failed) {
        kv_options vo;
        kv_options_default(&vo);
        vo.compile_only = c->cfg->compile_only;
        kv_service *svc = NULL;
        if (kv_service_start(&vo, &svc, err) < 0)
            c->verifier_failed = 1;
        else
            __atomic_store_n(&c->verifier, svc, __ATOMIC_RELEASE);
    } else if (c->verifier_failed) {
        kc_fail(err, "the verification service did not start");
    }
    kv_service *v = c->verifier;
    pthread_mutex_unlock(&c->verifier_lock);
    return v;
}

/* The problem's clock and tokens at the end of the turn just recorded. */
static int rec_turn_problem_clock(sqlite3 *db, const turn_record *tr, double ms, long tokens,
                                  strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, "UPDATE turns SET problem_elapsed_ms = ?, problem_tokens "
                                         "= ? WHERE trajectory_id = ? AND turn_index = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_double(st, 1, ms);
    sqlite3_bind_int64(st, 2, tokens);
    sqlite3_bind_int64(st, 3, tr->trajectory_id);
    sqlite3_bind_int(st, 4, tr->turn_index);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

/* Records candidate, verification, turn and maybe the trajectory's end in one transaction. */
static int record_turn(turn_ctx *x, const kv_result *vr, turn_record *tr, const char *stop,
                       strbuf *err)
{
    collector *c = x->c;
    db_lock(c);
    double t0 = now_ms();
    int rc = kc_db_begin(c->db, err);
    if (rc == 0 && vr) { /* NULL: an mtmc planning turn, no kernel */
        int extract_failed = !strcmp(vr->verdict, "extract_error");
        rc = rec_candidate(c->db, x->p->id, extract_failed ? NULL : sb_str(&vr->source),
                           extract_failed ? sb_str(&vr->message) : NULL, &tr->candidate_id, err) ||
             kv_record(c->db, tr->candidate_id, vr, err);
    }
    if (rc == 0) {
        rc = rec_turn(c->db, tr, err) ||
             rec_turn_problem_clock(c->db, tr, x->problem_ms, x->problem_tokens, err) ||
             (stop && rec_trajectory_finish(c->db, x->t->id, stop, err));
        if (rc)
            kc_db_rollback(c->db);
        else
            rc = kc_db_commit(c->db, err);
    }
    add_time(c, &c->sum.record_s, now_ms() - t0);
    db_unlock(c);
    return rc ? -1 : 0;
}

static void append_history(trajectory_state *t, const char *prompt, const llm_reply *r,
                           const kv_result *vr, const char *feedback, const turn_record *tr)
{
    t->turns = xrealloc(t->turns, (size_t)(t->n_turns + 1) * sizeof *t->turns);
    turn_history *h = &t->turns[t->n_turns++];
    h->prompt = xstrdup(prompt);
    h->answer = xstrdup(sb_str(&r->content));
    h->reasoning = r->reasoning.len ? xstrdup(r->reasoning.buf) : NULL;
    h->feedback = xstrdup(feedback);
    int kernel = !tr->plan_json && !(tr->action && !strcmp(tr->action, "plan")) &&
                 !(tr->action && !strcmp(tr->action, "revise"));
    h->source = kernel && strcmp(vr->verdict, "extract_error") && vr->source.len ? xstrdup(vr->source.buf) : NULL;
    h->verdict = kernel ? xstrdup(vr->verdict) : NULL;
    h->action = tr->action ? xstrdup(tr->action) : NULL;
    h->plan_json = tr->plan_json ? xstrdup(tr->plan_json) : NULL;
    h->step = tr->step;
}

static void note_result(turn_ctx *x, const kv_result *vr, const llm_reply *r, double cost,
                        int cached, const char *stop)
{
    collector *c = x->c;
    pthread_mutex_lock(&c->lock);
    collect_summary *s = &c->sum;
    s->turns++;
    s->turns_cached += cached;
    s->tokens_in += r->prompt_tokens;
    s->tokens_out += r->completion_tokens;
    s->tokens_reasoning += r->reasoning_tokens;
    s->cost_usd += cost;
    if (vr->timed && vr->timing.speedup_eager > s->best_speedup)
        s->best_speedup = vr->timing.speedup_eager;
    if (stop) {
        s->trajectories_done++;
        if (x->t->any_correct) {
            s->trajectories_solved++;
            int pi = (int)(x->p - c->problems);
            if (!c->problem_solved[pi]++)
                s->problems_solved++;
        }
    }
    pthread_mutex_unlock(&c->lock);
    progress_turn(c->progress, x->label, x->t->n_turns - 1, vr->verdict, sb_str(&vr->message),
                  cached, r->truncated, stop);
}

/* A request the endpoint refuses (400: too long, invalid): not retried in this run; the
 * trajectory ends with stop_reason 'error', the run exits non-zero saying so, and the same
 * command asks again once the user has fixed the cause (record.c reopens such trajectories). */
static int end_unanswerable(turn_ctx *x, strbuf *err)
{
    collector *c = x->c;
    strbuf e2 = STRBUF_INIT;
    db_lock(c);
    int rc = rec_trajectory_finish(c->db, x->t->id, "error", &e2);
    db_unlock(c);
    progress_error(c->progress, x->label, sb_str(err));
    if (rc < 0) {
        kc_fail(err, "%s", e2.buf);
        sb_free(&e2);
        return -1;
    }
    sb_free(&e2);
    pthread_mutex_lock(&c->lock);
    c->sum.trajectories_done++;
    c->sum.trajectories_errored++;
    if (!c->refused.len)
        sb_addf(&c->refused, "%s: %s", x->label, sb_str(err));
    pthread_mutex_unlock(&c->lock);
    return 1;
}

static void end_before_turn(turn_ctx *x, const char *reason);

/* The messages of the next turn: the strategy's (mtmc) or the loop's. */
static void build_turn(turn_ctx *x, mtmc_turn *mt, prompt_messages *pm)
{
    const collect_config *cfg = x->c->cfg;
    memset(mt, 0, sizeof *mt);
    if (cfg->strategy == STRATEGY_MTMC)
        mtmc_next(cfg, x->spec, x->t, mt, pm);
    else
        prompt_build(x->spec, x->t->turns, x->t->n_turns, cfg->context, pm);
}

/* An mtmc planning turn: the plan in the answer (NULL when none), a pseudo verdict for the
 * progress line ('plan' or 'no_plan'), and the feedback (for no plan: the error and the format
 * again, the next turn's request). */
static char *plan_of_answer(const llm_reply *r, kv_result *vr, strbuf *feedback)
{
    strbuf perr = STRBUF_INIT;
    char *plan = mtmc_parse_plan(sb_str(&r->content), &perr);
    if (plan) {
        snprintf(vr->verdict, sizeof vr->verdict, "plan");
        json_t *j = json_loads(plan, 0, NULL);
        sb_addf(&vr->message, "a plan of %zu actions", json_array_size(j));
        json_decref(j);
        sb_adds(feedback, "Plan accepted.");
    } else {
        snprintf(vr->verdict, sizeof vr->verdict, "no_plan");
        sb_addf(&vr->message, "no plan: %s", sb_str(&perr));
        sb_addf(feedback, MTMC_PLAN_MARKER " again: your answer could not be read as a plan (%s). "
                          "Answer with PLAN, then one action a line ([N.] action [argument] -- "
                          "free text), then END; the actions:\n%s", sb_str(&perr), mtmc_vocabulary());
    }
    sb_free(&perr);
    return plan;
}

/* Verifies the answer and writes the feedback (with the hardware facts under mtmc). */
static int verify_answer(turn_ctx *x, const llm_reply *r, kv_result *vr, strbuf *feedback,
                         double *verify_ms, strbuf *err)
{
    collector *c = x->c;
    double v0 = now_ms(); /* the verifier's start-up counts as verification time */
    kv_service *v = verifier(c, err);
    if (!v) {
        set_fatal(c, sb_str(err));
        return -1;
    }
    progress_verifying(c->progress, +1);
    int vrc = kv_verify(v, x->p, sb_str(&r->content), vr, err);
    progress_verifying(c->progress, -1);
    *verify_ms = now_ms() - v0;
    add_time(c, &c->sum.verify_s, *verify_ms);
    if (vrc < 0)
        return -1;
    kv_feedback(x->p, vr, feedback);
    if (c->cfg->strategy == STRATEGY_MTMC)
        mtmc_hardware_facts(x->p, vr, feedback);
    return 0;
}

/* Why the trajectory stops after this turn, under its strategy, or NULL. */
static const char *turn_stop(turn_ctx *x, const mtmc_turn *mt, const kv_result *vr, int success)
{
    const collect_config *cfg = x->c->cfg;
    const char *stop = NULL;
    if (cfg->strategy == STRATEGY_MTMC)
        stop = mtmc_stop(cfg, mt, vr, success) ?: budget_stop(cfg, x->t, x->t->n_turns + 1);
    else
        stop = stop_reason(cfg, x->t, vr, x->t->n_turns + 1);
    x->problem_ms = problem_elapsed(x->c, (int)(x->p - x->c->problems), 0, &x->problem_tokens);
    return stop ? stop : problem_budget_stop(cfg, x->problem_ms, x->problem_tokens);
}

/* Runs turn number t->n_turns. Returns 1 when the trajectory ended, 0 to go
 * on, -1 on an error that leaves it open (a later run resumes it). */
static int run_turn(turn_ctx *x, strbuf *err)
{
    collector *c = x->c;
    const collect_config *cfg = c->cfg;
    trajectory_state *t = x->t;
    double t0 = now_ms();
    strbuf started = STRBUF_INIT;
    mtmc_turn mt;
    prompt_messages pm;
    build_turn(x, &mt, &pm);
    if (cfg->strategy == STRATEGY_MTMC && mt.kind == MTMC_DONE) { /* after a resume */
        mtmc_turn_free(&mt);
        prompt_messages_free(&pm);
        end_before_turn(x, "plan_done");
        return 1;
    }
    iso8601_now(&started);
    const char *prompt = pm.messages[pm.n - 1].content;
    llm_request q = {cfg->model, prompt_system_text(), pm.messages, pm.n, cfg->max_tokens,
                     cfg->temperature, cfg->seed + x->sample, cfg->stream};
    char hash[SHA256_HEX_LEN + 1];
    cache_key(cfg, &q, hash);

    llm_reply r;
    llm_reply_init(&r);
    kv_result vr;
    kv_result_init(&vr);
    strbuf feedback = STRBUF_INIT;
    int64_t request_id = 0, response_id = 0;
    double cost = 0, verify_ms = 0;
    int cached = 0, rc = -1;
    char *plan_json = NULL;
    int planning = cfg->strategy == STRATEGY_MTMC && mt.kind != MTMC_STEP;
    if (obtain_response(x, &q, hash, &r, &request_id, &response_id, &cost, &cached, err) < 0) {
        if (r.outcome == LLM_FATAL_RUN && r.connect_failed)
            c->unreachable = 1;
        if (r.outcome == LLM_FATAL_RUN)
            set_fatal(c, sb_str(err));
        else if (r.outcome == LLM_FATAL_REQUEST)
            rc = end_unanswerable(x, err);
        goto out;
    }
    double llm_ms = cached ? 0 : r.latency_ms;
    if (planning)
        plan_json = plan_of_answer(&r, &vr, &feedback);
    else if (verify_answer(x, &r, &vr, &feedback, &verify_ms, err) < 0)
        goto out;
    if (r.truncated)
        sb_adds(&feedback, "\n\nNote: your previous answer was cut off by the token limit; "
                           "answer with less text around the code.");

    t->tokens += r.prompt_tokens + r.completion_tokens;
    t->wall_ms += now_ms() - t0;
    int success = !planning && is_success(cfg, vr.verdict);
    if (success)
        t->any_correct = 1;
    problem_elapsed(c, (int)(x->p - c->problems), r.prompt_tokens + r.completion_tokens, NULL);
    const char *stop = turn_stop(x, &mt, &vr, success);
    int mtmc = cfg->strategy == STRATEGY_MTMC;
    turn_record tr = {.trajectory_id = t->id, .turn_index = t->n_turns, .prompt = prompt,
                      .request_id = request_id, .response_id = response_id,
                      .feedback = feedback.buf, .tokens_in = r.prompt_tokens,
                      .tokens_out = r.completion_tokens, .latency_ms = cached ? 0 : r.latency_ms,
                      .cost_usd = cost, .wall_ms = now_ms() - t0, .started_at = started.buf,
                      .action = mtmc ? sb_str(&mt.action) : NULL, .plan_json = plan_json,
                      .step = mt.step};
    if (record_turn(x, planning ? NULL : &vr, &tr, stop, err) < 0)
        goto out;
    crash_point("turn_recorded");
    add_time(c, &c->sum.overhead_s, tr.wall_ms - llm_ms - verify_ms);
    append_history(t, prompt, &r, &vr, sb_str(&feedback), &tr);
    note_result(x, &vr, &r, cost, cached, stop);
    rc = stop ? 1 : 0;
out:
    free(plan_json);
    mtmc_turn_free(&mt);
    prompt_messages_free(&pm);
    llm_reply_free(&r);
    kv_result_free(&vr);
    sb_free(&feedback);
    sb_free(&started);
    return rc;
}

/* Ends a trajectory before its next turn: its problem's budget is spent, or (mtmc) its plan is
 * done. */
static void end_before_turn(turn_ctx *x, const char *reason)
{
    collector *c = x->c;
    strbuf err = STRBUF_INIT;
    db_lock(c);
    int rc = rec_trajectory_finish(c->db, x->t->id, reason, &err);
    db_unlock(c);
    pthread_mutex_lock(&c->lock);
    if (rc < 0) {
        c->sum.trajectories_failed++;
    } else {
        c->sum.trajectories_done++;
        if (x->t->any_correct) {
            c->sum.trajectories_solved++;
            int pi = (int)(x->p - c->problems);
            if (!c->problem_solved[pi]++)
                c->sum.problems_solved++;
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (rc < 0)
        progress_error(c->progress, x->label, err.buf);
    else
        progress_update(c->progress);
    sb_free(&err);
}

static void run_trajectory(collector *c, const job *j)
{
    const problem *p = &c->problems[j->problem];
    trajectory_state t;
    strbuf err = STRBUF_INIT, label = STRBUF_INIT;
    sb_addf(&label, "%s#%d", p->id, j->sample);
    db_lock(c);
    int rc = rec_trajectory_load(c->db, c->run_id, p->id, j->sample, &t, &err);
    db_unlock(c);
    if (rc < 0) {
        progress_error(c->progress, label.buf, err.buf);
        pthread_mutex_lock(&c->lock);
        c->sum.trajectories_failed++;
        pthread_mutex_unlock(&c->lock);
        goto out;
    }
    if (t.done) {
        pthread_mutex_lock(&c->lock);
        c->sum.trajectories_done++;
        if (t.any_correct) {
            c->sum.trajectories_solved++;
            if (!c->problem_solved[j->problem]++)
                c->sum.problems_solved++;
        }
        pthread_mutex_unlock(&c->lock);
        progress_update(c->progress);
        goto out;
    }
    const char *limit = limit_reached(c->cfg, &t);
    if (limit) { /* a limit lowered since the trajectory started: it ends without another turn */
        db_lock(c);
        rc = rec_trajectory_finish(c->db, t.id, limit, &err);
        db_unlock(c);
        pthread_mutex_lock(&c->lock);
        if (rc < 0)
            c->sum.trajectories_failed++;
        else
            c->sum.trajectories_done++;
        pthread_mutex_unlock(&c->lock);
        if (rc < 0)
            progress_error(c->progress, label.buf, err.buf);
        goto out;
    }
    turn_ctx x = {c, p, c->specs[j->problem], j->sample, &t, label.buf};
    for (;;) {
        if (*c->cancel)
            break;
        long ptok = 0;
        const char *pstop =
            problem_budget_stop(c->cfg, problem_elapsed(c, j->problem, 0, &ptok), ptok);
        if (pstop) { /* the problem's shared budget is spent: no turn for this sample */
            end_before_turn(&x, pstop);
            break;
        }
        int r = run_turn(&x, &err);
        if (r == 1)
            break;
        if (r < 0) {
            if (!*c->cancel || c->sum.fatal)
                progress_error(c->progress, label.buf, err.buf);
            pthread_mutex_lock(&c->lock);
            c->sum.trajectories_failed++;
            pthread_mutex_unlock(&c->lock);
            break;
        }
    }
out:
    trajectory_state_free(&t);
    sb_free(&err);
    sb_free(&label);
}

static void *worker(void *arg)
{
    collector *c = arg;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        int i = *c->cancel || c->next_job >= c->n_jobs ? -1 : c->next_job++;
        pthread_mutex_unlock(&c->lock);
        if (i < 0)
            return NULL;
        run_trajectory(c, &c->jobs[i]);
    }
}

/* ---- setup ---- */

static int load_problems(collector *c, strbuf *err)
{
    strbuf root = STRBUF_INIT;
    problems_root(&root);
    char **ids = NULL;
    int n = 0;
    int rc = problems_select(root.buf, c->cfg->problems, &ids, &n, err);
    sb_free(&root);
    if (rc < 0)
        return -1;
    if (n == 0) {
        problems_free_ids(ids, n);
        return kc_fail(err, "no problem matches '%s'", c->cfg->problems);
    }
    c->problems = xcalloc((size_t)n, sizeof *c->problems);
    c->specs = xcalloc((size_t)n, sizeof *c->specs);
    c->problem_solved = xcalloc((size_t)n, sizeof *c->problem_solved);
    c->clocks = xcalloc((size_t)n, sizeof *c->clocks);
    for (int i = 0; i < n && rc == 0; i++) {
        strbuf e = STRBUF_INIT;
        if (problem_load_by_id(ids[i], &c->problems[i], &e) < 0) {
            rc = kc_fail(err, "%s: %s", ids[i], e.buf);
        } else {
            c->n_problems = i + 1;
            strbuf spec = STRBUF_INIT;
            problem_spec_text(&c->problems[i], &spec);
            c->specs[i] = sb_detach(&spec);
        }
        sb_free(&e);
    }
    problems_free_ids(ids, n);
    return rc;
}

static int register_problems(collector *c, strbuf *err)
{
    if (kc_db_begin(c->db, err))
        return -1;
    for (int i = 0; i < c->n_problems; i++)
        if (problem_register(c->db, &c->problems[i], err) < 0) {
            kc_db_rollback(c->db);
            return -1;
        }
    return kc_db_commit(c->db, err);
}

static void make_jobs(collector *c)
{
    c->jobs = xcalloc((size_t)(c->n_problems * c->cfg->samples), sizeof *c->jobs);
    /* Samples of a problem next to each other: a problem finishes early. --shard I/N: only
     * shard I's trajectories (common/shard.h). */
    c->n_jobs = 0;
    for (int p = 0; p < c->n_problems; p++)
        for (int s = 0; s < c->cfg->samples; s++)
            if (kc_shard_holds(&c->cfg->shard, c->problems[p].id, s))
                c->jobs[c->n_jobs++] = (job){p, s};
}

static void setup_client(collector *c, char **urls, int n_urls)
{
    const collect_config *cfg = c->cfg;
    c->n_endpoints = n_urls;
    for (int i = 0; i < n_urls; i++)
        c->endpoints[i] = (llm_endpoint){urls[i], cfg->api,
                                         /* the bundled test server gets no key */
                                         config_is_bundled(cfg) ? NULL : (char *)config_key_for(cfg, cfg->api), 0};
    rl_init(&c->limits, cfg->concurrency, cfg->rpm, cfg->tpm);
    llm_client_init(&c->client, c->endpoints, c->n_endpoints, &cfg->client, &c->limits, c->cancel);
}

static void teardown(collector *c)
{
    llm_client_destroy(&c->client);
    rl_destroy(&c->limits);
    for (int i = 0; i < c->n_problems; i++) {
        problem_free(&c->problems[i]);
        free(c->specs[i]);
    }
    free(c->problems);
    free(c->specs);
    free(c->problem_solved);
    free(c->clocks);
    free(c->jobs);
    sb_free(&c->fatal);
    sb_free(&c->refused);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->db_lock);
}

/* One process per run: two copies of the same command would ask the same
 * questions twice. An advisory lock beside the database, released by the
 * kernel however the holder dies (kill -9 included). */
static int lock_run(collector *c, const char *key, strbuf *err)
{
    strbuf path = STRBUF_INIT;
    sb_addf(&path, "%s.kcollect-%.16s.lock", c->cfg->db_path, key);
    int rc = 0;
    for (int tries = 0;; tries++) {
        int fd = open(path.buf, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        struct stat held, now;
        if (fd < 0) {
            rc = kc_fail(err, "%s: %s", path.buf, strerror(errno));
        } else if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
            rc = kc_fail(err, "this run is already in progress in another kcollect process "
                              "(lock %s held)", path.buf);
            close(fd);
        } else if (fstat(fd, &held) < 0 || stat(path.buf, &now) < 0 || held.st_ino != now.st_ino) {
            close(fd); /* its holder removed it on the way out: lock the new file */
            if (tries < 100)
                continue;
            rc = kc_fail(err, "%s: keeps being replaced", path.buf);
        } else {
            c->lock_fd = fd;
            c->lock_path = sb_detach(&path);
            kc_interrupt_remove_on_exit(c->lock_path); /* a second Ctrl-C removes it too */
        }
        break;
    }
    sb_free(&path);
    return rc;
}

/* Removed while still held (an opener that locked the old inode sees it is gone and retries),
 * so a clean exit leaves no lock file behind; after kill -9 the file stays, unlocked. */
static void unlock_run(collector *c)
{
    if (c->lock_fd > 0) {
        kc_interrupt_remove_on_exit(NULL);
        unlink(c->lock_path);
        close(c->lock_fd);
    }
    free(c->lock_path);
}

/* The selected problem ids as a JSON array (bound to json_each in SQL). */
static void selection_json(const collector *c, strbuf *out)
{
    json_t *a = json_array();
    for (int i = 0; i < c->n_problems; i++)
        json_array_append_new(a, json_string(c->problems[i].id));
    char *s = json_dumps(a, JSON_COMPACT);
    sb_adds(out, s);
    free(s);
    json_decref(a);
}

/* How many of this command's trajectories the run already has. */
static long existing_trajectories(collector *c, const char *ids)
{
    sqlite3_stmt *st = kc_db_prepare(c->db, "SELECT count(*) FROM trajectories WHERE run_id = ? "
                                            "AND sample_index < ? AND problem_id IN "
                                            "(SELECT value FROM json_each(?))", NULL);
    if (!st)
        return 0;
    sqlite3_bind_int64(st, 1, c->run_id);
    sqlite3_bind_int(st, 2, c->cfg->samples);
    sqlite3_bind_text(st, 3, ids, -1, SQLITE_STATIC);
    long n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return n;
}

/* Continuing a run with more turns, a larger budget or a higher target speedup extends its
 * ended trajectories: those of this command that stopped for a limit the new settings lift, and
 * that no other limit stops, are open again. Returns how many, or -1. */
static int reopen_extendable(collector *c, const char *ids, strbuf *err)
{
    const collect_config *cfg = c->cfg;
    sqlite3_stmt *st = kc_db_prepare(c->db,
        "WITH sel AS (SELECT tr.id, tr.stop_reason,"
        "  (SELECT count(*) FROM turns t WHERE t.trajectory_id = tr.id) AS n,"
        "  (SELECT coalesce(sum(coalesce(t.tokens_in, 0) + coalesce(t.tokens_out, 0)), 0)"
        "     FROM turns t WHERE t.trajectory_id = tr.id) AS tok,"
        "  (SELECT coalesce(sum(t.wall_ms), 0) FROM turns t WHERE t.trajectory_id = tr.id) AS wall,"
        "  (SELECT max(tm.speedup_eager) FROM turns t"
        "     JOIN v_latest_verification v ON v.candidate_id = t.candidate_id"
        "     JOIN timings tm ON tm.verification_id = v.id WHERE t.trajectory_id = tr.id) AS best"
        "  FROM trajectories tr WHERE tr.run_id = ?1 AND tr.status = 'done' AND tr.sample_index < ?2"
        "  AND tr.problem_id IN (SELECT value FROM json_each(?3)))"
        " UPDATE trajectories SET status = 'open', stop_reason = NULL, finished_at = NULL"
        " WHERE id IN (SELECT id FROM sel WHERE n < ?4 AND (?5 = 0 OR tok < ?5)"
        "  AND (?6 = 0 OR wall < ?6 * 60000.0)"
        "  AND (stop_reason IN ('turns', 'tokens', 'minutes')"
        "       OR (stop_reason IN ('first_correct', 'first_compiled', 'target_speedup') AND ?7 > 0 AND NOT ?8"
        "           AND coalesce(best, 0) < ?7)))", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, c->run_id);
    sqlite3_bind_int(st, 2, cfg->samples);
    sqlite3_bind_text(st, 3, ids, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, cfg->turns);
    sqlite3_bind_int64(st, 5, cfg->budget_tokens);
    sqlite3_bind_double(st, 6, cfg->budget_minutes);
    sqlite3_bind_double(st, 7, cfg->target_speedup);
    sqlite3_bind_int(st, 8, cfg->compile_only);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return kc_fail(err, "database: %s", sqlite3_errmsg(c->db));
    return sqlite3_changes(c->db);
}

/* Before a run with a price: tokens and cost if each of the trajectories it adds used all its
 * turns, from the prompts' sizes (about 4 characters a token), answers of min(max tokens, 2000)
 * tokens and feedback of about 300 sent back each turn. An upper estimate: a trajectory stops
 * at its first success, and cached answers cost nothing. */
static void estimate_note(collector *c, long adds)
{
    const collect_config *cfg = c->cfg;
    if (!cfg->cost.known || adds <= 0 || c->n_problems == 0)
        return;
    double base = 0;
    for (int i = 0; i < c->n_problems; i++)
        base += (double)(strlen(prompt_system_text()) + strlen(c->specs[i])) / 4.0;
    base /= c->n_problems; /* an average first prompt */
    double answer = cfg->max_tokens > 0 && cfg->max_tokens < 2000 ? cfg->max_tokens : 2000;
    double step = answer + 300, in = 0;
    for (int k = 0; k < cfg->turns; k++)
        in += base + k * step;
    in *= (double)adds;
    double out = (double)adds * cfg->turns * answer;
    double usd = config_cost(cfg, (long)in, (long)out, 0);
    progress_note(c->progress, "estimate before starting: at most about %.0fk input and %.0fk "
                  "output tokens, $%.2f at $%g/$%g per Mtok (%ld trajectories x %d turns; a "
                  "trajectory stops at its first success, so usually less)", in / 1000.0,
                  out / 1000.0, usd, cfg->cost.input, cfg->cost.output, adds, cfg->turns);
}

/* Says on screen which run this is, why a new one is new, and what it will add. */
static void announce_run(collector *c, const char *key, int resumed, long existing, int reopened,
                         const char *identity)
{
    const collect_config *cfg = c->cfg;
    const char *synthetic = config_is_bundled(cfg) ? " [synthetic answers: " CC_BUNDLED "]" : "";
    long adds = c->n_jobs - existing;
    estimate_note(c, adds);
    if (resumed) {
        progress_note(c->progress, "continuing run %lld (key %.12s) on %s, model %s%s: %ld of this "
                      "command's %d trajectories recorded; it will add %ld trajectories and "
                      "extend %d ended ones", (long long)c->run_id, key, c->endpoint_label,
                      cfg->model, synthetic, existing, c->n_jobs, adds, reopened);
        return;
    }
    strbuf shard = STRBUF_INIT;
    if (cfg->shard.count)
        kc_shard_describe(&cfg->shard, &shard);
    progress_note(c->progress, "starting new run %lld (key %.12s) on %s, model %s%s: it will add "
                  "%ld trajectories (%d problems x %d samples%s%s)", (long long)c->run_id, key,
                  c->endpoint_label, cfg->model, synthetic, adds, c->n_problems, cfg->samples,
                  shard.len ? ", shard " : "", shard.buf ? shard.buf : "");
    sb_free(&shard);
    strbuf prev = STRBUF_INIT, diff = STRBUF_INIT;
    int64_t other = rec_run_previous(c->db, c->run_id, &prev);
    if (other > 0) {
        config_identity_diff(prev.len ? prev.buf : "{}", identity, &diff);
        progress_note(c->progress, "this is a new run, not a continuation of run %lld: %s "
                      "(a run continues only with the same model, endpoints, sampling settings "
                      "and prompt format)", (long long)other,
                      diff.len ? diff.buf : "its identity differs");
    }
    sb_free(&prev);
    sb_free(&diff);
}

static int open_run(collector *c, strbuf *err)
{
    char key[SHA256_HEX_LEN + 1];
    strbuf identity = STRBUF_INIT, json = STRBUF_INIT, ids = STRBUF_INIT;
    config_identity(c->cfg, &identity);
    sha256_hex(identity.buf, identity.len, key);
    if (lock_run(c, key, err) < 0) {
        sb_free(&identity);
        return -1;
    }
    config_json(c->cfg, &json);
    int resumed = 0;
    run_record rr = {key, identity.buf, json.buf, c->cfg->model, c->endpoint_label,
                     llm_api_name(c->cfg->api), config_is_bundled(c->cfg) ? CC_BUNDLED : NULL};
    int rc = rec_run_open(c->db, &rr, &c->run_id, &resumed, err);
    selection_json(c, &ids);
    long existing = rc == 0 ? existing_trajectories(c, ids.buf) : 0;
    int reopened = rc == 0 && resumed ? reopen_extendable(c, ids.buf, err) : 0;
    if (reopened < 0)
        rc = -1;
    if (rc == 0)
        announce_run(c, key, resumed, existing, reopened, identity.buf);
    c->run_is_new = rc == 0 && !resumed;
    sb_free(&identity);
    sb_free(&json);
    sb_free(&ids);
    return rc;
}

/* A dead endpoint is found before anything is written: one TCP connect per endpoint. Fails
 * only when none of them is reachable (refused, no such host). */
static int probe_endpoints(collector *c, strbuf *err)
{
    if (config_is_bundled(c->cfg) || c->n_endpoints == 0)
        return 0;
    strbuf why = STRBUF_INIT;
    int reachable = 0;
    for (int i = 0; i < c->n_endpoints && !reachable; i++) {
        sb_reset(&why);
        reachable = llm_endpoint_probe(&c->endpoints[i], c->cfg->client.connect_timeout_s, &why) == 0;
    }
    int rc = 0;
    if (!reachable)
        rc = kc_fail(err, "cannot reach the endpoint %s%s: %s; start the server or fix --endpoint "
                          "(or %s)", c->endpoints[0].url, c->n_endpoints > 1 ? " (nor the others)" : "",
                     why.buf, c->cfg->api == LLM_ANTHROPIC ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL");
    sb_free(&why);
    return rc;
}

/* A run stopped before its first turn because its endpoint died leaves no empty run behind
 * (one stopped by another run-fatal error, a quota, stays: interrupted, to resume). */
static void drop_empty_run(collector *c)
{
    if (!c->run_is_new)
        return;
    char *sql = sqlite3_mprintf(
        "DELETE FROM trajectories WHERE run_id = %lld AND NOT EXISTS (SELECT 1 FROM turns t "
        " WHERE t.trajectory_id = trajectories.id);"
        "DELETE FROM runs WHERE id = %lld AND NOT EXISTS (SELECT 1 FROM trajectories WHERE run_id = %lld);",
        (long long)c->run_id, (long long)c->run_id, (long long)c->run_id);
    sqlite3_exec(c->db, sql, NULL, NULL, NULL);
    sqlite3_free(sql);
}

int collect_run(const collect_config *cfg, const char *endpoint_label, char **urls, int n_urls,
                volatile sig_atomic_t *cancel, collect_summary *sum, strbuf *err)
{
    collector c = {.cfg = cfg, .endpoint_label = endpoint_label, .cancel = cancel};
    pthread_mutex_init(&c.lock, NULL);
    pthread_mutex_init(&c.db_lock, NULL);
    pthread_mutex_init(&c.verifier_lock, NULL);
    double start = now_ms();
    memset(sum, 0, sizeof *sum);
    setup_client(&c, urls, n_urls);
    int rc = load_problems(&c, err);
    if (rc == 0)
        rc = probe_endpoints(&c, err);
    if (rc == 0)
        rc = kc_db_open(cfg->db_path, KC_DB_CREATE, &c.db, err);
    if (rc == 0) /* --shard I/N: the database's split agrees (before anything is written) */
        rc = kc_shard_claim_collect(c.db, &cfg->shard, err);
    if (rc == 0) {
        make_jobs(&c);
        c.sum.problems = c.n_problems;
        c.sum.trajectories = c.n_jobs;
        c.progress = progress_start(&c.sum, &c.lock, cfg->compile_only, cfg->verbose);
        progress_watch_verifier(c.progress, &c.verifier);
        rc = register_problems(&c, err);
    }
    if (rc == 0)
        rc = open_run(&c, err);
    if (rc == 0)
        rc = load_problem_clocks(&c, err);
    if (rc == 0) {
        int n = cfg->concurrency < c.n_jobs ? cfg->concurrency : c.n_jobs;
        pthread_t *threads = xcalloc((size_t)(n ? n : 1), sizeof *threads);
        for (int i = 0; i < n; i++)
            pthread_create(&threads[i], NULL, worker, &c);
        for (int i = 0; i < n; i++)
            pthread_join(threads[i], NULL);
        free(threads);
        progress_watch_verifier(c.progress, NULL); /* before the service goes away */
        if (c.verifier)
            kv_service_stop(c.verifier);
        c.sum.interrupted = *cancel && !c.sum.fatal;
        int complete = c.sum.trajectories_done == c.sum.trajectories;
        strbuf e2 = STRBUF_INIT;
        rec_run_close(c.db, c.run_id, complete ? "finished" : "interrupted", &e2);
        sb_free(&e2);
        if (c.sum.fatal && c.unreachable && c.sum.turns == 0)
            drop_empty_run(&c);
        if (c.sum.fatal)
            rc = kc_fail(err, "stopped: %s", c.fatal.buf);
        else if (!complete)
            rc = kc_fail(err, "%d of %d trajectories are not finished; run the same command again to resume",
                         c.sum.trajectories - c.sum.trajectories_done, c.sum.trajectories);
        else if (c.sum.trajectories_errored)
            rc = kc_fail(err, "%d trajectories ended by a request the endpoint refused (first: %s); "
                              "fix the cause and run the same command again: it asks again",
                         c.sum.trajectories_errored, c.refused.buf);
    }
    progress_stop(c.progress);
    c.sum.wall_s = (now_ms() - start) / 1000.0;
    c.sum.compile_only = cfg->compile_only;
    *sum = c.sum;
    if (c.db)
        kc_db_close(c.db);
    unlock_run(&c);
    teardown(&c);
    return rc;
}

int collect_preflight(const collect_config *cfg, strbuf *err)
{
    strbuf root = STRBUF_INIT;
    problems_root(&root);
    char **ids = NULL;
    int n = 0;
    int rc = problems_select(root.buf, cfg->problems, &ids, &n, err);
    problems_free_ids(ids, n);
    sb_free(&root);
    if (rc < 0)
        return -1;
    struct stat st;
    if (stat(cfg->db_path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
        /* an empty file (mktemp's) is a new database, as with sqlite3 */
        if (access(cfg->db_path, W_OK) != 0)
            return kc_fail(err, "cannot create the database '%s': %s", cfg->db_path, strerror(errno));
        return 0;
    }
    if (access(cfg->db_path, F_OK) == 0) {
        sqlite3 *db = NULL;
        if (kc_db_open(cfg->db_path, KC_DB_EXISTING, &db, err) < 0)
            return -1;
        kc_db_close(db);
        return 0;
    }
    strbuf dir = STRBUF_INIT;
    path_dirname(cfg->db_path, &dir);
    if (access(dir.len ? dir.buf : ".", W_OK) != 0)
        rc = kc_fail(err, "cannot create the database '%s': %s: %s", cfg->db_path,
                     dir.len ? dir.buf : ".", strerror(errno));
    sb_free(&dir);
    return rc;
}

int collect_dry_run(const collect_config *cfg, strbuf *out, strbuf *err)
{
    collector c = {.cfg = cfg};
    pthread_mutex_init(&c.lock, NULL);
    pthread_mutex_init(&c.db_lock, NULL);
    volatile sig_atomic_t never = 0;
    c.cancel = &never;
    setup_client(&c, NULL, 0);
    int rc = load_problems(&c, err);
    if (rc == 0) {
        prompt_messages pm;
        prompt_build(c.specs[0], NULL, 0, cfg->context, &pm);
        llm_request q = {cfg->model, prompt_system_text(), pm.messages, pm.n, cfg->max_tokens,
                         cfg->temperature, cfg->seed, cfg->stream};
        char hash[SHA256_HEX_LEN + 1];
        llm_request_hash(&q, hash);
        sb_addf(out, "=== system ===\n%s\n=== user (%s, sample 0, turn 0) ===\n%s\n", prompt_system_text(),
                c.problems[0].id, c.specs[0]);
        sb_addf(out, "=== %d problem(s) x %d sample(s), model %s, request hash %.16s ===\n",
                c.n_problems, cfg->samples, cfg->model, hash);
        prompt_messages_free(&pm);
    }
    teardown(&c);
    return rc;
}

void collect_summary_print(const collect_summary *s, FILE *out)
{
    fprintf(out, "kcollect summary\n");
    fprintf(out, "  problems       %d, solved %d%s\n", s->problems, s->problems_solved,
            s->compile_only ? " (compile-only: solved = compiled, not run on a GPU; kcurate stats "
                              "counts these apart from correct)" : "");
    fprintf(out, "  trajectories   %d, done %d, solved %d, not finished %d\n", s->trajectories,
            s->trajectories_done, s->trajectories_solved, s->trajectories - s->trajectories_done);
    fprintf(out, "  turns          %ld this run (%ld from the response cache), %ld HTTP requests\n",
            s->turns, s->turns_cached, s->requests_sent);
    fprintf(out, "  tokens         in %ld, out %ld (reasoning %ld)\n", s->tokens_in, s->tokens_out,
            s->tokens_reasoning);
    fprintf(out, "  cost           $%.4f\n", s->cost_usd);
    if (s->best_speedup > 0)
        fprintf(out, "  best speedup   %.2fx over PyTorch eager\n", s->best_speedup);
    fprintf(out, "  time           wall %.1f s; summed over turns: LLM %.1f s, verify %.1f s, record %.2f s\n",
            s->wall_s, s->llm_s, s->verify_s, s->record_s);
    if (s->turns)
        fprintf(out, "  orchestration  %.1f ms per turn (turn wall time minus LLM and verification)\n",
                1000.0 * s->overhead_s / (double)s->turns);
    if (s->trajectories_errored)
        fprintf(out, "  REFUSED        %d trajectories ended by a request the endpoint refused: fix "
                     "the cause, then run the same command again to ask again\n",
                s->trajectories_errored);
    if (s->fatal)
        fprintf(out, "  stopped by a run-fatal LLM error\n");
    else if (s->interrupted && s->trajectories_done < s->trajectories) {
        strbuf cmd = STRBUF_INIT;
        kc_resume_command(&cmd);
        fprintf(out, "  interrupted: run the same command again to resume:\n    %s\n", sb_str(&cmd));
        sb_free(&cmd);
    }
}
