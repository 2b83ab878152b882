/* cli_serve: `kverify serve`, the verifier as an HTTP/1.1 JSON reward service for online RL
 * (libmicrohttpd). GET /health; POST /v1/verify with one item or a batch: each item is verified
 * by the warm verification service (compile servers, GPU workers) and answered with the
 * verifier's result JSON plus kcurate's reward (serve_request.c). Requests wait in a bounded
 * queue that is served round-robin across clients (serve_queue.c); a fixed pool of verification
 * threads, sized by the compile servers and GPU workers, takes the jobs, so the clients set no
 * concurrency. --db records every verification as `kverify run` does (origin 'serve'). */
#include "common/db.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/interrupt.h"
#include "common/problem.h"
#include "verify/cli/serve_queue.h"
#include "verify/cli/serve_request.h"
#include "verify/cli/verify_cli.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define SERVE_MAX_WORKERS 256

struct serve_config {
    const char *host, *db_path, *token_file;
    int port, workers, queue, max_connections, timeout_s;
    serve_limits limits;
    kc_reward_params reward;
};

/* A problem loaded once and kept for the service's life (verifications only read it). */
struct cached_problem {
    problem p;
    int registered; /* its row is in the --db database */
};

struct server {
    struct serve_config cfg;
    kv_service *svc;
    serve_queue *queue;
    pthread_t workers[SERVE_MAX_WORKERS];
    int n_workers;
    pthread_mutex_t lock; /* the problem cache, the database and the statistics */
    struct cached_problem **problems;
    int n_problems;
    sqlite3 *db;
    char *token; /* --token-file's token: every request must carry it (NULL: none asked) */
    long verified, requests, refused_full;
    double item_seconds; /* moving average of one verification's time, for Retry-After */
    int batch_max; /* --batch: items of one request for one problem that share a batch */
};

/* One item of a request, as a job of the queue. */
struct verify_job {
    struct verify_request *req;
    struct cached_problem *cp;
    const serve_item_in *in;
    kv_batch *batch; /* the request's batch of its problem (NULL: verified alone) */
    json_t *answer; /* the result with its reward, or {"error": ...} */
    int failed;
};

/* A POST /v1/verify being answered: its connection's thread waits until remaining is 0. */
struct verify_request {
    pthread_mutex_t lock;
    pthread_cond_t done;
    int remaining;
    serve_parsed in;
    struct verify_job *jobs;
    kv_batch **batches; /* ended when every item has its answer */
    int n_batches;
};

/* Per connection (MHD's con_cls): the body as it arrives. */
struct connection_ctx {
    strbuf body;
    int too_big;
};

/* ---- problems ---- */

