/* record: kcollect's database rows (see record.h). */
#include "collect/record.h"
#include "collect/config.h"
#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

static int step_done(sqlite3 *db, sqlite3_stmt *st, strbuf *err)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return kc_fail(err, "database: %s", sqlite3_errmsg(db));
    return 0;
}

/* A run recorded before identities were stored whose config has this identity: adopted. */
static int64_t find_legacy_run(sqlite3 *db, const run_record *r)
{
    sqlite3_stmt *st = kc_db_prepare(db, "SELECT id, config_json FROM runs WHERE tool = 'kcollect' "
                                         "AND identity_json IS NULL ORDER BY id", NULL);
    if (!st)
        return 0;
    int64_t found = 0;
    strbuf id = STRBUF_INIT;
    while (!found && sqlite3_step(st) == SQLITE_ROW)
        if (config_identity_from_json((const char *)sqlite3_column_text(st, 1), &id) == 0 &&
            !strcmp(id.buf, r->identity_json))
            found = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sb_free(&id);
    return found;
}

int rec_run_open(sqlite3 *db, const run_record *r, int64_t *run_id, int *resumed, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, "SELECT id FROM runs WHERE run_key = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, r->run_key, -1, SQLITE_STATIC);
    *resumed = sqlite3_step(st) == SQLITE_ROW;
    if (*resumed)
        *run_id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (!*resumed && (*run_id = find_legacy_run(db, r)) > 0)
        *resumed = 1;
    if (*resumed) {
        st = kc_db_prepare(db, "UPDATE runs SET status = 'running', finished_at = NULL, "
                               "run_key = ?, identity_json = ? WHERE id = ?", err);
        if (!st)
            return -1;
        sqlite3_bind_text(st, 1, r->run_key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, r->identity_json, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, *run_id);
        return step_done(db, st, err);
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    st = kc_db_prepare(db,
                       "INSERT INTO runs(run_key, tool, tool_version, config_json, model, endpoint, "
                       "api, host, identity_json, synthetic, server) "
                       "VALUES (?, 'kcollect', ?, ?, ?, ?, ?, ?, ?, ?, ?)", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, r->run_key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, KC_VERSION, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, r->config_json, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, r->model, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, r->endpoint, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, r->api, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, host, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, r->identity_json, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 9, r->server != NULL);
    kc_bind_text_or_null(st, 10, r->server);
    if (step_done(db, st, err))
        return -1;
    *run_id = sqlite3_last_insert_rowid(db);
    return 0;
}

int64_t rec_run_previous(sqlite3 *db, int64_t run_id, strbuf *identity)
{
    sb_reset(identity);
    sqlite3_stmt *st = kc_db_prepare(db, "SELECT id, identity_json, config_json FROM runs "
                                         "WHERE tool = 'kcollect' AND id <> ? ORDER BY id DESC LIMIT 1", NULL);
    if (!st)
        return 0;
    sqlite3_bind_int64(st, 1, run_id);
    int64_t id = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        id = sqlite3_column_int64(st, 0);
        if (sqlite3_column_type(st, 1) != SQLITE_NULL)
            sb_adds(identity, (const char *)sqlite3_column_text(st, 1));
        else if (config_identity_from_json((const char *)sqlite3_column_text(st, 2), identity) < 0)
            sb_reset(identity);
    }
    sqlite3_finalize(st);
    return id;
}

int rec_run_close(sqlite3 *db, int64_t run_id, const char *status, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db,
        "UPDATE runs SET status = ?, finished_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, status, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, run_id);
    return step_done(db, st, err);
}

static char *blob_text(sqlite3 *db, const unsigned char *sha)
{
    if (!sha)
        return NULL;
    strbuf sb = STRBUF_INIT;
    if (kc_blob_get(db, (const char *)sha, &sb, NULL) < 0) {
        sb_free(&sb);
        return NULL;
    }
    return sb_detach(&sb);
}

static char *col_strdup(sqlite3_stmt *st, int col)
{
    const unsigned char *s = sqlite3_column_text(st, col);
    return s ? xstrdup((const char *)s) : NULL;
}

