/* records_plan: kexport --format plan. One record per plan of a kcollect --strategy mtmc
 * trajectory (the first plan and every revision that parsed): what the planner saw (the
 * problem's spec, the hardware facts: the GPU and its peaks, and for a revision the request that
 * asked for it, with the failure and the last good kernel's registers, occupancy and roofline
 * numbers), the plan, and its outcome over the step turns that implemented it until the next
 * plan: the best verdict class, the best and final eager speedup, steps done of steps planned,
 * whether a revision replaced it, and the trajectory's stop reason; and the planner's answer as
 * it wrote it, with its reasoning under --reasoning.
 * Filters: --split, --level, --run, --model. */
#include "common/error.h"
#include "common/gpu_peaks.h"
#include "common/verdicts.h"
#include "export/formats.h"
#include "export/records_internal.h"

#include <stdlib.h>
#include <string.h>

/* The planning turns with a plan, in output order. */
#define PLAN_QUERY                                                                               \
    "SELECT t.trajectory_id, t.turn_index, t.plan_json, t.action, t.prompt_sha, tr.problem_id,"  \
    " pr.level, pr.title, pl.split, ru.id, ru.run_key, ru.model, ru.synthetic,"                  \
    " coalesce(json_extract(ru.config_json, '$.compile_only'), 0), tr.stop_reason,"              \
    " (SELECT min(n.turn_index) FROM turns n WHERE n.trajectory_id = t.trajectory_id"            \
    "  AND n.turn_index > t.turn_index AND n.plan_json IS NOT NULL),"                            \
    " (SELECT coalesce(json_extract(CAST(b.data AS TEXT), '$.outputs[0].dtype'), 'f32')"         \
    "  FROM blobs b WHERE b.sha256 = pr.manifest_sha), rsp.content_sha, rsp.reasoning_sha, "     \
    KC_REASONING_STATE_SQL("rsp")                                                            \
    " FROM turns t JOIN trajectories tr ON tr.id = t.trajectory_id"                              \
    " JOIN problems pr ON pr.id = tr.problem_id JOIN problem_labels pl ON pl.problem_id = pr.id" \
    " JOIN runs ru ON ru.id = tr.run_id LEFT JOIN responses rsp ON rsp.id = t.response_id"       \
    " WHERE t.plan_json IS NOT NULL"

enum { P_TRAJ, P_TURN, P_PLAN, P_ACTION, P_PROMPT, P_PROBLEM, P_LEVEL, P_TITLE, P_SPLIT, P_RUN_ID,
       P_RUN_KEY, P_MODEL, P_SYNTHETIC, P_COMPILE_ONLY, P_STOP, P_NEXT_PLAN, P_DTYPE, P_CONTENT,
       P_REASONING, P_REASONING_STATE };

/* The step turns of one plan: until the next plan, or the trajectory's end. */
#define STEP_QUERY                                                                               \
    "SELECT coalesce(cl.verdict_class, 'unverified'), cl.speedup_eager, t.step,"                 \
    " coalesce(v.gpu_name, '') FROM turns t"                                                      \
    " LEFT JOIN candidate_labels cl ON cl.candidate_id = t.candidate_id"                         \
    " LEFT JOIN v_latest_verification v ON v.candidate_id = t.candidate_id"                      \
    " WHERE t.trajectory_id = ?1 AND t.turn_index > ?2 AND (?3 IS NULL OR t.turn_index < ?3)"    \
    " AND t.candidate_id IS NOT NULL ORDER BY t.turn_index"

static const char *col(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? (const char *)s : "";
}

/* Verdict classes from best to worst (common/verdicts.c's outcome rank, then export's "other"):
 * a plan's outcome is the best its steps reached. */
static int class_rank(const char *c)
{
    const kc_class_info *info = kc_class_find(c);
    return info ? info->outcome : !strcmp(c, "other");
}

typedef struct plan_outcome {
    char verdict[24], gpu[128];
    int turns, steps_done, has_best, has_final;
    double best, final;
} plan_outcome;

