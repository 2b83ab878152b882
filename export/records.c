/* records: SQL over the curated database and the JSON of each format (see records.h). */
#include "export/records.h"
#include "common/error.h"
#include "common/hash.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

const char *const export_split_names[4] = {"train", "valid", "test", "heldout"};
const char *const export_class_names[8] = {"correct",      "incorrect",   "runtime_fail",
                                           "compile_fail", "format_fail", "compiled",
                                           "unverified",   "other"};

/* The columns every candidate-level query selects, in this order (see candidate_json). */
#define CANDIDATE_COLUMNS                                                                        \
    " c.id, c.problem_id, pr.level, pr.title, pl.split, t.trajectory_id, t.turn_index,"          \
    " c.source_sha, sb.data, sb.sha256 IS NOT NULL, v.verdict, v.flags, v.message,"              \
    " v.evidence_json, v.seeds, v.max_abs_err, v.max_rel_err, v.rel_l2_err, v.verifier_version," \
    " v.gpu_name, v.driver_version, v.cuda_version, v.nvrtc_version, tm.median_ms, tm.eager_ms,"  \
    " tm.compile_ms, tm.speedup_eager, tm.speedup_compile, tm.n, cl.verdict_class,"              \
    " cl.correct_alt, cl.tier_eager, cl.tier_compile, cl.improved, cl.truncated, cl.suspicious,"  \
    " cl.reasoning_chars, cl.reward, cl.discounted_return, cl.exact_rep_id, cl.near_rep_id,"      \
    " ru.run_key, ru.model, ru.config_json, ru.tool_version, c.origin, t.response_id"

#define CANDIDATE_JOINS                                                                          \
    " FROM candidate_labels cl JOIN candidates c ON c.id = cl.candidate_id"                      \
    " JOIN problems pr ON pr.id = c.problem_id"                                                  \
    " JOIN problem_labels pl ON pl.problem_id = c.problem_id"                                    \
    " LEFT JOIN turns t ON t.candidate_id = c.id"                                                \
    " LEFT JOIN trajectories tr ON tr.id = t.trajectory_id"                                      \
    " LEFT JOIN runs ru ON ru.id = tr.run_id"                                                    \
    " LEFT JOIN blobs sb ON sb.sha256 = c.source_sha"                                            \
    " LEFT JOIN verifications v ON v.id = (SELECT max(id) FROM verifications w"                  \
    "                                     WHERE w.candidate_id = c.id)"                          \
    " LEFT JOIN timings tm ON tm.id = (SELECT max(id) FROM timings x"                            \
    "                                  WHERE x.verification_id = v.id)"

enum {
    COL_ID, COL_PROBLEM, COL_LEVEL, COL_TITLE, COL_SPLIT, COL_TRAJ, COL_TURN, COL_SRC_SHA,
    COL_SRC, COL_SRC_PRESENT, COL_VERDICT, COL_FLAGS, COL_MESSAGE, COL_EVIDENCE, COL_SEEDS,
    COL_MAX_ABS, COL_MAX_REL, COL_REL_L2, COL_VERIFIER, COL_GPU, COL_DRIVER, COL_CUDA, COL_NVRTC,
    COL_MEDIAN, COL_EAGER, COL_COMPILE_MS, COL_SPEEDUP_E, COL_SPEEDUP_C, COL_TIMING_N, COL_CLASS,
    COL_CORRECT_ALT, COL_TIER_E, COL_TIER_C, COL_IMPROVED, COL_TRUNCATED, COL_SUSPICIOUS,
    COL_REASONING, COL_REWARD, COL_RETURN, COL_EXACT_REP, COL_NEAR_REP, COL_RUN_KEY, COL_MODEL,
    COL_RUN_CONFIG, COL_TOOL_VERSION, COL_ORIGIN, COL_RESPONSE
};

static const char *text(sqlite3_stmt *st, int col) { return (const char *)sqlite3_column_text(st, col); }

static json_t *opt_string(sqlite3_stmt *st, int col)
{
    const char *s = text(st, col);
    return s ? json_string(s) : json_null();
}

static json_t *opt_real(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? json_null()
                                                       : json_real(sqlite3_column_double(st, col));
}

static json_t *opt_int(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? json_null()
                                                       : json_integer(sqlite3_column_int64(st, col));
}

static json_t *opt_bool(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? json_null()
                                                       : json_boolean(sqlite3_column_int(st, col));
}