static int load_turns(sqlite3 *db, trajectory_state *t, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db,
        "SELECT t.prompt_sha, r.content_sha, r.reasoning_sha, t.feedback_sha, "
        "       coalesce(t.tokens_in, 0) + coalesce(t.tokens_out, 0), coalesce(t.wall_ms, 0), "
        "       v.verdict, tm.speedup_eager, c.source_sha, t.action, t.plan_json, t.step "
        "FROM turns t LEFT JOIN responses r ON r.id = t.response_id "
        "LEFT JOIN candidates c ON c.id = t.candidate_id "
        "LEFT JOIN v_latest_verification v ON v.candidate_id = t.candidate_id "
        "LEFT JOIN timings tm ON tm.verification_id = v.id "
        "WHERE t.trajectory_id = ? ORDER BY t.turn_index", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, t->id);
    int cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (t->n_turns == cap) {
            cap = cap ? 2 * cap : 8;
            t->turns = xrealloc(t->turns, (size_t)cap * sizeof *t->turns);
        }
        turn_history *h = &t->turns[t->n_turns++];
        h->prompt = blob_text(db, sqlite3_column_text(st, 0));
        h->answer = blob_text(db, sqlite3_column_text(st, 1));
        h->reasoning = blob_text(db, sqlite3_column_text(st, 2));
        h->feedback = blob_text(db, sqlite3_column_text(st, 3));
        h->source = blob_text(db, sqlite3_column_text(st, 8));
        h->verdict = col_strdup(st, 6);
        h->action = col_strdup(st, 9);
        h->plan_json = col_strdup(st, 10);
        h->step = sqlite3_column_int(st, 11);
        t->tokens += sqlite3_column_int64(st, 4);
        t->wall_ms += sqlite3_column_double(st, 5);
        const char *verdict = (const char *)sqlite3_column_text(st, 6);
        if (verdict && (!strcmp(verdict, "correct") || !strcmp(verdict, "compiled")))
            t->any_correct = 1;
        if (sqlite3_column_type(st, 7) != SQLITE_NULL && sqlite3_column_double(st, 7) > t->best_speedup)
            t->best_speedup = sqlite3_column_double(st, 7);
    }
    sqlite3_finalize(st);
    return 0;
}

/* A trajectory that ended because the endpoint refused its request (stop_reason 'error') is
 * open again for a rerun: the user may have fixed the cause. 1 when reopened. */
static int reopen_refused(sqlite3 *db, int64_t traj_id, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, "UPDATE trajectories SET status = 'open', stop_reason = NULL, "
                                         "finished_at = NULL WHERE id = ? AND stop_reason = 'error'", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, traj_id);
    if (step_done(db, st, err))
        return -1;
    return sqlite3_changes(db) > 0;
}

int rec_trajectory_load(sqlite3 *db, int64_t run_id, const char *problem_id, int sample,
                        trajectory_state *t, strbuf *err)
{
    memset(t, 0, sizeof *t);
    sqlite3_stmt *st = kc_db_prepare(db,
        "INSERT OR IGNORE INTO trajectories(run_id, problem_id, sample_index) VALUES (?, ?, ?)", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, problem_id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, sample);
    if (step_done(db, st, err))
        return -1;
    st = kc_db_prepare(db, "SELECT id, status FROM trajectories WHERE run_id = ? AND problem_id = ? "
                           "AND sample_index = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, problem_id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, sample);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return kc_fail(err, "database: trajectory row missing");
    }
    t->id = sqlite3_column_int64(st, 0);
    t->done = !strcmp((const char *)sqlite3_column_text(st, 1), "done");
    sqlite3_finalize(st);
    if (t->done && reopen_refused(db, t->id, err) == 1)
        t->done = 0;
    return load_turns(db, t, err);
}

void trajectory_state_free(trajectory_state *t)
{
    for (int i = 0; i < t->n_turns; i++) {
        free(t->turns[i].prompt);
        free(t->turns[i].answer);
        free(t->turns[i].reasoning);
        free(t->turns[i].feedback);
        free(t->turns[i].source);
        free(t->turns[i].verdict);
        free(t->turns[i].action);
        free(t->turns[i].plan_json);
    }
    free(t->turns);
    memset(t, 0, sizeof *t);
}

