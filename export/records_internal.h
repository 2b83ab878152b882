/* records_internal: the helpers of records.c that the formats in their own files
 * (records_plan.c) share: emitting a record, specs, filters and counts. */
#ifndef KC_EXPORT_RECORDS_INTERNAL_H
#define KC_EXPORT_RECORDS_INTERNAL_H
#include "export/records.h"
#include <jansson.h>

/* Emits a jansson record (taken over) to its split's shard with its content id. */
int export_emit_json(export_ctx *x, const char *split, json_t *record, strbuf *err);
/* The problem's spec as kcollect shows it (cached). */
const char *export_problem_spec(export_ctx *x, const char *problem_id, strbuf *err);
/* The system message of the prompts kexport builds (--system-prompt or kcollect's). */
const char *export_built_system(const export_ctx *x);
/* Remembers a run behind a record (the manifest lists them). */
void export_note_run(export_ctx *x, int64_t run_id);
int export_split_index(const char *split);
int export_class_index(const char *verdict_class);
/* Appends " AND col IN (?,...)" for a comma list ('any' or empty: nothing) and its binds. */
void export_add_in_filter(strbuf *where, const char *col, const char *list, char ***binds, int *n);
/* Prepares sql and binds the values from parameter first on (frees binds). */
sqlite3_stmt *export_prepare_with_binds(export_ctx *x, const char *sql, char **binds, int n,
                                        int first, strbuf *err);

/* --format plan (records_plan.c). */
int export_plan(export_ctx *x, strbuf *err);

#endif
