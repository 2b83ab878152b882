/* report_data: the numbers of `kcurate report`, read from the database into one JSON document
 * (see report.h). Every list is in a fixed order, so the same database gives the same JSON.
 * A turn succeeds when its candidate's latest verdict is correct, or compiled in a
 * compile-only run (as kcollect's stop rule says). A problem's solve time is its budget clock
 * (turns.problem_elapsed_ms: the wall time of all its samples together) at the end of its first
 * successful turn; for turns recorded before that clock existed, the trajectory's summed turn
 * wall time stands in. Fractions of peak use the problem's output dtype (read from its manifest):
 * f16/bf16 problems against the dense tensor-core peak, all others against the FP32 CUDA-core
 * peak (the verifier forbids TF32 for f32 problems). */
#include "curate/report.h"
#include "common/error.h"
#include "common/gpu_peaks.h"
#include "common/verdicts.h"
#include "curate/flips.h"
#include "curate/passk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One candidate with its turn, run, latest verification and its problem's output dtype and
 * whether the manifest has a FLOP formula (NULLs as 0 / ""). */
typedef struct row {
    long long id, trajectory;
    const char *problem, *suite, *origin, *verdict, *flags, *gpu, *group, *dtype;
    int turn, has_turn, compile_only, timed, has_flops;
    double speedup, gbps, tflops, elapsed_ms, tokens_in, tokens_out, cost;
    int has_cost;
} row;

static const char rows_sql[] =
    "WITH tt AS (SELECT t.*, coalesce(t.problem_elapsed_ms, sum(coalesce(t.wall_ms, 0)) OVER"
    "   (PARTITION BY t.trajectory_id ORDER BY t.turn_index)) AS elapsed FROM turns t),"
    " pm AS MATERIALIZED (SELECT p.id,"
    "   coalesce(json_extract(CAST(b.data AS TEXT), '$.outputs[0].dtype'), '') AS dtype,"
    "   json_extract(CAST(b.data AS TEXT), '$.flops') IS NOT NULL AS has_flops"
    "   FROM problems p LEFT JOIN blobs b ON b.sha256 = p.manifest_sha)"
    " SELECT c.id, c.problem_id, p.suite, c.origin, coalesce(v.verdict, ''), coalesce(v.flags, ''),"
    "  coalesce(v.gpu_name, ''), coalesce(r.model, ''), tt.trajectory_id, tt.turn_index,"
    "  coalesce(json_extract(r.config_json, '$.compile_only'), 0), tm.speedup_eager, tm.gbps,"
    "  tm.tflops, tt.elapsed, coalesce(tt.tokens_in, 0), coalesce(tt.tokens_out, 0), tt.cost_usd,"
    "  tm.id IS NOT NULL, pm.dtype, pm.has_flops,"
    "  coalesce(json_extract(r.config_json, '$.strategy'), 'loop')"
    " FROM candidates c JOIN problems p ON p.id = c.problem_id JOIN pm ON pm.id = p.id"
    " LEFT JOIN tt ON tt.candidate_id = c.id"
    " LEFT JOIN trajectories tr ON tr.id = tt.trajectory_id"
    " LEFT JOIN runs r ON r.id = tr.run_id"
    " LEFT JOIN v_latest_verification v ON v.candidate_id = c.id"
    " LEFT JOIN timings tm ON tm.id = (SELECT max(id) FROM timings WHERE verification_id = v.id)"
    " ORDER BY c.problem_id, c.id";

static char *col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return xstrdup(s ? (const char *)s : "");
}

static void free_rows(row *r, int n)
{
    for (int i = 0; i < n; i++) {
        free((char *)r[i].problem), free((char *)r[i].suite), free((char *)r[i].origin);
        free((char *)r[i].verdict), free((char *)r[i].flags), free((char *)r[i].gpu);
        free((char *)r[i].group), free((char *)r[i].dtype);
    }
    free(r);
}