/* A JSON text column as JSON (its text when it does not parse). */
static json_t *json_column(sqlite3_stmt *st, int col)
{
    const char *s = text(st, col);
    if (!s)
        return json_null();
    json_t *j = json_loads(s, 0, NULL);
    return j ? j : json_string(s);
}

static int split_index(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (s && !strcmp(s, export_split_names[i]))
            return i;
    return 0;
}

static int class_index(const char *s)
{
    for (int i = 0; i < 7; i++)
        if (s && !strcmp(s, export_class_names[i]))
            return i;
    return 7;
}

/* Reads a blob by sha, checking that it exists and hashes to its name. */
static int get_blob(export_ctx *x, const char *sha, strbuf *out, strbuf *err)
{
    if (!x->blob_stmt &&
        !(x->blob_stmt = kc_db_prepare(x->db, "SELECT data FROM blobs WHERE sha256 = ?", err)))
        return -1;
    sqlite3_bind_text(x->blob_stmt, 1, sha, -1, SQLITE_STATIC);
    int rc = sqlite3_step(x->blob_stmt);
    sb_reset(out);
    if (rc == SQLITE_ROW)
        sb_add(out, sqlite3_column_blob(x->blob_stmt, 0),
               (size_t)sqlite3_column_bytes(x->blob_stmt, 0));
    sqlite3_reset(x->blob_stmt);
    if (rc != SQLITE_ROW)
        return kc_fail(err, "missing blob %s", sha);
    char check[SHA256_HEX_LEN + 1];
    sha256_hex(out->buf, out->len, check);
    if (strcmp(check, sha))
        return kc_fail(err, "blob %s is corrupt (content hashes to %s)", sha, check);
    return 0;
}

/* The spec shown to the model for a problem (problems.spec_sha; else the manifest's words). */
static const char *problem_spec(export_ctx *x, const char *problem_id, strbuf *err)
{
    for (int i = 0; i < x->n_specs; i++)
        if (!strcmp(x->spec_problem[i], problem_id))
            return x->spec_text[i];
    sqlite3_stmt *st = kc_db_prepare(x->db, "SELECT spec_sha, manifest_sha FROM problems WHERE id = ?",
                                     err);
    if (!st)
        return NULL;
    sqlite3_bind_text(st, 1, problem_id, -1, SQLITE_STATIC);
    strbuf spec = STRBUF_INIT;
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : kc_fail(err, "unknown problem %s", problem_id);
    if (!rc && text(st, 0)) {
        rc = get_blob(x, text(st, 0), &spec, err);
    } else if (!rc) {
        rc = get_blob(x, text(st, 1), &spec, err);
        json_t *m = rc ? NULL : json_loads(spec.buf, 0, NULL);
        const char *d = json_string_value(json_object_get(m, "description"));
        const char *r = json_string_value(json_object_get(m, "torch_reference"));
        sb_reset(&spec);
        sb_addf(&spec, "%s\n\n%s", d ? d : problem_id, r ? r : "");
        json_decref(m);
    }
    sqlite3_finalize(st);
    if (rc) {
        sb_free(&spec);
        return NULL;
    }
    x->spec_problem = xrealloc(x->spec_problem, (size_t)(x->n_specs + 1) * sizeof(char *));
    x->spec_text = xrealloc(x->spec_text, (size_t)(x->n_specs + 1) * sizeof(char *));
    x->spec_problem[x->n_specs] = xstrdup(problem_id);
    x->spec_text[x->n_specs] = sb_detach(&spec);
    return x->spec_text[x->n_specs++];
}

static json_t *message(const char *role, const char *content)
{
    return json_pack("{s:s, s:s}", "role", role, "content", content);
}

/* The kernel as the assistant would answer it: one ```cuda block. */
static json_t *kernel_message(sqlite3_stmt *st)
{
    strbuf s = STRBUF_INIT;
    const void *src = sqlite3_column_blob(st, COL_SRC);
    size_t len = (size_t)sqlite3_column_bytes(st, COL_SRC);
    sb_adds(&s, "```cuda\n");
    sb_add(&s, src ? src : "", len);
    if (!s.len || s.buf[s.len - 1] != '\n')
        sb_addch(&s, '\n');
    sb_adds(&s, "```");
    json_t *m = json_pack("{s:s, s:s%}", "role", "assistant", "content", s.buf, s.len);
    sb_free(&s);
    return m;
}

