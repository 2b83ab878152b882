/* records: SQL over the curated database and the JSON of each format (see records.h).
 * Candidate-level formats (sft, multiturn, preference) run one query per problem, in output order
 * (split, problem id), so that SQLite only ever sorts one problem's rows in memory; records are
 * written with the streaming writer (jsonw.h), with the problem object encoded once per problem
 * and the prompt (system and first user message) once per trajectory: as recorded in the
 * trajectory's first request, or as kcollect builds it (common/prompt_text.h) for candidates
 * without one. The rl format (one record per problem) is built with jansson. Output is
 * byte-identical to what jansson's compact dump of the same records would give. */
#include "export/records.h"
#include "export/records_internal.h"
#include "common/candidate.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/prompt_text.h"
#include "common/fsutil.h"
#include "export/jsonw.h"
#include "export/kernelbench.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const export_split_names[4] = {"train", "valid", "test", "heldout"};
const char *export_class_name(int i)
{
    return i < KC_N_CLASSES ? kc_verdict_classes[i].name : "other";
}

/* The columns every candidate-level query selects, in this order (see the COL_ names). */
#define CANDIDATE_COLUMNS                                                                        \
    " c.id, c.problem_id, pr.level, pr.title, pl.split, t.trajectory_id, t.turn_index,"          \
    " c.source_sha, v.verdict, v.flags, v.message,"                                               \
    " v.evidence_json, v.seeds, v.max_abs_err, v.max_rel_err, v.rel_l2_err, v.verifier_version," \
    " v.gpu_name, v.driver_version, v.cuda_version, v.nvrtc_version, tm.median_ms, tm.eager_ms,"  \
    " tm.compile_ms, tm.speedup_eager, tm.speedup_compile, tm.n, cl.verdict_class,"              \
    " cl.correct_alt, cl.tier_eager, cl.tier_compile, cl.improved, cl.truncated, cl.suspicious,"  \
    " cl.reasoning_chars, cl.reward, cl.discounted_return, cl.exact_rep_id, cl.near_rep_id,"      \
    " ru.run_key, ru.model, ru.config_json, ru.tool_version, c.origin, t.response_id,"           \
    " ru.id, ru.synthetic, ru.server, t.action,"                                                 \
    " (SELECT p.plan_json FROM turns p WHERE p.trajectory_id = t.trajectory_id"                  \
    "  AND p.turn_index < t.turn_index AND p.plan_json IS NOT NULL"                              \
    "  ORDER BY p.turn_index DESC LIMIT 1)"

#define CANDIDATE_JOINS                                                                          \
    " FROM candidates c JOIN candidate_labels cl ON cl.candidate_id = c.id"                      \
    " JOIN problems pr ON pr.id = c.problem_id"                                                  \
    " JOIN problem_labels pl ON pl.problem_id = c.problem_id"                                    \
    " LEFT JOIN turns t ON t.candidate_id = c.id"                                                \
    " LEFT JOIN trajectories tr ON tr.id = t.trajectory_id"                                      \
    " LEFT JOIN runs ru ON ru.id = tr.run_id"                                                    \
    " LEFT JOIN verifications v ON v.id = (SELECT max(id) FROM verifications w"                  \
    "                                     WHERE w.candidate_id = c.id)"                          \
    " LEFT JOIN timings tm ON tm.id = (SELECT max(id) FROM timings x"                            \
    "                                  WHERE x.verification_id = v.id)"

enum {
    COL_ID, COL_PROBLEM, COL_LEVEL, COL_TITLE, COL_SPLIT, COL_TRAJ, COL_TURN, COL_SRC_SHA,
    COL_VERDICT, COL_FLAGS, COL_MESSAGE, COL_EVIDENCE, COL_SEEDS,
    COL_MAX_ABS, COL_MAX_REL, COL_REL_L2, COL_VERIFIER, COL_GPU, COL_DRIVER, COL_CUDA, COL_NVRTC,
    COL_MEDIAN, COL_EAGER, COL_COMPILE_MS, COL_SPEEDUP_E, COL_SPEEDUP_C, COL_TIMING_N, COL_CLASS,
    COL_CORRECT_ALT, COL_TIER_E, COL_TIER_C, COL_IMPROVED, COL_TRUNCATED, COL_SUSPICIOUS,
    COL_REASONING, COL_REWARD, COL_RETURN, COL_EXACT_REP, COL_NEAR_REP, COL_RUN_KEY, COL_MODEL,
    COL_RUN_CONFIG, COL_TOOL_VERSION, COL_ORIGIN, COL_RESPONSE, COL_RUN_ID, COL_SYNTHETIC,
    COL_SERVER, COL_ACTION, COL_PLAN
};

/* Which rows a --verdict list applies to. */
enum verdict_scope { VERDICTS_OF_ALL, VERDICTS_OF_REJECTED };

/* Room kept before a record's body for {"id":"<sha256>", (the body's own '{' becomes ','). */
#define ID_ROOM 72

static const char *text(sqlite3_stmt *st, int col) { return (const char *)sqlite3_column_text(st, col); }

static int is_null(sqlite3_stmt *st, int col) { return sqlite3_column_type(st, col) == SQLITE_NULL; }

static int split_index(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (s && !strcmp(s, export_split_names[i]))
            return i;
    return 0;
}

static int class_index(const char *s)
{
    for (int i = 0; i < KC_N_CLASSES; i++)
        if (s && !strcmp(s, kc_verdict_classes[i].name))
            return i;
    return KC_N_CLASSES; /* other */
}

/* ---- values of a row, written with the streaming writer ---- */

static void put_text(jsonw *w, const char *key, sqlite3_stmt *st, int col)
{
    jw_key(w, key);
    const char *s = text(st, col);
    if (s)
        jw_string(w, s, strlen(s));
    else
        jw_null(w);
}

/* A real column: null when NULL; a value that is not finite (SQLite keeps infinities) is written
 * as null too, and named in nonfinite ("max_abs_err=inf"), which put_nonfinite writes into the
 * same object: every field keeps one JSON type. */
