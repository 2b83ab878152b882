/* records_kernelbench: kexport --format kernelbench: each kept kernel as a KernelBench-style
 * Python module (kernelbench.c) with its record. */
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

/* kernelbench: the row's kernel as a KernelBench-style module (export/kernelbench.h), written
 * as <stage>/kernelbench/<problem id>/c<candidate id>.py and as a record carrying its text. */
static int kernelbench_row(export_ctx *x, sqlite3_stmt *st, void *arg, strbuf *err)
{
    const char *src;
    size_t len;
    int rs = export_row_source(x, st, &src, &len, err);
    if (rs)
        return rs < 0 ? -1 : 0;
    if (!src)
        return 0;
    const char *pid = export_col_text(st, COL_PROBLEM), *split = export_col_text(st, COL_SPLIT);
    long long cand = sqlite3_column_int64(st, COL_ID);
    const problem *p = kernelbench_problem(arg, x->db, pid, err);
    strbuf code = STRBUF_INIT, origin = STRBUF_INIT, rel = STRBUF_INIT, path = STRBUF_INIT,
           kernel = STRBUF_INIT;
    sb_add(&kernel, src, len);
    sb_addf(&origin, "candidate %lld of problem %s (database %s)", cand, pid, x->db_uuid);
    sb_addf(&rel, "kernelbench/%s/c%lld.py", pid, cand);
    path_join(&path, x->shards->stage_dir, rel.buf);
    int rc = p ? kernelbench_module(p, kernel.buf, origin.buf, &code, err) : -1;
    if (rc && p) {
        char *why = xstrdup(sb_str(err));
        kc_fail(err, "candidate %lld (%s): %s", cand, pid, why);
        free(why);
    }
    strbuf dir = STRBUF_INIT;
    path_dirname(path.buf, &dir);
    if (!rc)
        rc = mkdir_p(dir.buf, err);
    if (!rc)
        rc = write_file_atomic(path.buf, code.buf, code.len, err);
    if (!rc) {
        export_problem_parts(x, st);
        jsonw w;
        export_open_record(x, &w, "kernelbench", split, &x->problem_part);
        jw_key(&w, "path");
        jw_string(&w, rel.buf, rel.len);
        jw_key(&w, "code");
        jw_string(&w, code.buf, code.len);
        jw_key(&w, "labels");
        export_put_labels(&w, st);
        jw_key(&w, "provenance");
        export_put_provenance(x, &w, st);
        jw_end_object(&w);
        w.bad_utf8 |= x->parts_bad_utf8;
        export_count_record(x, st);
        rc = export_emit(x, split, &w, "a kernelbench record", err);
    }
    sb_free(&code), sb_free(&origin), sb_free(&rel), sb_free(&path), sb_free(&kernel), sb_free(&dir);
    return rc;
}

/* Every kernel kept by --verdict (default correct), dedup and the common filters, as a module. */
int export_kernelbench(export_ctx *x, strbuf *err)
{
    const export_config *c = x->cfg;
    sqlite3_stmt *st = export_candidate_query(x, c->verdicts ? c->verdicts : "correct", VERDICTS_OF_ALL,
                                       1, " AND c.source_sha IS NOT NULL ORDER BY c.id", err);
    if (!st)
        return -1;
    kernelbench_problems problems = {0};
    int rc = export_for_each_problem(x, st, kernelbench_row, NULL, &problems, err);
    kernelbench_problems_free(&problems);
    sqlite3_finalize(st);
    return rc;
}
