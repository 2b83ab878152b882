/* runs: one row per run of a database with its counts (see runs.h). */
#include "curate/runs.h"
#include "common/error.h"

#include <string.h>

static const char runs_sql[] =
    "SELECT ru.id, ru.status, coalesce(ru.model, '-'), coalesce(ru.endpoint, '-'), ru.synthetic,"
    " (SELECT count(DISTINCT problem_id) FROM trajectories WHERE run_id = ru.id),"
    " (SELECT count(*) FROM trajectories WHERE run_id = ru.id),"
    " (SELECT count(*) FROM turns t JOIN trajectories tr ON tr.id = t.trajectory_id"
    "   WHERE tr.run_id = ru.id),"
    " (SELECT coalesce(sum(coalesce(t.tokens_in, 0) + coalesce(t.tokens_out, 0)), 0) FROM turns t"
    "   JOIN trajectories tr ON tr.id = t.trajectory_id WHERE tr.run_id = ru.id),"
    " (SELECT coalesce(sum(t.cost_usd), 0) FROM turns t JOIN trajectories tr"
    "   ON tr.id = t.trajectory_id WHERE tr.run_id = ru.id),"
    " ru.tool, coalesce(json_extract(CASE WHEN json_valid(ru.config_json) THEN ru.config_json END,"
    " '$.compile_only'), 0) <> 0 FROM runs ru ORDER BY ru.id";

static const char *col(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    return s ? s : "";
}

int curate_runs_text(sqlite3 *db, strbuf *out, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, runs_sql, err);
    if (!st)
        return -1;
    sb_addf(out, "%4s  %-11s  %-24s  %-32s  %-9s  %8s  %12s  %6s  %10s  %10s  %s\n", "id", "status",
            "model", "endpoint", "synthetic", "problems", "trajectories", "turns", "tokens", "cost_usd",
            "compile_only");
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        n++;
        sb_addf(out, "%4lld  %-11s  %-24s  %-32s  %-9s  %8lld  %12lld  %6lld  %10lld  %10.4f  %s\n",
                (long long)sqlite3_column_int64(st, 0), col(st, 1), col(st, 2), col(st, 3),
                sqlite3_column_int(st, 4) ? "yes" : "no", (long long)sqlite3_column_int64(st, 5),
                (long long)sqlite3_column_int64(st, 6), (long long)sqlite3_column_int64(st, 7),
                (long long)sqlite3_column_int64(st, 8), sqlite3_column_double(st, 9),
                sqlite3_column_int(st, 11) ? "yes" : "no");
    }
    sqlite3_finalize(st);
    if (!n)
        sb_adds(out, "(no runs: kcollect or kverify import adds them)\n");
    return 0;
}

json_t *curate_runs_json(sqlite3 *db, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, runs_sql, err);
    if (!st)
        return NULL;
    json_t *a = json_array();
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(a, json_pack(
            "{s:I, s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:f, s:s, s:b}",
            "id", (json_int_t)sqlite3_column_int64(st, 0), "status", col(st, 1), "model", col(st, 2),
            "endpoint", col(st, 3), "synthetic", sqlite3_column_int(st, 4), "problems",
            (json_int_t)sqlite3_column_int64(st, 5), "trajectories",
            (json_int_t)sqlite3_column_int64(st, 6), "turns", (json_int_t)sqlite3_column_int64(st, 7),
            "tokens", (json_int_t)sqlite3_column_int64(st, 8), "cost_usd",
            sqlite3_column_double(st, 9), "tool", col(st, 10), "compile_only",
            sqlite3_column_int(st, 11)));
    sqlite3_finalize(st);
    return a;
}