static int plan_outcome_of(sqlite3_stmt *steps, sqlite3_stmt *p, plan_outcome *o, strbuf *err)
{
    memset(o, 0, sizeof *o);
    snprintf(o->verdict, sizeof o->verdict, "none");
    sqlite3_bind_int64(steps, 1, sqlite3_column_int64(p, P_TRAJ));
    sqlite3_bind_int(steps, 2, sqlite3_column_int(p, P_TURN));
    if (sqlite3_column_type(p, P_NEXT_PLAN) == SQLITE_NULL)
        sqlite3_bind_null(steps, 3);
    else
        sqlite3_bind_int(steps, 3, sqlite3_column_int(p, P_NEXT_PLAN));
    int rc;
    while ((rc = sqlite3_step(steps)) == SQLITE_ROW) {
        const char *cls = col(steps, 0);
        int ok = !strcmp(cls, "correct") || !strcmp(cls, "compiled");
        o->turns++;
        if (class_rank(cls) > class_rank(o->verdict))
            snprintf(o->verdict, sizeof o->verdict, "%s", cls);
        if (ok && sqlite3_column_int(steps, 2) > o->steps_done)
            o->steps_done = sqlite3_column_int(steps, 2);
        if (!strcmp(cls, "correct") && sqlite3_column_type(steps, 1) != SQLITE_NULL) {
            double s = sqlite3_column_double(steps, 1);
            if (!o->has_best || s > o->best)
                o->best = s, o->has_best = 1;
            o->final = s, o->has_final = 1;
        }
        if (*col(steps, 3))
            snprintf(o->gpu, sizeof o->gpu, "%s", col(steps, 3));
    }
    sqlite3_reset(steps);
    return rc == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(sqlite3_db_handle(steps)));
}

static json_t *real_or_null(int has, double v) { return has ? json_real(v) : json_null(); }

/* The hardware facts the planner had: the GPU its steps ran on and its peaks (none in a
 * compile-only run), and for a revision the request that asked for it. */
static json_t *hardware_of(export_ctx *x, sqlite3_stmt *p, const plan_outcome *o, strbuf *err,
                           int *failed)
{
    double bw = 0, fl = 0;
    int known = o->gpu[0] && kc_gpu_peaks(o->gpu, col(p, P_DTYPE), &bw, &fl);
    strbuf request = STRBUF_INIT;
    int revision = !strcmp(col(p, P_ACTION), "revise");
    if (revision && sqlite3_column_type(p, P_PROMPT) != SQLITE_NULL &&
        kc_blob_get(x->db, col(p, P_PROMPT), &request, err) < 0)
        *failed = 1;
    json_t *h = json_pack("{s:s, s:o, s:o, s:s, s:b, s:s}", "gpu", o->gpu, "peak_gbps",
                          real_or_null(known, bw), "peak_tflops", real_or_null(known, fl),
                          "peak", kc_peak_name(col(p, P_DTYPE)), "compile_only",
                          sqlite3_column_int(p, P_COMPILE_ONLY) != 0, "request",
                          revision ? sb_str(&request) : "");
    sb_free(&request);
    return h;
}

/* The planner's answer as the model wrote it ("response", the reasoning before it under
 * --reasoning think), "reasoning_content" under --reasoning field (null where none) and the
 * reasoning's state; counts the reasoning for the datasheet. */
static int add_planner_answer(export_ctx *x, sqlite3_stmt *p, json_t *rec, strbuf *err)
{
    export_reasoning_text r;
    strbuf answer = STRBUF_INIT, text = STRBUF_INIT;
    const char *content = sqlite3_column_type(p, P_CONTENT) == SQLITE_NULL ? NULL : col(p, P_CONTENT);
    if ((content && export_get_blob(x, content, &answer, err)) ||
        export_reasoning_of(x, sqlite3_column_type(p, P_REASONING) == SQLITE_NULL ? NULL
                                                                               : col(p, P_REASONING),
                            col(p, P_REASONING_STATE), &r, err)) {
        sb_free(&answer);
        return -1;
    }
    export_answer_text(x, answer.buf ? answer.buf : "", answer.len, &r, &text);
    json_object_set_new(rec, "response", json_stringn(text.buf ? text.buf : "", text.len));
    if (x->cfg->reasoning == EXPORT_REASONING_FIELD)
        json_object_set_new(rec, "reasoning_content", r.text ? json_stringn(r.text, r.len) : json_null());
    json_object_set_new(rec, "reasoning_state", json_string(col(p, P_REASONING_STATE)));
    export_count_reasoning(x, &r);
    sb_free(&answer), sb_free(&text);
    return 0;
}

