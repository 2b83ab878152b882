/* flips: label flips and third-party claim checks as JSON and text (see flips.h). */
#include "curate/flips.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

static json_t *col_json(sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(st, i));
    case SQLITE_FLOAT: return json_real(sqlite3_column_double(st, i));
    case SQLITE_NULL: return json_null();
    default: return json_string((const char *)sqlite3_column_text(st, i));
    }
}

/* Rows of a query as an array of objects keyed by column name. */
static json_t *query_rows(sqlite3 *db, const char *sql, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, sql, err);
    if (!st)
        return NULL;
    json_t *rows = json_array();
    while (sqlite3_step(st) == SQLITE_ROW) {
        json_t *o = json_object();
        for (int i = 0; i < sqlite3_column_count(st); i++)
            json_object_set_new(o, sqlite3_column_name(st, i), col_json(st, i));
        json_array_append_new(rows, o);
    }
    sqlite3_finalize(st);
    return rows;
}

static void count_into(json_t *obj, const char *key)
{
    json_t *n = json_object_get(obj, key);
    json_object_set_new(obj, key, json_integer(n ? json_integer_value(n) + 1 : 1));
}

static const char flips_sql[] =
    "SELECT problem_id, candidate_id, kind, before, after, before_id, after_id, before_verifier,"
    " after_verifier, before_gpu, after_gpu, detail FROM v_label_flips"
    " ORDER BY problem_id, candidate_id, kind, after_id";

static const char claims_sql[] =
    "SELECT source, count(*) AS records,"
    " coalesce(sum(claimed_correct = 1), 0) AS correct_claims,"
    " coalesce(sum(claimed_correct = 1 AND correct_holds = 1), 0) AS correct_claims_hold,"
    " coalesce(sum(claimed_correct = 0), 0) AS incorrect_claims,"
    " coalesce(sum(claimed_correct = 0 AND correct_holds = 1), 0) AS incorrect_claims_hold,"
    " coalesce(sum(claimed_speedup IS NOT NULL), 0) AS speedup_claims,"
    " coalesce(sum(speedup_holds = 1), 0) AS speedup_claims_hold_10pct,"
    " coalesce(sum(verification_id IS NULL OR verdict = 'compiled'), 0) AS not_verified"
    " FROM v_claim_checks GROUP BY source ORDER BY source";

json_t *curate_flips_json(sqlite3 *db, strbuf *err)
{
    json_t *flips = query_rows(db, flips_sql, err);
    json_t *claims = flips ? query_rows(db, claims_sql, err) : NULL;
    if (!claims) {
        json_decref(flips);
        return NULL;
    }
    json_t *by_kind = json_object(), *by_problem = json_object();
    size_t i;
    json_t *f;
    json_array_foreach(flips, i, f)
    {
        const char *kind = json_string_value(json_object_get(f, "kind"));
        const char *pid = json_string_value(json_object_get(f, "problem_id"));
        count_into(by_kind, kind);
        json_t *p = json_object_get(by_problem, pid);
        if (!p)
            json_object_set_new(by_problem, pid, p = json_object());
        count_into(p, kind);
    }
    return json_pack("{s:I, s:I, s:o, s:o, s:o, s:o}", "pairs_compared",
                     (json_int_t)kc_db_query_int(db, "SELECT count(*) FROM v_verification_pairs"),
                     "candidates_reverified",
                     (json_int_t)kc_db_query_int(db, "SELECT count(DISTINCT candidate_id) FROM "
                                                     "v_verification_pairs"),
                     "flips", flips, "by_kind", by_kind, "by_problem", by_problem, "claims",
                     claims);
}

static const char *s_or(json_t *o, const char *k, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : dflt;
}

static long long n_of(json_t *o, const char *k) { return (long long)json_integer_value(json_object_get(o, k)); }

static void add_counts(strbuf *out, json_t *counts)
{
    const char *k;
    json_t *v;
    int first = 1;
    json_object_foreach(counts, k, v)
    {
        sb_addf(out, "%s%s %lld", first ? "" : ", ", k, (long long)json_integer_value(v));
        first = 0;
    }
}

static void add_claims_text(strbuf *out, json_t *claims)
{
    size_t i;
    json_t *c;
    sb_adds(out, "\nthird-party claims (by source):\n");
    if (!json_array_size(claims))
        sb_adds(out, "  (none imported)\n");
    json_array_foreach(claims, i, c)
    sb_addf(out, "  %s: %lld records; \"correct\" claims %lld, %lld hold; \"incorrect\" claims %lld, "
                 "%lld hold; speedup claims %lld, %lld hold within 10%%; %lld not verified on a GPU yet\n",
            s_or(c, "source", "?"), n_of(c, "records"), n_of(c, "correct_claims"),
            n_of(c, "correct_claims_hold"), n_of(c, "incorrect_claims"),
            n_of(c, "incorrect_claims_hold"), n_of(c, "speedup_claims"),
            n_of(c, "speedup_claims_hold_10pct"), n_of(c, "not_verified"));
}

int curate_flips_text(sqlite3 *db, strbuf *out, strbuf *err)
{
    json_t *j = curate_flips_json(db, err);
    if (!j)
        return -1;
    json_t *flips = json_object_get(j, "flips");
    sb_addf(out, "label flips: %zu (%lld candidates verified more than once, %lld pairs of "
                 "consecutive verifications compared)\n", json_array_size(flips),
            n_of(j, "candidates_reverified"), n_of(j, "pairs_compared"));
    sb_adds(out, "by kind: ");
    add_counts(out, json_object_get(j, "by_kind"));
    sb_adds(out, json_object_size(json_object_get(j, "by_kind")) ? "\nby problem:\n" : "(none)\n");
    const char *pid;
    json_t *counts;
    json_object_foreach(json_object_get(j, "by_problem"), pid, counts)
    {
        sb_addf(out, "  %-44s ", pid);
        add_counts(out, counts);
        sb_addch(out, '\n');
    }
    size_t i;
    json_t *f;
    if (json_array_size(flips))
        sb_adds(out, "flips:\n");
    json_array_foreach(flips, i, f)
    {
        sb_addf(out, "  candidate %lld %s %s: %s -> %s", n_of(f, "candidate_id"),
                s_or(f, "problem_id", "?"), s_or(f, "kind", "?"), s_or(f, "before", "-"),
                s_or(f, "after", "-"));
        if (json_is_integer(json_object_get(f, "before_id")))
            sb_addf(out, " (verification %lld -> %lld; verifier %s -> %s; GPU %s -> %s)",
                    n_of(f, "before_id"), n_of(f, "after_id"), s_or(f, "before_verifier", "?"),
                    s_or(f, "after_verifier", "?"), s_or(f, "before_gpu", "none"),
                    s_or(f, "after_gpu", "none"));
        else
            sb_addf(out, " (%s; verification %lld)", s_or(f, "before_verifier", "claim"),
                    n_of(f, "after_id"));
        if (json_is_string(json_object_get(f, "detail")))
            sb_addf(out, " %s", s_or(f, "detail", ""));
        sb_addch(out, '\n');
    }
    add_claims_text(out, json_object_get(j, "claims"));
    json_decref(j);
    return 0;
}
