/* records_multiturn: kexport --format multiturn: one record per trajectory, its messages
 * (prompt, answers as the model wrote them with their reasoning under --reasoning, feedback) and
 * its turns with their labels. */
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

/* One trajectory being gathered: its messages and turns, encoded as they come. */
typedef struct trajectory_acc {
    int open;
    int64_t id, run_id;
    char split[16];
    strbuf problem, run, messages, turns;
    strbuf plan;     /* the plan in force at its last turn (mtmc), "" for none */
    int next_turn;   /* mtmc: the next turn whose messages are not yet written */
    jsonw mw, tw;
    int best_class; /* export_class_index of its best turn (kc_class_info.outcome), -1 none */
} trajectory_acc;

/* Whether verdict class index a is a better outcome than b (-1: none; "other" is the worst). */
static int better_class(int a, int b)
{
    int ra = a < KC_N_CLASSES ? kc_verdict_classes[a].outcome : -1;
    int rb = b < 0 ? -2 : b < KC_N_CLASSES ? kc_verdict_classes[b].outcome : -1;
    return ra > rb;
}

/* The text the model answered on a turn (its response), else its kernel as a code block; with its
 * reasoning under --reasoning. */
static int assistant_turn(export_ctx *x, sqlite3_stmt *st, const char *src, size_t len,
                          trajectory_acc *a, strbuf *err)
{
    if (!x->response_stmt &&
        !(x->response_stmt = kc_db_prepare(x->db, "SELECT r.content_sha FROM responses r"
                                                  " WHERE r.id = ?", err)))
        return -1;
    export_reasoning_text r;
    if (export_row_reasoning(x, st, &r, err))
        return -1;
    sqlite3_stmt *q = x->response_stmt;
    sqlite3_bind_int64(q, 1, sqlite3_column_int64(st, COL_RESPONSE));
    const char *sha = sqlite3_step(q) == SQLITE_ROW ? export_col_text(q, 0) : NULL;
    int rc = 0;
    if (sha) {
        rc = export_get_blob(x, sha, &x->blob, err);
        if (!rc)
            export_put_turn_message(x, &a->mw, "assistant", x->blob.buf, x->blob.len, &r);
    } else {
        export_put_kernel_message(x, &a->mw, src ? src : "", len, &r);
    }
    if (!rc)
        export_count_reasoning(x, &r);
    sqlite3_reset(q);
    return rc;
}

static int feedback_turn(export_ctx *x, int64_t traj, int turn_index, trajectory_acc *a, strbuf *err)
{
    if (!x->feedback_stmt &&
        !(x->feedback_stmt = kc_db_prepare(x->db, "SELECT feedback_sha FROM turns WHERE"
                                                  " trajectory_id = ? AND turn_index = ?", err)))
        return -1;
    sqlite3_stmt *q = x->feedback_stmt;
    sqlite3_bind_int64(q, 1, traj);
    sqlite3_bind_int(q, 2, turn_index);
    const char *sha = sqlite3_step(q) == SQLITE_ROW ? export_col_text(q, 0) : NULL;
    int rc = 0;
    if (sha) {
        rc = export_get_blob(x, sha, &x->blob, err);
        if (!rc)
            export_put_turn_message(x, &a->mw, "user", x->blob.buf, strlen(x->blob.buf), NULL);
    }
    sqlite3_reset(q);
    return rc;
}

/* mtmc: each turn's request differs (a plan request, a step request on the last good kernel), so
 * the conversation is every turn's own user message and answer in order: the planning turns
 * before this row (no candidate, so no row of their own) and this row's request. */