static int load_rows(sqlite3 *db, row **out, int *n, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, rows_sql, err);
    if (!st)
        return -1;
    int cap = 0;
    *out = NULL, *n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (*n == cap)
            cap = cap ? 2 * cap : 256, *out = xrealloc(*out, (size_t)cap * sizeof **out);
        row *r = &(*out)[(*n)++];
        memset(r, 0, sizeof *r);
        r->id = sqlite3_column_int64(st, 0);
        r->problem = col_dup(st, 1), r->suite = col_dup(st, 2), r->origin = col_dup(st, 3);
        r->verdict = col_dup(st, 4), r->flags = col_dup(st, 5), r->gpu = col_dup(st, 6);
        r->has_turn = sqlite3_column_type(st, 8) != SQLITE_NULL;
        strbuf g = STRBUF_INIT;
        const char *strategy = (const char *)sqlite3_column_text(st, 21);
        if (r->has_turn) /* the default strategy's groups keep their names */
            sb_addf(&g, "%s \xc2\xb7 %s%s%s", r->suite, sqlite3_column_text(st, 7),
                    strcmp(strategy, "loop") ? " \xc2\xb7 " : "",
                    strcmp(strategy, "loop") ? strategy : "");
        r->group = sb_detach(&g);
        r->trajectory = sqlite3_column_int64(st, 8);
        r->turn = sqlite3_column_int(st, 9);
        r->compile_only = sqlite3_column_int(st, 10);
        r->speedup = sqlite3_column_double(st, 11);
        r->gbps = sqlite3_column_double(st, 12);
        r->tflops = sqlite3_column_double(st, 13);
        r->elapsed_ms = sqlite3_column_double(st, 14);
        r->tokens_in = sqlite3_column_double(st, 15);
        r->tokens_out = sqlite3_column_double(st, 16);
        r->has_cost = sqlite3_column_type(st, 17) != SQLITE_NULL;
        r->cost = sqlite3_column_double(st, 17);
        r->timed = sqlite3_column_int(st, 18);
        r->dtype = col_dup(st, 19);
        r->has_flops = sqlite3_column_int(st, 20);
    }
    sqlite3_finalize(st);
    return 0;
}

static int is_success(const row *r)
{
    return !strcmp(r->verdict, "correct") || (r->compile_only && !strcmp(r->verdict, "compiled"));
}

static int is_correct(const row *r) { return !strcmp(r->verdict, "correct"); }

/* ---- per group and problem ---- */

/* What one group (suite, model) knows of one problem. */
typedef struct gp {
    const char *group, *problem;
    double solve_ms; /* < 0: not solved */
    int solve_turn;  /* first successful turn index, -1: none */
    int correct;
    double best_speedup;
} gp;

static gp *gp_find(gp **list, int *n, const char *group, const char *problem)
{
    for (int i = *n - 1; i >= 0; i--)
        if (!strcmp((*list)[i].group, group) && !strcmp((*list)[i].problem, problem))
            return &(*list)[i];
    *list = xrealloc(*list, (size_t)(*n + 1) * sizeof **list);
    gp *g = &(*list)[(*n)++];
    *g = (gp){group, problem, -1, -1, 0, 0};
    return g;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static json_t *pt(double x, double y) { return json_pack("[f,f]", x, y); }

/* Solve rate against the minutes budget: a step curve through every solve time. */
static json_t *solve_minutes_curve(const gp *g, int n, const char *group, double max_ms)
{
    double *t = xcalloc((size_t)n + 1, sizeof *t);
    int problems = 0, solved = 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(g[i].group, group)) {
            problems++;
            if (g[i].solve_ms >= 0)
                t[solved++] = g[i].solve_ms;
        }
    qsort(t, (size_t)solved, sizeof *t, cmp_double);
    json_t *pts = json_array();
    json_array_append_new(pts, pt(0, 0));
    for (int k = 0; k < solved; k++)
        json_array_append_new(pts, pt(t[k] / 60000.0, (double)(k + 1) / problems));
    json_array_append_new(pts, pt(max_ms / 60000.0, (double)solved / (problems ? problems : 1)));
    free(t);
    return json_pack("{s:s, s:i, s:i, s:o}", "group", group, "problems", problems, "solved",
                     solved, "points", pts);
}