/* The cached problem of id, loaded on first use; NULL with the reason in err when there is none. */
static struct cached_problem *problem_of(struct server *s, const char *id, strbuf *err)
{
    pthread_mutex_lock(&s->lock);
    struct cached_problem *found = NULL;
    for (int i = 0; i < s->n_problems && !found; i++)
        if (!strcmp(s->problems[i]->p.id, id))
            found = s->problems[i];
    if (!found) {
        struct cached_problem *cp = xcalloc(1, sizeof *cp);
        if (problem_load_by_id(id, &cp->p, err) == 0) {
            s->problems = xrealloc(s->problems, (size_t)(s->n_problems + 1) * sizeof *s->problems);
            s->problems[s->n_problems++] = found = cp;
        } else {
            free(cp);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}

/* ---- recording (--db) ---- */

static int insert_candidate(sqlite3 *db, const char *problem_id, const kv_result *r,
                            int64_t *cid, strbuf *err)
{
    int extract_failed = !strcmp(r->verdict, "extract_error");
    char sha[SHA256_HEX_LEN + 1] = "";
    if (!extract_failed && r->source.len && kc_blob_put_str(db, r->source.buf, sha, err))
        return -1;
    sqlite3_stmt *st = kc_db_prepare(db,
        "INSERT INTO candidates(problem_id, source_sha, origin, extract_error) "
        "VALUES (?, ?, 'serve', ?)", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, problem_id, -1, SQLITE_STATIC);
    kc_bind_text_or_null(st, 2, sha);
    kc_bind_text_or_null(st, 3, extract_failed ? sb_str(&r->message) : NULL);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    *cid = sqlite3_last_insert_rowid(db);
    return rc;
}

/* The candidate and its verification rows, in one transaction. */
static int record_verification(struct server *s, struct cached_problem *cp, const kv_result *r,
                               strbuf *err)
{
    if (!s->db)
        return 0;
    pthread_mutex_lock(&s->lock);
    int64_t cid = 0;
    int rc = kc_db_begin(s->db, err) ||
             (!cp->registered && problem_register(s->db, &cp->p, err)) ||
             insert_candidate(s->db, cp->p.id, r, &cid, err) || kv_record(s->db, cid, r, err) ||
             kc_db_commit(s->db, err);
    if (rc)
        kc_db_rollback(s->db);
    else
        cp->registered = 1;
    pthread_mutex_unlock(&s->lock);
    return rc ? -1 : 0;
}

/* ---- the verification threads ---- */

static void finish_job(struct verify_job *job)
{
    struct verify_request *req = job->req;
    pthread_mutex_lock(&req->lock);
    if (--req->remaining == 0)
        pthread_cond_signal(&req->done);
    pthread_mutex_unlock(&req->lock);
}

static void fail_job(struct verify_job *job, const char *why)
{
    job->answer = json_pack("{s:s, s:s}", "problem", job->in->problem_id, "error", why);
    if (job->in->id)
        json_object_set(job->answer, "id", job->in->id);
    job->failed = 1;
}

static void note_time(struct server *s, double ms)
{
    pthread_mutex_lock(&s->lock);
    s->verified++;
    s->item_seconds = s->verified == 1 ? ms / 1000 : 0.9 * s->item_seconds + 0.1 * ms / 1000;
    pthread_mutex_unlock(&s->lock);
}

static void run_job(struct server *s, struct verify_job *job)
{
    kv_result r;
    kv_result_init(&r);
    strbuf err = STRBUF_INIT;
    double t0 = now_ms();
    if (kv_verify_in(s->svc, job->batch, &job->cp->p, job->in->completion, &r, &err) == 0 &&
        record_verification(s, job->cp, &r, &err) == 0) {
        job->answer = serve_result_json(&job->cp->p, &r, &job->req->in.reward, job->in->id);
        note_time(s, now_ms() - t0);
    } else {
        error("%s: %s", job->in->problem_id, err.buf);
        fail_job(job, err.buf);
    }
    kv_result_free(&r);
    sb_free(&err);
    finish_job(job);
}

static void *verify_thread(void *arg)
{
    struct server *s = arg;
    struct verify_job *job;
    while ((job = serve_queue_pop(s->queue)) != NULL)
        run_job(s, job);
    return NULL;
}

static void abandon_job(void *job, void *arg)
{
    (void)arg;
    fail_job(job, "the service is stopping; this item was not verified");
    finish_job(job);
}

/* ---- HTTP ---- */

static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned status, json_t *body,
                                 int retry_after)
{
    char *text = json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(10));
    json_decref(body);
    if (!text)
        text = xstrdup("{\"error\":\"cannot encode the answer\"}"), status = 500;
    size_t len = strlen(text);
    text = xrealloc(text, len + 2);
    text[len++] = '\n';
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    if (status == 401) /* RFC 6750: the scheme the token goes in */
        MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
    if (retry_after > 0) {
        char secs[16];
        snprintf(secs, sizeof secs, "%d", retry_after);
        MHD_add_response_header(resp, "Retry-After", secs);
    }
    enum MHD_Result rc = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned status, const char *msg)
{
    return send_json(conn, status, json_pack("{s:s}", "error", msg), 0);
}

static enum MHD_Result answer_health(struct server *s, struct MHD_Connection *conn)
{
    pthread_mutex_lock(&s->lock);
    long verified = s->verified, requests = s->requests, refused = s->refused_full;
    pthread_mutex_unlock(&s->lock);
    json_t *o = json_pack("{s:s, s:s, s:b, s:i, s:i, s:{s:i, s:i}, s:I, s:I, s:I, s:o, s:{s:I, s:i, s:I}}",
                          "status", "ok", "version", KC_VERSION, "compile_only",
                          kv_service_gpu_workers(s->svc) == 0, "gpu_workers",
                          kv_service_gpu_workers(s->svc), "verify_threads", s->n_workers, "queue",
                          "length", serve_queue_length(s->queue), "capacity",
                          serve_queue_capacity(s->queue), "requests", (json_int_t)requests,
                          "verified", (json_int_t)verified, "refused_queue_full",
                          (json_int_t)refused, "reward_defaults", serve_reward_json(&s->cfg.reward),
                          "limits", "max_body", (json_int_t)s->cfg.limits.max_body, "max_items",
                          s->cfg.limits.max_items, "max_completion",
                          (json_int_t)s->cfg.limits.max_completion);
    return send_json(conn, 200, o, 0);
}