static int mtmc_turns_before(export_ctx *x, sqlite3_stmt *st, trajectory_acc *a, strbuf *err)
{
    if (!x->mtmc_stmt &&
        !(x->mtmc_stmt = kc_db_prepare(x->db, "SELECT t.turn_index, t.prompt_sha, r.content_sha,"
                                              " t.candidate_id IS NULL, r.reasoning_sha, "
                                              KC_REASONING_STATE_SQL("r") " FROM turns t"
                                              " LEFT JOIN responses r ON r.id = t.response_id"
                                              " WHERE t.trajectory_id = ? AND t.turn_index"
                                              " BETWEEN ? AND ? ORDER BY t.turn_index", err)))
        return -1;
    sqlite3_stmt *q = x->mtmc_stmt;
    int turn = sqlite3_column_int(st, COL_TURN);
    sqlite3_bind_int64(q, 1, sqlite3_column_int64(st, COL_TRAJ));
    sqlite3_bind_int(q, 2, a->next_turn);
    sqlite3_bind_int(q, 3, turn);
    int rc = 0;
    while (!rc && sqlite3_step(q) == SQLITE_ROW) {
        const char *prompt = export_col_text(q, 1), *answer = export_col_text(q, 2);
        if (sqlite3_column_int(q, 0) > 0 && prompt && !(rc = export_get_blob(x, prompt, &x->blob, err)))
            export_put_turn_message(x, &a->mw, "user", x->blob.buf, strlen(x->blob.buf), NULL);
        export_reasoning_text r;
        if (!rc && sqlite3_column_int(q, 3) && answer && !(rc = export_get_blob(x, answer, &x->blob, err)) &&
            !(rc = export_reasoning_of(x, export_col_text(q, 4), export_col_text(q, 5), &r, err))) {
            export_put_turn_message(x, &a->mw, "assistant", x->blob.buf, x->blob.len, &r);
            export_count_reasoning(x, &r);
        }
    }
    sqlite3_reset(q);
    a->next_turn = turn + 1;
    return rc;
}

static int flush_trajectory(export_ctx *x, void *arg, strbuf *err)
{
    trajectory_acc *a = arg;
    if (!a->open)
        return 0;
    a->open = 0;
    jw_end_array(&a->mw);
    jw_end_array(&a->tw);
    jsonw w;
    export_open_record(x, &w, "multiturn", a->split, &a->problem);
    jw_key(&w, "messages");
    jw_raw(&w, a->messages.buf, a->messages.len);
    jw_key(&w, "turns");
    jw_raw(&w, a->turns.buf, a->turns.len);
    export_put_plan_text(&w, a->plan.len ? a->plan.buf : NULL);
    jw_key(&w, "provenance");
    jw_object(&w);
    jw_key(&w, "database");
    jw_cstring(&w, x->db_uuid);
    jw_key(&w, "trajectory_id");
    jw_int(&w, a->id);
    jw_key(&w, "run");
    jw_raw(&w, a->run.buf, a->run.len);
    jw_end_object(&w);
    jw_end_object(&w);
    w.bad_utf8 |= a->mw.bad_utf8 | a->tw.bad_utf8;
    x->counts.records++;
    x->counts.by_split[export_split_index(a->split)]++;
    x->counts.by_class[a->best_class < 0 ? export_class_index("unverified") : a->best_class]++;
    export_count_reasoning_record(x);
    export_note_run(x, a->run_id);
    return export_emit(x, a->split, &w, "a multiturn record", err);
}

/* One entry of a multiturn record's turns: its index, candidate, verdict, verdict class and
 * action (mtmc: the action line it implements; strings, "" when none), and its labels and provenance as JSON text (labels_json,
 * provenance_json). Flat and never null: pyarrow's JSON reader fails on a list of structs with a
 * field that is null in every record of a file (a compile-only run's timings and errors are). */
static void put_turn(export_ctx *x, jsonw *w, sqlite3_stmt *st)
{
    static const char *const keys[] = {"verdict", "verdict_class", "action"};
    const int cols[] = {COL_VERDICT, COL_CLASS, COL_ACTION};
    jw_object(w);
    export_put_int(w, "turn_index", st, COL_TURN);
    export_put_int(w, "candidate_id", st, COL_ID);
    for (int i = 0; i < 3; i++) {
        const char *v = export_col_text(st, cols[i]);
        jw_key(w, keys[i]);
        jw_string(w, v ? v : "", v ? strlen(v) : 0);
    }
    strbuf enc = STRBUF_INIT;
    for (int i = 0; i < 2; i++) {
        jsonw inner;
        sb_reset(&enc);
        jw_init(&inner, &enc);
        if (i == 0)
            export_put_labels(&inner, st);
        else
            export_put_provenance(x, &inner, st);
        jw_key(w, i == 0 ? "labels_json" : "provenance_json");
        jw_string(w, enc.buf, enc.len);
        w->bad_utf8 |= inner.bad_utf8;
    }
    sb_free(&enc);
    jw_end_object(w);
}

