/* records_sft: kexport --format sft: one record per kept candidate (each trajectory's last
 * correct turn, or every turn with --every-turn): the prompt and the kernel as the answer, with
 * the reasoning of the answer it came from (--reasoning). */
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

static int sft_row(export_ctx *x, sqlite3_stmt *st, void *arg, strbuf *err)
{
    (void)arg;
    const char *src;
    size_t len;
    int rs = export_row_source(x, st, &src, &len, err);
    if (rs)
        return rs < 0 ? -1 : 0;
    if (!src)
        return 0; /* nothing to learn from a turn without a kernel */
    export_problem_parts(x, st);
    export_reasoning_text r;
    if (export_row_prompt(x, st, err) || export_row_reasoning(x, st, &r, err))
        return -1;
    const char *split = export_col_text(st, COL_SPLIT);
    jsonw w;
    export_open_record(x, &w, "sft", split, &x->problem_part);
    jw_key(&w, "messages");
    jw_array(&w);
    jw_raw(&w, x->prompt.encoded.buf, x->prompt.encoded.len);
    export_put_kernel_message(x, &w, src, len, &r);
    jw_end_array(&w);
    export_put_plan_text(&w, export_col_text(st, COL_PLAN));
    jw_key(&w, "action");
    jw_cstring(&w, export_col_text(st, COL_ACTION));
    jw_key(&w, "labels");
    export_put_labels(&w, st);
    jw_key(&w, "provenance");
    export_put_provenance(x, &w, st);
    jw_end_object(&w);
    w.bad_utf8 |= x->parts_bad_utf8 | x->prompt.bad_utf8;
    export_count_record(x, st);
    export_count_reasoning(x, &r);
    export_count_reasoning_record(x);
    return export_emit(x, split, &w, "an sft record", err);
}
int export_sft(export_ctx *x, strbuf *err)
{
    const export_config *c = x->cfg;
    strbuf more = STRBUF_INIT;
    if (!c->sft_every_turn)
        sb_adds(&more, " AND (t.trajectory_id IS NULL OR NOT EXISTS (SELECT 1 FROM turns t2"
                       " JOIN verifications v2 ON v2.id = (SELECT max(id) FROM verifications w2"
                       " WHERE w2.candidate_id = t2.candidate_id)"
                       " WHERE t2.trajectory_id = t.trajectory_id AND t2.turn_index > t.turn_index"
                       " AND v2.verdict = v.verdict))");
    sb_adds(&more, " ORDER BY t.trajectory_id, t.turn_index, c.id");
    sqlite3_stmt *st = export_candidate_query(x, c->verdicts ? c->verdicts : "correct", VERDICTS_OF_ALL, 1,
                                       more.buf, err);
    sb_free(&more);
    if (!st)
        return -1;
    int rc = export_for_each_problem(x, st, sft_row, NULL, NULL, err);
    sqlite3_finalize(st);
    return rc;
}
