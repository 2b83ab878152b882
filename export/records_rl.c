/* records_rl: kexport --format rl: one record per problem (prompt, ground truth for a reward
 * function), built with jansson. */
#include "export/records.h"
#include "export/formats.h"
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

static json_t *message(const char *role, const char *content)
{
    return json_pack("{s:s, s:s}", "role", role, "content", content);
}

/* A real column for jansson: null when NULL or not finite (named in *nonfinite then). */
static json_t *opt_real(sqlite3_stmt *st, int col, const char *key, strbuf *nonfinite)
{
    double v = sqlite3_column_double(st, col);
    if (export_col_is_null(st, col))
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
    *failed = export_get_blob(x, sha, &m, err);
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
    const char *pid = export_col_text(st, 0), *split = export_col_text(st, 3);
    const char *spec = export_problem_spec(x, pid, err);
    strbuf ref = STRBUF_INIT;
    int failed = !spec || export_get_blob(x, export_col_text(st, 5), &ref, err);
    json_t *manifest = failed ? NULL : manifest_of(x, export_col_text(st, 4), err, &failed);
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
        message("system", export_built_system(x)), message("user", spec), "ability", "cuda-kernel",
        "reward_model", "style", "rule", "ground_truth", truth, "extra_info", "split", split,
        "index", (json_int_t)index, "problem_id", pid, "level", sqlite3_column_int(st, 1), "title",
        export_col_text(st, 2), "dims",
        dims_list(json_object_get(json_object_get(manifest, "dims"), "default")), "params",
        params_list(json_object_get(manifest, "params")), "database", x->db_uuid,
        "manifest_sha256", export_col_text(st, 4), "candidates", (json_int_t)sqlite3_column_int64(st, 6),
        "correct", (json_int_t)sqlite3_column_int64(st, 7), "best_speedup_eager", best,
        "nonfinite", nf.len ? nf.buf : "");
    sb_free(&nf);
    free(truth);
    json_decref(manifest);
    sb_free(&ref);
    x->counts.records++;
    x->counts.by_split[export_split_index(split)]++;
    x->counts.problems++;
    /* candidates of synthetic runs behind the counts: said in every record */
    json_t *extra = json_object_get(r, "extra_info");
    json_object_set_new(extra, "synthetic", json_boolean(!export_col_is_null(st, 10)));
    json_object_set_new(extra, "synthetic_server", json_string(export_col_is_null(st, 10) ? "" : export_col_text(st, 10)));
    for (const char *ids = export_col_text(st, 9); ids && *ids; ids += strcspn(ids, ",") + (strchr(ids, ',') != NULL))
        export_note_run(x, strtoll(ids, NULL, 10));
    if (sqlite3_column_int64(st, 6) > 0) /* the counts are of labelled candidates */
        export_note_kernel(x, sqlite3_column_int(st, 11) ? "gpu" : NULL, 0);
    return export_emit_json(x, split, r, err);
}

int export_rl(export_ctx *x, strbuf *err)
{
    strbuf sql = STRBUF_INIT;
    char **binds = NULL;
    int n = 0;
    const export_config *c = x->cfg;
    /* the counts, and the runs behind them (col 9; synthetic servers among them: col 10), over
     * the candidates of the runs selected by --run/--model (an rl record draws on every run
     * whose candidates its counts include) */
    sb_adds(&sql, "SELECT pr.id, pr.level, pr.title, pl.split, pr.manifest_sha, pr.reference_sha,"
                  " (SELECT count(*) FROM candidates c WHERE c.problem_id = pr.id");
    export_candidate_run_filter(c, &sql, &binds, &n);
    sb_adds(&sql, "), (SELECT count(*) FROM candidates c JOIN candidate_labels cl ON"
                  "  cl.candidate_id = c.id WHERE c.problem_id = pr.id AND cl.verdict_class ="
                  "  'correct'");
    export_candidate_run_filter(c, &sql, &binds, &n);
    sb_adds(&sql, "), (SELECT max(cl.speedup_eager) FROM candidates c JOIN candidate_labels cl ON"
                  "  cl.candidate_id = c.id WHERE c.problem_id = pr.id AND cl.verdict_class ="
                  "  'correct'");
    export_candidate_run_filter(c, &sql, &binds, &n);
    sb_adds(&sql, "), (SELECT group_concat(DISTINCT tr.run_id) FROM candidates c JOIN turns t ON"
                  "  t.candidate_id = c.id JOIN trajectories tr ON tr.id = t.trajectory_id"
                  "  JOIN runs ru ON ru.id = tr.run_id WHERE c.problem_id = pr.id");
    export_run_filter(c, &sql, &binds, &n);
    sb_adds(&sql, "), (SELECT group_concat(DISTINCT ru.server) FROM candidates c JOIN turns t ON"
                  "  t.candidate_id = c.id JOIN trajectories tr ON tr.id = t.trajectory_id"
                  "  JOIN runs ru ON ru.id = tr.run_id WHERE c.problem_id = pr.id AND ru.synthetic");
    export_run_filter(c, &sql, &binds, &n);
    /* col 11: whether some of those candidates' latest verification ran on a GPU */
    sb_adds(&sql, "), EXISTS (SELECT 1 FROM candidates c JOIN verifications v ON v.id = (SELECT"
                  "  max(w.id) FROM verifications w WHERE w.candidate_id = c.id) WHERE"
                  "  c.problem_id = pr.id AND coalesce(v.gpu_name, '') <> ''");
    export_candidate_run_filter(c, &sql, &binds, &n);
    sb_adds(&sql, ") FROM problems pr JOIN problem_labels pl ON pl.problem_id = pr.id WHERE 1");
    if (!export_no_filter(c->runs) || !export_no_filter(c->models)) { /* only problems the selected runs tried */
        sb_adds(&sql, " AND pr.id IN (SELECT c.problem_id FROM candidates c WHERE 1");
        export_candidate_run_filter(c, &sql, &binds, &n);
        sb_addch(&sql, ')');
    }
    export_add_in_filter(&sql, "pl.split", x->cfg->splits, &binds, &n);
    export_add_in_filter(&sql, "CAST(pr.level AS TEXT)", x->cfg->levels, &binds, &n);
    export_degenerate_filter(x->cfg, &sql);
    sb_adds(&sql, " ORDER BY pl.split, pr.id");
    sqlite3_stmt *st = export_prepare_with_binds(x, sql.buf, binds, n, 1, err);
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