int rec_trajectory_finish(sqlite3 *db, int64_t traj_id, const char *stop_reason, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db,
        "UPDATE trajectories SET status = 'done', stop_reason = ?, "
        "finished_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, stop_reason, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, traj_id);
    return step_done(db, st, err);
}

int rec_cache_lookup(sqlite3 *db, const char *request_hash, int64_t *response_id, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, "SELECT response_id FROM response_cache WHERE request_hash = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, request_hash, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found)
        *response_id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return found;
}

int rec_response_load(sqlite3 *db, int64_t response_id, llm_reply *r, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db,
        "SELECT content_sha, reasoning_sha, finish_reason, prompt_tokens, completion_tokens, "
        "reasoning_tokens, http_status, truncated FROM responses WHERE id = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, response_id);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return kc_fail(err, "database: response %lld missing", (long long)response_id);
    }
    llm_reply_reset(r);
    int rc = 0;
    const char *content = (const char *)sqlite3_column_text(st, 0);
    const char *reasoning = (const char *)sqlite3_column_text(st, 1);
    if (content && kc_blob_get(db, content, &r->content, err) < 0)
        rc = -1;
    if (rc == 0 && reasoning && kc_blob_get(db, reasoning, &r->reasoning, err) < 0)
        rc = -1;
    const char *finish = (const char *)sqlite3_column_text(st, 2);
    snprintf(r->finish_reason, sizeof r->finish_reason, "%s", finish ? finish : "");
    r->prompt_tokens = sqlite3_column_int64(st, 3);
    r->completion_tokens = sqlite3_column_int64(st, 4);
    r->reasoning_tokens = sqlite3_column_int64(st, 5);
    r->http_status = sqlite3_column_int(st, 6);
    r->truncated = sqlite3_column_int(st, 7);
    r->outcome = LLM_OK;
    sqlite3_finalize(st);
    return rc;
}

int rec_response_used(sqlite3 *db, int64_t response_id)
{
    sqlite3_stmt *st = kc_db_prepare(db, "SELECT 1 FROM turns WHERE response_id = ? LIMIT 1", NULL);
    if (!st)
        return 0;
    sqlite3_bind_int64(st, 1, response_id);
    int used = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return used;
}

int64_t rec_response_request(sqlite3 *db, int64_t response_id)
{
    sqlite3_stmt *st = kc_db_prepare(db, "SELECT request_id FROM responses WHERE id = ?", NULL);
    if (!st)
        return 0;
    sqlite3_bind_int64(st, 1, response_id);
    int64_t id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return id;
}

static int put_optional(sqlite3 *db, const strbuf *sb, char *sha, strbuf *err)
{
    sha[0] = 0;
    if (!sb->len)
        return 0;
    return kc_blob_put(db, sb->buf, sb->len, sha, err);
}

static int insert_request(sqlite3 *db, const response_record *rr, int64_t *request_id, strbuf *err)
{
    char body_sha[SHA256_HEX_LEN + 1];
    if (kc_blob_put_str(db, rr->body, body_sha, err))
        return -1;
    sqlite3_stmt *st = kc_db_prepare(db,
        "INSERT INTO requests(request_hash, endpoint, api, model, body_sha) VALUES (?,?,?,?,?)", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, rr->request_hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, rr->endpoint, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, rr->api, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, rr->model, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, body_sha, -1, SQLITE_STATIC);
    if (step_done(db, st, err))
        return -1;
    *request_id = sqlite3_last_insert_rowid(db);
    return 0;
}