/* Checks the candidate's kernel blob (present, intact). */
static int check_source(sqlite3_stmt *st, strbuf *err)
{
    const char *sha = text(st, COL_SRC_SHA);
    if (!sha)
        return 0;
    if (!sqlite3_column_int(st, COL_SRC_PRESENT))
        return kc_fail(err, "candidate %lld: missing blob %s (its kernel source)",
                       (long long)sqlite3_column_int64(st, COL_ID), sha);
    char check[SHA256_HEX_LEN + 1];
    const void *data = sqlite3_column_blob(st, COL_SRC);
    sha256_hex(data ? data : "", (size_t)sqlite3_column_bytes(st, COL_SRC), check);
    if (strcmp(check, sha))
        return kc_fail(err, "candidate %lld: blob %s is corrupt (content hashes to %s)",
                       (long long)sqlite3_column_int64(st, COL_ID), sha, check);
    return 0;
}

static json_t *sampling_of(sqlite3_stmt *st)
{
    json_t *cfg = json_column(st, COL_RUN_CONFIG);
    json_t *s = json_object_get(cfg, "sampling");
    json_t *out = s ? json_incref(s) : json_object();
    json_decref(cfg);
    return out;
}

/* Labels of a candidate row. */
static json_t *labels_json(sqlite3_stmt *st)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                     "verdict_class", opt_string(st, COL_CLASS), "correct_alt",
                     opt_bool(st, COL_CORRECT_ALT), "speedup_eager", opt_real(st, COL_SPEEDUP_E),
                     "speedup_compile", opt_real(st, COL_SPEEDUP_C), "tier_eager",
                     opt_string(st, COL_TIER_E), "tier_compile", opt_string(st, COL_TIER_C),
                     "improved", opt_bool(st, COL_IMPROVED), "truncated",
                     opt_bool(st, COL_TRUNCATED), "suspicious", opt_bool(st, COL_SUSPICIOUS),
                     "reasoning_chars", opt_int(st, COL_REASONING), "reward",
                     opt_real(st, COL_REWARD), "discounted_return", opt_real(st, COL_RETURN),
                     "exact_rep_id", opt_int(st, COL_EXACT_REP));
}

/* Where a candidate row comes from and the evidence behind its label. */
static json_t *provenance_json(export_ctx *x, sqlite3_stmt *st)
{
    json_t *verification = json_pack(
        "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "verdict",
        opt_string(st, COL_VERDICT), "flags", opt_string(st, COL_FLAGS), "message",
        opt_string(st, COL_MESSAGE), "evidence", json_column(st, COL_EVIDENCE), "seeds",
        opt_string(st, COL_SEEDS), "max_abs_err", opt_real(st, COL_MAX_ABS), "max_rel_err",
        opt_real(st, COL_MAX_REL), "rel_l2_err", opt_real(st, COL_REL_L2), "verifier_version",
        opt_string(st, COL_VERIFIER), "gpu", opt_string(st, COL_GPU), "driver",
        opt_string(st, COL_DRIVER), "cuda", opt_string(st, COL_CUDA), "nvrtc",
        opt_string(st, COL_NVRTC));
    json_t *timing = sqlite3_column_type(st, COL_MEDIAN) == SQLITE_NULL
                         ? json_null()
                         : json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "median_ms",
                                     opt_real(st, COL_MEDIAN), "eager_ms", opt_real(st, COL_EAGER),
                                     "compile_ms", opt_real(st, COL_COMPILE_MS), "speedup_eager",
                                     opt_real(st, COL_SPEEDUP_E), "speedup_compile",
                                     opt_real(st, COL_SPEEDUP_C), "n", opt_int(st, COL_TIMING_N));
    json_t *run = sqlite3_column_type(st, COL_RUN_KEY) == SQLITE_NULL
                      ? json_null()
                      : json_pack("{s:o, s:o, s:o, s:o}", "run_key", opt_string(st, COL_RUN_KEY),
                                  "model", opt_string(st, COL_MODEL), "tool_version",
                                  opt_string(st, COL_TOOL_VERSION), "sampling", sampling_of(st));
    return json_pack("{s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "database", x->db_uuid,
                     "candidate_id", (json_int_t)sqlite3_column_int64(st, COL_ID), "origin",
                     opt_string(st, COL_ORIGIN), "trajectory_id", opt_int(st, COL_TRAJ),
                     "turn_index", opt_int(st, COL_TURN), "response_id", opt_int(st, COL_RESPONSE),
                     "source_sha256", opt_string(st, COL_SRC_SHA), "run", run, "verification",
                     verification, "timing", timing);
}

