/* records: what every record format shares (see records.h, records_internal.h): the candidate
 * query and its filters, one query per problem in output order (split, problem id), so that
 * SQLite only ever sorts one problem's rows in memory; the values, labels and provenance of a
 * row written with the streaming writer (jsonw.h); the problem object encoded once per problem
 * and the prompt (system and first user message) once per trajectory: as recorded in the
 * trajectory's first request, or as kcollect builds it (common/prompt_text.h) for candidates
 * without one; and emitting a record with its content id. The formats (formats.h: records_sft.c,
 * records_kernelbench.c, records_multiturn.c, records_rl.c built with jansson,
 * records_preference.c and records_plan.c) build on it, and dispatch.c runs the one asked for.
 * Output is byte-identical to what jansson's compact dump of the same records would give. */
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
    "  ORDER BY p.turn_index DESC LIMIT 1), rsp.reasoning_sha, "                                 \
    KC_REASONING_STATE_SQL("rsp")

#define CANDIDATE_JOINS                                                                          \
    " FROM candidates c JOIN candidate_labels cl ON cl.candidate_id = c.id"                      \
    " JOIN problems pr ON pr.id = c.problem_id"                                                  \
    " JOIN problem_labels pl ON pl.problem_id = c.problem_id"                                    \
    " LEFT JOIN turns t ON t.candidate_id = c.id"                                                \
    " LEFT JOIN trajectories tr ON tr.id = t.trajectory_id"                                      \
    " LEFT JOIN runs ru ON ru.id = tr.run_id"                                                    \
    " LEFT JOIN responses rsp ON rsp.id = t.response_id"                                         \
    " LEFT JOIN verifications v ON v.id = (SELECT max(id) FROM verifications w"                  \
    "                                     WHERE w.candidate_id = c.id)"                          \
    " LEFT JOIN timings tm ON tm.id = (SELECT max(id) FROM timings x"                            \
    "                                  WHERE x.verification_id = v.id)"



/* Room kept before a record's body for {"id":"<sha256>", (the body's own '{' becomes ','). */
#define ID_ROOM 72

const char *export_col_text(sqlite3_stmt *st, int col) { return (const char *)sqlite3_column_text(st, col); }

int export_col_is_null(sqlite3_stmt *st, int col) { return sqlite3_column_type(st, col) == SQLITE_NULL; }

int export_split_index(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (s && !strcmp(s, export_split_names[i]))
            return i;
    return 0;
}

int export_class_index(const char *s)
{
    for (int i = 0; i < KC_N_CLASSES; i++)
        if (s && !strcmp(s, kc_verdict_classes[i].name))
            return i;
    return KC_N_CLASSES; /* other */
}

/* ---- values of a row, written with the streaming writer ---- */