static json_t *solve_turns_curve(const gp *g, int n, const char *group, int max_turns)
{
    int problems = 0;
    for (int i = 0; i < n; i++)
        problems += !strcmp(g[i].group, group);
    json_t *pts = json_array();
    for (int T = 1; T <= max_turns; T++) {
        int solved = 0;
        for (int i = 0; i < n; i++)
            solved += !strcmp(g[i].group, group) && g[i].solve_turn >= 0 && g[i].solve_turn < T;
        json_array_append_new(pts, pt(T, (double)solved / (problems ? problems : 1)));
    }
    return json_pack("{s:s, s:i, s:o}", "group", group, "problems", problems, "points", pts);
}

/* KernelBench fast_p: the share of problems with a correct kernel faster than p x eager. */
static json_t *fast_p(const gp *g, int n, const char *group)
{
    static const double ps[] = {0, 1, 1.5, 2};
    static const char *const names[] = {"0", "1", "1.5", "2"};
    json_t *vals = json_object();
    int problems = 0;
    for (int i = 0; i < n; i++)
        problems += !strcmp(g[i].group, group);
    for (int k = 0; k < 4; k++) {
        int hits = 0;
        for (int i = 0; i < n; i++)
            hits += !strcmp(g[i].group, group) && g[i].correct &&
                    (ps[k] == 0 || g[i].best_speedup > ps[k]);
        json_object_set_new(vals, names[k], json_real((double)hits / (problems ? problems : 1)));
    }
    return json_pack("{s:s, s:i, s:o}", "group", group, "problems", problems, "values", vals);
}

/* ---- histograms ---- */

static json_t *histogram(const char *const *labels, const int *counts, int nbins, int total)
{
    json_t *l = json_array(), *c = json_array();
    for (int i = 0; i < nbins; i++) {
        json_array_append_new(l, json_string(labels[i]));
        json_array_append_new(c, json_integer(counts[i]));
    }
    return json_pack("{s:o, s:o, s:i}", "bins", l, "counts", c, "n", total);
}

/* Eager speedups of correct kernels in log2 bins. */
static json_t *speedup_hist(const row *r, int n)
{
    static const char *const labels[] = {"<1/16x", "1/16-1/8x", "1/8-1/4x", "1/4-1/2x",
                                         "1/2-1x", "1-2x", "2-4x", "4-8x", "8-16x", ">=16x"};
    int counts[10] = {0}, total = 0;
    for (int i = 0; i < n; i++) {
        if (!is_correct(&r[i]) || r[i].speedup <= 0)
            continue;
        int b = (int)floor(log2(r[i].speedup)) + 5;
        counts[b < 0 ? 0 : b > 9 ? 9 : b]++;
        total++;
    }
    return histogram(labels, counts, 10, total);
}

/* Achieved over attainable performance (roofline) of correct kernels with bytes/FLOPs known. */
static json_t *roofline_hist(const row *r, int n)
{
    static const char *const labels[] = {"0-10%", "10-20%", "20-30%", "30-40%", "40-50%", "50-60%",
                                         "60-70%", "70-80%", "80-90%", "90-100%", ">100%"};
    int counts[11] = {0}, total = 0;
    for (int i = 0; i < n; i++) {
        double bw, fl;
        if (!is_correct(&r[i]) || r[i].gbps <= 0 || !kc_gpu_peaks(r[i].gpu, r[i].dtype, &bw, &fl))
            continue;
        double frac = r[i].gbps / bw;
        if (r[i].tflops > 0) {
            double intensity = r[i].tflops * 1e3 / r[i].gbps; /* FLOP per byte */
            double attainable = fmin(fl, intensity * bw / 1e3);
            frac = r[i].tflops / attainable;
        }
        int b = (int)floor(frac * 10);
        counts[b < 0 ? 0 : b > 10 ? 10 : b]++;
        total++;
    }
    return histogram(labels, counts, 11, total);
}

/* ---- verdict mix, cost, problems, suspicious ---- */