static json_t *problem_json(sqlite3_stmt *st)
{
    return json_pack("{s:s, s:i, s:s}", "id", text(st, COL_PROBLEM), "level",
                     sqlite3_column_int(st, COL_LEVEL), "title", text(st, COL_TITLE));
}

static void count_record(export_ctx *x, sqlite3_stmt *st)
{
    x->counts.records++;
    x->counts.by_split[split_index(text(st, COL_SPLIT))]++;
    x->counts.by_class[class_index(text(st, COL_CLASS))]++;
    if (sqlite3_column_type(st, COL_SPEEDUP_E) != SQLITE_NULL) {
        x->counts.sum_speedup += sqlite3_column_double(st, COL_SPEEDUP_E);
        x->counts.with_speedup++;
    }
}

/* Dumps the record with its content id first and writes it to its split's shard. */
static int emit(export_ctx *x, const char *split, json_t *record, strbuf *err)
{
    char *body = json_dumps(record, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(record);
    if (!body)
        return kc_fail(err, "cannot encode a record as JSON");
    char id[SHA256_HEX_LEN + 1];
    size_t len = strlen(body);
    sha256_hex(body, len, id);
    sb_reset(&x->scratch);
    sb_addf(&x->scratch, "{\"id\":\"%s\"%s", id, len > 2 ? "," : "");
    sb_add(&x->scratch, body + 1, len - 1);
    free(body);
    return export_shards_write(x->shards, split, x->scratch.buf, x->scratch.len, err);
}

/* Appends " AND col IN (?,...)" for a comma list, and remembers the values to bind. */
static void add_in_filter(strbuf *where, const char *col, const char *list, char ***binds, int *n)
{
    if (!list || !*list || !strcmp(list, "any"))
        return;
    sb_addf(where, " AND %s IN (", col);
    int first = 1;
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        *binds = xrealloc(*binds, (size_t)(*n + 1) * sizeof(char *));
        (*binds)[(*n)++] = xstrndup(p, len);
        sb_addf(where, "%s?", first ? "" : ",");
        first = 0;
        p += len + (comma != NULL);
    }
    sb_addch(where, ')');
}

static void dedup_filter(const export_config *c, strbuf *where)
{
    if (c->dedup == EXPORT_DEDUP_EXACT)
        sb_adds(where, " AND (cl.exact_rep_id IS NULL OR cl.exact_rep_id = c.id)");
    else if (c->dedup == EXPORT_DEDUP_NEAR)
        sb_adds(where, " AND (cl.near_rep_id IS NULL OR cl.near_rep_id = c.id)");
}

/* Filters shared by every candidate-level query; verdicts only when given. */
static void common_filters(const export_config *c, const char *verdicts, strbuf *where,
                           char ***binds, int *n)
{
    sb_adds(where, " WHERE 1");
    add_in_filter(where, "pl.split", c->splits, binds, n);
    add_in_filter(where, "CAST(pr.level AS TEXT)", c->levels, binds, n);
    add_in_filter(where, "v.verdict", verdicts, binds, n);
    if (c->min_speedup > 0)
        sb_addf(where, " AND tm.speedup_eager >= %.17g", c->min_speedup);
}

static sqlite3_stmt *prepare_with_binds(export_ctx *x, const char *sql, char **binds, int n,
                                        strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(x->db, sql, err);
    for (int i = 0; st && i < n; i++)
        sqlite3_bind_text(st, i + 1, binds[i], -1, SQLITE_TRANSIENT);
    for (int i = 0; i < n; i++)
        free(binds[i]);
    free(binds);
    return st;
}

static int sft_record(export_ctx *x, sqlite3_stmt *st, strbuf *err)
{
    const char *spec = problem_spec(x, text(st, COL_PROBLEM), err);
    if (!spec || check_source(st, err))
        return -1;
    if (!text(st, COL_SRC_SHA))
        return 0; /* nothing to learn from a turn without a kernel */
    json_t *messages = json_pack("[o, o, o]", message("system", x->cfg->system_prompt),
                                 message("user", spec), kernel_message(st));
    json_t *r = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "format", "sft", "split",
                          text(st, COL_SPLIT), "problem", problem_json(st), "messages", messages,
                          "labels", labels_json(st), "provenance", provenance_json(x, st));
    count_record(x, st);
    return emit(x, text(st, COL_SPLIT), r, err);
}

