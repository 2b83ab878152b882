/* run: a collection as a whole (see loop.h): loading and registering the problems, the jobs
 * (one per trajectory), the run row and its lock file, resuming or reopening trajectories, the
 * endpoints and the LLM client, the worker threads (loop.c runs each trajectory), the dry run,
 * the preflight checks and the summary. */
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
#include "verify/service/gpu_probe.h"
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

/* The jobs, and the problems they cover (a shard holds some of the selection's). */
static void make_jobs(collector *c)
{
    c->jobs = xcalloc((size_t)(c->n_problems * c->cfg->samples), sizeof *c->jobs);
    /* Samples of a problem next to each other: a problem finishes early. --shard I/N: only
     * shard I's trajectories (common/shard.h). */
    c->n_jobs = 0;
    c->n_job_problems = 0;
    for (int p = 0; p < c->n_problems; p++) {
        int before = c->n_jobs;
        for (int s = 0; s < c->cfg->samples; s++)
            if (kc_shard_holds(&c->cfg->shard, c->problems[p].id, s))
                c->jobs[c->n_jobs++] = (job){p, s};
        c->n_job_problems += c->n_jobs > before;
    }
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
    llm_client_options opt = cfg->client;
    opt.spread_start = (unsigned)cfg->shard.index; /* the shards of an array start apart */
    llm_client_init(&c->client, c->endpoints, c->n_endpoints, &opt, &c->limits, c->cancel);
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
    strbuf of = STRBUF_INIT; /* a shard's part of the selection */
    if (cfg->shard.count)
        sb_addf(&of, ", shard %s: %d of the problems", shard.buf, c->n_job_problems);
    progress_note(c->progress, "starting new run %lld (key %.12s) on %s, model %s%s: it will add "
                  "%ld trajectories (%d problems x %d samples%s)", (long long)c->run_id, key,
                  c->endpoint_label, cfg->model, synthetic, adds, c->n_problems, cfg->samples,
                  sb_str(&of));
    sb_free(&of);
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
        c.sum.problems = c.n_job_problems;
        c.sum.problems_selected = c.n_problems;
        c.sum.shard = cfg->shard;
        c.sum.trajectories = c.n_jobs;
        c.progress = progress_start(&c.sum, &c.lock, cfg->compile_only, cfg->verbose);
        progress_watch_verifier(c.progress, &c.verifier);
        rc = register_problems(&c, err);
    }
    if (rc == 0)
        rc = open_run(&c, err);
    if (rc == 0)
        rc = loop_load_problem_clocks(&c, err);
    if (rc == 0) {
        int n = cfg->concurrency < c.n_jobs ? cfg->concurrency : c.n_jobs;
        pthread_t *threads = xcalloc((size_t)(n ? n : 1), sizeof *threads);
        for (int i = 0; i < n; i++)
            pthread_create(&threads[i], NULL, loop_worker, &c);
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
    if (!cfg->compile_only && !kv_driver_present())
        return kc_fail(err, KV_NO_DRIVER_MESSAGE "; kcollect verifies every answer on a GPU: "
                            "use --compile-only on a machine without one");
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
    fprintf(out, "  problems       %d", s->problems);
    if (s->shard.count) {
        strbuf shard = STRBUF_INIT;
        kc_shard_describe(&s->shard, &shard);
        fprintf(out, " (shard %s's, of the %d selected)", sb_str(&shard), s->problems_selected);
        sb_free(&shard);
    }
    fprintf(out, ", solved %d%s\n", s->problems_solved,
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