static json_t *verdict_mix(const row *r, int n)
{
    int max_turn = -1;
    for (int i = 0; i < n; i++)
        if (r[i].has_turn && r[i].turn > max_turn)
            max_turn = r[i].turn;
    json_t *turns = json_array(), *by = json_object();
    for (int t = 0; t <= max_turn; t++)
        json_array_append_new(turns, json_integer(t));
    for (int k = 0; k < KC_N_VERDICTS; k++) {
        json_t *counts = json_array();
        int any = 0;
        for (int t = 0; t <= max_turn; t++) {
            int c = 0;
            for (int i = 0; i < n; i++)
                c += r[i].has_turn && r[i].turn == t && !strcmp(r[i].verdict, kc_verdicts[k].name);
            any += c;
            json_array_append_new(counts, json_integer(c));
        }
        if (any)
            json_object_set_new(by, kc_verdicts[k].name, counts);
        else
            json_decref(counts);
    }
    return json_pack("{s:o, s:o}", "turns", turns, "verdicts", by);
}

static json_t *cost_of(const row *r, int n, const char *group, const report_options *o)
{
    double in = 0, out = 0, usd = 0;
    int recorded = 0;
    for (int i = 0; i < n; i++)
        if (r[i].has_turn && !strcmp(r[i].group, group)) {
            in += r[i].tokens_in, out += r[i].tokens_out;
            if (r[i].has_cost && r[i].cost > 0)
                usd += r[i].cost, recorded = 1;
        }
    json_t *j = json_pack("{s:s, s:f, s:f}", "group", group, "tokens_in", in, "tokens_out", out);
    if (recorded)
        json_object_set_new(j, "usd", json_real(usd)), json_object_set_new(j, "usd_source",
                                                                           json_string("recorded"));
    else if (o->price_in > 0 || o->price_out > 0)
        json_object_set_new(j, "usd", json_real((in * o->price_in + out * o->price_out) / 1e6)),
            json_object_set_new(j, "usd_source", json_string("--price-in/--price-out"));
    return j;
}

/* Better kernel for a problem's table row: success, then speed, then the earlier one. */
static int better(const row *a, const row *b)
{
    if (is_success(a) != is_success(b))
        return is_success(a);
    return a->speedup > b->speedup;
}

/* The problem's dtype, the peak it is measured against, and the fastest correct kernel's
 * achieved TFLOP/s and fraction of that peak (when the manifest has a FLOP formula and the GPU's
 * peaks are known); fastest: highest eager speedup, the earlier one on ties. */
static void peak_columns(json_t *p, const row *r, int i, int j)
{
    const row *fast = NULL;
    for (int k = i; k < j; k++)
        if (is_correct(&r[k]) && (!fast || r[k].speedup > fast->speedup))
            fast = &r[k];
    json_object_set_new(p, "dtype", json_string(r[i].dtype));
    json_object_set_new(p, "peak", json_string(kc_peak_name(r[i].dtype)));
    double bw, fl;
    int known = fast && r[i].has_flops && fast->tflops > 0;
    json_object_set_new(p, "best_tflops", known ? json_real(fast->tflops) : json_null());
    known = known && kc_gpu_peaks(fast->gpu, fast->dtype, &bw, &fl);
    json_object_set_new(p, "peak_tflops", known ? json_real(fl) : json_null());
    json_object_set_new(p, "peak_fraction", known ? json_real(fast->tflops / fl) : json_null());
}

/* Row j is the first of rows [from, j] of its trajectory: rows come in candidate order, where
 * concurrent trajectories interleave, so a change of trajectory is not a new one. */
static int first_of_trajectory(const row *r, int from, int j)
{
    for (int k = from; k < j; k++)
        if (r[k].has_turn && r[k].trajectory == r[j].trajectory)
            return 0;
    return 1;
}

