/* passk: pass@k, fast_p@k and speedup@k per suite, model and strategy (see passk.h). */
#include "curate/passk.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

static const int ks[] = {1, 5, 10};
#define N_K 3
static const double ps[] = {0, 1, 1.5, 2};
static const char *const p_names[] = {"0", "1", "1.5", "2"};
#define N_P 4

double passk_estimate(int n, int c, int k)
{
    if (k < 1 || n < k || c < 0 || c > n)
        return -1;
    if (n - c < k)
        return 1.0;
    double fail = 1.0; /* C(n-c,k)/C(n,k) = prod_{i=n-c+1..n} (1 - k/i) */
    for (int i = n - c + 1; i <= n; i++)
        fail *= 1.0 - (double)k / i;
    return 1.0 - fail;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double speedupk_estimate(double *v, int n, int k)
{
    if (k < 1 || n < k)
        return -1;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double w = (double)k / n, sum = 0; /* w_i = C(i-1,k-1)/C(n,k): the chance v_i is the best */
    for (int i = n; i >= k; i--) {
        sum += w * v[i - 1];
        if (i > 1)
            w *= (double)(i - k) / (i - 1);
    }
    return sum;
}

/* ---- per group ---- */

#define SAMPLES_SQL                                                                               \
    "SELECT p.suite, coalesce(r.model, ''), coalesce(json_extract(r.config_json, '$.strategy'),"   \
    " 'loop'), tr.problem_id,"                                                                    \
    " EXISTS (SELECT 1 FROM turns t JOIN v_latest_verification v ON v.candidate_id ="            \
    "  t.candidate_id WHERE t.trajectory_id = tr.id AND v.verdict = 'correct'),"                   \
    " (SELECT max(tm.speedup_eager) FROM turns t JOIN v_latest_verification v ON"                 \
    "  v.candidate_id = t.candidate_id JOIN timings tm ON tm.verification_id = v.id"              \
    "  WHERE t.trajectory_id = tr.id AND v.verdict = 'correct'),"                                 \
    " (SELECT count(*) FROM turns t WHERE t.trajectory_id = tr.id),"                              \
    " coalesce(json_extract(r.config_json, '$.compile_only'), 0) <> 0,"                            \
    " EXISTS (SELECT 1 FROM turns t JOIN v_latest_verification v ON v.candidate_id ="            \
    "  t.candidate_id WHERE t.trajectory_id = tr.id AND v.verdict = 'compiled')"                   \
    " FROM trajectories tr JOIN problems p ON p.id = tr.problem_id JOIN runs r ON r.id = tr.run_id" \
    " WHERE EXISTS (SELECT 1 FROM turns t WHERE t.trajectory_id = tr.id)"                          \
    " ORDER BY 1, 2, 3, 8, 4, tr.id"
/* The columns of SAMPLES_SQL: S_COMPILE_ONLY is the run's --compile-only, S_NOT_RUN whether a
 * turn's kernel compiled and was never run (verdict 'compiled': its correctness is unknown). */
enum { S_SUITE, S_MODEL, S_STRATEGY, S_PROBLEM, S_CORRECT, S_SPEEDUP, S_TURNS, S_COMPILE_ONLY,
       S_NOT_RUN };

/* The sums of one group while its rows come (problems in order). */
typedef struct group_acc {
    json_t *obj;
    int problems, samples, solved_problems, solved_samples;
    int not_run; /* samples with a kernel that compiled and was never run: nothing is measured */
    long turns;
    int with_k[N_K];
    double pass[N_K], fast[N_P][N_K], speedup[N_K];
} group_acc;

/* One problem's samples: correct flags and speedups (0 when not correct). */
typedef struct problem_samples {
    int n, cap, *correct;
    double *speedup;
} problem_samples;

static void add_problem(group_acc *g, problem_samples *s)
{
    if (!s->n)
        return;
    g->problems++;
    g->samples += s->n;
    int c = 0, cp[N_P] = {0};
    for (int i = 0; i < s->n; i++) {
        c += s->correct[i];
        g->solved_samples += s->correct[i];
        for (int j = 0; j < N_P; j++)
            cp[j] += s->correct[i] && (ps[j] == 0 || s->speedup[i] > ps[j]);
    }
    g->solved_problems += c > 0;
    for (int q = 0; q < N_K; q++) {
        if (s->n < ks[q])
            continue;
        g->with_k[q]++;
        g->pass[q] += passk_estimate(s->n, c, ks[q]);
        for (int j = 0; j < N_P; j++)
            g->fast[j][q] += passk_estimate(s->n, cp[j], ks[q]);
        g->speedup[q] += speedupk_estimate(s->speedup, s->n, ks[q]);
    }
    s->n = 0;
}

/* {k: mean} for each k some problem has; null values where nothing was measured. */
static json_t *per_k(const double *sum, const int *with_k, int measured)
{
    json_t *o = json_object();
    for (int q = 0; q < N_K; q++)
        if (with_k[q]) {
            char key[8];
            snprintf(key, sizeof key, "%d", ks[q]);
            json_object_set_new(o, key, measured ? json_real(sum[q] / with_k[q]) : json_null());
        }
    return o;
}

static json_t *count_or_null(int n, int measured) { return measured ? json_integer(n) : json_null(); }

static void finish_group(group_acc *g, json_t *list)
{
    if (!g->obj)
        return;
    json_t *withk = json_object(), *fast = json_object();
    for (int q = 0; q < N_K; q++) {
        char key[8];
        snprintf(key, sizeof key, "%d", ks[q]);
        json_object_set_new(withk, key, json_integer(g->with_k[q]));
    }
    /* a kernel that compiled and was never run is neither correct nor wrong: a group with one
       (a compile-only run) has no pass@k, fast_p@k or speedup@k, and no count of correct */
    int measured = !g->not_run;
    for (int j = 0; j < N_P; j++)
        json_object_set_new(fast, p_names[j], per_k(g->fast[j], g->with_k, measured));
    json_object_set_new(g->obj, "measured", json_boolean(measured));
    json_object_set_new(g->obj, "problems", json_integer(g->problems));
    json_object_set_new(g->obj, "samples", json_integer(g->samples));
    json_object_set_new(g->obj, "solved_problems", count_or_null(g->solved_problems, measured));
    json_object_set_new(g->obj, "solved_samples", count_or_null(g->solved_samples, measured));
    json_object_set_new(g->obj, "mean_turns", json_real(g->samples ? (double)g->turns / g->samples : 0));
    json_object_set_new(g->obj, "k", withk);
    json_object_set_new(g->obj, "pass_at_k", per_k(g->pass, g->with_k, measured));
    json_object_set_new(g->obj, "fast_p_at_k", fast);
    json_object_set_new(g->obj, "speedup_at_k", per_k(g->speedup, g->with_k, measured));
    json_array_append_new(list, g->obj);
    memset(g, 0, sizeof *g);
}

static const char *col(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? (const char *)s : "";
}

static int same_group(json_t *obj, sqlite3_stmt *st)
{
    return obj && !strcmp(json_string_value(json_object_get(obj, "suite")), col(st, S_SUITE)) &&
           !strcmp(json_string_value(json_object_get(obj, "model")), col(st, S_MODEL)) &&
           !strcmp(json_string_value(json_object_get(obj, "strategy")), col(st, S_STRATEGY)) &&
           json_is_true(json_object_get(obj, "compile_only")) == sqlite3_column_int(st, S_COMPILE_ONLY);
}

json_t *passk_metrics(sqlite3 *db, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, SAMPLES_SQL, err);
    if (!st)
        return NULL;
    json_t *list = json_array();
    group_acc g = {0};
    problem_samples s = {0};
    char problem[512] = "";
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int new_group = !same_group(g.obj, st);
        if (new_group || strcmp(problem, col(st, S_PROBLEM))) {
            add_problem(&g, &s);
            snprintf(problem, sizeof problem, "%s", col(st, S_PROBLEM));
        }
        if (new_group) {
            finish_group(&g, list);
            g.obj = json_pack("{s:s, s:s, s:s, s:b}", "suite", col(st, S_SUITE), "model",
                              col(st, S_MODEL), "strategy", col(st, S_STRATEGY), "compile_only",
                              sqlite3_column_int(st, S_COMPILE_ONLY));
        }
        if (s.n == s.cap) {
            s.cap = s.cap ? 2 * s.cap : 16;
            s.correct = xrealloc(s.correct, (size_t)s.cap * sizeof *s.correct);
            s.speedup = xrealloc(s.speedup, (size_t)s.cap * sizeof *s.speedup);
        }
        s.correct[s.n] = sqlite3_column_int(st, S_CORRECT);
        s.speedup[s.n] = s.correct[s.n] ? sqlite3_column_double(st, S_SPEEDUP) : 0;
        s.n++;
        g.turns += sqlite3_column_int64(st, S_TURNS);
        g.not_run += !s.correct[s.n - 1] && sqlite3_column_int(st, S_NOT_RUN);
    }
    add_problem(&g, &s);
    finish_group(&g, list);
    free(s.correct), free(s.speedup);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        json_decref(list);
        kc_fail(err, "database: %s", sqlite3_errmsg(db));
        return NULL;
    }
    return list;
}