static void put_real(jsonw *w, const char *key, sqlite3_stmt *st, int col, strbuf *nonfinite)
{
    jw_key(w, key);
    double v = sqlite3_column_double(st, col);
    if (is_null(st, col) || isfinite(v)) {
        if (is_null(st, col))
            jw_null(w);
        else
            jw_real(w, v);
        return;
    }
    jw_null(w);
    sb_addf(nonfinite, "%s%s=%s", nonfinite->len ? "," : "", key,
            isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

/* The "nonfinite" field of an object: its non-finite reals as "name=inf,...", "" when none
 * (a string always: a field that is null in every record is typed null by pyarrow, and a
 * null-typed field inside a list of structs broke pyarrow's loading of multiturn shards). */
static void put_nonfinite(jsonw *w, strbuf *nonfinite)
{
    jw_key(w, "nonfinite");
    jw_string(w, nonfinite->len ? nonfinite->buf : "", nonfinite->len);
    sb_free(nonfinite);
}

static void put_int(jsonw *w, const char *key, sqlite3_stmt *st, int col)
{
    jw_key(w, key);
    if (is_null(st, col))
        jw_null(w);
    else
        jw_int(w, sqlite3_column_int64(st, col));
}

static void put_bool(jsonw *w, const char *key, sqlite3_stmt *st, int col)
{
    jw_key(w, key);
    if (is_null(st, col))
        jw_null(w);
    else
        jw_bool(w, sqlite3_column_int(st, col));
}

/* A JSON text column as a JSON string holding its compact JSON text (the column's text as is when
 * it does not parse), null when the column is: a string keeps one type for typed loaders, whose
 * keys and value types vary from record to record (verifier evidence, sampling settings). With
 * member (a run's config), the text of that member ("{}" when absent). The last conversion is
 * remembered: runs and verifier evidence repeat from row to row. */
static void put_json_column(jsonw *w, const char *key, sqlite3_stmt *st, int col,
                            export_json_cache *cache, const char *member)
{
    jw_key(w, key);
    const char *s = text(st, col);
    if (!s && !member) {
        jw_null(w);
        return;
    }
    if (!cache->valid || (s == NULL) != cache->was_null || (s && strcmp(s, cache->in.buf))) {
        sb_reset(&cache->in);
        sb_reset(&cache->out);
        if (s)
            sb_adds(&cache->in, s);
        cache->was_null = s == NULL;
        cache->valid = 1;
        json_t *j = s ? json_loads(s, 0, NULL) : NULL;
        json_t *v = member ? json_object_get(j, member) : j;
        char *enc = v ? json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(12) | JSON_ENCODE_ANY)
                      : NULL;
        const char *textual = enc ? enc : member ? "{}" : s;
        cache->bad_utf8 = jw_escape(&cache->out, textual, strlen(textual)) != 0;
        free(enc);
        json_decref(j);
    }
    jw_raw(w, cache->out.buf, cache->out.len);
    w->bad_utf8 |= cache->bad_utf8;
}

/* The plan an mtmc turn implements (turns.plan_json of the planning turn before it: a list of
 * {"action", "arg", "text"}), re-encoded; null for the default strategy (and a plan that does not
 * parse, which kcollect never writes). */
static void put_plan_text(jsonw *w, const char *plan)
{
    json_t *j = plan ? json_loads(plan, 0, NULL) : NULL;
    char *enc = json_is_array(j) ? json_dumps(j, JSON_COMPACT) : NULL;
    jw_key(w, "plan");
    if (enc)
        jw_raw(w, enc, strlen(enc));
    else
        jw_null(w);
    free(enc);
    json_decref(j);
}

/* Labels of a candidate row. */
static void put_labels(jsonw *w, sqlite3_stmt *st)
{
    strbuf nf = STRBUF_INIT;
    jw_object(w);
    put_text(w, "verdict_class", st, COL_CLASS);
    put_bool(w, "correct_alt", st, COL_CORRECT_ALT);
    put_real(w, "speedup_eager", st, COL_SPEEDUP_E, &nf);
    put_real(w, "speedup_compile", st, COL_SPEEDUP_C, &nf);
    put_text(w, "tier_eager", st, COL_TIER_E);
    put_text(w, "tier_compile", st, COL_TIER_C);
    put_bool(w, "improved", st, COL_IMPROVED);
    put_bool(w, "truncated", st, COL_TRUNCATED);
    put_bool(w, "suspicious", st, COL_SUSPICIOUS);
    put_int(w, "reasoning_chars", st, COL_REASONING);
    put_real(w, "reward", st, COL_REWARD, &nf);
    put_real(w, "discounted_return", st, COL_RETURN, &nf);
    put_int(w, "exact_rep_id", st, COL_EXACT_REP);
    put_nonfinite(w, &nf);
    jw_end_object(w);
}

/* A run's synthetic marker: "synthetic" (true when its answers came from a test server, not a
 * model) and "server" (that server's name, else ""; a string always, since a field null in every
 * record of a list of structs, as in multiturn turns, breaks pyarrow's loading). */
static void put_synthetic(jsonw *w, sqlite3_stmt *st)
{
    jw_key(w, "synthetic");
    jw_raw(w, sqlite3_column_int(st, COL_SYNTHETIC) ? "true" : "false",
           sqlite3_column_int(st, COL_SYNTHETIC) ? 4 : 5);
    const char *server = text(st, COL_SERVER);
    jw_key(w, "server");
    jw_string(w, server ? server : "", server ? strlen(server) : 0);
}

/* Remembers that a record drew on a run (the manifest lists them and says when they mix). */
static void note_run(export_ctx *x, int64_t run_id)
{
    if (run_id <= 0)
        return;
    for (int i = 0; i < x->n_runs; i++)
        if (x->run_ids[i] == run_id) {
            x->run_records[i]++;
            return;
        }
    x->run_ids = xrealloc(x->run_ids, (size_t)(x->n_runs + 1) * sizeof *x->run_ids);
    x->run_records = xrealloc(x->run_records, (size_t)(x->n_runs + 1) * sizeof *x->run_records);
    x->run_ids[x->n_runs] = run_id;
    x->run_records[x->n_runs++] = 1;
}

static int64_t row_run(sqlite3_stmt *st)
{
    return is_null(st, COL_RUN_ID) ? 0 : sqlite3_column_int64(st, COL_RUN_ID);
}

/* Where a candidate row comes from and the evidence behind its label. */
static void put_provenance(export_ctx *x, jsonw *w, sqlite3_stmt *st)
{
    strbuf nf = STRBUF_INIT;
    jw_object(w);
    jw_key(w, "database");
    jw_cstring(w, x->db_uuid);
    jw_key(w, "candidate_id");
    jw_int(w, sqlite3_column_int64(st, COL_ID));
    put_text(w, "origin", st, COL_ORIGIN);
    put_int(w, "trajectory_id", st, COL_TRAJ);
    put_int(w, "turn_index", st, COL_TURN);
    put_int(w, "response_id", st, COL_RESPONSE);
    put_text(w, "source_sha256", st, COL_SRC_SHA);
    jw_key(w, "run");
    if (is_null(st, COL_RUN_KEY)) {
        jw_null(w);
    } else {
        jw_object(w);
        put_int(w, "run_id", st, COL_RUN_ID);
        put_text(w, "run_key", st, COL_RUN_KEY);
        put_text(w, "model", st, COL_MODEL);
        put_synthetic(w, st);
        put_text(w, "tool_version", st, COL_TOOL_VERSION);
        put_json_column(w, "sampling_json", st, COL_RUN_CONFIG, &x->sampling_cache, "sampling");
        jw_end_object(w);
    }
    jw_key(w, "verification");
    jw_object(w);
    put_text(w, "verdict", st, COL_VERDICT);
    put_text(w, "flags", st, COL_FLAGS);
    put_text(w, "message", st, COL_MESSAGE);
    put_json_column(w, "evidence_json", st, COL_EVIDENCE, &x->evidence_cache, NULL);
    put_text(w, "seeds", st, COL_SEEDS);
    put_real(w, "max_abs_err", st, COL_MAX_ABS, &nf);
    put_real(w, "max_rel_err", st, COL_MAX_REL, &nf);
    put_real(w, "rel_l2_err", st, COL_REL_L2, &nf);
    put_text(w, "verifier_version", st, COL_VERIFIER);
    put_text(w, "gpu", st, COL_GPU);
    put_text(w, "driver", st, COL_DRIVER);
    put_text(w, "cuda", st, COL_CUDA);
    put_text(w, "nvrtc", st, COL_NVRTC);
    put_nonfinite(w, &nf);
    jw_end_object(w);
    jw_key(w, "timing");
    if (is_null(st, COL_MEDIAN)) {
        jw_null(w);
    } else {
        jw_object(w);
        put_real(w, "median_ms", st, COL_MEDIAN, &nf);
        put_real(w, "eager_ms", st, COL_EAGER, &nf);
        put_real(w, "compile_ms", st, COL_COMPILE_MS, &nf);
        put_real(w, "speedup_eager", st, COL_SPEEDUP_E, &nf);
        put_real(w, "speedup_compile", st, COL_SPEEDUP_C, &nf);
        put_int(w, "n", st, COL_TIMING_N);
        put_nonfinite(w, &nf);
        jw_end_object(w);
    }
    jw_end_object(w);
}

static void put_message(jsonw *w, const char *role, const char *content, size_t len)
{
    jw_object(w);
    jw_key(w, "role");
    jw_cstring(w, role);
    jw_key(w, "content");
    jw_string(w, content, len);
    jw_end_object(w);
}

/* The kernel as the assistant would answer it: one ```cuda block, escaped straight from the row. */
static void put_kernel_message(jsonw *w, const char *src, size_t len)
{
    jw_object(w);
    jw_key(w, "role");
    jw_raw(w, "\"assistant\"", 11);
    jw_key(w, "content");
    jw_raw(w, "\"```cuda\\n", 10);
    if (jw_escape_part(w->out, src ? src : "", len))
        w->bad_utf8 = 1;
    if (len && src[len - 1] != '\n')
        sb_add(w->out, "\\n", 2);
    sb_add(w->out, "```\"", 4);
    jw_end_object(w);
}

/* ---- blobs, specs and the per-problem parts ---- */

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

/* The spec of a problem as kcollect shows it: problems.spec_sha, which problem_register writes
 * with problem_spec_text (common/prompt_text.h) whenever a problem is registered. */
static const char *problem_spec(export_ctx *x, const char *problem_id, strbuf *err)
{
    for (int i = 0; i < x->n_specs; i++)
        if (!strcmp(x->spec_problem[i], problem_id))
            return x->spec_text[i];
    sqlite3_stmt *st = kc_db_prepare(x->db, "SELECT spec_sha FROM problems WHERE id = ?", err);
    if (!st)
        return NULL;
    sqlite3_bind_text(st, 1, problem_id, -1, SQLITE_STATIC);
    strbuf spec = STRBUF_INIT;
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : kc_fail(err, "unknown problem %s", problem_id);
    if (!rc && !text(st, 0))
        rc = kc_fail(err, "problem %s has no spec recorded (problems.spec_sha): register it again"
                          " with kcollect or kverify import", problem_id);
    if (!rc)
        rc = get_blob(x, text(st, 0), &spec, err);
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

/* The system message of the prompts built here (rl, candidates without a recorded request):
 * the --system-prompt override, else kcollect's. */
static const char *built_system(const export_ctx *x)
{
    return x->cfg->system_prompt ? x->cfg->system_prompt : prompt_system_text();
}

static int same_text(const strbuf *sb, const char *s, size_t len)
{
    return sb->len == len && !memcmp(sb->buf, s, len);
}

/* Sets a prompt to these texts (no system message when system is NULL), encoding them only when
 * they differ from its current ones: the trajectories of a problem usually share their prompt. */
static void prompt_set(export_prompt *p, const char *system, const char *user)
{
    size_t system_len = system ? strlen(system) : 0, user_len = strlen(user);
    if (p->valid && (system != NULL) == p->has_system &&
        same_text(&p->system, system ? system : "", system_len) &&
        same_text(&p->user, user, user_len))
        return;
    sb_reset(&p->system);
    sb_add(&p->system, system ? system : "", system_len);
    sb_reset(&p->user);
    sb_add(&p->user, user, user_len);
    p->has_system = system != NULL;
    p->valid = 1;
    jsonw w;
    sb_reset(&p->encoded);
    jw_init(&w, &p->encoded);
    if (system)
        put_message(&w, "system", system, system_len);
    put_message(&w, "user", user, user_len);
    p->bad_utf8 = w.bad_utf8;
}

static void prompt_free(export_prompt *p)
{
    sb_free(&p->system), sb_free(&p->user), sb_free(&p->encoded);
}

/* Makes these texts the current record's prompt, the system message replaced by the
 * --system-prompt override when there is one. */
static void set_prompt(export_ctx *x, const char *system, const char *user)
{
    prompt_set(&x->prompt, x->cfg->system_prompt ? x->cfg->system_prompt : system, user);
}

/* The prompt kcollect builds for a problem: its system message and the problem's spec. */
static int problem_prompt(export_ctx *x, const char *problem_id, strbuf *err)
{
    const char *spec = problem_spec(x, problem_id, err);
    if (!spec)
        return -1;
    set_prompt(x, prompt_system_text(), spec);
    return 0;
}

/* The system message (NULL when none was sent) and the first user message of a chat request
 * body as recorded: OpenAI (a "system" message first) or Anthropic (a top-level "system"). */
static int request_prompt(json_t *body, const char **system, const char **user)
{
    *system = json_string_value(json_object_get(body, "system"));
    *user = NULL;
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(body, "messages"), i, m) {
        const char *role = json_string_value(json_object_get(m, "role"));
        const char *content = json_string_value(json_object_get(m, "content"));
        if (!role || !content)
            return -1;
        if (!strcmp(role, "user")) {
            *user = content;
            break;
        }
        if (!strcmp(role, "system") && !*system)
            *system = content;
    }
    return *user ? 0 : -1;
}

/* The JSON string at s: the position after it, NULL when there is none before end. */
static const char *skip_json_string(const char *s, const char *end)
{
    if (s >= end || *s != '"')
        return NULL;
    for (s++; s < end; s++) {
        if (*s == '\\')
            s++;
        else if (*s == '"')
            return s + 1;
    }
    return NULL;
}

/* Whether a request body opens, as kcollect writes it for OpenAI-compatible endpoints, with
 * {"model":"…","messages":[ followed by the prompt encoded in sent (the last body parsed): then
 * its prompt is that one, and the body need not be parsed. Anything else is parsed. */
static int opens_with_prompt(const strbuf *body, const export_prompt *sent)
{
    static const char model[] = "{\"model\":", messages[] = ",\"messages\":[";
    const char *p = body->buf, *end = body->buf + body->len;
    if (!sent->valid || body->len < sizeof model - 1 || memcmp(p, model, sizeof model - 1))
        return 0;
    p = skip_json_string(p + sizeof model - 1, end);
    if (!p || (size_t)(end - p) < sizeof messages - 1 + sent->encoded.len + 1 ||
        memcmp(p, messages, sizeof messages - 1))
        return 0;
    p += sizeof messages - 1;
    return !memcmp(p, sent->encoded.buf, sent->encoded.len) &&
           (p[sent->encoded.len] == ',' || p[sent->encoded.len] == ']');
}

/* The prompt a trajectory's model saw: the system and first user message of its first recorded
 * request; the problem's prompt as kcollect builds it when it has no recorded request. */
static int trajectory_prompt(export_ctx *x, int64_t traj, const char *problem_id, strbuf *err)
{
    if (!x->first_request_stmt &&
        !(x->first_request_stmt = kc_db_prepare(
              x->db, "SELECT r.id, r.body_sha FROM turns t JOIN requests r ON r.id = t.request_id"
                     " WHERE t.trajectory_id = ? ORDER BY t.turn_index LIMIT 1", err)))
        return -1;
    sqlite3_stmt *q = x->first_request_stmt;
    sqlite3_bind_int64(q, 1, traj);
    int step = sqlite3_step(q);
    int64_t request = step == SQLITE_ROW ? sqlite3_column_int64(q, 0) : 0;
    int rc = step == SQLITE_ROW ? get_blob(x, text(q, 1), &x->blob, err)
             : step == SQLITE_DONE ? 1
                                   : kc_fail(err, "database: %s", sqlite3_errmsg(x->db));
    sqlite3_reset(q);
    if (rc)
        return rc > 0 ? problem_prompt(x, problem_id, err) : -1;
    if (!opens_with_prompt(&x->blob, &x->sent)) {
        json_t *body = json_loadb(x->blob.buf, x->blob.len, 0, NULL);
        const char *system, *user;
        if (request_prompt(body, &system, &user))
            rc = kc_fail(err, "trajectory %lld: request %lld is not a chat request with a user"
                              " message", (long long)traj, (long long)request);
        else
            prompt_set(&x->sent, system, user);
        json_decref(body);
    }
    if (!rc)
        set_prompt(x, x->sent.has_system ? sb_str(&x->sent.system) : NULL, sb_str(&x->sent.user));
    return rc;
}

/* Makes x->prompt the prompt of the row's record: per trajectory for collected candidates,
 * per problem for the others (imported ones). */
static int row_prompt(export_ctx *x, sqlite3_stmt *st, strbuf *err)
{
    int64_t key = is_null(st, COL_TRAJ) ? 0 : sqlite3_column_int64(st, COL_TRAJ);
    if (key == x->prompt_key)
        return 0;
    const char *problem_id = text(st, COL_PROBLEM);
    int rc = key ? trajectory_prompt(x, key, problem_id, err) : problem_prompt(x, problem_id, err);
    x->prompt_key = rc ? -1 : key;
    return rc;
}

/* Encodes the problem object of the row's problem, once per problem. */
static void problem_parts(export_ctx *x, sqlite3_stmt *st)
{
    if (x->parts_ready)
        return;
    jsonw w;
    sb_reset(&x->problem_part);
    jw_init(&w, &x->problem_part);
    jw_object(&w);
    jw_key(&w, "id");
    jw_cstring(&w, text(st, COL_PROBLEM));
    jw_key(&w, "level");
    jw_int(&w, sqlite3_column_int(st, COL_LEVEL));
    jw_key(&w, "title");
    jw_cstring(&w, text(st, COL_TITLE));
    jw_end_object(&w);
    x->parts_bad_utf8 = w.bad_utf8;
    x->parts_ready = 1;
}

/* The row's kernel source, looked up after the sort (so that SQLite never sorts kernels) and
 * checked: present, intact and UTF-8 text. *src is NULL when the candidate has no kernel. The
 * data stays valid until the next call. A kernel that is not UTF-8 text (imported before kverify
 * import refused such files) fails the export naming the candidate, or with --skip-bad-text is
 * left out with a warning naming it: 1 then, the row is skipped. */
static int row_source(export_ctx *x, sqlite3_stmt *st, const char **src, size_t *len, strbuf *err)
{
    *src = NULL;
    *len = 0;
    const char *sha = text(st, COL_SRC_SHA);
    if (!sha)
        return 0;
    if (!x->source_stmt &&
        !(x->source_stmt = kc_db_prepare(x->db, "SELECT data FROM blobs WHERE sha256 = ?", err)))
        return -1;
    sqlite3_reset(x->source_stmt);
    sqlite3_bind_text(x->source_stmt, 1, sha, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(x->source_stmt);
    if (rc != SQLITE_ROW) {
        if (rc != SQLITE_DONE)
            return kc_fail(err, "database: %s", sqlite3_errmsg(x->db));
        return kc_fail(err, "candidate %lld: missing blob %s (its kernel source)",
                       (long long)sqlite3_column_int64(st, COL_ID), sha);
    }
    const char *data = sqlite3_column_blob(x->source_stmt, 0);
    *len = (size_t)sqlite3_column_bytes(x->source_stmt, 0);
    *src = data ? data : "";
    char check[SHA256_HEX_LEN + 1];
    sha256_hex(*src, *len, check);
    if (strcmp(check, sha))
        return kc_fail(err, "candidate %lld: blob %s is corrupt (content hashes to %s)",
                       (long long)sqlite3_column_int64(st, COL_ID), sha, check);
    strbuf why = STRBUF_INIT;
    rc = 0;
    if (candidate_check_text(*src, *len, &why)) {
        long long id = (long long)sqlite3_column_int64(st, COL_ID);
        if (x->cfg->skip_bad_text) {
            warning("left out candidate %lld (%s): its kernel is not UTF-8 text (%s)", id,
                    text(st, COL_PROBLEM), why.buf);
            x->skipped_bad_text++;
            *src = NULL;
            rc = 1;
        } else {
            rc = kc_fail(err, "candidate %lld (%s): its kernel is not UTF-8 text (%s); "
                              "--skip-bad-text leaves such candidates out", id,
                         text(st, COL_PROBLEM), why.buf);
        }
    }
    sb_free(&why);
    return rc;
}

static void count_record(export_ctx *x, sqlite3_stmt *st)
{
    x->counts.records++;
    note_run(x, row_run(st));
    x->counts.by_split[split_index(text(st, COL_SPLIT))]++;
    x->counts.by_class[class_index(text(st, COL_CLASS))]++;
    if (!is_null(st, COL_SPEEDUP_E)) {
        x->counts.sum_speedup += sqlite3_column_double(st, COL_SPEEDUP_E);
        x->counts.with_speedup++;
    }
}

/* ---- records ---- */

/* Starts a record in x->scratch, after the room kept for its id. */
static void begin_record(export_ctx *x, jsonw *w)
{
    static const char room[ID_ROOM + 1] =
        "                                                                        ";
    sb_reset(&x->scratch);
    sb_add(&x->scratch, room, ID_ROOM);
    jw_init(w, &x->scratch);
}

/* Opens a record's object with the keys every format starts with: format, split, problem (the
 * problem part is JSON already). */
static void open_record(export_ctx *x, jsonw *w, const char *format, const char *split,
                        const strbuf *problem_json)
{
    begin_record(x, w);
    jw_object(w);
    jw_key(w, "format");
    jw_cstring(w, format);
    jw_key(w, "split");
    jw_cstring(w, split);
    jw_key(w, "problem");
    jw_raw(w, problem_json->buf, problem_json->len);
}

/* Puts the content id (sha256 of the body) first and writes the line to its split's shard. */
static int emit(export_ctx *x, const char *split, const jsonw *w, const char *what, strbuf *err)
{
    strbuf *s = &x->scratch;
    if (w->bad_utf8)
        return kc_fail(err, "cannot encode %s as JSON: text that is not UTF-8", what);
    char id[SHA256_HEX_LEN + 1];
    sha256_hex(s->buf + ID_ROOM, s->len - ID_ROOM, id);
    memcpy(s->buf, "{\"id\":\"", 7);
    memcpy(s->buf + 7, id, SHA256_HEX_LEN);
    s->buf[7 + SHA256_HEX_LEN] = '"';
    s->buf[ID_ROOM] = ',';
    sb_addch(s, '\n');
    return export_shards_write(x->shards, split, s->buf, s->len, err);
}

/* A jansson record (rl) through the same path. */
static int emit_json(export_ctx *x, const char *split, json_t *record, strbuf *err)
{
    char *body = json_dumps(record, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(record);
    if (!body)
        return kc_fail(err, "cannot encode a record as JSON");
    jsonw w;
    begin_record(x, &w);
    sb_adds(&x->scratch, body);
    free(body);
    return emit(x, split, &w, "a record", err);
}

static int no_filter(const char *list) { return !list || !*list || !strcmp(list, "any"); }

/* Appends "(?,...)" for a comma list, and remembers the values to bind. */
static void add_in_list(strbuf *where, const char *list, char ***binds, int *n)
{
    sb_addch(where, '(');
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

/* Appends " AND col IN (?,...)" for a comma list ('any' or empty: no condition). */
static void add_in_filter(strbuf *where, const char *col, const char *list, char ***binds, int *n)
{
    if (no_filter(list))
        return;
    sb_addf(where, " AND %s IN ", col);
    add_in_list(where, list, binds, n);
}

static void dedup_filter(const export_config *c, strbuf *where)
{
    if (c->dedup == EXPORT_DEDUP_EXACT)
        sb_adds(where, " AND (cl.exact_rep_id IS NULL OR cl.exact_rep_id = c.id)");
    else if (c->dedup == EXPORT_DEDUP_NEAR)
        sb_adds(where, " AND (cl.near_rep_id IS NULL OR cl.near_rep_id = c.id)");
}

/* Appends the verdict condition: on every row, or (preference) on the rejected side only, where
 * correct candidates (the chosen side) pass whatever the list. */
static void verdict_filter(strbuf *where, const char *verdicts, enum verdict_scope scope,
                           char ***binds, int *n)
{
    if (scope == VERDICTS_OF_ALL) {
        add_in_filter(where, "v.verdict", verdicts, binds, n);
    } else if (!no_filter(verdicts)) {
        sb_adds(where, " AND (cl.verdict_class = 'correct' OR v.verdict IN ");
        add_in_list(where, verdicts, binds, n);
        sb_addch(where, ')');
    }
}

/* Appends the --min-speedup condition: on every row, or (preference) on the chosen side only:
 * the rejected side is incorrect kernels, which are never timed. */
static void speedup_filter(strbuf *where, double min_speedup, enum verdict_scope scope,
                           char ***binds, int *n)
{
    if (min_speedup <= 0)
        return;
    /* Bound like every other value: no number is formatted into the SQL text. */
    char v[64];
    snprintf(v, sizeof v, "%.17g", min_speedup);
    *binds = xrealloc(*binds, (size_t)(*n + 1) * sizeof(char *));
    (*binds)[(*n)++] = xstrdup(v);
    if (scope == VERDICTS_OF_ALL)
        sb_adds(where, " AND tm.speedup_eager >= CAST(? AS REAL)");
    else
        sb_adds(where, " AND (cl.verdict_class IS NOT 'correct' OR tm.speedup_eager >= CAST(? AS REAL))");
}

/* --run and --model: only candidates of those runs (and of runs of those models). */
static void run_filter(const export_config *c, strbuf *where, char ***binds, int *n)
{
    add_in_filter(where, "tr.run_id", c->runs, binds, n);
    add_in_filter(where, "ru.model", c->models, binds, n);
}

/* The same for a subquery over candidates c (rl): " AND c.id IN (candidates of those runs)". */
static void candidate_run_filter(const export_config *c, strbuf *where, char ***binds, int *n)
{
    if (no_filter(c->runs) && no_filter(c->models))
        return;
    sb_adds(where, " AND c.id IN (SELECT t.candidate_id FROM turns t JOIN trajectories tr ON"
                   " tr.id = t.trajectory_id JOIN runs ru ON ru.id = tr.run_id WHERE 1");
    run_filter(c, where, binds, n);
    sb_addch(where, ')');
}

/* Filters shared by every candidate-level query (after "c.problem_id = ?"); verdicts only when
 * given. */
static void common_filters(const export_config *c, const char *verdicts, enum verdict_scope scope,
                           strbuf *where, char ***binds, int *n)
{
    add_in_filter(where, "pl.split", c->splits, binds, n);
    add_in_filter(where, "CAST(pr.level AS TEXT)", c->levels, binds, n);
    run_filter(c, where, binds, n);
    verdict_filter(where, verdicts, scope, binds, n);
    speedup_filter(where, c->min_speedup, scope, binds, n);
}

/* Prepares sql and binds the filter values from parameter first on. */
static sqlite3_stmt *prepare_with_binds(export_ctx *x, const char *sql, char **binds, int n,
                                        int first, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(x->db, sql, err);
    for (int i = 0; st && i < n; i++)
        sqlite3_bind_text(st, first + i, binds[i], -1, SQLITE_TRANSIENT);
    for (int i = 0; i < n; i++)
        free(binds[i]);
    free(binds);
    return st;
}

/* The candidate query of one problem (parameter 1): columns, joins, filters, then more (extra
 * conditions and the ORDER BY within the problem). */
static sqlite3_stmt *candidate_query(export_ctx *x, const char *verdicts, enum verdict_scope scope,
                                     int dedup, const char *more, strbuf *err)
{
    strbuf sql = STRBUF_INIT;
    char **binds = NULL;
    int n = 0;
    sb_adds(&sql, "SELECT" CANDIDATE_COLUMNS CANDIDATE_JOINS " WHERE c.problem_id = ?");
    common_filters(x->cfg, verdicts, scope, &sql, &binds, &n);
    if (dedup)
        dedup_filter(x->cfg, &sql);
    sb_adds(&sql, more);
    sqlite3_stmt *st = prepare_with_binds(x, sql.buf, binds, n, 2, err);
    sb_free(&sql);
    return st;
}

typedef int (*row_fn)(export_ctx *x, sqlite3_stmt *st, void *arg, strbuf *err);
typedef int (*problem_done_fn)(export_ctx *x, void *arg, strbuf *err);

/* Runs the candidate query once per exported problem, in output order (split, problem id),
 * calling row for each row and done after each problem. */
static int for_each_problem(export_ctx *x, sqlite3_stmt *cand, row_fn row, problem_done_fn done,
                            void *arg, strbuf *err)
{
    strbuf sql = STRBUF_INIT;
    char **binds = NULL;
    int n = 0;
    sb_adds(&sql, "SELECT pr.id FROM problems pr JOIN problem_labels pl ON pl.problem_id = pr.id"
                  " WHERE 1");
    add_in_filter(&sql, "pl.split", x->cfg->splits, &binds, &n);
    add_in_filter(&sql, "CAST(pr.level AS TEXT)", x->cfg->levels, &binds, &n);
    export_degenerate_filter(x->cfg, &sql);
    sb_adds(&sql, " ORDER BY pl.split, pr.id");
    sqlite3_stmt *problems = prepare_with_binds(x, sql.buf, binds, n, 1, err);
    sb_free(&sql);
    if (!problems)
        return -1;
    int rc = 0, step = SQLITE_DONE;
    while (!rc && (step = sqlite3_step(problems)) == SQLITE_ROW) {
        sqlite3_bind_text(cand, 1, text(problems, 0), -1, SQLITE_TRANSIENT);
        x->parts_ready = 0;
        x->prompt_key = -1;
        int s;
        while (!rc && (s = sqlite3_step(cand)) == SQLITE_ROW)
            rc = row(x, cand, arg, err);
        if (!rc && s != SQLITE_DONE)
            rc = kc_fail(err, "database: %s", sqlite3_errmsg(x->db));
        sqlite3_reset(cand);
        if (!rc && done)
            rc = done(x, arg, err);
    }
    if (!rc && step != SQLITE_DONE)
        rc = kc_fail(err, "database: %s", sqlite3_errmsg(x->db));
    sqlite3_finalize(problems);
    return rc;
}

static int sft_row(export_ctx *x, sqlite3_stmt *st, void *arg, strbuf *err)
{
    (void)arg;
    const char *src;
    size_t len;
    int rs = row_source(x, st, &src, &len, err);
    if (rs)
        return rs < 0 ? -1 : 0;
    if (!src)
        return 0; /* nothing to learn from a turn without a kernel */
    problem_parts(x, st);
    if (row_prompt(x, st, err))
        return -1;
    const char *split = text(st, COL_SPLIT);
    jsonw w;
    open_record(x, &w, "sft", split, &x->problem_part);
    jw_key(&w, "messages");
    jw_array(&w);
    jw_raw(&w, x->prompt.encoded.buf, x->prompt.encoded.len);
    put_kernel_message(&w, src, len);
    jw_end_array(&w);
    put_plan_text(&w, text(st, COL_PLAN));
    jw_key(&w, "action");
    jw_cstring(&w, text(st, COL_ACTION));
    jw_key(&w, "labels");
    put_labels(&w, st);
    jw_key(&w, "provenance");
    put_provenance(x, &w, st);
    jw_end_object(&w);
    w.bad_utf8 |= x->parts_bad_utf8 | x->prompt.bad_utf8;
    count_record(x, st);
    return emit(x, split, &w, "an sft record", err);
}

/* kernelbench: the row's kernel as a KernelBench-style module (export/kernelbench.h), written
 * as <stage>/kernelbench/<problem id>/c<candidate id>.py and as a record carrying its text. */
static int kernelbench_row(export_ctx *x, sqlite3_stmt *st, void *arg, strbuf *err)
{
    const char *src;
    size_t len;
    int rs = row_source(x, st, &src, &len, err);
    if (rs)
        return rs < 0 ? -1 : 0;
    if (!src)
        return 0;
    const char *pid = text(st, COL_PROBLEM), *split = text(st, COL_SPLIT);
    long long cand = sqlite3_column_int64(st, COL_ID);
    const problem *p = kernelbench_problem(arg, x->db, pid, err);
    strbuf code = STRBUF_INIT, origin = STRBUF_INIT, rel = STRBUF_INIT, path = STRBUF_INIT,
           kernel = STRBUF_INIT;
    sb_add(&kernel, src, len);
    sb_addf(&origin, "candidate %lld of problem %s (database %s)", cand, pid, x->db_uuid);
    sb_addf(&rel, "kernelbench/%s/c%lld.py", pid, cand);
    path_join(&path, x->shards->stage_dir, rel.buf);
    int rc = p ? kernelbench_module(p, kernel.buf, origin.buf, &code, err) : -1;
    if (rc && p) {
        char *why = xstrdup(sb_str(err));
        kc_fail(err, "candidate %lld (%s): %s", cand, pid, why);
        free(why);
    }
    strbuf dir = STRBUF_INIT;
    path_dirname(path.buf, &dir);
    if (!rc)
        rc = mkdir_p(dir.buf, err);
    if (!rc)
        rc = write_file_atomic(path.buf, code.buf, code.len, err);
    if (!rc) {
        problem_parts(x, st);
        jsonw w;
        open_record(x, &w, "kernelbench", split, &x->problem_part);
        jw_key(&w, "path");
        jw_string(&w, rel.buf, rel.len);
        jw_key(&w, "code");
        jw_string(&w, code.buf, code.len);
        jw_key(&w, "labels");
        put_labels(&w, st);
        jw_key(&w, "provenance");
        put_provenance(x, &w, st);
        jw_end_object(&w);
        w.bad_utf8 |= x->parts_bad_utf8;
        count_record(x, st);
        rc = emit(x, split, &w, "a kernelbench record", err);
    }
    sb_free(&code), sb_free(&origin), sb_free(&rel), sb_free(&path), sb_free(&kernel), sb_free(&dir);
    return rc;
}

/* Every kernel kept by --verdict (default correct), dedup and the common filters, as a module. */
static int export_kernelbench(export_ctx *x, strbuf *err)
{
    const export_config *c = x->cfg;
    sqlite3_stmt *st = candidate_query(x, c->verdicts ? c->verdicts : "correct", VERDICTS_OF_ALL,
                                       1, " AND c.source_sha IS NOT NULL ORDER BY c.id", err);
    if (!st)
        return -1;
    kernelbench_problems problems = {0};
    int rc = for_each_problem(x, st, kernelbench_row, NULL, &problems, err);
    kernelbench_problems_free(&problems);
    sqlite3_finalize(st);
    return rc;
}

static int export_sft(export_ctx *x, strbuf *err)
{
    const export_config *c = x->cfg;
    strbuf more = STRBUF_INIT;
    if (!c->sft_every_turn)
        sb_adds(&more, " AND (t.trajectory_id IS NULL OR NOT EXISTS (SELECT 1 FROM turns t2"
                       " JOIN verifications v2 ON v2.id = (SELECT max(id) FROM verifications w2"
                       " WHERE w2.candidate_id = t2.candidate_id)"
                       " WHERE t2.trajectory_id = t.trajectory_id AND t2.turn_index > t.turn_index"
                       " AND v2.verdict = v.verdict))");
    sb_adds(&more, " ORDER BY t.trajectory_id, t.turn_index, c.id");
    sqlite3_stmt *st = candidate_query(x, c->verdicts ? c->verdicts : "correct", VERDICTS_OF_ALL, 1,
                                       more.buf, err);
    sb_free(&more);
    if (!st)
        return -1;
    int rc = for_each_problem(x, st, sft_row, NULL, NULL, err);
    sqlite3_finalize(st);
    return rc;
}

/* ---- multiturn ---- */

/* One trajectory being gathered: its messages and turns, encoded as they come. */
typedef struct trajectory_acc {
    int open;
    int64_t id, run_id;
    char split[16];
    strbuf problem, run, messages, turns;
    strbuf plan;     /* the plan in force at its last turn (mtmc), "" for none */
    int next_turn;   /* mtmc: the next turn whose messages are not yet written */
    jsonw mw, tw;
    int solved;
} trajectory_acc;

/* The text the model answered on a turn (its response), else its kernel as a code block. */
static int assistant_turn(export_ctx *x, sqlite3_stmt *st, const char *src, size_t len,
                          trajectory_acc *a, strbuf *err)
{
    if (!x->response_stmt &&
        !(x->response_stmt = kc_db_prepare(x->db, "SELECT r.content_sha FROM responses r"
                                                  " WHERE r.id = ?", err)))
        return -1;
    sqlite3_stmt *q = x->response_stmt;
    sqlite3_bind_int64(q, 1, sqlite3_column_int64(st, COL_RESPONSE));
    const char *sha = sqlite3_step(q) == SQLITE_ROW ? text(q, 0) : NULL;
    int rc = 0;
    if (sha) {
        rc = get_blob(x, sha, &x->blob, err);
        if (!rc)
            put_message(&a->mw, "assistant", x->blob.buf, x->blob.len);
    } else {
        put_kernel_message(&a->mw, src ? src : "", len);
    }
    sqlite3_reset(q);
    return rc;
}

static int feedback_turn(export_ctx *x, int64_t traj, int turn_index, trajectory_acc *a, strbuf *err)
{
    if (!x->feedback_stmt &&
        !(x->feedback_stmt = kc_db_prepare(x->db, "SELECT feedback_sha FROM turns WHERE"
                                                  " trajectory_id = ? AND turn_index = ?", err)))
        return -1;
    sqlite3_stmt *q = x->feedback_stmt;
    sqlite3_bind_int64(q, 1, traj);
    sqlite3_bind_int(q, 2, turn_index);
    const char *sha = sqlite3_step(q) == SQLITE_ROW ? text(q, 0) : NULL;
    int rc = 0;
    if (sha) {
        rc = get_blob(x, sha, &x->blob, err);
        if (!rc)
            put_message(&a->mw, "user", x->blob.buf, strlen(x->blob.buf));
    }
    sqlite3_reset(q);
    return rc;
}

/* mtmc: each turn's request differs (a plan request, a step request on the last good kernel), so
 * the conversation is every turn's own user message and answer in order: the planning turns
 * before this row (no candidate, so no row of their own) and this row's request. */
static int mtmc_turns_before(export_ctx *x, sqlite3_stmt *st, trajectory_acc *a, strbuf *err)
{
    if (!x->mtmc_stmt &&
        !(x->mtmc_stmt = kc_db_prepare(x->db, "SELECT t.turn_index, t.prompt_sha, r.content_sha,"
                                              " t.candidate_id IS NULL FROM turns t"
                                              " LEFT JOIN responses r ON r.id = t.response_id"
                                              " WHERE t.trajectory_id = ? AND t.turn_index"
                                              " BETWEEN ? AND ? ORDER BY t.turn_index", err)))
        return -1;
    sqlite3_stmt *q = x->mtmc_stmt;
    int turn = sqlite3_column_int(st, COL_TURN);
    sqlite3_bind_int64(q, 1, sqlite3_column_int64(st, COL_TRAJ));
    sqlite3_bind_int(q, 2, a->next_turn);
    sqlite3_bind_int(q, 3, turn);
    int rc = 0;
    while (!rc && sqlite3_step(q) == SQLITE_ROW) {
        const char *prompt = text(q, 1), *answer = text(q, 2);
        if (sqlite3_column_int(q, 0) > 0 && prompt && !(rc = get_blob(x, prompt, &x->blob, err)))
            put_message(&a->mw, "user", x->blob.buf, strlen(x->blob.buf));
        if (!rc && sqlite3_column_int(q, 3) && answer && !(rc = get_blob(x, answer, &x->blob, err)))
            put_message(&a->mw, "assistant", x->blob.buf, x->blob.len);
    }
    sqlite3_reset(q);
    a->next_turn = turn + 1;
    return rc;
}

static int flush_trajectory(export_ctx *x, void *arg, strbuf *err)
{
    trajectory_acc *a = arg;
    if (!a->open)
        return 0;
    a->open = 0;
    jw_end_array(&a->mw);
    jw_end_array(&a->tw);
    jsonw w;
    open_record(x, &w, "multiturn", a->split, &a->problem);
    jw_key(&w, "messages");
    jw_raw(&w, a->messages.buf, a->messages.len);
    jw_key(&w, "turns");
    jw_raw(&w, a->turns.buf, a->turns.len);
    put_plan_text(&w, a->plan.len ? a->plan.buf : NULL);
    jw_key(&w, "provenance");
    jw_object(&w);
    jw_key(&w, "database");
    jw_cstring(&w, x->db_uuid);
    jw_key(&w, "trajectory_id");
    jw_int(&w, a->id);
    jw_key(&w, "run");
    jw_raw(&w, a->run.buf, a->run.len);
    jw_end_object(&w);
    jw_end_object(&w);
    w.bad_utf8 |= a->mw.bad_utf8 | a->tw.bad_utf8;
    x->counts.records++;
    x->counts.by_split[split_index(a->split)]++;
    x->counts.by_class[a->solved ? 0 : 1]++;
    note_run(x, a->run_id);
    return emit(x, a->split, &w, "a multiturn record", err);
}

/* One entry of a multiturn record's turns: its index, candidate, verdict, verdict class and
 * action (mtmc: the action line it implements; strings, "" when none), and its labels and provenance as JSON text (labels_json,
 * provenance_json). Flat and never null: pyarrow's JSON reader fails on a list of structs with a
 * field that is null in every record of a file (a compile-only run's timings and errors are). */
static void put_turn(export_ctx *x, jsonw *w, sqlite3_stmt *st)
{
    static const char *const keys[] = {"verdict", "verdict_class", "action"};
    const int cols[] = {COL_VERDICT, COL_CLASS, COL_ACTION};
    jw_object(w);
    put_int(w, "turn_index", st, COL_TURN);
    put_int(w, "candidate_id", st, COL_ID);
    for (int i = 0; i < 3; i++) {
        const char *v = text(st, cols[i]);
        jw_key(w, keys[i]);
        jw_string(w, v ? v : "", v ? strlen(v) : 0);
    }
    strbuf enc = STRBUF_INIT;
    for (int i = 0; i < 2; i++) {
        jsonw inner;
        sb_reset(&enc);
        jw_init(&inner, &enc);
        if (i == 0)
            put_labels(&inner, st);
        else
            put_provenance(x, &inner, st);
        jw_key(w, i == 0 ? "labels_json" : "provenance_json");
        jw_string(w, enc.buf, enc.len);
        w->bad_utf8 |= inner.bad_utf8;
    }
    sb_free(&enc);
    jw_end_object(w);
}

static int multiturn_row(export_ctx *x, sqlite3_stmt *st, void *arg, strbuf *err)
{
    trajectory_acc *a = arg;
    int64_t traj = sqlite3_column_int64(st, COL_TRAJ);
    if (a->open && a->id != traj && flush_trajectory(x, a, err))
        return -1;
    const char *src;
    size_t len;
    int rs = row_source(x, st, &src, &len, err);
    if (rs)
        return rs < 0 ? -1 : 0;
    problem_parts(x, st);
    if (!a->open) {
        if (row_prompt(x, st, err))
            return -1;
        a->open = 1;
        a->id = traj;
        a->solved = 0;
        snprintf(a->split, sizeof a->split, "%s", text(st, COL_SPLIT));
        sb_reset(&a->problem);
        sb_add(&a->problem, x->problem_part.buf, x->problem_part.len);
        jsonw rw;
        sb_reset(&a->run);
        jw_init(&rw, &a->run);
        jw_object(&rw);
        put_int(&rw, "run_id", st, COL_RUN_ID);
        put_text(&rw, "run_key", st, COL_RUN_KEY);
        put_text(&rw, "model", st, COL_MODEL);
        put_synthetic(&rw, st);
        a->run_id = is_null(st, COL_RUN_ID) ? 0 : sqlite3_column_int64(st, COL_RUN_ID);
        put_json_column(&rw, "sampling_json", st, COL_RUN_CONFIG, &x->sampling_cache, "sampling");
        jw_end_object(&rw);
        sb_reset(&a->messages);
        jw_init(&a->mw, &a->messages);
        a->mw.bad_utf8 = rw.bad_utf8;
        jw_array(&a->mw);
        jw_raw(&a->mw, x->prompt.encoded.buf, x->prompt.encoded.len);
        a->mw.bad_utf8 |= x->parts_bad_utf8 | x->prompt.bad_utf8;
        sb_reset(&a->turns);
        jw_init(&a->tw, &a->turns);
        jw_array(&a->tw);
        a->next_turn = 0;
        sb_reset(&a->plan);
    } else if (is_null(st, COL_ACTION) &&
               feedback_turn(x, traj, sqlite3_column_int(st, COL_TURN) - 1, a, err)) {
        return -1;
    }
    if (!is_null(st, COL_ACTION) && mtmc_turns_before(x, st, a, err))
        return -1;
    if (!is_null(st, COL_PLAN)) {
        sb_reset(&a->plan);
        sb_adds(&a->plan, text(st, COL_PLAN));
    }
    if (assistant_turn(x, st, src, len, a, err))
        return -1;
    a->solved |= text(st, COL_CLASS) && !strcmp(text(st, COL_CLASS), "correct");
    put_turn(x, &a->tw, st);
    return 0;
}

static int export_multiturn(export_ctx *x, strbuf *err)
{
    strbuf more = STRBUF_INIT;
    sb_adds(&more, " AND t.trajectory_id IS NOT NULL");
    if (x->cfg->verdicts && strcmp(x->cfg->verdicts, "any"))
        sb_adds(&more, " AND EXISTS (SELECT 1 FROM trajectory_labels tl WHERE tl.trajectory_id ="
                       " t.trajectory_id AND tl.solved)");
    sb_adds(&more, " ORDER BY t.trajectory_id, t.turn_index");
    sqlite3_stmt *st = candidate_query(x, NULL, VERDICTS_OF_ALL, 0, more.buf, err);
    sb_free(&more);
    if (!st)
        return -1;
    trajectory_acc a = {0};
    int rc = for_each_problem(x, st, multiturn_row, flush_trajectory, &a, err);
    sb_free(&a.problem), sb_free(&a.run), sb_free(&a.messages), sb_free(&a.turns), sb_free(&a.plan);
    sqlite3_finalize(st);
    return rc;
}

/* ---- rl ---- */

static json_t *message(const char *role, const char *content)
{
    return json_pack("{s:s, s:s}", "role", role, "content", content);
}

/* A real column for jansson: null when NULL or not finite (named in *nonfinite then). */
static json_t *opt_real(sqlite3_stmt *st, int col, const char *key, strbuf *nonfinite)
{
    double v = sqlite3_column_double(st, col);
    if (is_null(st, col))
        return json_null();
    if (isfinite(v))
        return json_real(v);
    sb_addf(nonfinite, "%s%s=%s", nonfinite->len ? "," : "", key,
            isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    return json_null();
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

/* A dims object of a manifest ({"N": 64, ...}, names differ per problem) as a list of
 * {"name", "value"}: one schema for every problem. */
static json_t *dims_list(json_t *dims)
{
    json_t *a = json_array(), *v;
    const char *k;
    json_object_foreach(dims, k, v)
        json_array_append_new(a, json_pack("{s:s, s:I}", "name", k, "value",
                                           (json_int_t)json_number_value(v)));
    return a;
}

/* The manifest's scalar params as a list of {"name", "dtype", "value"} (value always a real). */
static json_t *params_list(json_t *params)
{
    json_t *a = json_array(), *p;
    size_t i;
    json_array_foreach(params, i, p)
        json_array_append_new(a, json_pack("{s:s?, s:s?, s:f}", "name",
                                           json_string_value(json_object_get(p, "name")), "dtype",
                                           json_string_value(json_object_get(p, "dtype")), "value",
                                           json_number_value(json_object_get(p, "value"))));
    return a;
}

/* What a reward function needs, as JSON text (verl passes ground_truth to it as is): the problem,
 * the verifier, the manifest's dims and tolerance, the reference kernel. A string keeps one type
 * whatever the dims are named. */
static char *ground_truth_text(const char *pid, json_t *manifest, const strbuf *ref)
{
    json_t *truth = json_pack("{s:s, s:s, s:O?, s:O?, s:s%}", "problem_id", pid, "verifier",
                              "kverify", "dims", json_object_get(manifest, "dims"), "tolerance",
                              json_object_get(manifest, "tolerance"), "reference_kernel", ref->buf,
                              ref->len);
    char *text = truth ? json_dumps(truth, JSON_COMPACT | JSON_REAL_PRECISION(12)) : NULL;
    json_decref(truth);
    return text;
}

static int rl_record(export_ctx *x, sqlite3_stmt *st, long index, strbuf *err)
{
    const char *pid = text(st, 0), *split = text(st, 3);
    const char *spec = problem_spec(x, pid, err);
    strbuf ref = STRBUF_INIT;
    int failed = !spec || get_blob(x, text(st, 5), &ref, err);
    json_t *manifest = failed ? NULL : manifest_of(x, text(st, 4), err, &failed);
    char *truth = failed ? NULL : ground_truth_text(pid, manifest, &ref);
    if (!failed && !truth)
        failed = kc_fail(err, "%s: cannot encode the reference kernel as JSON (not UTF-8?)", pid);
    if (failed) {
        sb_free(&ref);
        json_decref(manifest);
        return -1;
    }
    char suite[64];
    snprintf(suite, sizeof suite, "kcorpus/%.*s", (int)strcspn(pid, "/"), pid);
    strbuf nf = STRBUF_INIT;
    json_t *best = opt_real(st, 8, "best_speedup_eager", &nf);
    json_t *r = json_pack(
        "{s:s, s:s, s:s, s:[o, o], s:s, s:{s:s, s:s}, s:{s:s, s:I, s:s, s:i, s:s, s:o, s:o, s:s,"
        " s:s, s:I, s:I, s:o, s:s?}}",
        "format", "rl", "split", split, "data_source", suite, "prompt",
        message("system", built_system(x)), message("user", spec), "ability", "cuda-kernel",
        "reward_model", "style", "rule", "ground_truth", truth, "extra_info", "split", split,
        "index", (json_int_t)index, "problem_id", pid, "level", sqlite3_column_int(st, 1), "title",
        text(st, 2), "dims",
        dims_list(json_object_get(json_object_get(manifest, "dims"), "default")), "params",
        params_list(json_object_get(manifest, "params")), "database", x->db_uuid,
        "manifest_sha256", text(st, 4), "candidates", (json_int_t)sqlite3_column_int64(st, 6),
        "correct", (json_int_t)sqlite3_column_int64(st, 7), "best_speedup_eager", best,
        "nonfinite", nf.len ? nf.buf : "");
    sb_free(&nf);
    free(truth);
    json_decref(manifest);
    sb_free(&ref);
    x->counts.records++;
    x->counts.by_split[split_index(split)]++;
    x->counts.problems++;
    /* candidates of synthetic runs behind the counts: said in every record */
    json_t *extra = json_object_get(r, "extra_info");
    json_object_set_new(extra, "synthetic", json_boolean(!is_null(st, 10)));
    json_object_set_new(extra, "synthetic_server", json_string(is_null(st, 10) ? "" : text(st, 10)));
    for (const char *ids = text(st, 9); ids && *ids; ids += strcspn(ids, ",") + (strchr(ids, ',') != NULL))
        note_run(x, strtoll(ids, NULL, 10));
    return emit_json(x, split, r, err);
}

static int export_rl(export_ctx *x, strbuf *err)
{
    strbuf sql = STRBUF_INIT;
    char **binds = NULL;
    int n = 0;
    const export_config *c = x->cfg;
    /* the counts, and the runs behind them (col 9; synthetic servers among them: col 10), over
     * the candidates of the runs selected by --run/--model */
    sb_adds(&sql, "SELECT pr.id, pr.level, pr.title, pl.split, pr.manifest_sha, pr.reference_sha,"
                  " (SELECT count(*) FROM candidates c WHERE c.problem_id = pr.id");
    candidate_run_filter(c, &sql, &binds, &n);
    sb_adds(&sql, "), (SELECT count(*) FROM candidates c JOIN candidate_labels cl ON"
                  "  cl.candidate_id = c.id WHERE c.problem_id = pr.id AND cl.verdict_class ="
                  "  'correct'");
    candidate_run_filter(c, &sql, &binds, &n);
    sb_adds(&sql, "), (SELECT max(cl.speedup_eager) FROM candidates c JOIN candidate_labels cl ON"
                  "  cl.candidate_id = c.id WHERE c.problem_id = pr.id AND cl.verdict_class ="
                  "  'correct'");
    candidate_run_filter(c, &sql, &binds, &n);
    sb_adds(&sql, "), (SELECT group_concat(DISTINCT tr.run_id) FROM candidates c JOIN turns t ON"
                  "  t.candidate_id = c.id JOIN trajectories tr ON tr.id = t.trajectory_id"
                  "  JOIN runs ru ON ru.id = tr.run_id WHERE c.problem_id = pr.id");
    run_filter(c, &sql, &binds, &n);
    sb_adds(&sql, "), (SELECT group_concat(DISTINCT ru.server) FROM candidates c JOIN turns t ON"
                  "  t.candidate_id = c.id JOIN trajectories tr ON tr.id = t.trajectory_id"
                  "  JOIN runs ru ON ru.id = tr.run_id WHERE c.problem_id = pr.id AND ru.synthetic");
    run_filter(c, &sql, &binds, &n);
    sb_adds(&sql, ") FROM problems pr JOIN problem_labels pl ON pl.problem_id = pr.id WHERE 1");
    if (!no_filter(c->runs) || !no_filter(c->models)) { /* only problems the selected runs tried */
        sb_adds(&sql, " AND pr.id IN (SELECT c.problem_id FROM candidates c WHERE 1");
        candidate_run_filter(c, &sql, &binds, &n);
        sb_addch(&sql, ')');
    }
    add_in_filter(&sql, "pl.split", x->cfg->splits, &binds, &n);
    add_in_filter(&sql, "CAST(pr.level AS TEXT)", x->cfg->levels, &binds, &n);
    export_degenerate_filter(x->cfg, &sql);
    sb_adds(&sql, " ORDER BY pl.split, pr.id");
    sqlite3_stmt *st = prepare_with_binds(x, sql.buf, binds, n, 1, err);
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

/* ---- preference ---- */

/* A candidate as one side of a preference pair: its answer message, labels and provenance,
 * encoded, and the prompt it answered (an index into its pool's prompts). */
typedef struct side {
    char *answer, *labels, *provenance;
    int prompt;
    int64_t run_id;
} side;

/* The candidates of one problem: correct ones (chosen, fastest first) and the others (rejected),
 * at most capacity of each, with the distinct prompts they answered, encoded (usually one: the
 * trajectories of a problem share their prompt unless the spec or system message changed). */
typedef struct pair_pool {
    side *chosen, *rejected;
    int n_chosen, n_rejected, capacity;
    char **prompts;
    int n_prompts;
    char split[16];
    int bad_utf8;
} pair_pool;

static void pool_clear(pair_pool *p)
{
    for (int i = 0; i < p->n_chosen; i++)
        free(p->chosen[i].answer), free(p->chosen[i].labels), free(p->chosen[i].provenance);
    for (int i = 0; i < p->n_rejected; i++)
        free(p->rejected[i].answer), free(p->rejected[i].labels), free(p->rejected[i].provenance);
    for (int i = 0; i < p->n_prompts; i++)
        free(p->prompts[i]);
    free(p->prompts);
    p->prompts = NULL;
    p->n_chosen = p->n_rejected = p->n_prompts = 0;
    p->bad_utf8 = 0;
}

static void put_raw_string(jsonw *w, const char *key, const char *json)
{
    jw_key(w, key);
    jw_raw(w, json, strlen(json));
}

/* The chosen side for rejected kernel k: the correct kernels in turn (k-th first, fastest
 * first), skipping those that answered another prompt; -1 when none answered its prompt. */
static int chosen_for(const pair_pool *p, int k)
{
    for (int i = 0; i < p->n_chosen; i++) {
        int c = (k + i) % p->n_chosen;
        if (p->chosen[c].prompt == p->rejected[k].prompt)
            return c;
    }
    return -1;
}

static int pair_record(export_ctx *x, const pair_pool *p, const side *c, const side *r,
                       strbuf *err)
{
    jsonw w;
    open_record(x, &w, "preference", p->split, &x->problem_part);
    jw_key(&w, "prompt");
    jw_array(&w);
    jw_raw(&w, p->prompts[r->prompt], strlen(p->prompts[r->prompt]));
    jw_end_array(&w);
    jw_key(&w, "chosen");
    jw_array(&w);
    jw_raw(&w, c->answer, strlen(c->answer));
    jw_end_array(&w);
    jw_key(&w, "rejected");
    jw_array(&w);
    jw_raw(&w, r->answer, strlen(r->answer));
    jw_end_array(&w);
    jw_key(&w, "labels");
    jw_object(&w);
    put_raw_string(&w, "chosen", c->labels);
    put_raw_string(&w, "rejected", r->labels);
    jw_end_object(&w);
    jw_key(&w, "provenance");
    jw_object(&w);
    put_raw_string(&w, "chosen", c->provenance);
    put_raw_string(&w, "rejected", r->provenance);
    jw_end_object(&w);
    jw_end_object(&w);
    w.bad_utf8 |= p->bad_utf8;
    x->counts.records++;
    x->counts.by_split[split_index(p->split)]++;
    x->counts.by_class[0]++;
    note_run(x, c->run_id);
    note_run(x, r->run_id);
    return emit(x, p->split, &w, "a preference record", err);
}

/* Pairs each rejected kernel with a correct one that answered the same prompt, up to
 * max_pairs rejected kernels. */
static int flush_pairs(export_ctx *x, void *arg, strbuf *err)
{
    pair_pool *p = arg;
    int rc = 0;
    for (int k = 0; !rc && k < p->n_rejected && k < x->cfg->max_pairs; k++) {
        int c = chosen_for(p, k);
        if (c >= 0)
            rc = pair_record(x, p, &p->chosen[c], &p->rejected[k], err);
    }
    pool_clear(p);
    return rc;
}

static char *encode(strbuf *tmp, jsonw *w, int *bad)
{
    *bad |= w->bad_utf8;
    return sb_detach(tmp);
}

/* The index of the row's prompt (x->prompt) among the pool's, added when new. */
static int pool_prompt(export_ctx *x, pair_pool *p)
{
    for (int i = 0; i < p->n_prompts; i++)
        if (strlen(p->prompts[i]) == x->prompt.encoded.len &&
            !memcmp(p->prompts[i], x->prompt.encoded.buf, x->prompt.encoded.len))
            return i;
    p->prompts = xrealloc(p->prompts, (size_t)(p->n_prompts + 1) * sizeof(char *));
    p->prompts[p->n_prompts] = xstrndup(x->prompt.encoded.buf, x->prompt.encoded.len);
    p->bad_utf8 |= x->prompt.bad_utf8;
    return p->n_prompts++;
}

static int preference_row(export_ctx *x, sqlite3_stmt *st, void *arg, strbuf *err)
{
    pair_pool *p = arg;
    const char *src;
    size_t len;
    int rs = row_source(x, st, &src, &len, err);
    if (rs)
        return rs < 0 ? -1 : 0;
    if (!src)
        return 0;
    int correct = text(st, COL_CLASS) && !strcmp(text(st, COL_CLASS), "correct");
    if ((correct ? p->n_chosen : p->n_rejected) >= p->capacity)
        return 0;
    problem_parts(x, st);
    p->bad_utf8 |= x->parts_bad_utf8;
    snprintf(p->split, sizeof p->split, "%s", text(st, COL_SPLIT));
    if (row_prompt(x, st, err))
        return -1;
    side s = {.prompt = pool_prompt(x, p), .run_id = row_run(st)};
    strbuf tmp = STRBUF_INIT;
    jsonw w;
    jw_init(&w, &tmp);
    put_kernel_message(&w, src, len);
    s.answer = encode(&tmp, &w, &p->bad_utf8);
    jw_init(&w, &tmp);
    put_labels(&w, st);
    s.labels = encode(&tmp, &w, &p->bad_utf8);
    jw_init(&w, &tmp);
    put_provenance(x, &w, st);
    s.provenance = encode(&tmp, &w, &p->bad_utf8);
    if (correct)
        p->chosen[p->n_chosen++] = s;
    else
        p->rejected[p->n_rejected++] = s;
    return 0;
}

/* Chosen kernels are correct; --verdict (when not 'any') restricts the rejected ones. */
static int export_preference(export_ctx *x, strbuf *err)
{
    sqlite3_stmt *st = candidate_query(
        x, x->cfg->verdicts, VERDICTS_OF_REJECTED, 1,
        " AND c.source_sha IS NOT NULL AND v.verdict IS NOT NULL"
        " ORDER BY cl.verdict_class = 'correct' DESC, coalesce(tm.speedup_eager, 0) DESC, c.id",
        err);
    if (!st)
        return -1;
    int capacity = x->cfg->max_pairs > 0 ? x->cfg->max_pairs : 1;
    pair_pool p = {.chosen = xcalloc((size_t)capacity, sizeof(side)),
                   .rejected = xcalloc((size_t)capacity, sizeof(side)), .capacity = capacity};
    int rc = for_each_problem(x, st, preference_row, flush_pairs, &p, err);
    pool_clear(&p);
    free(p.chosen), free(p.rejected);
    sqlite3_finalize(st);
    return rc;
}

/* ---- shared with records_plan.c (records_internal.h) ---- */

int export_emit_json(export_ctx *x, const char *split, json_t *record, strbuf *err)
{
    return emit_json(x, split, record, err);
}
const char *export_problem_spec(export_ctx *x, const char *problem_id, strbuf *err)
{
    return problem_spec(x, problem_id, err);
}
const char *export_built_system(const export_ctx *x) { return built_system(x); }
void export_note_run(export_ctx *x, int64_t run_id) { note_run(x, run_id); }
int export_split_index(const char *split) { return split_index(split); }
int export_class_index(const char *verdict_class) { return class_index(verdict_class); }
void export_add_in_filter(strbuf *where, const char *col, const char *list, char ***binds, int *n)
{
    add_in_filter(where, col, list, binds, n);
}
sqlite3_stmt *export_prepare_with_binds(export_ctx *x, const char *sql, char **binds, int n,
                                        int first, strbuf *err)
{
    return prepare_with_binds(x, sql, binds, n, first, err);
}

int export_records(export_ctx *x, strbuf *err)
{
    if (kc_db_query_int(x->db, "SELECT count(*) FROM curate_runs") <= 0)
        return kc_fail(err, "the database has no labels yet: run `kcurate run --db %s` first",
                       x->cfg->db_path);
    switch (x->cfg->format) {
    case EXPORT_SFT: return export_sft(x, err);
    case EXPORT_MULTITURN: return export_multiturn(x, err);
    case EXPORT_RL: return export_rl(x, err);
    case EXPORT_PREFERENCE: return export_preference(x, err);
    case EXPORT_KERNELBENCH: return export_kernelbench(x, err);
    case EXPORT_PLAN: return export_plan(x, err);
    }
    return kc_fail(err, "unknown format");
}

static void cache_free(export_json_cache *c)
{
    sb_free(&c->in);
    sb_free(&c->out);
}

void export_ctx_free(export_ctx *x)
{
    for (int i = 0; i < x->n_specs; i++)
        free(x->spec_problem[i]), free(x->spec_text[i]);
    free(x->spec_problem), free(x->spec_text);
    sqlite3_finalize(x->blob_stmt);
    sqlite3_finalize(x->source_stmt);
    sqlite3_finalize(x->response_stmt);
    sqlite3_finalize(x->feedback_stmt);
    sqlite3_finalize(x->first_request_stmt);
    sqlite3_finalize(x->mtmc_stmt);
    sb_free(&x->scratch), sb_free(&x->blob), sb_free(&x->problem_part);
    prompt_free(&x->prompt), prompt_free(&x->sent);
    cache_free(&x->evidence_cache), cache_free(&x->sampling_cache);
    free(x->run_ids), free(x->run_records);
}