static json_t *problem_rows(const row *r, int n, json_t *kernels)
{
    json_t *out = json_array();
    for (int i = 0; i < n;) {
        int j = i, best = i, first_turn = -1, solved = 0, trajectories = 0;
        double solve_ms = -1, best_speedup = 0;
        for (; j < n && !strcmp(r[j].problem, r[i].problem); j++) {
            if (better(&r[j], &r[best]))
                best = j;
            if (r[j].has_turn && first_of_trajectory(r, i, j))
                trajectories++;
            if (!is_success(&r[j]))
                continue;
            solved = 1;
            if (r[j].has_turn && (first_turn < 0 || r[j].turn < first_turn))
                first_turn = r[j].turn;
            if (r[j].has_turn && (solve_ms < 0 || r[j].elapsed_ms < solve_ms))
                solve_ms = r[j].elapsed_ms;
            if (is_correct(&r[j]) && r[j].speedup > best_speedup)
                best_speedup = r[j].speedup;
        }
        if (!solved) /* nothing worked: link the latest attempt */
            best = j - 1;
        json_t *p = json_pack("{s:s, s:s, s:i, s:i, s:b, s:I, s:s}", "id", r[i].problem, "suite",
                              r[i].suite, "attempts", j - i, "trajectories", trajectories,
                              "solved", solved, "best_candidate", (json_int_t)r[best].id,
                              "best_verdict", r[best].verdict);
        json_object_set_new(p, "first_solved_turn", first_turn >= 0 ? json_integer(first_turn + 1) : json_null());
        json_object_set_new(p, "solve_minutes", solve_ms >= 0 ? json_real(solve_ms / 60000.0) : json_null());
        json_object_set_new(p, "best_speedup", best_speedup > 0 ? json_real(best_speedup) : json_null());
        peak_columns(p, r, i, j);
        json_array_append_new(out, p);
        json_array_append_new(kernels, json_integer(r[best].id));
        i = j;
    }
    return out;
}

static json_t *suspicious(const row *r, int n, json_t *kernels)
{
    json_t *out = json_array();
    for (int i = 0; i < n; i++) {
        int flagged = strstr(r[i].flags, "suspicious_speedup") != NULL;
        int fast = is_correct(&r[i]) && r[i].speedup > 10;
        int odd = strstr(r[i].flags, "nondeterministic") != NULL;
        if (!flagged && !fast && !odd)
            continue;
        json_t *s = json_pack("{s:I, s:s, s:s, s:s, s:s}", "candidate_id", (json_int_t)r[i].id,
                              "problem_id", r[i].problem, "verdict", r[i].verdict, "flags",
                              r[i].flags, "reason",
                              flagged ? "verifier flag suspicious_speedup"
                              : fast  ? "eager speedup above 10x"
                                      : "nondeterministic results");
        json_object_set_new(s, "speedup_eager", r[i].speedup > 0 ? json_real(r[i].speedup) : json_null());
        json_array_append_new(out, s);
        json_array_append_new(kernels, json_integer(r[i].id));
    }
    return out;
}

/* ---- the document ---- */

static json_t *groups_of(const row *r, int n)
{
    json_t *g = json_array();
    for (int i = 0; i < n; i++) {
        if (!r[i].has_turn)
            continue;
        int seen = 0;
        for (size_t k = 0; k < json_array_size(g) && !seen; k++)
            seen = !strcmp(json_string_value(json_array_get(g, k)), r[i].group);
        if (!seen)
            json_array_append_new(g, json_string(r[i].group));
    }
    /* sorted, for a stable legend */
    for (size_t a = 0; a < json_array_size(g); a++)
        for (size_t b = a + 1; b < json_array_size(g); b++)
            if (strcmp(json_string_value(json_array_get(g, a)), json_string_value(json_array_get(g, b))) > 0) {
                json_t *x = json_incref(json_array_get(g, a));
                json_array_set(g, a, json_array_get(g, b));
                json_array_set_new(g, b, x);
            }
    return g;
}