static int export_sft(export_ctx *x, strbuf *err)
{
    const export_config *c = x->cfg;
    strbuf sql = STRBUF_INIT;
    char **binds = NULL;
    int n = 0;
    sb_adds(&sql, "SELECT" CANDIDATE_COLUMNS CANDIDATE_JOINS);
    common_filters(c, c->verdicts ? c->verdicts : "correct", &sql, &binds, &n);
    dedup_filter(c, &sql);
    if (!c->sft_every_turn)
        sb_adds(&sql, " AND (t.trajectory_id IS NULL OR NOT EXISTS (SELECT 1 FROM turns t2"
                      " JOIN verifications v2 ON v2.id = (SELECT max(id) FROM verifications w2"
                      " WHERE w2.candidate_id = t2.candidate_id)"
                      " WHERE t2.trajectory_id = t.trajectory_id AND t2.turn_index > t.turn_index"
                      " AND v2.verdict = v.verdict))");
    sb_adds(&sql, " ORDER BY pl.split, c.problem_id, t.trajectory_id, t.turn_index, c.id");
    sqlite3_stmt *st = prepare_with_binds(x, sql.buf, binds, n, err);
    sb_free(&sql);
    if (!st)
        return -1;
    int rc = 0, step;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = sft_record(x, st, err);
    if (!rc && step != SQLITE_DONE)
        rc = kc_fail(err, "database: %s", sqlite3_errmsg(x->db));
    sqlite3_finalize(st);
    return rc;
}

/* The text the model answered on a turn (its response), else its kernel as a code block. */
static int assistant_turn(export_ctx *x, sqlite3_stmt *st, json_t *messages, strbuf *err)
{
    sqlite3_stmt *q = kc_db_prepare(x->db, "SELECT r.content_sha FROM responses r WHERE r.id = ?",
                                    err);
    if (!q)
        return -1;
    sqlite3_bind_int64(q, 1, sqlite3_column_int64(st, COL_RESPONSE));
    const char *sha = sqlite3_step(q) == SQLITE_ROW ? text(q, 0) : NULL;
    int rc = 0;
    if (sha) {
        strbuf content = STRBUF_INIT;
        rc = get_blob(x, sha, &content, err);
        if (!rc)
            json_array_append_new(messages, json_pack("{s:s, s:s%}", "role", "assistant",
                                                      "content", content.buf, content.len));
        sb_free(&content);
    } else {
        json_array_append_new(messages, kernel_message(st));
    }
    sqlite3_finalize(q);
    return rc;
}

static int feedback_turn(export_ctx *x, int64_t traj, int turn_index, json_t *messages, strbuf *err)
{
    sqlite3_stmt *q = kc_db_prepare(x->db, "SELECT feedback_sha FROM turns WHERE trajectory_id = ?"
                                           " AND turn_index = ?", err);
    if (!q)
        return -1;
    sqlite3_bind_int64(q, 1, traj);
    sqlite3_bind_int(q, 2, turn_index);
    const char *sha = sqlite3_step(q) == SQLITE_ROW ? text(q, 0) : NULL;
    int rc = 0;
    if (sha) {
        strbuf fb = STRBUF_INIT;
        rc = get_blob(x, sha, &fb, err);
        if (!rc)
            json_array_append_new(messages, message("user", fb.buf));
        sb_free(&fb);
    }
    sqlite3_finalize(q);
    return rc;
}

/* Writes one trajectory gathered from rows [first, ...) of the same trajectory. */
typedef struct trajectory_acc {
    json_t *messages, *turns;
    int64_t id;
    char split[16];
    json_t *problem, *run;
    int solved;
} trajectory_acc;

static int flush_trajectory(export_ctx *x, trajectory_acc *a, strbuf *err)
{
    if (!a->messages)
        return 0;
    char split[16];
    snprintf(split, sizeof split, "%s", a->split);
    json_t *r = json_pack("{s:s, s:s, s:o, s:o, s:o, s:{s:s, s:I, s:o}}", "format", "multiturn",
                          "split", a->split, "problem", a->problem, "messages", a->messages,
                          "turns", a->turns, "provenance", "database", x->db_uuid,
                          "trajectory_id", (json_int_t)a->id, "run", a->run);
    x->counts.records++;
    x->counts.by_split[split_index(a->split)]++;
    x->counts.by_class[a->solved ? 0 : 1]++;
    memset(a, 0, sizeof(*a));
    return emit(x, split, r, err);
}

