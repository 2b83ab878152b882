/* stats: renders counts of candidates, verdicts, duplicates, tiers, trajectories and splits, and
 * per model the share of answers with reasoning and its median length. */
#include "curate/stats.h"
#include "common/error.h"
#include "curate/passk.h"
#include "curate/runs.h"
#include "curate/stale.h"

#include <stdlib.h>
#include <string.h>

/* The text of a row: its third column where the query has one (NULL there: a row for the JSON
 * form only), else its value. */
static const char *row_text(sqlite3_stmt *st)
{
    return (const char *)sqlite3_column_text(st, sqlite3_column_count(st) > 2 ? 2 : 1);
}

/* Appends "  label  text" rows of a table's query. */
static int add_table(sqlite3 *db, strbuf *out, const char *title, const char *sql, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, sql, err);
    if (!st)
        return -1;
    sb_addf(out, "%s\n", title);
    int rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0), *text = row_text(st);
        if (!text)
            continue;
        sb_addf(out, "  %-22s %s\n", k ? k : "(none)", text);
        rows++;
    }
    if (!rows)
        sb_adds(out, "  (none)\n");
    sqlite3_finalize(st);
    return 0;
}

/* The tables of the summary: title (its JSON key is the title up to the colon, '_' for ' ')
 * and a query of rows (label, value[, text]): the value is typed (a count an integer, a ratio or
 * mean a real, NULL when unknown) and is the JSON form; the text, where given, is what the text
 * summary shows instead (NULL: the row is in the JSON form only). */
static const struct {
    const char *title, *sql;
} tables[] = {
    {"verdict classes (candidates):",
     "SELECT verdict_class, count(*) FROM candidate_labels GROUP BY 1 ORDER BY 2 DESC, 1"},
    {"duplicates:",
     "SELECT 'exact duplicates', count(*) FROM candidate_labels WHERE exact_rep_id <> candidate_id"
     " UNION ALL SELECT 'near duplicates', count(*) FROM candidate_labels"
     " WHERE exact_rep_id = candidate_id AND near_rep_id <> candidate_id"
     " UNION ALL SELECT 'representatives', count(*) FROM candidate_labels"
     " WHERE near_rep_id = candidate_id"},
    {"speedup tiers vs eager (correct candidates):",
     "SELECT tier_eager, count(*) FROM candidate_labels WHERE tier_eager IS NOT NULL"
     " GROUP BY 1 ORDER BY 1"},
    {"audit:",
     "SELECT 'suspicious speedups', count(*) FROM candidate_labels WHERE suspicious"
     " UNION ALL SELECT 'truncated responses', count(*) FROM candidate_labels WHERE truncated"
     " UNION ALL SELECT 'failed on alt dims', count(*) FROM candidate_labels WHERE correct_alt = 0"},
    {"trajectories:",
     "SELECT 'solved', coalesce(sum(solved), 0), printf('%d of %d (%.1f%%)', sum(solved), count(*),"
     " 100.0 * sum(solved) / max(count(*), 1)) FROM trajectory_labels"
     " UNION ALL SELECT 'total', count(*), NULL FROM trajectory_labels"
     /* a fraction of no trajectory is unknown: null */
     " UNION ALL SELECT 'solved fraction', 1.0 * sum(solved) / count(*), NULL FROM trajectory_labels"
     /* only where some candidate stopped at compilation; the count is taken in a subquery
        so that the line is left out (an aggregate over no rows still yields one row) */
     " UNION ALL SELECT 'solved, compile-only', c, printf('%d of %d (compiled, not run on a GPU;"
     " what kcollect --compile-only calls solved)', c, n)"
     " FROM (SELECT (SELECT count(DISTINCT t.trajectory_id) FROM turns t"
     " JOIN v_latest_verification v ON v.candidate_id = t.candidate_id"
     " WHERE v.verdict IN ('compiled', 'correct')) AS c, count(*) AS n FROM trajectory_labels)"
     " WHERE EXISTS (SELECT 1 FROM verifications WHERE verdict = 'compiled')"
     /* means over no solved trajectory (or no timed one) are unknown: null, '-' in the text
        (printf gives 0.00) */
     " UNION ALL SELECT 'mean first correct turn', avg(first_correct_turn),"
     " CASE WHEN avg(first_correct_turn) IS NULL THEN '-' ELSE printf('%.2f', avg(first_correct_turn)) END"
     " FROM trajectory_labels WHERE solved"
     " UNION ALL SELECT 'mean best speedup', avg(best_speedup_eager), CASE WHEN avg(best_speedup_eager)"
     " IS NULL THEN '-' ELSE printf('%.2fx', avg(best_speedup_eager)) END"
     " FROM trajectory_labels WHERE solved"},
    {"problems by split:",
     "SELECT split, count(*) FROM problem_labels GROUP BY 1 ORDER BY 1"},
    {"candidates by split:",
     "SELECT p.split, count(*) FROM candidates c JOIN problem_labels p ON p.problem_id ="
     " c.problem_id GROUP BY 1 ORDER BY 1"},
};