/* The client key of fair scheduling: its address, and its X-Client-Id when it sends one (many
 * trainers' processes on one host share an address). */
static void client_key(struct MHD_Connection *conn, char *out, size_t size)
{
    char host[NI_MAXHOST] = "?";
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (ci && ci->client_addr)
        getnameinfo(ci->client_addr, ci->client_addr->sa_family == AF_INET6
                                         ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in),
                    host, sizeof host, NULL, 0, NI_NUMERICHOST);
    const char *id = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Client-Id");
    snprintf(out, size, "%s|%.64s", host, id ? id : "");
}

/* Seconds a refused client should wait: the queue ahead of it over the verification threads. */
static int retry_after(struct server *s)
{
    pthread_mutex_lock(&s->lock);
    double per_item = s->item_seconds > 0 ? s->item_seconds : 1;
    pthread_mutex_unlock(&s->lock);
    double secs = ceil(serve_queue_length(s->queue) * per_item / s->n_workers);
    return secs < 1 ? 1 : secs > 120 ? 120 : (int)secs;
}

static void free_request(struct verify_request *req)
{
    for (int i = 0; i < req->in.n; i++)
        json_decref(req->jobs[i].answer);
    free(req->jobs);
    serve_parsed_free(&req->in);
    pthread_mutex_destroy(&req->lock);
    pthread_cond_destroy(&req->done);
    free(req);
}

/* Resolves every item's problem: 0, or 422 with the reason. */
static int resolve_problems(struct server *s, struct verify_request *req, strbuf *err)
{
    for (int i = 0; i < req->in.n; i++) {
        req->jobs[i] = (struct verify_job){.req = req, .in = &req->in.items[i]};
        strbuf why = STRBUF_INIT;
        const char *id = req->in.items[i].problem_id;
        req->jobs[i].cp = problem_of(s, id, &why);
        if (!req->jobs[i].cp) {
            /* the client hears the id; the server's paths and manifest errors stay in its log */
            fprintf(stderr, "kverify serve: problem '%s': %s\n", id, why.buf);
            if (req->in.batch)
                sb_addf(err, "items[%d]: ", i);
            sb_addf(err, "no problem '%s' on this server", id);
            sb_free(&why);
            return 422;
        }
        sb_free(&why);
    }
    return 0;
}

/* The items of the request for one problem, batch_max at a time, form a batch (issue 37): they
 * share secret seeds, dims sets and the reference's runs on a GPU worker. An item alone is
 * verified alone. Batches are ended once every item is answered. */
static void form_batches(struct server *s, struct verify_request *req)
{
    int n = req->in.n, *members = xcalloc((size_t)n, sizeof(*members));
    char *seen = xcalloc((size_t)n, 1);
    req->batches = xcalloc((size_t)n, sizeof(*req->batches));
    for (int i = 0; i < n && s->batch_max > 1; i++) {
        if (seen[i])
            continue;
        int m = 0;
        for (int j = i; j < n; j++)
            if (req->jobs[j].cp == req->jobs[i].cp)
                seen[j] = 1, members[m++] = j;
        for (int k = 0; k + 1 < m; k += s->batch_max) { /* a last chunk of one goes alone */
            kv_batch *b = req->batches[req->n_batches++] = kv_batch_new(s->svc, &req->jobs[i].cp->p);
            for (int q = k; q < m && q < k + s->batch_max; q++)
                req->jobs[members[q]].batch = b;
        }
    }
    free(members);
    free(seen);
}

static void end_batches(struct server *s, struct verify_request *req)
{
    for (int i = 0; i < req->n_batches; i++)
        kv_batch_end(s->svc, req->batches[i]);
    free(req->batches);
    req->batches = NULL;
    req->n_batches = 0;
}

static json_t *request_answer(struct verify_request *req, unsigned *status)
{
    *status = 200;
    if (!req->in.batch) {
        *status = req->jobs[0].failed ? 500 : 200;
        return json_incref(req->jobs[0].answer);
    }
    json_t *results = json_array();
    for (int i = 0; i < req->in.n; i++)
        json_array_append(results, req->jobs[i].answer);
    return json_pack("{s:o, s:o}", "results", results, "reward_params",
                     serve_reward_json(&req->in.reward));
}