static int multiturn_row(export_ctx *x, sqlite3_stmt *st, trajectory_acc *a, strbuf *err)
{
    int64_t traj = sqlite3_column_int64(st, COL_TRAJ);
    if (a->messages && a->id != traj && flush_trajectory(x, a, err))
        return -1;
    const char *spec = problem_spec(x, text(st, COL_PROBLEM), err);
    if (!spec || check_source(st, err))
        return -1;
    if (!a->messages) {
        a->id = traj;
        snprintf(a->split, sizeof a->split, "%s", text(st, COL_SPLIT));
        a->problem = problem_json(st);
        a->run = json_pack("{s:o, s:o, s:o}", "run_key", opt_string(st, COL_RUN_KEY), "model",
                           opt_string(st, COL_MODEL), "sampling", sampling_of(st));
        a->messages = json_pack("[o, o]", message("system", x->cfg->system_prompt),
                                message("user", spec));
        a->turns = json_array();
    } else if (feedback_turn(x, traj, sqlite3_column_int(st, COL_TURN) - 1, a->messages, err)) {
        return -1;
    }
    if (assistant_turn(x, st, a->messages, err))
        return -1;
    a->solved |= text(st, COL_CLASS) && !strcmp(text(st, COL_CLASS), "correct");
    json_array_append_new(a->turns, json_pack("{s:o, s:o, s:o, s:o}", "turn_index",
                                              opt_int(st, COL_TURN), "candidate_id",
                                              opt_int(st, COL_ID), "labels", labels_json(st),
                                              "verification", provenance_json(x, st)));
    return 0;
}

static int export_multiturn(export_ctx *x, strbuf *err)
{
    strbuf sql = STRBUF_INIT;
    char **binds = NULL;
    int n = 0;
    sb_adds(&sql, "SELECT" CANDIDATE_COLUMNS CANDIDATE_JOINS);
    common_filters(x->cfg, NULL, &sql, &binds, &n);
    sb_adds(&sql, " AND t.trajectory_id IS NOT NULL");
    if (x->cfg->verdicts && strcmp(x->cfg->verdicts, "any"))
        sb_adds(&sql, " AND EXISTS (SELECT 1 FROM trajectory_labels tl WHERE tl.trajectory_id ="
                      " t.trajectory_id AND tl.solved)");
    sb_adds(&sql, " ORDER BY pl.split, c.problem_id, t.trajectory_id, t.turn_index");
    sqlite3_stmt *st = prepare_with_binds(x, sql.buf, binds, n, err);
    sb_free(&sql);
    if (!st)
        return -1;
    trajectory_acc a = {0};
    int rc = 0, step;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = multiturn_row(x, st, &a, err);
    if (!rc && step != SQLITE_DONE)
        rc = kc_fail(err, "database: %s", sqlite3_errmsg(x->db));
    if (!rc)
        rc = flush_trajectory(x, &a, err);
    json_decref(a.messages), json_decref(a.turns), json_decref(a.problem), json_decref(a.run);
    sqlite3_finalize(st);
    return rc;
}

/* The manifest of a problem as JSON (null when it does not parse). */
static json_t *manifest_of(export_ctx *x, const char *sha, strbuf *err, int *failed)
{
    strbuf m = STRBUF_INIT;
    *failed = get_blob(x, sha, &m, err);
    json_t *j = *failed ? NULL : json_loads(m.buf, 0, NULL);
    sb_free(&m);
    return j ? j : json_null();
}

