/* cli_verify_common: verifying a selection of stored candidates with many compiles in flight
 * (keeping the GPU workers fed) and recording each result; shared by `kverify run`
 * (cli_run.c) and `kverify reverify` (cli_reverify.c). Consecutive candidates of one problem
 * (the selection is ordered by problem), at most --batch of them, form a batch (verify.h
 * kv_batch): created when its first candidate starts, ended when its last one is done. */
#include "common/candidate.h"
#include "common/cli.h"
#include "common/db.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/interrupt.h"
#include "common/problem.h"
#include "verify/cli/verify_cli.h"

#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pending {
    int64_t id;
    char *problem_id;
    char *source_sha;
    int group; /* its batch in run_state.groups (-1: verified alone) */
};

/* A batch of the run: its candidates are consecutive in the selection. */
struct group {
    kv_batch *batch; /* NULL until its first candidate starts, and again once ended */
    int remaining;   /* its candidates not yet done */
};

struct run_state {
    sqlite3 *db;
    pthread_mutex_t db_lock;
    kv_service *svc;
    struct pending *items;
    int n, next;
    int done, failed, correct;
    int left_pending; /* given up because of an interrupt: no verdict recorded */
    double start_ms, gpu_ms, compile_ms;
    double db_ms, db_wait_ms; /* recording results: writing (under the lock), waiting for it */
    int workers;
    int64_t pass_id; /* kverify reverify: the pass each new verification belongs to */
    struct group *groups;
    int n_groups;
};

/* Splits the selection into batches: runs of consecutive candidates of one problem, at most
 * max each; a run of one is verified alone. */
static void form_groups(struct run_state *s, int max)
{
    s->groups = xcalloc((size_t)s->n + 1, sizeof(*s->groups));
    for (int i = 0; i < s->n;) {
        int j = i + 1;
        while (j < s->n && j - i < max && strcmp(s->items[j].problem_id, s->items[i].problem_id) == 0)
            j++;
        for (int k = i; k < j; k++)
            s->items[k].group = j - i > 1 ? s->n_groups : -1;
        if (j - i > 1)
            s->groups[s->n_groups++].remaining = j - i;
        i = j;
    }
}

/* The candidate's batch, created by the first of its candidates to start (NULL: alone). */
static kv_batch *group_batch(struct run_state *s, const struct pending *c, const problem *p)
{
    if (c->group < 0)
        return NULL;
    pthread_mutex_lock(&s->db_lock);
    struct group *g = &s->groups[c->group];
    if (!g->batch && g->remaining > 0)
        g->batch = kv_batch_new(s->svc, p);
    kv_batch *b = g->batch;
    pthread_mutex_unlock(&s->db_lock);
    return b;
}

/* The candidate is done (whatever became of it): the last of its batch ends the batch. */
static void group_done(struct run_state *s, const struct pending *c)
{
    if (c->group < 0)
        return;
    pthread_mutex_lock(&s->db_lock);
    struct group *g = &s->groups[c->group];
    kv_batch *ended = --g->remaining == 0 ? g->batch : NULL;
    if (ended)
        g->batch = NULL;
    pthread_mutex_unlock(&s->db_lock);
    kv_batch_end(s->svc, ended);
}

/* Batches whose candidates were not all started (an interrupt) end here. */
static void end_groups(struct run_state *s)
{
    for (int i = 0; i < s->n_groups; i++) {
        kv_batch_end(s->svc, s->groups[i].batch);
        s->groups[i].batch = NULL;
    }
    free(s->groups);
    s->groups = NULL;
}


/* Runs sql (columns id, problem_id, source_sha; ?1 the limit, ?2 the pass). */
static int load_pending(sqlite3 *db, const char *sql, int64_t pass_id, int limit,
                        const kc_shard *shard, struct pending **out, int *n, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, sql, err);
    if (!st)
        return -1;
    int sharded = shard && shard->count; /* the limit counts this shard's candidates */
    sqlite3_bind_int(st, 1, limit > 0 && !sharded ? limit : -1);
    if (sqlite3_bind_parameter_count(st) >= 2)
        sqlite3_bind_int64(st, 2, pass_id);
    int cap = 0;
    *out = NULL, *n = 0;
    while ((limit <= 0 || *n < limit) && sqlite3_step(st) == SQLITE_ROW) {
        if (!cli_shard_holds(db, shard, sqlite3_column_int64(st, 0),
                             (const char *)sqlite3_column_text(st, 1)))
            continue;
        if (*n == cap)
            cap = cap ? cap * 2 : 64, *out = xrealloc(*out, (size_t)cap * sizeof(struct pending));
        struct pending *p = &(*out)[(*n)++];
        p->id = sqlite3_column_int64(st, 0);
        p->problem_id = xstrdup((const char *)sqlite3_column_text(st, 1));
        p->source_sha = xstrdup((const char *)sqlite3_column_text(st, 2));
    }
    sqlite3_finalize(st);
    return 0;
}

static int fetch_source(struct run_state *s, const struct pending *c, strbuf *src, strbuf *err)
{
    pthread_mutex_lock(&s->db_lock);
    int rc = kc_blob_get(s->db, c->source_sha, src, err);
    pthread_mutex_unlock(&s->db_lock);
    return rc;
}

/* Marks the verification just recorded for candidate cid as part of reverify pass pass_id. */
static int tag_pass(sqlite3 *db, int64_t cid, int64_t pass_id, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db,
        "UPDATE verifications SET reverify_pass = ?1 WHERE id = "
        "(SELECT max(id) FROM verifications WHERE candidate_id = ?2)", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, pass_id);
    sqlite3_bind_int64(st, 2, cid);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