void export_put_text(jsonw *w, const char *key, sqlite3_stmt *st, int col)
{
    jw_key(w, key);
    const char *s = export_col_text(st, col);
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
    if (export_col_is_null(st, col) || isfinite(v)) {
        if (export_col_is_null(st, col))
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

void export_put_int(jsonw *w, const char *key, sqlite3_stmt *st, int col)
{
    jw_key(w, key);
    if (export_col_is_null(st, col))
        jw_null(w);
    else
        jw_int(w, sqlite3_column_int64(st, col));
}

static void put_bool(jsonw *w, const char *key, sqlite3_stmt *st, int col)
{
    jw_key(w, key);
    if (export_col_is_null(st, col))
        jw_null(w);
    else
        jw_bool(w, sqlite3_column_int(st, col));
}

/* A JSON text column as a JSON string holding its compact JSON text (the column's text as is when
 * it does not parse), null when the column is: a string keeps one type for typed loaders, whose
 * keys and value types vary from record to record (verifier evidence, sampling settings). With
 * member (a run's config), the text of that member ("{}" when absent). The last conversion is
 * remembered: runs and verifier evidence repeat from row to row. */
void export_put_json_column(jsonw *w, const char *key, sqlite3_stmt *st, int col,
                            export_json_cache *cache, const char *member)
{
    jw_key(w, key);
    const char *s = export_col_text(st, col);
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
void export_put_plan_text(jsonw *w, const char *plan)
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
void export_put_labels(jsonw *w, sqlite3_stmt *st)
{
    strbuf nf = STRBUF_INIT;
    jw_object(w);
    export_put_text(w, "verdict_class", st, COL_CLASS);
    put_bool(w, "correct_alt", st, COL_CORRECT_ALT);
    put_real(w, "speedup_eager", st, COL_SPEEDUP_E, &nf);
    put_real(w, "speedup_compile", st, COL_SPEEDUP_C, &nf);
    export_put_text(w, "tier_eager", st, COL_TIER_E);
    export_put_text(w, "tier_compile", st, COL_TIER_C);
    put_bool(w, "improved", st, COL_IMPROVED);
    put_bool(w, "truncated", st, COL_TRUNCATED);
    put_bool(w, "suspicious", st, COL_SUSPICIOUS);
    export_put_int(w, "reasoning_chars", st, COL_REASONING);
    export_put_text(w, "reasoning_state", st, COL_REASONING_STATE);
    put_real(w, "reward", st, COL_REWARD, &nf);
    put_real(w, "discounted_return", st, COL_RETURN, &nf);
    export_put_int(w, "exact_rep_id", st, COL_EXACT_REP);
    put_nonfinite(w, &nf);
    jw_end_object(w);
}

/* A run's synthetic marker: "synthetic" (true when its answers came from a test server, not a
 * model) and "server" (that server's name, else ""; a string always, since a field null in every
 * record of a list of structs, as in multiturn turns, breaks pyarrow's loading). */
void export_put_synthetic(jsonw *w, sqlite3_stmt *st)
{
    jw_key(w, "synthetic");
    jw_raw(w, sqlite3_column_int(st, COL_SYNTHETIC) ? "true" : "false",
           sqlite3_column_int(st, COL_SYNTHETIC) ? 4 : 5);
    const char *server = export_col_text(st, COL_SERVER);
    jw_key(w, "server");
    jw_string(w, server ? server : "", server ? strlen(server) : 0);
}

/* Remembers that the record being built draws on a run (once per record). */
void export_note_run(export_ctx *x, int64_t run_id)
{
    export_record_facts *r = &x->record;
    if (run_id <= 0)
        return;
    for (int i = 0; i < r->n_runs; i++)
        if (r->runs[i] == run_id)
            return;
    if (r->n_runs == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 4;
        r->runs = xrealloc(r->runs, (size_t)r->cap * sizeof *r->runs);
    }
    r->runs[r->n_runs++] = run_id;
}

void export_note_kernel(export_ctx *x, const char *gpu, int suspicious)
{
    x->record.kernels++;
    x->record.on_gpu += gpu && *gpu;
    x->record.suspicious += suspicious != 0;
}

/* The index of a run in x->run_ids, added (with its synthetic marker) when new. */
static int run_index(export_ctx *x, int64_t run_id)
{
    for (int i = 0; i < x->n_runs; i++)
        if (x->run_ids[i] == run_id)
            return i;
    size_t n = (size_t)x->n_runs + 1;
    x->run_ids = xrealloc(x->run_ids, n * sizeof *x->run_ids);
    x->run_records = xrealloc(x->run_records, n * sizeof *x->run_records);
    x->run_synthetic = xrealloc(x->run_synthetic, n * sizeof *x->run_synthetic);
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT synthetic FROM runs WHERE id = %lld", (long long)run_id);
    x->run_ids[x->n_runs] = run_id;
    x->run_records[x->n_runs] = 0;
    x->run_synthetic[x->n_runs] = kc_db_query_int(x->db, sql) > 0;
    return x->n_runs++;
}

/* Counts the record just emitted once: for each run it draws on, and by what it draws on. */
static void count_record_facts(export_ctx *x)
{
    export_record_facts *r = &x->record;
    int synthetic = 0;
    for (int i = 0; i < r->n_runs; i++) {
        int k = run_index(x, r->runs[i]);
        x->run_records[k]++;
        synthetic |= x->run_synthetic[k];
    }
    x->counts.synthetic += synthetic;
    x->counts.several_runs += r->n_runs > 1;
    x->counts.without_run += r->n_runs == 0;
    x->counts.with_kernels += r->kernels > 0;
    x->counts.on_gpu += r->on_gpu > 0;
    x->counts.suspicious += r->suspicious > 0;
    r->n_runs = r->kernels = r->on_gpu = r->suspicious = 0;
}

int64_t export_row_run(sqlite3_stmt *st)
{
    return export_col_is_null(st, COL_RUN_ID) ? 0 : sqlite3_column_int64(st, COL_RUN_ID);
}

/* Where a candidate row comes from and the evidence behind its label. */
void export_put_provenance(export_ctx *x, jsonw *w, sqlite3_stmt *st)
{
    strbuf nf = STRBUF_INIT;
    jw_object(w);
    jw_key(w, "database");
    jw_cstring(w, x->db_uuid);
    jw_key(w, "candidate_id");
    jw_int(w, sqlite3_column_int64(st, COL_ID));
    export_put_text(w, "origin", st, COL_ORIGIN);
    export_put_int(w, "trajectory_id", st, COL_TRAJ);
    export_put_int(w, "turn_index", st, COL_TURN);
    export_put_int(w, "response_id", st, COL_RESPONSE);
    export_put_text(w, "reasoning_sha256", st, COL_REASONING_SHA);
    export_put_text(w, "source_sha256", st, COL_SRC_SHA);
    jw_key(w, "run");
    if (export_col_is_null(st, COL_RUN_KEY)) {
        jw_null(w);
    } else {
        jw_object(w);
        export_put_int(w, "run_id", st, COL_RUN_ID);
        export_put_text(w, "run_key", st, COL_RUN_KEY);
        export_put_text(w, "model", st, COL_MODEL);
        export_put_synthetic(w, st);
        export_put_text(w, "tool_version", st, COL_TOOL_VERSION);
        export_put_json_column(w, "sampling_json", st, COL_RUN_CONFIG, &x->sampling_cache, "sampling");
        jw_end_object(w);
    }
    jw_key(w, "verification");
    jw_object(w);
    export_put_text(w, "verdict", st, COL_VERDICT);
    export_put_text(w, "flags", st, COL_FLAGS);
    export_put_text(w, "message", st, COL_MESSAGE);
    export_put_json_column(w, "evidence_json", st, COL_EVIDENCE, &x->evidence_cache, NULL);
    export_put_text(w, "seeds", st, COL_SEEDS);
    put_real(w, "max_abs_err", st, COL_MAX_ABS, &nf);
    put_real(w, "max_rel_err", st, COL_MAX_REL, &nf);
    put_real(w, "rel_l2_err", st, COL_REL_L2, &nf);
    export_put_text(w, "verifier_version", st, COL_VERIFIER);
    export_put_text(w, "gpu", st, COL_GPU);
    export_put_text(w, "driver", st, COL_DRIVER);
    export_put_text(w, "cuda", st, COL_CUDA);
    export_put_text(w, "nvrtc", st, COL_NVRTC);
    put_nonfinite(w, &nf);
    jw_end_object(w);
    jw_key(w, "timing");
    if (export_col_is_null(st, COL_MEDIAN)) {
        jw_null(w);
    } else {
        jw_object(w);
        put_real(w, "median_ms", st, COL_MEDIAN, &nf);
        put_real(w, "eager_ms", st, COL_EAGER, &nf);
        put_real(w, "compile_ms", st, COL_COMPILE_MS, &nf);
        put_real(w, "speedup_eager", st, COL_SPEEDUP_E, &nf);
        put_real(w, "speedup_compile", st, COL_SPEEDUP_C, &nf);
        export_put_int(w, "n", st, COL_TIMING_N);
        put_nonfinite(w, &nf);
        jw_end_object(w);
    }
    jw_end_object(w);
}

/* Writes the parts of one JSON string value (a key was written before). */
static void put_string_parts(jsonw *w, const char *const *parts, const size_t *lens, int n)
{
    jw_raw(w, "\"", 1);
    for (int i = 0; i < n; i++)
        if (lens[i] && jw_escape_part(w->out, parts[i], lens[i]))
            w->bad_utf8 = 1;
    sb_addch(w->out, '"');
}

static int has_text(const export_reasoning_text *r) { return r && r->text; }

/* The parts of a message's content (at most 7): under --reasoning think, "<think>\n", the
 * reasoning and "\n</think>\n\n" (left out after a cut thought with no answer), then body: the
 * answer, or the pieces of a code block. Returns the number of parts. */
static int content_parts(const export_ctx *x, const char *const *body, const size_t *body_lens,
                         int n_body, const export_reasoning_text *r, const char **parts,
                         size_t *lens)
{
    int n = 0;
    size_t body_len = 0;
    for (int i = 0; i < n_body; i++)
        body_len += body_lens[i];
    static const char open[] = "<think>\n", close[] = "\n</think>\n\n";
    if (x->cfg->reasoning == EXPORT_REASONING_THINK && has_text(r)) {
        parts[n] = open, lens[n++] = sizeof open - 1;
        parts[n] = r->text, lens[n++] = r->len;
        if (!r->truncated || body_len)
            parts[n] = close, lens[n++] = sizeof close - 1;
    }
    for (int i = 0; i < n_body; i++)
        parts[n] = body[i], lens[n++] = body_lens[i];
    return n;
}

static void put_content(const export_ctx *x, jsonw *w, const char *const *body,
                        const size_t *body_lens, int n_body, const export_reasoning_text *r)
{
    const char *parts[8];
    size_t lens[8];
    int n = content_parts(x, body, body_lens, n_body, r, parts, lens);
    jw_key(w, "content");
    put_string_parts(w, parts, lens, n);
}

void export_answer_text(const export_ctx *x, const char *content, size_t len,
                        const export_reasoning_text *r, strbuf *out)
{
    const char *parts[8];
    size_t lens[8];
    int n = content_parts(x, &content, &len, 1, r, parts, lens);
    sb_reset(out);
    for (int i = 0; i < n; i++)
        sb_add(out, parts[i], lens[i]);
}

static void put_reasoning_field(const export_ctx *x, jsonw *w, const export_reasoning_text *r)
{
    if (x->cfg->reasoning != EXPORT_REASONING_FIELD)
        return;
    jw_key(w, "reasoning_content");
    if (has_text(r))
        jw_string(w, r->text, r->len);
    else
        jw_null(w);
}

void export_put_turn_message(const export_ctx *x, jsonw *w, const char *role, const char *content,
                             size_t len, const export_reasoning_text *r)
{
    jw_object(w);
    jw_key(w, "role");
    jw_cstring(w, role);
    put_content(x, w, &content, &len, 1, r);
    put_reasoning_field(x, w, r);
    jw_end_object(w);
}

/* The kernel as the assistant would answer it: one ```cuda block, escaped straight from the row. */
void export_put_kernel_message(const export_ctx *x, jsonw *w, const char *src, size_t len,
                               const export_reasoning_text *r)
{
    const char *body[4] = {"```cuda\n", src ? src : "", "\n", "```"};
    size_t lens[4] = {8, len, len && src[len - 1] != '\n' ? 1 : 0, 3};
    jw_object(w);
    jw_key(w, "role");
    jw_raw(w, "\"assistant\"", 11);
    put_content(x, w, body, lens, 4, r);
    put_reasoning_field(x, w, r);
    jw_end_object(w);
}

/* ---- reasoning ---- */

long export_utf8_chars(const char *s, size_t len)
{
    long n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

int export_reasoning_of(export_ctx *x, const char *sha, const char *state,
                        export_reasoning_text *r, strbuf *err)
{
    memset(r, 0, sizeof *r);
    if (!sha)
        return 0;
    if (export_get_blob(x, sha, &x->reasoning, err))
        return -1;
    r->text = sb_str(&x->reasoning);
    r->len = x->reasoning.len;
    r->truncated = state && !strcmp(state, "truncated");
    return 0;
}

int export_row_reasoning(export_ctx *x, sqlite3_stmt *st, export_reasoning_text *r, strbuf *err)
{
    return export_reasoning_of(x, export_col_text(st, COL_REASONING_SHA),
                               export_col_text(st, COL_REASONING_STATE), r, err);
}

void export_count_reasoning_chars(export_ctx *x, long chars, int truncated)
{
    export_reasoning_stats *s = &x->reasoning_stats;
    if (chars < 0)
        return;
    if ((size_t)s->texts == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->chars = xrealloc(s->chars, s->cap * sizeof *s->chars);
    }
    s->chars[s->texts++] = chars;
    s->truncated += truncated != 0;
    s->in_record = 1;
}

void export_count_reasoning(export_ctx *x, const export_reasoning_text *r)
{
    if (has_text(r))
        export_count_reasoning_chars(x, export_utf8_chars(r->text, r->len), r->truncated);
}

void export_count_reasoning_record(export_ctx *x)
{
    x->reasoning_stats.records += x->reasoning_stats.in_record;
    x->reasoning_stats.in_record = 0;
}

/* ---- blobs, specs and the per-problem parts ---- */

/* Reads a blob by sha, checking that it exists and hashes to its name. */
int export_get_blob(export_ctx *x, const char *sha, strbuf *out, strbuf *err)
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
const char *export_problem_spec(export_ctx *x, const char *problem_id, strbuf *err)
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
    if (!rc && !export_col_text(st, 0))
        rc = kc_fail(err, "problem %s has no spec recorded (problems.spec_sha): register it again"
                          " with kcollect or kverify import", problem_id);
    if (!rc)
        rc = export_get_blob(x, export_col_text(st, 0), &spec, err);
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
const char *export_built_system(const export_ctx *x)
{
    return x->cfg->system_prompt ? x->cfg->system_prompt : prompt_system_text();
}

static int same_text(const strbuf *sb, const char *s, size_t len)
{
    return sb->len == len && !memcmp(sb->buf, s, len);
}

/* A prompt message; with reasoning_key, the null "reasoning_content" every message of an exported
 * conversation has under --reasoning field. */
static void put_prompt_message(jsonw *w, const char *role, const char *content, size_t len,
                               int reasoning_key)
{
    jw_object(w);
    jw_key(w, "role");
    jw_cstring(w, role);
    jw_key(w, "content");
    jw_string(w, content, len);
    if (reasoning_key) {
        jw_key(w, "reasoning_content");
        jw_null(w);
    }
    jw_end_object(w);
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
        put_prompt_message(&w, "system", system, system_len, p->reasoning_key);
    put_prompt_message(&w, "user", user, user_len, p->reasoning_key);
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
    /* preference records hold the prompt apart from the answers: no reasoning field there */
    x->prompt.reasoning_key = x->cfg->reasoning == EXPORT_REASONING_FIELD &&
                              x->cfg->format != EXPORT_PREFERENCE;
    prompt_set(&x->prompt, x->cfg->system_prompt ? x->cfg->system_prompt : system, user);
}

/* The prompt kcollect builds for a problem: its system message and the problem's spec. */
static int problem_prompt(export_ctx *x, const char *problem_id, strbuf *err)
{
    const char *spec = export_problem_spec(x, problem_id, err);
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
    int rc = step == SQLITE_ROW ? export_get_blob(x, export_col_text(q, 1), &x->blob, err)
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
int export_row_prompt(export_ctx *x, sqlite3_stmt *st, strbuf *err)
{
    int64_t key = export_col_is_null(st, COL_TRAJ) ? 0 : sqlite3_column_int64(st, COL_TRAJ);
    if (key == x->prompt_key)
        return 0;
    const char *problem_id = export_col_text(st, COL_PROBLEM);
    int rc = key ? trajectory_prompt(x, key, problem_id, err) : problem_prompt(x, problem_id, err);
    x->prompt_key = rc ? -1 : key;
    return rc;
}

/* Encodes the problem object of the row's problem, once per problem. */
void export_problem_parts(export_ctx *x, sqlite3_stmt *st)
{
    if (x->parts_ready)
        return;
    jsonw w;
    sb_reset(&x->problem_part);
    jw_init(&w, &x->problem_part);
    jw_object(&w);
    jw_key(&w, "id");
    jw_cstring(&w, export_col_text(st, COL_PROBLEM));
    jw_key(&w, "level");
    jw_int(&w, sqlite3_column_int(st, COL_LEVEL));
    jw_key(&w, "title");
    jw_cstring(&w, export_col_text(st, COL_TITLE));
    jw_end_object(&w);
    x->parts_bad_utf8 = w.bad_utf8;
    x->parts_ready = 1;
}

/* The row's kernel source, looked up after the sort (so that SQLite never sorts kernels) and
 * checked: present, intact and UTF-8 text. *src is NULL when the candidate has no kernel. The
 * data stays valid until the next call. A kernel that is not UTF-8 text (imported before kverify
 * import refused such files) fails the export naming the candidate, or with --skip-bad-text is
 * left out with a warning naming it: 1 then, the row is skipped. */
int export_row_source(export_ctx *x, sqlite3_stmt *st, const char **src, size_t *len, strbuf *err)
{
    *src = NULL;
    *len = 0;
    const char *sha = export_col_text(st, COL_SRC_SHA);
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
                    export_col_text(st, COL_PROBLEM), why.buf);
            x->skipped_bad_text++;
            *src = NULL;
            rc = 1;
        } else {
            rc = kc_fail(err, "candidate %lld (%s): its kernel is not UTF-8 text (%s); "
                              "--skip-bad-text leaves such candidates out", id,
                         export_col_text(st, COL_PROBLEM), why.buf);
        }
    }
    sb_free(&why);
    return rc;
}

void export_count_record(export_ctx *x, sqlite3_stmt *st)
{
    x->counts.records++;
    export_note_run(x, export_row_run(st));
    export_note_kernel(x, export_col_text(st, COL_GPU), sqlite3_column_int(st, COL_SUSPICIOUS));
    x->counts.by_split[export_split_index(export_col_text(st, COL_SPLIT))]++;
    x->counts.by_class[export_class_index(export_col_text(st, COL_CLASS))]++;
    if (!export_col_is_null(st, COL_SPEEDUP_E)) {
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
void export_open_record(export_ctx *x, jsonw *w, const char *format, const char *split,
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
int export_emit(export_ctx *x, const char *split, const jsonw *w, const char *what, strbuf *err)
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
    count_record_facts(x);
    return export_shards_write(x->shards, split, s->buf, s->len, err);
}

/* A jansson record (rl) through the same path. */
int export_emit_json(export_ctx *x, const char *split, json_t *record, strbuf *err)
{
    char *body = json_dumps(record, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(record);
    if (!body)
        return kc_fail(err, "cannot encode a record as JSON");
    jsonw w;
    begin_record(x, &w);
    sb_adds(&x->scratch, body);
    free(body);
    return export_emit(x, split, &w, "a record", err);
}

int export_no_filter(const char *list) { return !list || !*list || !strcmp(list, "any"); }

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
void export_add_in_filter(strbuf *where, const char *col, const char *list, char ***binds, int *n)
{
    if (export_no_filter(list))
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
        export_add_in_filter(where, "v.verdict", verdicts, binds, n);
    } else if (!export_no_filter(verdicts)) {
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
void export_run_filter(const export_config *c, strbuf *where, char ***binds, int *n)
{
    export_add_in_filter(where, "tr.run_id", c->runs, binds, n);
    export_add_in_filter(where, "ru.model", c->models, binds, n);
}

/* The same for a subquery over candidates c (rl): " AND c.id IN (candidates of those runs)". */
void export_candidate_run_filter(const export_config *c, strbuf *where, char ***binds, int *n)
{
    if (export_no_filter(c->runs) && export_no_filter(c->models))
        return;
    sb_adds(where, " AND c.id IN (SELECT t.candidate_id FROM turns t JOIN trajectories tr ON"
                   " tr.id = t.trajectory_id JOIN runs ru ON ru.id = tr.run_id WHERE 1");
    export_run_filter(c, where, binds, n);
    sb_addch(where, ')');
}

/* Filters shared by every candidate-level query (after "c.problem_id = ?"); verdicts only when
 * given. */
static void common_filters(const export_config *c, const char *verdicts, enum verdict_scope scope,
                           strbuf *where, char ***binds, int *n)
{
    export_add_in_filter(where, "pl.split", c->splits, binds, n);
    export_add_in_filter(where, "CAST(pr.level AS TEXT)", c->levels, binds, n);
    export_run_filter(c, where, binds, n);
    verdict_filter(where, verdicts, scope, binds, n);
    speedup_filter(where, c->min_speedup, scope, binds, n);
}

/* Prepares sql and binds the filter values from parameter first on. */
sqlite3_stmt *export_prepare_with_binds(export_ctx *x, const char *sql, char **binds, int n,
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
sqlite3_stmt *export_candidate_query(export_ctx *x, const char *verdicts, enum verdict_scope scope,
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
    sqlite3_stmt *st = export_prepare_with_binds(x, sql.buf, binds, n, 2, err);
    sb_free(&sql);
    return st;
}


/* Runs the candidate query once per exported problem, in output order (split, problem id),
 * calling row for each row and done after each problem. */
int export_for_each_problem(export_ctx *x, sqlite3_stmt *cand, row_fn row, problem_done_fn done,
                            void *arg, strbuf *err)
{
    strbuf sql = STRBUF_INIT;
    char **binds = NULL;
    int n = 0;
    sb_adds(&sql, "SELECT pr.id FROM problems pr JOIN problem_labels pl ON pl.problem_id = pr.id"
                  " WHERE 1");
    export_add_in_filter(&sql, "pl.split", x->cfg->splits, &binds, &n);
    export_add_in_filter(&sql, "CAST(pr.level AS TEXT)", x->cfg->levels, &binds, &n);
    export_degenerate_filter(x->cfg, &sql);
    sb_adds(&sql, " ORDER BY pl.split, pr.id");
    sqlite3_stmt *problems = export_prepare_with_binds(x, sql.buf, binds, n, 1, err);
    sb_free(&sql);
    if (!problems)
        return -1;
    int rc = 0, step = SQLITE_DONE;
    while (!rc && (step = sqlite3_step(problems)) == SQLITE_ROW) {
        sqlite3_bind_text(cand, 1, export_col_text(problems, 0), -1, SQLITE_TRANSIENT);
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
    sb_free(&x->scratch), sb_free(&x->blob), sb_free(&x->problem_part), sb_free(&x->reasoning);
    free(x->reasoning_stats.chars);
    prompt_free(&x->prompt), prompt_free(&x->sent);
    cache_free(&x->evidence_cache), cache_free(&x->sampling_cache);
    free(x->run_ids), free(x->run_records), free(x->run_synthetic), free(x->record.runs);
}