static int rl_record(export_ctx *x, sqlite3_stmt *st, long index, strbuf *err)
{
    const char *pid = text(st, 0), *split = text(st, 3);
    const char *spec = problem_spec(x, pid, err);
    strbuf ref = STRBUF_INIT;
    int failed = !spec || get_blob(x, text(st, 5), &ref, err);
    json_t *manifest = failed ? NULL : manifest_of(x, text(st, 4), err, &failed);
    if (failed) {
        sb_free(&ref);
        json_decref(manifest);
        return -1;
    }
    char suite[64];
    snprintf(suite, sizeof suite, "kcorpus/%.*s", (int)strcspn(pid, "/"), pid);
    json_t *truth = json_pack("{s:s, s:s, s:O, s:O, s:s%}", "problem_id", pid, "verifier",
                              "kverify", "dims", json_object_get(manifest, "dims"), "tolerance",
                              json_object_get(manifest, "tolerance"), "reference_kernel", ref.buf,
                              ref.len);
    json_t *r = json_pack(
        "{s:s, s:s, s:s, s:[o, o], s:s, s:{s:s, s:o}, s:{s:s, s:I, s:s, s:i, s:s, s:O, s:s, s:s,"
        " s:I, s:I, s:o}}",
        "format", "rl", "split", split, "data_source", suite, "prompt",
        message("system", x->cfg->system_prompt), message("user", spec), "ability", "cuda-kernel",
        "reward_model", "style", "rule", "ground_truth", truth, "extra_info", "split", split,
        "index", (json_int_t)index, "problem_id", pid, "level", sqlite3_column_int(st, 1), "title",
        text(st, 2), "dims", json_object_get(manifest, "dims"), "database", x->db_uuid,
        "manifest_sha256", text(st, 4), "candidates", (json_int_t)sqlite3_column_int64(st, 6),
        "correct", (json_int_t)sqlite3_column_int64(st, 7), "best_speedup_eager", opt_real(st, 8));
    json_decref(manifest);
    sb_free(&ref);
    x->counts.records++;
    x->counts.by_split[split_index(split)]++;
    x->counts.problems++;
    return emit(x, split, r, err);
}

static int export_rl(export_ctx *x, strbuf *err)
{
    strbuf sql = STRBUF_INIT;
    char **binds = NULL;
    int n = 0;
    sb_adds(&sql, "SELECT pr.id, pr.level, pr.title, pl.split, pr.manifest_sha, pr.reference_sha,"
                  " (SELECT count(*) FROM candidates c WHERE c.problem_id = pr.id),"
                  " (SELECT count(*) FROM candidates c JOIN candidate_labels cl ON"
                  "  cl.candidate_id = c.id WHERE c.problem_id = pr.id AND cl.verdict_class ="
                  "  'correct'),"
                  " (SELECT max(cl.speedup_eager) FROM candidates c JOIN candidate_labels cl ON"
                  "  cl.candidate_id = c.id WHERE c.problem_id = pr.id AND cl.verdict_class ="
                  "  'correct')"
                  " FROM problems pr JOIN problem_labels pl ON pl.problem_id = pr.id WHERE 1");
    add_in_filter(&sql, "pl.split", x->cfg->splits, &binds, &n);
    add_in_filter(&sql, "CAST(pr.level AS TEXT)", x->cfg->levels, &binds, &n);
    sb_adds(&sql, " ORDER BY pl.split, pr.id");
    sqlite3_stmt *st = prepare_with_binds(x, sql.buf, binds, n, err);
    sb_free(&sql);
    if (!st)
        return -1;
    int rc = 0, step;
    long index = 0;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = rl_record(x, st, index++, err);
    if (!rc && step != SQLITE_DONE)
        rc = kc_fail(err, "database: %s", sqlite3_errmsg(x->db));
    sqlite3_finalize(st);
    return rc;
}

/* A candidate as one side of a preference pair. */
typedef struct side {
    json_t *answer, *labels, *provenance;
    int64_t id;
} side;

typedef struct pair_pool {
    side *chosen, *rejected;
    int n_chosen, n_rejected;
    char problem[256], split[16];
    json_t *problem_json;
} pair_pool;

static void pool_clear(pair_pool *p)
{
    for (int i = 0; i < p->n_chosen; i++)
        json_decref(p->chosen[i].answer), json_decref(p->chosen[i].labels),
            json_decref(p->chosen[i].provenance);
    for (int i = 0; i < p->n_rejected; i++)
        json_decref(p->rejected[i].answer), json_decref(p->rejected[i].labels),
            json_decref(p->rejected[i].provenance);
    json_decref(p->problem_json);
    p->n_chosen = p->n_rejected = 0;
    p->problem_json = NULL;
    p->problem[0] = '\0';
}