static enum MHD_Result answer_verify(struct server *s, struct MHD_Connection *conn,
                                     struct connection_ctx *ctx)
{
    strbuf err = STRBUF_INIT;
    struct verify_request *req = xcalloc(1, sizeof *req);
    pthread_mutex_init(&req->lock, NULL);
    pthread_cond_init(&req->done, NULL);
    enum MHD_Result rc;
    int status = ctx->too_big ? (kc_fail(&err, "request body over the limit of %zu bytes",
                                         s->cfg.limits.max_body), 413)
                              : serve_parse_request(ctx->body.buf, ctx->body.len, &s->cfg.limits,
                                                    &s->cfg.reward, &req->in, &err);
    if (!status) {
        req->jobs = xcalloc((size_t)req->in.n, sizeof *req->jobs);
        status = resolve_problems(s, req, &err);
    }
    if (!status && req->in.n > serve_queue_capacity(s->queue))
        status = 413, kc_fail(&err, "%d items is more than the queue holds (%d)", req->in.n,
                              serve_queue_capacity(s->queue));
    if (status) {
        rc = send_error(conn, (unsigned)status, err.buf);
        goto out;
    }
    char key[NI_MAXHOST + 80];
    client_key(conn, key, sizeof key);
    form_batches(s, req);
    void **jobs = xcalloc((size_t)req->in.n, sizeof *jobs);
    for (int i = 0; i < req->in.n; i++)
        jobs[i] = &req->jobs[i];
    req->remaining = req->in.n;
    int queued = serve_queue_push(s->queue, key, jobs, req->in.n) == 0;
    free(jobs);
    if (!queued) {
        pthread_mutex_lock(&s->lock);
        s->refused_full++;
        pthread_mutex_unlock(&s->lock);
        rc = send_json(conn, 503, json_pack("{s:s}", "error", kc_interrupted()
                           ? "the service is stopping" : "the queue is full; retry later"),
                       retry_after(s));
        goto out;
    }
    pthread_mutex_lock(&req->lock);
    while (req->remaining > 0)
        pthread_cond_wait(&req->done, &req->lock);
    pthread_mutex_unlock(&req->lock);
    end_batches(s, req);
    unsigned http_status;
    json_t *body = request_answer(req, &http_status);
    rc = send_json(conn, http_status, body, 0);
out:
    end_batches(s, req); /* none in flight: refused, or all answered */
    free_request(req);
    sb_free(&err);
    return rc;
}

/* The first call of a request: its route, and a declared body over the limit refused before
 * it is read. Returns 0 to go on reading, or the status to answer at once (msg set). */
/* Whether the request carries the service's token ("Authorization: Bearer TOKEN"), compared in
 * time that does not depend on where it differs. Always when no --token-file was given. */
static int authorized(struct server *s, struct MHD_Connection *conn)
{
    if (!s->token)
        return 1;
    const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7))
        return 0;
    const char *given = h + 7;
    size_t n = strlen(s->token), m = strlen(given);
    unsigned char diff = n != m;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(s->token[i] ^ given[i < m ? i : 0]);
    return diff == 0;
}

