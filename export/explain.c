/* explain: why an export wrote no record (see explain.h). Counts over the same tables the record
 * queries read (latest verification per candidate, labels, splits), never the records
 * themselves: it runs only when there are none. */
#include "export/explain.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

static int no_filter(const char *list) { return !list || !*list || !strcmp(list, "any"); }

/* " AND col IN ('a','b')" for a comma list, nothing for 'any' or none. */
static void in_list(strbuf *sql, const char *col, const char *list)
{
    if (no_filter(list))
        return;
    sb_addf(sql, " AND %s IN (", col);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        char *one = xstrndup(p, len);
        char *lit = sqlite3_mprintf("%s%Q", p == list ? "" : ",", one);
        sb_adds(sql, lit);
        sqlite3_free(lit);
        free(one);
        p += len + (p[len] == ',');
    }
    sb_addch(sql, ')');
}

static long long count(sqlite3 *db, const char *sql) { return kc_db_query_int(db, sql); }

/* Appends "name n, name n" rows of a two-column query (text, count). */
static void histogram(sqlite3 *db, const char *sql, strbuf *out)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return;
    int first = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        sb_addf(out, "%s%s %lld", first ? "" : ", ", name ? name : "(none)",
                (long long)sqlite3_column_int64(st, 1));
        first = 0;
    }
    if (first)
        sb_adds(out, "none");
    sqlite3_finalize(st);
}

/* The candidates of the exported problems, with their latest verdict, class and speedup. */
static void candidates_cte(const export_config *c, strbuf *sql)
{
    sb_adds(sql, "WITH scope AS (SELECT pr.id FROM problems pr JOIN problem_labels pl"
                 " ON pl.problem_id = pr.id WHERE 1");
    in_list(sql, "pl.split", c->splits);
    in_list(sql, "CAST(pr.level AS TEXT)", c->levels);
    export_degenerate_filter(c, sql);
    sb_adds(sql, "), cand AS (SELECT c.id, c.problem_id, c.source_sha, cl.verdict_class,"
                 " cl.speedup_eager, cl.near_rep_id, cl.exact_rep_id,"
                 " (SELECT v.verdict FROM verifications v WHERE v.candidate_id = c.id"
                 "  ORDER BY v.id DESC LIMIT 1) AS verdict,"
                 " (SELECT t.trajectory_id FROM turns t WHERE t.candidate_id = c.id) AS traj"
                 " FROM candidates c JOIN candidate_labels cl ON cl.candidate_id = c.id"
                 " WHERE c.problem_id IN scope) ");
}

static long long cand_count(sqlite3 *db, const export_config *c, const char *where)
{
    strbuf sql = STRBUF_INIT;
    candidates_cte(c, &sql);
    sb_addf(&sql, "SELECT count(*) FROM cand WHERE %s", where);
    long long n = count(db, sql.buf);
    sb_free(&sql);
    return n;
}

/* " AND verdict IN (...)" for a verdict list (any: nothing). */
static char *verdict_cond(const char *list)
{
    strbuf s = STRBUF_INIT;
    sb_adds(&s, "source_sha IS NOT NULL");
    in_list(&s, "verdict", list);
    return sb_detach(&s);
}

/* How many problems of the selected splits and levels are marked degenerate and left out. */
static void explain_degenerate(sqlite3 *db, const export_config *c, strbuf *out)
{
    if (c->include_degenerate)
        return;
    strbuf sql = STRBUF_INIT;
    sb_adds(&sql, "SELECT count(*) FROM problems pr JOIN problem_labels pl ON pl.problem_id = pr.id"
                  " WHERE " EXPORT_DEGENERATE_SQL);
    in_list(&sql, "pl.split", c->splits);
    in_list(&sql, "CAST(pr.level AS TEXT)", c->levels);
    long long n = count(db, sql.buf);
    if (n)
        sb_addf(out, "- of those splits and levels, problems marked degenerate (output trivial at "
                     "their inits), left out: %lld\n  try: --include-degenerate\n", n);
    sb_free(&sql);
}