static int record(struct run_state *s, const struct pending *c, const kv_result *r, strbuf *err)
{
    double t0 = now_ms();
    pthread_mutex_lock(&s->db_lock);
    double t1 = now_ms();
    int rc = kc_db_begin(s->db, err) || kv_record(s->db, c->id, r, err) ||
             (s->pass_id > 0 && tag_pass(s->db, c->id, s->pass_id, err)) ||
             kc_db_commit(s->db, err);
    if (rc)
        kc_db_rollback(s->db);
    s->db_wait_ms += t1 - t0;
    s->db_ms += now_ms() - t1;
    s->done++;
    s->correct += strcmp(r->verdict, "correct") == 0;
    s->gpu_ms += r->gpu_ms;
    s->compile_ms += r->compile_ms;
    pthread_mutex_unlock(&s->db_lock);
    return rc ? -1 : 0;
}

static void verify_one(struct run_state *s, const struct pending *c)
{
    strbuf err = STRBUF_INIT, src = STRBUF_INIT;
    problem p;
    kv_result r;
    kv_result_init(&r);
    int rc = problem_load_by_id(c->problem_id, &p, &err);
    if (rc == 0) {
        rc = fetch_source(s, c, &src, &err) ||
             kv_verify_in(s->svc, group_batch(s, c, &p), &p, src.buf, &r, &err) ||
             record(s, c, &r, &err);
        problem_free(&p);
    }
    group_done(s, c);
    if (rc && kc_interrupted()) {
        printf("candidate %lld %-36s left unverified (interrupted: %s)\n", (long long)c->id,
               c->problem_id, err.buf);
        fflush(stdout);
        pthread_mutex_lock(&s->db_lock);
        s->left_pending++;
        pthread_mutex_unlock(&s->db_lock);
    } else if (rc) {
        error("candidate %lld: %s", (long long)c->id, err.buf);
        pthread_mutex_lock(&s->db_lock);
        s->failed++;
        pthread_mutex_unlock(&s->db_lock);
    } else {
        printf("candidate %lld %-36s %s\n", (long long)c->id, c->problem_id, r.verdict);
        fflush(stdout);
    }
    kv_result_free(&r);
    sb_free(&err), sb_free(&src);
}

static void *run_thread(void *arg)
{
    struct run_state *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->db_lock);
        int i = kc_interrupted() ? s->n : s->next++; /* interrupted: start nothing new */
        pthread_mutex_unlock(&s->db_lock);
        if (i >= s->n)
            return NULL;
        verify_one(s, &s->items[i]);
    }
}

static void run_all(struct run_state *s, int threads)
{
    pthread_t tid[64];
    if (threads > 64)
        threads = 64;
    for (int t = 0; t < threads; t++)
        pthread_create(&tid[t], NULL, run_thread, s);
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
}


int cli_verify_selected(sqlite3 *db, kv_options *opts, const char *sql, int64_t pass_id, int limit,
                        int threads, const char *what, const kc_shard *shard)
{
    const kv_options o = *opts;
    struct run_state s = {.db = db, .pass_id = pass_id};
    strbuf err = STRBUF_INIT;
    pthread_mutex_init(&s.db_lock, NULL);
    int status = 4;
    if (load_pending(s.db, sql, pass_id, limit, shard, &s.items, &s.n, &err) ||
        kv_service_start(&o, &s.svc, &err)) {
        error("%s", err.buf);
        goto out;
    }
    form_groups(&s, o.compile_only ? 1 : o.batch_max);
    s.start_ms = now_ms();
    /* enough threads that every compile server and every GPU worker (two queued each) has work */
    run_all(&s, threads > 0 ? threads : o.compile_procs + 2 * kv_service_gpu_workers(s.svc));
    end_groups(&s);
    double secs = (now_ms() - s.start_ms) / 1000;
    printf("verified %d of %d %s candidates in %.1f s (%.2f candidates/s), %d correct, "
           "%d errors\n", s.done, s.n, what, secs, secs > 0 ? s.done / secs : 0.0, s.correct, s.failed);
    if (!o.compile_only && secs > 0)
        printf("GPU workers busy %.1f%% of the wall time (%d worker%s); compile time %.1f s in total\n",
               100.0 * s.gpu_ms / 1000 / (secs * kv_service_gpu_workers(s.svc)),
               kv_service_gpu_workers(s.svc), kv_service_gpu_workers(s.svc) == 1 ? "" : "s",
               s.compile_ms / 1000);
    if (secs > 0) /* the one writer every client thread shares (issue 37's multi-GPU table) */
        printf("database: %.1f s writing results (%.1f%% of the wall time), %.1f s waited for it\n",
               s.db_ms / 1000, 100.0 * s.db_ms / 1000 / secs, s.db_wait_ms / 1000);
    status = s.failed ? 1 : 0;
    if (kc_interrupted()) {
        printf("interrupted: %d of %d %s candidates not verified (%d given up in flight, none of "
               "them labelled)\n", s.n - s.done, s.n, what, s.left_pending);
        status = KC_EXIT_INTERRUPTED;
    }
out:
    kv_service_stop(s.svc);
    for (int i = 0; i < s.n; i++)
        free(s.items[i].problem_id), free(s.items[i].source_sha);
    free(s.items);
    pthread_mutex_destroy(&s.db_lock);
    sb_free(&err);
    return status;
}