/* " name@k x.xxx" for each k the group has, "-" where none. */
static void add_values(strbuf *out, const char *name, json_t *vals, const char *fmt)
{
    for (int q = 0; q < N_K; q++) {
        char key[8];
        snprintf(key, sizeof key, "%d", ks[q]);
        json_t *v = json_object_get(vals, key);
        sb_addf(out, "  %s@%d ", name, ks[q]);
        if (json_is_number(v))
            sb_addf(out, fmt, json_real_value(v));
        else
            sb_adds(out, "-");
    }
}

void passk_text(json_t *metrics, strbuf *out)
{
    sb_adds(out, "pass@k, fast_p@k, speedup@k (samples = trajectories; per problem, averaged over "
                 "problems with n >= k):\n");
    if (!json_array_size(metrics))
        sb_adds(out, "  (none)\n");
    size_t i;
    json_t *g;
    json_array_foreach(metrics, i, g)
    {
        char solved[32] = "-", correct[32] = "-";
        if (json_is_integer(json_object_get(g, "solved_problems")))
            snprintf(solved, sizeof solved, "%lld",
                     (long long)json_integer_value(json_object_get(g, "solved_problems")));
        if (json_is_integer(json_object_get(g, "solved_samples")))
            snprintf(correct, sizeof correct, "%lld",
                     (long long)json_integer_value(json_object_get(g, "solved_samples")));
        sb_addf(out, "  %s \xc2\xb7 %s \xc2\xb7 %s%s: %lld problems (%s solved), %lld samples "
                     "(%s correct), %.2f turns per sample\n   ",
                json_string_value(json_object_get(g, "suite")),
                json_string_value(json_object_get(g, "model")),
                json_string_value(json_object_get(g, "strategy")),
                json_is_true(json_object_get(g, "compile_only")) ? " \xc2\xb7 compile-only" : "",
                (long long)json_integer_value(json_object_get(g, "problems")), solved,
                (long long)json_integer_value(json_object_get(g, "samples")), correct,
                json_real_value(json_object_get(g, "mean_turns")));
        if (!json_is_true(json_object_get(g, "measured")))
            sb_adds(out, "(not measured: nothing of this group was run on a GPU; its kernels only "
                         "compiled, so whether they are correct or fast is unknown)\n   ");
        add_values(out, "pass", json_object_get(g, "pass_at_k"), "%.3f");
        sb_adds(out, "\n   ");
        add_values(out, "speedup", json_object_get(g, "speedup_at_k"), "%.2fx");
        sb_adds(out, "\n");
        json_t *fast = json_object_get(g, "fast_p_at_k");
        for (int j = 0; j < N_P; j++) {
            char name[16];
            snprintf(name, sizeof name, "fast_%s", p_names[j]);
            sb_adds(out, "   ");
            add_values(out, name, json_object_get(fast, p_names[j]), "%.3f");
            sb_adds(out, "\n");
        }
    }
}
