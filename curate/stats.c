/* stats: renders counts of candidates, verdicts, duplicates, tiers, trajectories and splits. */
#include "curate/stats.h"
#include "common/error.h"

/* Appends "  label  value" rows of a two-column query. */
static int add_table(sqlite3 *db, strbuf *out, const char *title, const char *sql, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, sql, err);
    if (!st)
        return -1;
    sb_addf(out, "%s\n", title);
    int rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        sb_addf(out, "  %-22s %s\n", k ? k : "(none)", (const char *)sqlite3_column_text(st, 1));
        rows++;
    }
    if (!rows)
        sb_adds(out, "  (none)\n");
    sqlite3_finalize(st);
    return 0;
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
    if (run <= 0) {
        sb_addf(out, "not curated yet: run `kcurate run --db %s`\n", db_path);
        return 0;
    }
    sb_addf(out, "curated by curate run %lld\n\n", run);
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
         "SELECT 'solved', printf('%d of %d (%.1f%%)', sum(solved), count(*),"
         " 100.0 * sum(solved) / max(count(*), 1)) FROM trajectory_labels"
         /* only where some candidate stopped at compilation; the count is taken in a subquery
            so that the line is left out (an aggregate over no rows still yields one row) */
         " UNION ALL SELECT 'solved, compile-only', printf('%d of %d (compiled, not run on a GPU;"
         " what kcollect --compile-only calls solved)', (SELECT count(DISTINCT t.trajectory_id)"
         " FROM turns t JOIN v_latest_verification v ON v.candidate_id = t.candidate_id"
         " WHERE v.verdict IN ('compiled', 'correct')), n)"
         " FROM (SELECT count(*) AS n FROM trajectory_labels)"
         " WHERE EXISTS (SELECT 1 FROM verifications WHERE verdict = 'compiled')"
         /* means over no solved trajectory (or no timed one) are unknown: '-' (printf gives 0.00) */
         " UNION ALL SELECT 'mean first correct turn', CASE WHEN avg(first_correct_turn) IS NULL THEN '-'"
         " ELSE printf('%.2f', avg(first_correct_turn)) END"
         " FROM trajectory_labels WHERE solved"
         " UNION ALL SELECT 'mean best speedup', CASE WHEN avg(best_speedup_eager) IS NULL"
         " THEN '-' ELSE printf('%.2fx', avg(best_speedup_eager)) END"
         " FROM trajectory_labels WHERE solved"},
        {"problems by split:",
         "SELECT split, count(*) FROM problem_labels GROUP BY 1 ORDER BY 1"},
        {"candidates by split:",
         "SELECT p.split, count(*) FROM candidates c JOIN problem_labels p ON p.problem_id ="
         " c.problem_id GROUP BY 1 ORDER BY 1"},
    };
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        if (add_table(db, out, tables[i].title, tables[i].sql, err))
            return -1;
        sb_addch(out, '\n');
    }
    return 0;
}
