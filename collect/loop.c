/* loop: trajectories, turns, stop rules, budgets and the per-turn
 * transaction (see loop.h); the collection around them is run.c. */
#include "collect/loop.h"
#include "collect/loop_internal.h"
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
int loop_load_problem_clocks(collector *c, strbuf *err)
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

void *loop_worker(void *arg)
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