/* ---- reasoning per model ---- */

/* Every answer of a turn with its model, the length of its reasoning in characters (NULL: none)
 * and whether that was cut; sorted by model, then length (NULL first). */
#define REASONING_SQL                                                                            \
    "SELECT coalesce(ru.model, '(unknown)'), CASE WHEN r.reasoning_sha IS NULL THEN NULL"        \
    " ELSE length(CAST(b.data AS TEXT)) END, " KC_REASONING_STATE_SQL("r") " = 'truncated'"       \
    " FROM turns t JOIN trajectories tr ON tr.id = t.trajectory_id"                              \
    " LEFT JOIN runs ru ON ru.id = tr.run_id JOIN responses r ON r.id = t.response_id"           \
    " LEFT JOIN blobs b ON b.sha256 = r.reasoning_sha ORDER BY 1, 2"

typedef struct model_reasoning {
    long answers, with, truncated;
    long *chars; /* sorted */
    size_t cap;
} model_reasoning;

static json_t *model_reasoning_json(const model_reasoning *m)
{
    json_t *median = json_null();
    if (m->with)
        median = json_real((m->chars[(m->with - 1) / 2] + m->chars[m->with / 2]) / 2.0);
    return json_pack("{s:I, s:I, s:f, s:o, s:I}", "answers", (json_int_t)m->answers,
                     "with_reasoning", (json_int_t)m->with, "share",
                     m->answers ? (double)m->with / (double)m->answers : 0.0, "median_chars",
                     median, "truncated", (json_int_t)m->truncated);
}

/* {model: {answers, with_reasoning, share, median_chars (null when none), truncated}} over the
 * answers of every turn: the share of answers that came with reasoning and its median length. */
static json_t *reasoning_json(sqlite3 *db, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, REASONING_SQL, err);
    if (!st)
        return NULL;
    json_t *o = json_object();
    model_reasoning m = {0};
    char *model = NULL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (model && strcmp(model, name)) {
            json_object_set_new(o, model, model_reasoning_json(&m));
            m.answers = m.with = m.truncated = 0;
        }
        if (!model || strcmp(model, name))
            free(model), model = xstrdup(name);
        m.answers++;
        if (sqlite3_column_type(st, 1) == SQLITE_NULL)
            continue;
        if ((size_t)m.with == m.cap) {
            m.cap = m.cap ? 2 * m.cap : 64;
            m.chars = xrealloc(m.chars, m.cap * sizeof *m.chars);
        }
        m.chars[m.with++] = (long)sqlite3_column_int64(st, 1);
        m.truncated += sqlite3_column_int(st, 2);
    }
    if (model)
        json_object_set_new(o, model, model_reasoning_json(&m));
    free(model), free(m.chars);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        json_decref(o);
        kc_fail(err, "database: %s", sqlite3_errmsg(db));
        return NULL;
    }
    return o;
}