static unsigned check_route(struct server *s, struct MHD_Connection *conn, const char *url,
                            const char *method, const char **msg)
{
    if (!authorized(s, conn)) {
        *msg = "missing or wrong token: send \"Authorization: Bearer TOKEN\" with the token of "
               "the service's --token-file (kc_reward.py: KC_REWARD_TOKEN)";
        return 401;
    }
    if (!strcmp(url, "/health")) {
        *msg = "GET /health";
        return strcmp(method, "GET") && strcmp(method, "HEAD") ? 405 : 0;
    }
    if (!strcmp(url, "/v1/verify")) {
        *msg = "POST /v1/verify";
        if (strcmp(method, "POST"))
            return 405;
        const char *length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        if (length && strtoull(length, NULL, 10) > s->cfg.limits.max_body) {
            *msg = "request body over the size limit";
            return 413;
        }
        return 0;
    }
    *msg = "no such endpoint (GET /health, POST /v1/verify)";
    return 404;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    struct server *s = cls;
    struct connection_ctx *ctx = *con_cls;
    if (!ctx) {
        const char *msg = NULL;
        unsigned status = check_route(s, conn, url, method, &msg);
        if (status) {
            if (status == 405)
                return send_json(conn, 405, json_pack("{s:s, s:s}", "error", "method not allowed",
                                                      "allowed", msg), 0);
            return send_error(conn, status, msg);
        }
        *con_cls = xcalloc(1, sizeof(struct connection_ctx));
        return MHD_YES;
    }
    if (*upload_size) {
        if (ctx->body.len + *upload_size > s->cfg.limits.max_body)
            ctx->too_big = 1; /* the rest is read and dropped; the answer is 413 */
        else
            sb_add(&ctx->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    pthread_mutex_lock(&s->lock);
    s->requests++;
    pthread_mutex_unlock(&s->lock);
    if (!strcmp(url, "/health"))
        return answer_health(s, conn);
    return answer_verify(s, conn, ctx);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)conn, (void)toe;
    struct connection_ctx *ctx = *con_cls;
    if (ctx) {
        sb_free(&ctx->body);
        free(ctx);
        *con_cls = NULL;
    }
}

/* ---- start and stop ---- */

static const char serve_usage[] =
    "usage: kverify serve --port P [--host 127.0.0.1] [--token-file FILE] [--compile-only]\n"
    "        [--gpus LIST] [--db FILE]\n"
    "        [--compile-procs N] [--workers N] [--queue N] [--max-items N] [--max-body BYTES]\n"
    "        [--max-completion BYTES] [--max-connections N] [--timeout S]\n"
    "        [--reward-correct F] [--reward-incorrect F] [--speedup-weight F] [--speedup-cap F]\n"
    "        [--suspicious F] [--no-timing] [--n-seeds N] [--timing-cap-ms MS]\n"
    "        [--timing-noise PCT]\n"
    "        [--sanitizer none|memcheck|all] [--hidden N] [--batch N] [--batch-memory MIB]\n"
    "  --port 0 picks a free port; the first line on stdout says where it listens.\n"
    "  --token-file FILE: every request must carry \"Authorization: Bearer TOKEN\", TOKEN the\n"
    "        file's one line (401 without it; kc_reward.py sends $KC_REWARD_TOKEN). A --host\n"
    "        other machines reach, without a token, is warned about: each request runs a\n"
    "        stranger's kernel on this machine's GPU.\n"
    "  --batch N: the items of one request for one problem, N at a time (default 1: none; e.g. 32),\n"
    "        share secret seeds, dims sets and the reference's runs (docs/REWARD_SERVICE.md);\n"
    "        --batch-memory MIB: device memory per GPU for the kept reference outputs (4096).\n"
    "  Exit status: 0 stopped by Ctrl-C or SIGTERM, 4 usage or system error.\n";

/* --gpus LIST: the GPUs the workers use (CUDA_VISIBLE_DEVICES for the GPU workers), one worker
 * each. */
static int gpus_option(const kc_option *opt, const char *list, strbuf *err)
{
    kv_options *o = opt->dest;
    int n = 0;
    for (const char *p = list; *p; p++) {
        if (!(*p >= '0' && *p <= '9') && *p != ',')
            n = -1;
        else if (n >= 0)
            n += *p != ',' && (p == list || p[-1] == ',');
    }
    if (n <= 0)
        return kc_option_fail(opt, err, "takes a comma-separated list of GPU indices, e.g. 0,1, "
                              "not '%s'", list);
    setenv("CUDA_VISIBLE_DEVICES", list, 1);
    o->gpus = n;
    return 0;
}

/* A size option into a size_t (opt->data: unused). */
static int size_option(const kc_option *opt, const char *v, strbuf *err)
{
    char name[64];
    long long n;
    if (kc_parse_int(kc_option_name(opt, name, sizeof name), v, (long long)opt->min,
                     (long long)opt->max, &n, err))
        return -1;
    *(size_t *)opt->dest = (size_t)n;
    return 0;
}

static const kc_command serve_cmd = {"kverify", "serve", serve_usage, 0};

static void parse_serve_options(int argc, char **argv, struct serve_config *cfg, kv_options *o)
{
    int port = -1;
    const kc_option opts[] = {
        KC_OPT_STR("host", 0, &cfg->host),
        KC_OPT_INTEGER("port", 0, &port, 0, 65535),
        KC_OPT_FLAG("compile-only", 0, &o->compile_only),
        KC_OPT_FN("gpus", 0, gpus_option, o, NULL),
        KC_OPT_STR("db", 0, &cfg->db_path),
        KC_OPT_STR("token-file", 0, &cfg->token_file),
        KC_OPT_INTEGER("compile-procs", 0, &o->compile_procs, 1, 64),
        KC_OPT_INTEGER("workers", 0, &cfg->workers, 1, SERVE_MAX_WORKERS),
        KC_OPT_INTEGER("queue", 0, &cfg->queue, 1, 1000000),
        KC_OPT_INTEGER("max-items", 0, &cfg->limits.max_items, 1, 100000),
        {KC_OPT_CALL, "max-body", 0, &cfg->limits.max_body, 1024, 1L << 30, size_option, NULL},
        {KC_OPT_CALL, "max-completion", 0, &cfg->limits.max_completion, 1024, 1L << 30,
         size_option, NULL},
        KC_OPT_INTEGER("max-connections", 0, &cfg->max_connections, 1, 100000),
        KC_OPT_INTEGER("timeout", 0, &cfg->timeout_s, 1, 86400),
        /* the ranges a request's "reward" object has too (serve_reward_check) */
        KC_OPT_NUM("reward-correct", 0, &cfg->reward.correct, -100, 100),
        KC_OPT_NUM("reward-incorrect", 0, &cfg->reward.incorrect, -100, 100),
        KC_OPT_NUM("speedup-weight", 0, &cfg->reward.speedup_weight, 0, 100),
        KC_OPT_NUM("speedup-cap", 0, &cfg->reward.speedup_cap, 1e-9, 1000),
        KC_OPT_NUM("suspicious", 0, &cfg->reward.suspicious_speedup, 1e-9, 1e6),
        KC_OPT_FLAG("no-timing", 0, &o->no_timing),
        KC_OPT_INTEGER("n-seeds", 0, &o->n_seeds, 1, KV_MAX_SEEDS),
        KC_OPT_NUM("timing-cap-ms", 0, &o->timing_cap_ms, 0.001, 3.6e6),
        CLI_VERIFY_OPTIONS(o),
        CLI_BATCH_OPTIONS(o),
        KC_OPT_END_OF_TABLE};
    kc_parse_options(&serve_cmd, opts, argc, argv);
    if (port < 0)
        kc_usage_error("--port P is required (0 picks a free port)");
    cfg->port = port;
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST}, *ai = NULL;
    if (getaddrinfo(cfg->host, NULL, &hints, &ai))
        kc_usage_error("--host takes a numeric address, e.g. 127.0.0.1 or ::1, not '%s'", cfg->host);
    freeaddrinfo(ai);
    strbuf err = STRBUF_INIT;
    if (serve_reward_check(&cfg->reward, &err)) {
        char line[512];
        snprintf(line, sizeof line, "%s", err.buf);
        sb_free(&err);
        kc_usage_error("%s", line);
    }
    sb_free(&err);
}