static void explain_scope(sqlite3 *db, const export_config *c, strbuf *out, long long *in_scope)
{
    strbuf sql = STRBUF_INIT;
    candidates_cte(c, &sql);
    sb_adds(&sql, "SELECT count(*) FROM scope");
    *in_scope = count(db, sql.buf);
    sb_addf(out, "- problems in splits %s%s%s: %lld (all problems by split: ", c->splits,
            c->levels ? ", levels " : "", c->levels ? c->levels : "", *in_scope);
    histogram(db, "SELECT split, count(*) FROM problem_labels GROUP BY split ORDER BY split", out);
    sb_adds(out, ")\n");
    explain_degenerate(db, c, out);
    if (!*in_scope)
        sb_adds(out, "  try: --split train,valid,test,heldout (held-out problems are exported "
                     "only when named) or another --level\n");
    sb_free(&sql);
}

static void verdict_histogram(sqlite3 *db, const export_config *c, strbuf *out)
{
    strbuf sql = STRBUF_INIT;
    candidates_cte(c, &sql);
    sb_adds(&sql, "SELECT coalesce(verdict, 'not verified'), count(*) FROM cand GROUP BY 1"
                  " ORDER BY 2 DESC, 1");
    sb_adds(out, "- kernels of these problems by verdict: ");
    histogram(db, sql.buf, out);
    sb_adds(out, "\n");
    sb_free(&sql);
}

/* The filters after the verdicts: --min-speedup and duplicates. */
static void explain_later_filters(sqlite3 *db, const export_config *c, const char *cond,
                                  strbuf *out)
{
    strbuf w = STRBUF_INIT;
    sb_adds(&w, cond);
    if (c->min_speedup > 0) {
        sb_addf(&w, " AND speedup_eager >= %.17g", c->min_speedup);
        long long n = cand_count(db, c, w.buf);
        sb_addf(out, "- of those, with an eager speedup >= %g (--min-speedup): %lld\n",
                c->min_speedup, n);
        if (!n) {
            sb_adds(out, "  try: a lower --min-speedup (kernels without a timing have no speedup)\n");
            sb_free(&w);
            return;
        }
    }
    if (c->dedup != EXPORT_DEDUP_NONE) {
        sb_addf(&w, " AND (%s IS NULL OR %s = id)",
                c->dedup == EXPORT_DEDUP_NEAR ? "near_rep_id" : "exact_rep_id",
                c->dedup == EXPORT_DEDUP_NEAR ? "near_rep_id" : "exact_rep_id");
        sb_addf(out, "- of those, representatives of their duplicate cluster (--dedup %s): %lld\n",
                export_dedup_name(c->dedup), cand_count(db, c, w.buf));
        sb_adds(out, "  try: --dedup none (the representative of a cluster may have another verdict)\n");
    }
    sb_free(&w);
}

static void explain_sft(sqlite3 *db, const export_config *c, strbuf *out)
{
    const char *kept = c->verdicts ? c->verdicts : "correct";
    char *cond = verdict_cond(kept);
    long long n = cand_count(db, c, cond);
    sb_addf(out, "- %s keeps kernels whose verdict is %s (--verdict%s): %lld%s\n",
            export_format_name(c->format), kept,
            c->verdicts ? "" : ", default correct", n,
            c->sft_every_turn || c->format != EXPORT_SFT
                ? "" : " (then each trajectory's last one; --every-turn: all)");
    if (!n) {
        if (cand_count(db, c, "verdict = 'compiled'"))
            sb_adds(out, "  try: --verdict compiled (a compile-only run, no GPU: compiled, "
                         "correctness unknown; or verify on a GPU with kverify run)\n");
        else
            sb_adds(out, "  try: --verdict any, or a list of the verdicts above\n");
    } else {
        explain_later_filters(db, c, cond, out);
    }
    free(cond);
}

