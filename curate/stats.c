/* stats: renders counts of candidates, verdicts, duplicates, tiers, trajectories and splits. */
#include "curate/stats.h"
#include "common/error.h"
#include "curate/passk.h"
#include "curate/runs.h"

#include <stdlib.h>

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
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        if (add_table(db, out, tables[i].title, tables[i].sql, err))
            return -1;
        sb_addch(out, '\n');
    }
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

json_t *curate_stats_json(sqlite3 *db, strbuf *err)
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
    json_object_set_new(o, "runs", runs);
    json_object_set_new(o, "metrics", metrics); /* pass@k, fast_p@k, speedup@k (curate/passk.h) */
    return o;
}