static struct MHD_Daemon *start_http(struct server *s)
{
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_PASSIVE, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    char port[8];
    snprintf(port, sizeof port, "%d", s->cfg.port);
    int gai = getaddrinfo(s->cfg.host, port, &hints, &ai);
    if (gai) {
        error("--host %s: %s (give a numeric address, e.g. 127.0.0.1 or ::1)", s->cfg.host,
              gai_strerror(gai));
        return NULL;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_POLL | MHD_USE_ERROR_LOG |
                     (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, (uint16_t)s->cfg.port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->cfg.max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->cfg.timeout_s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!d)
        error("cannot listen on %s port %d: %s", s->cfg.host, s->cfg.port, strerror(errno));
    return d;
}

static int start_workers(struct server *s, const kv_options *o)
{
    int n = s->cfg.workers;
    if (n <= 0) /* each compile server and GPU worker busy, with one item ready behind each */
        n = o->compile_procs + 2 * kv_service_gpu_workers(s->svc);
    if (n > SERVE_MAX_WORKERS)
        n = SERVE_MAX_WORKERS;
    for (s->n_workers = 0; s->n_workers < n; s->n_workers++)
        if (pthread_create(&s->workers[s->n_workers], NULL, verify_thread, s))
            return error("cannot start verification threads");
    return 0;
}

static void stop_workers(struct server *s)
{
    serve_queue_close(s->queue, abandon_job, NULL);
    for (int i = 0; i < s->n_workers; i++)
        pthread_join(s->workers[i], NULL);
}

static void free_server(struct server *s)
{
    for (int i = 0; i < s->n_problems; i++)
        problem_free(&s->problems[i]->p), free(s->problems[i]);
    free(s->problems);
    serve_queue_free(s->queue);
    kc_db_close(s->db);
    free(s->token);
    pthread_mutex_destroy(&s->lock);
}

static void print_listening(struct MHD_Daemon *d, struct server *s)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    int port = info ? info->port : s->cfg.port;
    int v6 = strchr(s->cfg.host, ':') != NULL;
    printf("kverify serve: %d verification threads, %d GPU workers%s, queue %d; listening on "
           "http://%s%s%s:%d\n", s->n_workers, kv_service_gpu_workers(s->svc),
           kv_service_gpu_workers(s->svc) ? "" : " (compile only)", serve_queue_capacity(s->queue),
           v6 ? "[" : "", s->cfg.host, v6 ? "]" : "", port);
    fflush(stdout);
}