/* The text of reasoning_json: a line per model. */
static void reasoning_text(const json_t *r, strbuf *out)
{
    sb_adds(out, "reasoning (answers per model):\n");
    if (!json_object_size(r))
        sb_adds(out, "  (none)\n");
    const char *model;
    json_t *m;
    json_object_foreach((json_t *)r, model, m) {
        long answers = (long)json_integer_value(json_object_get(m, "answers"));
        long with = (long)json_integer_value(json_object_get(m, "with_reasoning"));
        sb_addf(out, "  %-22s %ld of %ld with reasoning (%.1f%%)", model, with, answers,
                100.0 * json_real_value(json_object_get(m, "share")));
        if (with)
            sb_addf(out, ", median %.1f chars, %lld cut short",
                    json_real_value(json_object_get(m, "median_chars")),
                    (long long)json_integer_value(json_object_get(m, "truncated")));
        sb_addch(out, '\n');
    }
}

/* The labels the tables count against the candidates there are: null when they are current,
 * else {"curate_run", "candidates", "labelled", "collected_since", "verified_again_since",
 * "command"} (the kcurate command that relabels, as kexport prints it). */
static int stale_json(sqlite3 *db, const char *db_path, json_t **out, strbuf *err)
{
    stale_labels s;
    *out = NULL;
    if (curate_stale_count(db, db_path, &s, err))
        return -1;
    if (s.curated && s.new_candidates + s.reverified > 0) {
        strbuf cmd = STRBUF_INIT;
        stale_command_line(&s, &cmd);
        *out = json_pack("{s:I, s:I, s:I, s:I, s:I, s:s}", "curate_run", (json_int_t)s.curate_run,
                         "candidates", (json_int_t)kc_db_query_int(db, "SELECT count(*) FROM candidates"),
                         "labelled", (json_int_t)kc_db_query_int(db, "SELECT count(*) FROM candidate_labels"),
                         "collected_since", (json_int_t)s.new_candidates, "verified_again_since",
                         (json_int_t)s.reverified, "command", cmd.buf);
        sb_free(&cmd);
    }
    stale_labels_free(&s);
    return 0;
}

/* Says, above the tables, that they count old labels, and how to relabel. */
static void stale_text(const json_t *st, strbuf *out)
{
    long long again = json_integer_value(json_object_get(st, "verified_again_since"));
    sb_addf(out, "stale labels: %lld candidate(s) collected and %lld verified again since curate "
                 "run %lld, so the tables below count %lld labels for %lld candidates",
            (long long)json_integer_value(json_object_get(st, "collected_since")), again,
            (long long)json_integer_value(json_object_get(st, "curate_run")),
            (long long)json_integer_value(json_object_get(st, "labelled")),
            (long long)json_integer_value(json_object_get(st, "candidates")));
    if (again)
        sb_addf(out, ", %lld of them from before a newer verdict", again);
    sb_addf(out, ". kexport refuses them until you relabel:\n    %s\n\n",
            json_string_value(json_object_get(st, "command")));
}

int curate_stats(sqlite3 *db, const char *db_path, strbuf *out, strbuf *err)
{
    long long run = kc_db_query_int(db, "SELECT max(id) FROM curate_runs");
    sb_reset(out);
    sb_addf(out, "database: %lld problems, %lld runs, %lld trajectories, %lld candidates\n",
            kc_db_query_int(db, "SELECT count(*) FROM problems"),
            kc_db_query_int(db, "SELECT count(*) FROM runs"),
            kc_db_query_int(db, "SELECT count(*) FROM trajectories"),
            kc_db_query_int(db, "SELECT count(*) FROM candidates"));
    json_t *metrics = passk_metrics(db, err);
    if (!metrics)
        return -1;
    sb_addch(out, '\n');
    passk_text(metrics, out);
    sb_addch(out, '\n');
    json_decref(metrics);
    if (run <= 0) {
        sb_addf(out, "not curated yet: run `kcurate run --db %s`\n", db_path);
        return 0;
    }
    sb_addf(out, "curated by curate run %lld\n\n", run);
    json_t *stale;
    if (stale_json(db, db_path, &stale, err))
        return -1;
    if (stale)
        stale_text(stale, out);
    json_decref(stale);
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        if (add_table(db, out, tables[i].title, tables[i].sql, err))
            return -1;
        sb_addch(out, '\n');
    }
    json_t *r = reasoning_json(db, err);
    if (!r)
        return -1;
    reasoning_text(r, out);
    sb_addch(out, '\n');
    json_decref(r);
    return 0;
}

