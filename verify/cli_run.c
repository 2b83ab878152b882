/* cli_run: `kverify import` (candidate files into a database, pending) and
 * `kverify run` (verify every pending candidate and record the results; many
 * compiles in flight keep the GPU workers fed). */
#include "common/candidate.h"
#include "common/cli.h"
#include "common/db.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/interrupt.h"
#include "common/problem.h"
#include "verify/gpu_client.h"
#include "verify/sanitizer.h"
#include "verify/verify_cli.h"

#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int insert_candidate(sqlite3 *db, const char *problem_id, const char *source, strbuf *err)
{
    char sha[SHA256_HEX_LEN + 1];
    if (kc_blob_put_str(db, source, sha, err))
        return -1;
    sqlite3_stmt *st = kc_db_prepare(db,
        "INSERT INTO candidates(problem_id, source_sha, origin) VALUES (?, ?, 'import')", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, problem_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, sha, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

/* Reads files[0..n) into texts and checks each under the one candidate rule (candidate_source:
 * UTF-8 text, exactly one ```cuda block or a bare .cu file with // @launch lines), so that a
 * file `kverify run` could only call an extract_error is refused here. */
static int read_candidates(char **files, int n, strbuf *texts, strbuf *err)
{
    for (int i = 0; i < n; i++) {
        if (read_file(files[i], &texts[i], err))
            return -1;
        strbuf why = STRBUF_INIT, code = STRBUF_INIT;
        /* the whole file first: candidate_source reads a C string and would stop at a NUL */
        int bad = candidate_check_text(texts[i].buf, texts[i].len, &why) ||
                  candidate_source(texts[i].buf, &code, &why);
        if (bad)
            kc_fail(err, "%s: %s; nothing imported (a candidate file holds one kc-cuda v1 "
                         "candidate: exactly one ```cuda block, or a .cu file with // @launch "
                         "lines, in UTF-8 text)", files[i], why.buf);
        sb_free(&why), sb_free(&code);
        if (bad)
            return -1;
    }
    return 0;
}

int cli_import(int argc, char **argv)
{
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"problem", required_argument, NULL, 'p'},
                                         {"jsonl", required_argument, NULL, 'j'},
                                         {"source", required_argument, NULL, 's'},
                                         {NULL, 0, NULL, 0}};
    const char *db_path = NULL, *problem_id = NULL, *jsonl = NULL, *source = NULL;
    int c;
    optind = 1;
    while ((c = kc_getopt(argc, argv, "d:p:j:s:", opts)) != -1) {
        if (c == 'd')
            db_path = optarg;
        else if (c == 'p')
            problem_id = optarg;
        else if (c == 'j')
            jsonl = optarg;
        else if (c == 's')
            source = optarg;
        else
            return 4;
    }
    if (db_path && jsonl && !problem_id && optind == argc)
        return cli_import_jsonl(db_path, jsonl, source);
    if (!db_path || !problem_id || optind >= argc)
        return error("usage: kverify import --db PATH --problem ID FILE...\n"
                     "       kverify import --db PATH --jsonl FILE [--source NAME]"), 4;
    strbuf err = STRBUF_INIT;
    problem p;
    sqlite3 *db = NULL;
    int status = 4, n = argc - optind, existed = 0;
    strbuf *texts = xcalloc((size_t)n, sizeof(*texts));
    if (problem_load_by_id(problem_id, &p, &err))
        goto out;
    /* every file is read and checked before the database is opened: a refused import creates
     * no database and leaves an existing one untouched */
    if (read_candidates(argv + optind, n, texts, &err))
        goto out_problem;
    existed = access(db_path, F_OK) == 0;
    if (kc_db_open(db_path, KC_DB_CREATE, &db, &err) || kc_db_begin(db, &err) ||
        problem_register(db, &p, &err))
        goto out_db;
    for (int i = 0; i < n; i++)
        if (insert_candidate(db, p.id, texts[i].buf, &err))
            goto out_db;
    if (kc_db_commit(db, &err))
        goto out_db;
    printf("imported %d candidates for %s into %s\n", n, p.id, db_path);
    status = 0;
out_db:
    if (db)
        kc_db_rollback(db);
    kc_db_close(db);
    if (status && db && !existed) /* a database this refused import created */
        kc_db_remove_files(db_path);
out_problem:
    problem_free(&p);
out:
    if (status)
        error("%s", err.buf);
    for (int i = 0; i < n; i++)
        sb_free(&texts[i]);
    free(texts);
    sb_free(&err);
    return status;
}