static void explain_multiturn(sqlite3 *db, const export_config *c, strbuf *out)
{
    long long traj = cand_count(db, c, "traj IS NOT NULL");
    sb_addf(out, "- multiturn exports collected trajectories: kernels with a trajectory: %lld\n",
            traj);
    if (!traj) {
        sb_adds(out, "  (imported kernels have none: collect with kcollect, or use --format sft)\n");
        return;
    }
    if (!no_filter(c->verdicts)) {
        long long solved = cand_count(db, c, "traj IN (SELECT trajectory_id FROM"
                                             " trajectory_labels WHERE solved)");
        sb_addf(out, "- --verdict %s keeps solved trajectories only, and turns with those "
                     "verdicts: turns of solved trajectories: %lld\n", c->verdicts, solved);
        sb_adds(out, "  try: --verdict any (every trajectory, solved or not)\n");
    }
}

static void explain_preference(sqlite3 *db, const export_config *c, strbuf *out)
{
    strbuf chosen = STRBUF_INIT, rejected = STRBUF_INIT;
    sb_adds(&chosen, "source_sha IS NOT NULL AND verdict_class = 'correct'");
    if (c->min_speedup > 0)
        sb_addf(&chosen, " AND speedup_eager >= %.17g", c->min_speedup);
    sb_adds(&rejected, "source_sha IS NOT NULL AND verdict IS NOT NULL AND"
                       " verdict_class IS NOT 'correct'");
    in_list(&rejected, "verdict", c->verdicts);
    long long nc = cand_count(db, c, chosen.buf), nr = cand_count(db, c, rejected.buf);
    strbuf both = STRBUF_INIT;
    sb_addf(&both, "problem_id IN (SELECT problem_id FROM cand WHERE %s) AND %s", chosen.buf,
            rejected.buf);
    long long nb = cand_count(db, c, both.buf);
    sb_addf(out, "- preference pairs a correct kernel (chosen%s) with a kernel of the same problem "
                 "that is not correct (rejected%s%s) and answered the same prompt: chosen "
                 "candidates %lld, rejected candidates %lld, rejected ones in a problem that has "
                 "a chosen one %lld\n",
            c->min_speedup > 0 ? ", with --min-speedup" : "",
            no_filter(c->verdicts) ? "" : ", verdict in ", no_filter(c->verdicts) ? "" : c->verdicts,
            nc, nr, nb);
    if (!nc && cand_count(db, c, "verdict = 'compiled'"))
        sb_adds(out, "  no kernel is known correct: this looks like a compile-only run (no GPU); "
                     "verify on a GPU (kverify run), or export --format sft --verdict compiled\n");
    else if (!nc)
        sb_adds(out, "  try: a lower --min-speedup, or collect until some kernels are correct\n");
    else if (!nr && !no_filter(c->verdicts))
        sb_adds(out, "  try: --verdict any (every kernel that is not correct may be rejected)\n");
    else if (nb && c->max_pairs == 0)
        sb_adds(out, "  try: --max-pairs 1 or more\n");
    else if (nb)
        sb_adds(out, "  the chosen and rejected kernels answered different prompts (their "
                     "trajectories were sent different specs or system messages)\n");
    sb_free(&chosen), sb_free(&rejected), sb_free(&both);
}

void export_explain_empty(sqlite3 *db, const export_config *c, strbuf *out)
{
    sb_reset(out);
    sb_addf(out, "0 %s records: why\n", export_format_name(c->format));
    long long in_scope;
    explain_scope(db, c, out, &in_scope);
    if (!in_scope || c->format == EXPORT_RL)
        return;
    verdict_histogram(db, c, out);
    switch (c->format) {
    case EXPORT_SFT:
    case EXPORT_KERNELBENCH: explain_sft(db, c, out); break;
    case EXPORT_MULTITURN: explain_multiturn(db, c, out); break;
    case EXPORT_PREFERENCE: explain_preference(db, c, out); break;
    default: break;
    }
}
