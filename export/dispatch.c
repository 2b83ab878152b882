/* dispatch: the format kexport was asked for, run over the curated database (dispatch.h). */
#include "export/dispatch.h"
#include "common/db.h"
#include "common/error.h"
#include "export/formats.h"

int export_records(export_ctx *x, strbuf *err)
{
    if (kc_db_query_int(x->db, "SELECT count(*) FROM curate_runs") <= 0)
        return kc_fail(err, "the database has no labels yet: run `kcurate run --db %s` first",
                       x->cfg->db_path);
    switch (x->cfg->format) {
    case EXPORT_SFT: return export_sft(x, err);
    case EXPORT_MULTITURN: return export_multiturn(x, err);
    case EXPORT_RL: return export_rl(x, err);
    case EXPORT_PREFERENCE: return export_preference(x, err);
    case EXPORT_KERNELBENCH: return export_kernelbench(x, err);
    case EXPORT_PLAN: return export_plan(x, err);
    }
    return kc_fail(err, "unknown format");
}