/* --token-file FILE: its one line is the token every request must carry. A file error names the
 * file; a file others may read is said. */
static int load_token(struct server *s, strbuf *err)
{
    const char *path = s->cfg.token_file;
    strbuf text = STRBUF_INIT;
    if (read_file(path, &text, err)) {
        sb_free(&text);
        return -1;
    }
    sb_trim(&text);
    if (text.len < 16 || strpbrk(text.buf, " \t\r\n")) {
        sb_free(&text);
        return kc_fail(err, "--token-file %s: the token must be one line of at least 16 "
                            "characters without blanks (e.g. openssl rand -hex 32 > %s)", path, path);
    }
    struct stat st;
    if (stat(path, &st) == 0 && (st.st_mode & 077))
        warning("--token-file %s can be read by other users (chmod 600 %s)", path, path);
    s->token = sb_detach(&text);
    return 0;
}

/* Whether host is a loopback address (127.0.0.0/8, ::1): only this machine can connect. */
static int is_loopback(const char *host)
{
    return !strncmp(host, "127.", 4) || !strcmp(host, "::1") || !strcmp(host, "::ffff:127.0.0.1");
}

int cli_serve(int argc, char **argv)
{
    struct server s = {.cfg = {.host = "127.0.0.1", .queue = 1024, .max_connections = 1024,
                               .timeout_s = 60,
                               .limits = {.max_body = 16u << 20, .max_items = 512,
                                          .max_completion = 1u << 20}}};
    kc_reward_defaults(&s.cfg.reward);
    kv_options o;
    kv_options_default(&o);
    parse_serve_options(argc, argv, &s.cfg, &o);
    pthread_mutex_init(&s.lock, NULL);
    signal(SIGPIPE, SIG_IGN); /* a client gone mid-answer is an error return, not a signal */
    strbuf err = STRBUF_INIT;
    int status = 4;
    struct MHD_Daemon *d = NULL;
    if (s.cfg.token_file && load_token(&s, &err)) {
        error("%s", err.buf);
        goto out;
    }
    if (!s.token && !is_loopback(s.cfg.host))
        warning("--host %s takes requests from other machines, and every request runs its "
                "kernel on this machine's GPU: give --token-file FILE so that only clients "
                "with the token are served", s.cfg.host);
    if (s.cfg.db_path && kc_db_open(s.cfg.db_path, KC_DB_CREATE, &s.db, &err)) {
        error("%s", err.buf);
        goto out;
    }
    s.batch_max = o.compile_only ? 1 : o.batch_max;
    if (kv_service_start(&o, &s.svc, &err)) {
        error("%s", err.buf);
        goto out;
    }
    s.queue = serve_queue_new(s.cfg.queue);
    if (start_workers(&s, &o) || !(d = start_http(&s)))
        goto stop;
    print_listening(d, &s);
    while (!kc_interrupted()) /* Ctrl-C or SIGTERM: stop taking work, answer, exit 0 */
        usleep(100 * 1000);
    fprintf(stderr, "kverify serve: stopping (%ld requests, %ld verifications)\n", s.requests,
            s.verified);
    status = 0;
stop:
    stop_workers(&s); /* waiting requests are answered before the HTTP side stops */
    if (d)
        MHD_stop_daemon(d);
    kv_service_stop(s.svc);
out:
    free_server(&s);
    sb_free(&err);
    return status;
}