static int multiturn_row(export_ctx *x, sqlite3_stmt *st, void *arg, strbuf *err)
{
    trajectory_acc *a = arg;
    int64_t traj = sqlite3_column_int64(st, COL_TRAJ);
    if (a->open && a->id != traj && flush_trajectory(x, a, err))
        return -1;
    const char *src;
    size_t len;
    int rs = export_row_source(x, st, &src, &len, err);
    if (rs)
        return rs < 0 ? -1 : 0;
    export_problem_parts(x, st);
    if (!a->open) {
        if (export_row_prompt(x, st, err))
            return -1;
        a->open = 1;
        a->id = traj;
        a->best_class = -1;
        snprintf(a->split, sizeof a->split, "%s", export_col_text(st, COL_SPLIT));
        sb_reset(&a->problem);
        sb_add(&a->problem, x->problem_part.buf, x->problem_part.len);
        jsonw rw;
        sb_reset(&a->run);
        jw_init(&rw, &a->run);
        jw_object(&rw);
        export_put_int(&rw, "run_id", st, COL_RUN_ID);
        export_put_text(&rw, "run_key", st, COL_RUN_KEY);
        export_put_text(&rw, "model", st, COL_MODEL);
        export_put_synthetic(&rw, st);
        a->run_id = export_col_is_null(st, COL_RUN_ID) ? 0 : sqlite3_column_int64(st, COL_RUN_ID);
        export_put_json_column(&rw, "sampling_json", st, COL_RUN_CONFIG, &x->sampling_cache, "sampling");
        jw_end_object(&rw);
        sb_reset(&a->messages);
        jw_init(&a->mw, &a->messages);
        a->mw.bad_utf8 = rw.bad_utf8;
        jw_array(&a->mw);
        jw_raw(&a->mw, x->prompt.encoded.buf, x->prompt.encoded.len);
        a->mw.bad_utf8 |= x->parts_bad_utf8 | x->prompt.bad_utf8;
        sb_reset(&a->turns);
        jw_init(&a->tw, &a->turns);
        jw_array(&a->tw);
        a->next_turn = 0;
        sb_reset(&a->plan);
    } else if (export_col_is_null(st, COL_ACTION) &&
               feedback_turn(x, traj, sqlite3_column_int(st, COL_TURN) - 1, a, err)) {
        return -1;
    }
    if (!export_col_is_null(st, COL_ACTION) && mtmc_turns_before(x, st, a, err))
        return -1;
    if (!export_col_is_null(st, COL_PLAN)) {
        sb_reset(&a->plan);
        sb_adds(&a->plan, export_col_text(st, COL_PLAN));
    }
    if (assistant_turn(x, st, src, len, a, err))
        return -1;
    int cls = export_class_index(export_col_text(st, COL_CLASS));
    if (better_class(cls, a->best_class))
        a->best_class = cls;
    export_note_kernel(x, export_col_text(st, COL_GPU), sqlite3_column_int(st, COL_SUSPICIOUS));
    put_turn(x, &a->tw, st);
    return 0;
}

int export_multiturn(export_ctx *x, strbuf *err)
{
    strbuf more = STRBUF_INIT;
    sb_adds(&more, " AND t.trajectory_id IS NOT NULL");
    if (x->cfg->verdicts && strcmp(x->cfg->verdicts, "any"))
        sb_adds(&more, " AND EXISTS (SELECT 1 FROM trajectory_labels tl WHERE tl.trajectory_id ="
                       " t.trajectory_id AND tl.solved)");
    sb_adds(&more, " ORDER BY t.trajectory_id, t.turn_index");
    sqlite3_stmt *st = export_candidate_query(x, NULL, VERDICTS_OF_ALL, 0, more.buf, err);
    sb_free(&more);
    if (!st)
        return -1;
    trajectory_acc a = {0};
    int rc = export_for_each_problem(x, st, multiturn_row, flush_trajectory, &a, err);
    sb_free(&a.problem), sb_free(&a.run), sb_free(&a.messages), sb_free(&a.turns), sb_free(&a.plan);
    sqlite3_finalize(st);
    return rc;
}