static int insert_response(sqlite3 *db, const response_record *rr, int64_t request_id,
                           int64_t *response_id, strbuf *err)
{
    const llm_reply *r = rr->reply;
    char raw[SHA256_HEX_LEN + 1], content[SHA256_HEX_LEN + 1], reasoning[SHA256_HEX_LEN + 1];
    if (put_optional(db, &r->raw, raw, err) || kc_blob_put_str(db, sb_str(&r->content), content, err) ||
        put_optional(db, &r->reasoning, reasoning, err))
        return -1;
    sqlite3_stmt *st = kc_db_prepare(db,
        "INSERT INTO responses(request_id, http_status, raw_sha, content_sha, reasoning_sha, "
        "finish_reason, prompt_tokens, completion_tokens, reasoning_tokens, latency_ms, cost_usd, "
        "attempts, from_cache, truncated, error, answer_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, request_id);
    sqlite3_bind_int(st, 2, r->http_status);
    kc_bind_text_or_null(st, 3, raw);
    sqlite3_bind_text(st, 4, content, -1, SQLITE_STATIC);
    kc_bind_text_or_null(st, 5, reasoning);
    kc_bind_text_or_null(st, 6, r->finish_reason);
    sqlite3_bind_int64(st, 7, r->prompt_tokens);
    sqlite3_bind_int64(st, 8, r->completion_tokens);
    sqlite3_bind_int64(st, 9, r->reasoning_tokens);
    sqlite3_bind_double(st, 10, rr->from_cache ? 0 : r->latency_ms);
    sqlite3_bind_double(st, 11, rr->cost_usd);
    sqlite3_bind_int(st, 12, rr->from_cache ? 0 : r->attempts);
    sqlite3_bind_int(st, 13, rr->from_cache);
    sqlite3_bind_int(st, 14, r->truncated);
    kc_bind_text_or_null(st, 15, rr->from_cache ? NULL : sb_str(&r->attempt_errors)); /* failed attempts before this answer */
    if (r->answer_bytes > 0)
        sqlite3_bind_int64(st, 16, r->answer_bytes);
    else
        sqlite3_bind_null(st, 16);
    if (step_done(db, st, err))
        return -1;
    *response_id = sqlite3_last_insert_rowid(db);
    return 0;
}

int rec_store_response(sqlite3 *db, const response_record *rr, int64_t *request_id,
                       int64_t *response_id, strbuf *err)
{
    if (kc_db_begin(db, err))
        return -1;
    sqlite3_stmt *st = NULL;
    int rc = insert_request(db, rr, request_id, err) ||
             insert_response(db, rr, *request_id, response_id, err);
    if (rc == 0 && !rr->from_cache) {
        st = kc_db_prepare(db, "INSERT OR IGNORE INTO response_cache(request_hash, response_id) VALUES (?, ?)", err);
        if (!st)
            rc = -1;
        else {
            sqlite3_bind_text(st, 1, rr->request_hash, -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 2, *response_id);
            rc = step_done(db, st, err);
        }
    }
    if (rc) {
        kc_db_rollback(db);
        return -1;
    }
    return kc_db_commit(db, err);
}

int rec_candidate(sqlite3 *db, const char *problem_id, const char *source,
                  const char *extract_error, int64_t *candidate_id, strbuf *err)
{
    char sha[SHA256_HEX_LEN + 1] = "";
    if (source && *source && kc_blob_put_str(db, source, sha, err))
        return -1;
    sqlite3_stmt *st = kc_db_prepare(db,
        "INSERT INTO candidates(problem_id, source_sha, origin, extract_error) VALUES (?, ?, 'turn', ?)", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, problem_id, -1, SQLITE_STATIC);
    kc_bind_text_or_null(st, 2, sha);
    kc_bind_text_or_null(st, 3, extract_error);
    if (step_done(db, st, err))
        return -1;
    *candidate_id = sqlite3_last_insert_rowid(db);
    return 0;
}

int rec_turn(sqlite3 *db, const turn_record *t, strbuf *err)
{
    char prompt[SHA256_HEX_LEN + 1] = "", feedback[SHA256_HEX_LEN + 1] = "";
    if ((t->prompt && kc_blob_put_str(db, t->prompt, prompt, err)) ||
        (t->feedback && *t->feedback && kc_blob_put_str(db, t->feedback, feedback, err)))
        return -1;
    sqlite3_stmt *st = kc_db_prepare(db,
        "INSERT INTO turns(trajectory_id, turn_index, prompt_sha, request_id, response_id, "
        "candidate_id, feedback_sha, tokens_in, tokens_out, latency_ms, cost_usd, started_at, "
        "wall_ms, action, step, plan_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, t->trajectory_id);
    sqlite3_bind_int(st, 2, t->turn_index);
    kc_bind_text_or_null(st, 3, prompt);
    sqlite3_bind_int64(st, 4, t->request_id);
    sqlite3_bind_int64(st, 5, t->response_id);
    if (t->candidate_id)
        sqlite3_bind_int64(st, 6, t->candidate_id);
    else
        sqlite3_bind_null(st, 6);
    kc_bind_text_or_null(st, 7, feedback);
    sqlite3_bind_int64(st, 8, t->tokens_in);
    sqlite3_bind_int64(st, 9, t->tokens_out);
    sqlite3_bind_double(st, 10, t->latency_ms);
    sqlite3_bind_double(st, 11, t->cost_usd);
    kc_bind_text_or_null(st, 12, t->started_at);
    sqlite3_bind_double(st, 13, t->wall_ms);
    kc_bind_text_or_null(st, 14, t->action);
    if (t->step > 0)
        sqlite3_bind_int(st, 15, t->step);
    else
        sqlite3_bind_null(st, 15);
    kc_bind_text_or_null(st, 16, t->plan_json);
    return step_done(db, st, err);
}

int rec_answer_received(sqlite3 *db, const char *request_hash, const char *endpoint,
                        const char *api, int stream, const strbuf *raw, strbuf *err)
{
    char sha[SHA256_HEX_LEN + 1];
    if (kc_db_begin(db, err))
        return -1;
    sqlite3_stmt *st = NULL;
    int rc = kc_blob_put(db, sb_str(raw), raw->len, sha, err);
    if (rc == 0 && !(st = kc_db_prepare(db,
            "INSERT OR REPLACE INTO answers_received(request_hash, endpoint, api, stream, raw_sha) "
            "VALUES (?, ?, ?, ?, ?)", err)))
        rc = -1;
    if (rc == 0) {
        sqlite3_bind_text(st, 1, request_hash, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, endpoint, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, api, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 4, stream);
        sqlite3_bind_text(st, 5, sha, -1, SQLITE_STATIC);
        rc = step_done(db, st, err);
    }
    if (rc) {
        kc_db_rollback(db);
        return -1;
    }
    return kc_db_commit(db, err);
}

int rec_answer_received_load(sqlite3 *db, const char *request_hash, strbuf *endpoint,
                             enum llm_api *api, int *stream, strbuf *raw, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, "SELECT endpoint, api, stream, raw_sha FROM answers_received "
                                         "WHERE request_hash = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, request_hash, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW, rc = 0;
    if (found) {
        sb_reset(endpoint);
        sb_adds(endpoint, (const char *)sqlite3_column_text(st, 0));
        if (llm_api_parse((const char *)sqlite3_column_text(st, 1), api) < 0)
            *api = LLM_OPENAI;
        *stream = sqlite3_column_int(st, 2);
        rc = kc_blob_get(db, (const char *)sqlite3_column_text(st, 3), raw, err);
    }
    sqlite3_finalize(st);
    return rc < 0 ? -1 : found;
}

int rec_answer_received_drop(sqlite3 *db, const char *request_hash, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, "SELECT raw_sha FROM answers_received WHERE request_hash = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, request_hash, -1, SQLITE_STATIC);
    char sha[SHA256_HEX_LEN + 1] = "";
    if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(sha, sizeof sha, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (!sha[0])
        return 0;
    st = kc_db_prepare(db, "DELETE FROM answers_received WHERE request_hash = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, request_hash, -1, SQLITE_STATIC);
    if (step_done(db, st, err))
        return -1;
    /* The bytes stay when a response keeps them (the usual case: the same raw record); a blob
     * anything else refers to is kept by the foreign keys (the error is ignored). */
    st = kc_db_prepare(db, "DELETE FROM blobs WHERE sha256 = ? AND NOT EXISTS (SELECT 1 FROM responses "
                           "WHERE raw_sha = blobs.sha256 OR content_sha = blobs.sha256 OR "
                           "reasoning_sha = blobs.sha256) AND NOT EXISTS (SELECT 1 FROM "
                           "answers_received WHERE raw_sha = blobs.sha256)", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
    step_done(db, st, NULL);
    return 0;
}