static int plan_record(export_ctx *x, sqlite3_stmt *p, sqlite3_stmt *steps, strbuf *err)
{
    plan_outcome o;
    if (plan_outcome_of(steps, p, &o, err))
        return -1;
    const char *pid = col(p, P_PROBLEM), *split = col(p, P_SPLIT);
    const char *spec = export_problem_spec(x, pid, err);
    if (!spec)
        return -1;
    json_t *plan = json_loads(col(p, P_PLAN), 0, NULL);
    if (!json_is_array(plan)) {
        json_decref(plan);
        return kc_fail(err, "trajectory %lld turn %d: its plan_json is not a list",
                       (long long)sqlite3_column_int64(p, P_TRAJ), sqlite3_column_int(p, P_TURN));
    }
    int failed = 0;
    json_t *hardware = hardware_of(x, p, &o, err, &failed);
    size_t n_steps = json_array_size(plan);
    json_t *r = json_pack(
        "{s:s, s:s, s:{s:s, s:i, s:s}, s:s, s:s, s:o, s:o, s:b}", "format", "plan", "split", split,
        "problem", "id", pid, "level", sqlite3_column_int(p, P_LEVEL), "title", col(p, P_TITLE),
        "system", export_built_system(x), "spec", spec, "hardware", hardware, "plan", plan,
        "revision", !strcmp(col(p, P_ACTION), "revise"));
    if (!failed && r && add_planner_answer(x, p, r, err))
        failed = 1;
    json_t *rest = json_pack(
        "{s:{s:s, s:o, s:o, s:i, s:i, s:i, s:b, s:s},"
        " s:{s:s, s:I, s:i, s:{s:I, s:s, s:s, s:b}}}",
        "outcome", "verdict", o.verdict, "best_speedup_eager", real_or_null(o.has_best, o.best),
        "final_speedup_eager", real_or_null(o.has_final, o.final), "steps_done", o.steps_done,
        "steps", (int)n_steps, "turns", o.turns, "revised",
        sqlite3_column_type(p, P_NEXT_PLAN) != SQLITE_NULL, "stop_reason", col(p, P_STOP),
        "provenance", "database", x->db_uuid, "trajectory_id",
        (json_int_t)sqlite3_column_int64(p, P_TRAJ), "turn_index", sqlite3_column_int(p, P_TURN),
        "run", "run_id", (json_int_t)sqlite3_column_int64(p, P_RUN_ID), "run_key",
        col(p, P_RUN_KEY), "model", col(p, P_MODEL), "synthetic",
        sqlite3_column_int(p, P_SYNTHETIC) != 0);
    if (r && rest)
        json_object_update(r, rest);
    json_decref(rest);
    if (failed || !r || !rest) {
        json_decref(r);
        return failed ? -1 : kc_fail(err, "cannot encode a plan record");
    }
    x->counts.records++;
    x->counts.by_split[export_split_index(split)]++;
    x->counts.by_class[export_class_index(!strcmp(o.verdict, "none") ? "unverified" : o.verdict)]++;
    if (o.has_best)
        x->counts.sum_speedup += o.best, x->counts.with_speedup++;
    export_note_run(x, sqlite3_column_int64(p, P_RUN_ID));
    if (o.turns)
        export_note_kernel(x, o.gpu, 0);
    export_count_reasoning_record(x);
    return export_emit_json(x, split, r, err);
}

int export_plan(export_ctx *x, strbuf *err)
{
    const export_config *c = x->cfg;
    strbuf sql = STRBUF_INIT;
    char **binds = NULL;
    int n = 0;
    sb_adds(&sql, PLAN_QUERY);
    export_add_in_filter(&sql, "pl.split", c->splits, &binds, &n);
    export_add_in_filter(&sql, "CAST(pr.level AS TEXT)", c->levels, &binds, &n);
    export_add_in_filter(&sql, "tr.run_id", c->runs, &binds, &n);
    export_add_in_filter(&sql, "ru.model", c->models, &binds, &n);
    export_degenerate_filter(c, &sql);
    sb_adds(&sql, " ORDER BY pl.split, pr.id, t.trajectory_id, t.turn_index");
    sqlite3_stmt *plans = export_prepare_with_binds(x, sql.buf, binds, n, 1, err);
    sb_free(&sql);
    sqlite3_stmt *steps = plans ? kc_db_prepare(x->db, STEP_QUERY, err) : NULL;
    int rc = plans && steps ? 0 : -1, step = SQLITE_DONE;
    while (!rc && (step = sqlite3_step(plans)) == SQLITE_ROW)
        rc = plan_record(x, plans, steps, err);
    if (!rc && step != SQLITE_DONE)
        rc = kc_fail(err, "database: %s", sqlite3_errmsg(x->db));
    sqlite3_finalize(steps);
    sqlite3_finalize(plans);
    return rc;
}