static gp *group_problems(const row *r, int n, int *ngp, double *max_ms, int *max_turns)
{
    gp *list = NULL;
    *ngp = 0, *max_ms = 0, *max_turns = 0;
    for (int i = 0; i < n; i++) {
        if (!r[i].has_turn)
            continue;
        gp *g = gp_find(&list, ngp, r[i].group, r[i].problem);
        if (r[i].elapsed_ms > *max_ms)
            *max_ms = r[i].elapsed_ms;
        if (r[i].turn + 1 > *max_turns)
            *max_turns = r[i].turn + 1;
        if (is_success(&r[i])) {
            if (g->solve_ms < 0 || r[i].elapsed_ms < g->solve_ms)
                g->solve_ms = r[i].elapsed_ms;
            if (g->solve_turn < 0 || r[i].turn < g->solve_turn)
                g->solve_turn = r[i].turn;
        }
        if (is_correct(&r[i])) {
            g->correct = 1;
            if (r[i].speedup > g->best_speedup)
                g->best_speedup = r[i].speedup;
        }
    }
    return list;
}

static double problem_budget_minutes(sqlite3 *db)
{
    sqlite3_stmt *st = kc_db_prepare(db, "SELECT max(json_extract(config_json, "
                                         "'$.problem_budget_minutes')) FROM runs", NULL);
    double m = 0;
    if (st && sqlite3_step(st) == SQLITE_ROW)
        m = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return m;
}

json_t *report_data(sqlite3 *db, const report_options *o, strbuf *err)
{
    row *r = NULL;
    int n = 0;
    if (load_rows(db, &r, &n, err))
        return NULL;
    json_t *flips = curate_flips_json(db, err);
    json_t *metrics = flips ? passk_metrics(db, err) : NULL;
    if (!metrics) {
        json_decref(flips);
        free_rows(r, n);
        return NULL;
    }
    int ngp, max_turns;
    double max_ms;
    gp *g = group_problems(r, n, &ngp, &max_ms, &max_turns);
    double budget = problem_budget_minutes(db);
    if (budget * 60000.0 > max_ms)
        max_ms = budget * 60000.0;
    json_t *groups = groups_of(r, n), *sm = json_array(), *st = json_array(), *fp = json_array(),
           *cost = json_array(), *kernels = json_array();
    size_t k;
    json_t *gv;
    json_array_foreach(groups, k, gv)
    {
        const char *name = json_string_value(gv);
        json_array_append_new(sm, solve_minutes_curve(g, ngp, name, max_ms));
        json_array_append_new(st, solve_turns_curve(g, ngp, name, max_turns));
        json_array_append_new(fp, fast_p(g, ngp, name));
        json_array_append_new(cost, cost_of(r, n, name, o));
    }
    json_t *doc = json_object();
    json_object_set_new(doc, "format", json_string("kcorpus-report v1"));
    json_object_set_new(doc, "database", json_pack("{s:I, s:I, s:I, s:I}",
        "problems", (json_int_t)kc_db_query_int(db, "SELECT count(DISTINCT problem_id) FROM candidates"),
        "candidates", (json_int_t)kc_db_query_int(db, "SELECT count(*) FROM candidates"),
        "turns", (json_int_t)kc_db_query_int(db, "SELECT count(*) FROM turns"),
        "verifications", (json_int_t)kc_db_query_int(db, "SELECT count(*) FROM verifications")));
    json_object_set_new(doc, "problem_budget_minutes", budget > 0 ? json_real(budget) : json_null());
    json_object_set_new(doc, "groups", groups);
    json_object_set_new(doc, "solve_minutes", sm);
    json_object_set_new(doc, "solve_turns", st);
    json_object_set_new(doc, "fast_p", fp);
    json_object_set_new(doc, "metrics", metrics);
    json_object_set_new(doc, "verdict_mix", verdict_mix(r, n));
    json_object_set_new(doc, "speedup_hist", speedup_hist(r, n));
    json_object_set_new(doc, "roofline_hist", roofline_hist(r, n));
    json_object_set_new(doc, "cost", cost);
    json_object_set_new(doc, "problems", problem_rows(r, n, kernels));
    json_object_set_new(doc, "suspicious", suspicious(r, n, kernels));
    json_object_set_new(doc, "flips", flips);
    json_object_set_new(doc, "kernels", kernels);
    free(g);
    free_rows(r, n);
    return doc;
}