/* ---- run ---- */

struct pending {
    int64_t id;
    char *problem_id;
    char *source_sha;
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
    int workers;
    int64_t pass_id; /* kverify reverify: the pass each new verification belongs to */
};

static const char pending_sql[] =
    "SELECT id, problem_id, source_sha FROM candidates WHERE status = 'pending' AND "
    "source_sha IS NOT NULL ORDER BY problem_id, id LIMIT ?1";

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
    pthread_mutex_lock(&s->db_lock);
    int rc = kc_db_begin(s->db, err) || kv_record(s->db, c->id, r, err) ||
             (s->pass_id > 0 && tag_pass(s->db, c->id, s->pass_id, err)) ||
             kc_db_commit(s->db, err);
    if (rc)
        kc_db_rollback(s->db);
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
        rc = fetch_source(s, c, &src, &err) || kv_verify(s->svc, &p, src.buf, &r, &err) ||
             record(s, c, &r, &err);
        problem_free(&p);
    }
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

int cli_run(int argc, char **argv)
{
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"compile-only", no_argument, NULL, 'c'},
                                         {"limit", required_argument, NULL, 'l'},
                                         {"threads", required_argument, NULL, 't'},
                                         {"no-timing", no_argument, NULL, 'n'},
                                         {"sanitizer", required_argument, NULL, 'S'},
                                         {"hidden", required_argument, NULL, 'H'},
                                         {"hidden-seed", required_argument, NULL, 'K'},
                                         {"shard", required_argument, NULL, 'N'},
                                         {NULL, 0, NULL, 0}};
    kv_options o;
    kv_options_default(&o);
    const char *db_path = NULL;
    kc_shard shard = {0};
    int limit = 0, threads = 0, c;
    optind = 1;
    while ((c = kc_getopt(argc, argv, "d:cl:t:nS:H:K:N:", opts)) != -1) {
        switch (c) {
        case 'N':
            if (cli_parse_shard(optarg, &shard))
                return 4;
            break;
        case 'd': db_path = optarg; break;
        case 'c': o.compile_only = 1; break;
        case 'l': limit = atoi(optarg); break;
        case 't': threads = atoi(optarg); break;
        case 'n': o.no_timing = 1; break;
        case 'H':
        case 'K':
            if (cli_parse_hidden(c == 'H' ? "--hidden" : "--hidden-seed", optarg, &o))
                return 4;
            break;
        case 'S':
            if (sanitizer_mode_parse(optarg, &o.sanitize))
                return error("--sanitizer takes none, memcheck or all"), 4;
            break;
        default: return 4;
        }
    }
    if (!db_path)
        return error("usage: kverify run --db PATH [--compile-only] [--limit N] [--sanitizer MODE] "
                     "[--shard I/N]"), 4;
    sqlite3 *db = NULL;
    strbuf err = STRBUF_INIT;
    int status = 4;
    /* --shard: every process on this database uses the same count while any is pending */
    if (kc_db_open(db_path, KC_DB_EXISTING, &db, &err) || kc_shard_claim_verify(db, &shard, &err))
        error("%s", err.buf);
    else
        status = cli_verify_selected(db, &o, pending_sql, 0, limit, threads, "pending", &shard);
    kc_db_close(db);
    if (kc_interrupted())
        kc_interrupt_print_resume(stdout);
    sb_free(&err);
    return status;
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
    s.start_ms = now_ms();
    run_all(&s, threads > 0 ? threads : o.compile_procs + 2);
    double secs = (now_ms() - s.start_ms) / 1000;
    printf("verified %d of %d %s candidates in %.1f s (%.2f candidates/s), %d correct, "
           "%d errors\n", s.done, s.n, what, secs, secs > 0 ? s.done / secs : 0.0, s.correct, s.failed);
    if (!o.compile_only && secs > 0)
        printf("GPU workers busy %.1f%% of the wall time (%d worker%s); compile time %.1f s in total\n",
               100.0 * s.gpu_ms / 1000 / (secs * kv_service_gpu_workers(s.svc)),
               kv_service_gpu_workers(s.svc), kv_service_gpu_workers(s.svc) == 1 ? "" : "s",
               s.compile_ms / 1000);
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
