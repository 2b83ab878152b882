/* formats: the record formats, one file each, which export/dispatch.c runs: records_sft.c,
 * records_kernelbench.c, records_multiturn.c, records_rl.c, records_preference.c and
 * records_plan.c. Each builds its records with what records.c shares (records_internal.h) and
 * hands them to the shard writer. */
#ifndef KC_EXPORT_FORMATS_H
#define KC_EXPORT_FORMATS_H
#include "common/strbuf.h"
#include "export/records.h"

int export_sft(export_ctx *x, strbuf *err);
int export_kernelbench(export_ctx *x, strbuf *err);
int export_multiturn(export_ctx *x, strbuf *err);
int export_rl(export_ctx *x, strbuf *err);
int export_preference(export_ctx *x, strbuf *err);
int export_plan(export_ctx *x, strbuf *err);

#endif