/* "verdict classes (candidates):" -> "verdict_classes" */
static void table_key(const char *title, strbuf *key)
{
    sb_reset(key);
    for (const char *p = title; *p && *p != ':' && *p != '('; p++)
        sb_addch(key, *p == ' ' ? '_' : *p);
    while (key->len && key->buf[key->len - 1] == '_')
        sb_setlen(key, key->len - 1);
}

static json_t *column_json(sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(st, i));
    case SQLITE_FLOAT: return json_real(sqlite3_column_double(st, i));
    case SQLITE_NULL: return json_null();
    default: return json_string((const char *)sqlite3_column_text(st, i));
    }
}

/* A table's query as an object {label: value}, its typed values (never the text column). */
static json_t *table_json(sqlite3 *db, const char *sql, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, sql, err);
    if (!st)
        return NULL;
    json_t *o = json_object();
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        json_object_set_new(o, k ? k : "(none)", column_json(st, 1));
    }
    sqlite3_finalize(st);
    return o;
}

json_t *curate_stats_json(sqlite3 *db, const char *db_path, strbuf *err)
{
    json_t *runs = curate_runs_json(db, err);
    if (!runs)
        return NULL;
    long long curated = kc_db_query_int(db, "SELECT max(id) FROM curate_runs");
    json_t *metrics = passk_metrics(db, err);
    if (!metrics) {
        json_decref(runs);
        return NULL;
    }
    json_t *o = json_pack("{s:s, s:{s:I, s:I, s:I, s:I}, s:o}", "format", "kcorpus-stats v1", "database",
        "problems", (json_int_t)kc_db_query_int(db, "SELECT count(*) FROM problems"),
        "runs", (json_int_t)kc_db_query_int(db, "SELECT count(*) FROM runs"),
        "trajectories", (json_int_t)kc_db_query_int(db, "SELECT count(*) FROM trajectories"),
        "candidates", (json_int_t)kc_db_query_int(db, "SELECT count(*) FROM candidates"),
        "curate_run", curated > 0 ? json_integer(curated) : json_null());
    json_t *tok = table_json(db,
        "SELECT 'in', coalesce(sum(tokens_in), 0) FROM turns UNION ALL SELECT 'out',"
        " coalesce(sum(tokens_out), 0) FROM turns UNION ALL SELECT 'cost_usd',"
        " coalesce(sum(cost_usd), 0.0) FROM turns", err);
    if (!tok) {
        json_decref(o), json_decref(runs), json_decref(metrics);
        return NULL;
    }
    json_object_set_new(o, "tokens", json_pack("{s:O, s:O}", "in", json_object_get(tok, "in"),
                                                "out", json_object_get(tok, "out")));
    json_object_set(o, "cost_usd", json_object_get(tok, "cost_usd"));
    json_decref(tok);
    strbuf key = STRBUF_INIT;
    for (size_t i = 0; curated > 0 && i < sizeof(tables) / sizeof(tables[0]); i++) {
        json_t *t = table_json(db, tables[i].sql, err);
        if (!t) {
            json_decref(o), json_decref(runs), json_decref(metrics), sb_free(&key);
            return NULL;
        }
        table_key(tables[i].title, &key);
        json_object_set_new(o, key.buf, t);
    }
    sb_free(&key);
    json_t *r = reasoning_json(db, err);
    if (!r) {
        json_decref(o), json_decref(runs), json_decref(metrics);
        return NULL;
    }
    json_object_set_new(o, "reasoning", r);
    json_t *stale = NULL;
    if (curated > 0 && stale_json(db, db_path, &stale, err)) {
        json_decref(o), json_decref(runs), json_decref(metrics);
        return NULL;
    }
    json_object_set_new(o, "stale_labels", stale ? stale : json_null());
    json_object_set_new(o, "runs", runs);
    json_object_set_new(o, "metrics", metrics); /* pass@k, fast_p@k, speedup@k (curate/passk.h) */
    return o;
}