/* Pairs each rejected kernel with a correct one, fastest first, up to max_pairs. */
static int flush_pairs(export_ctx *x, pair_pool *p, strbuf *err)
{
    int rc = 0;
    const char *spec = p->n_chosen && p->n_rejected ? problem_spec(x, p->problem, err) : "";
    if (!spec)
        return -1;
    for (int k = 0; !rc && p->n_chosen && k < p->n_rejected && k < x->cfg->max_pairs; k++) {
        side *c = &p->chosen[k % p->n_chosen], *r = &p->rejected[k];
        json_t *rec = json_pack(
            "{s:s, s:s, s:O, s:[o, o], s:[O], s:[O], s:{s:O, s:O}, s:{s:O, s:O}}", "format",
            "preference", "split", p->split, "problem", p->problem_json, "prompt",
            message("system", x->cfg->system_prompt), message("user", spec), "chosen", c->answer,
            "rejected", r->answer, "labels", "chosen", c->labels, "rejected", r->labels,
            "provenance", "chosen", c->provenance, "rejected", r->provenance);
        x->counts.records++;
        x->counts.by_split[split_index(p->split)]++;
        x->counts.by_class[0]++;
        rc = emit(x, p->split, rec, err);
    }
    pool_clear(p);
    return rc;
}

static int preference_row(export_ctx *x, sqlite3_stmt *st, pair_pool *p, int capacity,
                          strbuf *err)
{
    if (p->problem[0] && strcmp(p->problem, text(st, COL_PROBLEM)) && flush_pairs(x, p, err))
        return -1;
    if (check_source(st, err))
        return -1;
    if (!text(st, COL_SRC_SHA))
        return 0;
    if (!p->problem[0]) {
        snprintf(p->problem, sizeof p->problem, "%s", text(st, COL_PROBLEM));
        snprintf(p->split, sizeof p->split, "%s", text(st, COL_SPLIT));
        p->problem_json = problem_json(st);
    }
    int correct = text(st, COL_CLASS) && !strcmp(text(st, COL_CLASS), "correct");
    if ((correct ? p->n_chosen : p->n_rejected) >= capacity)
        return 0;
    side s = {kernel_message(st), labels_json(st), provenance_json(x, st),
              sqlite3_column_int64(st, COL_ID)};
    if (correct)
        p->chosen[p->n_chosen++] = s;
    else
        p->rejected[p->n_rejected++] = s;
    return 0;
}

static int export_preference(export_ctx *x, strbuf *err)
{
    strbuf sql = STRBUF_INIT;
    char **binds = NULL;
    int n = 0;
    sb_adds(&sql, "SELECT" CANDIDATE_COLUMNS CANDIDATE_JOINS);
    common_filters(x->cfg, NULL, &sql, &binds, &n);
    dedup_filter(x->cfg, &sql);
    sb_adds(&sql, " AND c.source_sha IS NOT NULL AND v.verdict IS NOT NULL"
                  " ORDER BY pl.split, c.problem_id, cl.verdict_class = 'correct' DESC,"
                  " coalesce(tm.speedup_eager, 0) DESC, c.id");
    sqlite3_stmt *st = prepare_with_binds(x, sql.buf, binds, n, err);
    sb_free(&sql);
    if (!st)
        return -1;
    int capacity = x->cfg->max_pairs > 0 ? x->cfg->max_pairs : 1;
    pair_pool p = {.chosen = xcalloc((size_t)capacity, sizeof(side)),
                   .rejected = xcalloc((size_t)capacity, sizeof(side))};
    int rc = 0, step;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = preference_row(x, st, &p, capacity, err);
    if (!rc && step != SQLITE_DONE)
        rc = kc_fail(err, "database: %s", sqlite3_errmsg(x->db));
    if (!rc)
        rc = flush_pairs(x, &p, err);
    pool_clear(&p);
    free(p.chosen), free(p.rejected);
    sqlite3_finalize(st);
    return rc;
}

int export_records(export_ctx *x, strbuf *err)
{
    if (kc_db_query_int(x->db, "SELECT count(*) FROM curate_runs") <= 0)
        return kc_fail(err, "the database has no labels yet: run `kcurate run --db FILE` first");
    switch (x->cfg->format) {
    case EXPORT_SFT: return export_sft(x, err);
    case EXPORT_MULTITURN: return export_multiturn(x, err);
    case EXPORT_RL: return export_rl(x, err);
    case EXPORT_PREFERENCE: return export_preference(x, err);
    }
    return kc_fail(err, "unknown format");
}

void export_ctx_free(export_ctx *x)
{
    for (int i = 0; i < x->n_specs; i++)
        free(x->spec_problem[i]), free(x->spec_text[i]);
    free(x->spec_problem), free(x->spec_text);
    sqlite3_finalize(x->blob_stmt);
    sb_free(&x->scratch);
}
