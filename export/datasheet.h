/* datasheet: an export's own DATASHEET.md, in the sections of the repository's DATASHEET.md,
 * with this export's numbers. Every sentence is decided by what was exported: who wrote the
 * answers (a model, a test server, both), whether the kernels ran on a GPU or stopped at
 * compilation, which verdict classes, splits and timings the records have, and what the format
 * is (rl records are prompts, not kernels). */
#ifndef KC_EXPORT_DATASHEET_H
#define KC_EXPORT_DATASHEET_H
#include "export/records.h"

#include <jansson.h>

/* source: the manifest's "source"; reasoning: its "reasoning" (null for a format without);
 * prov: its "provenance" (export/provenance.h). */
void export_datasheet(const export_ctx *x, const json_t *source, const json_t *reasoning,
                      const json_t *prov, const export_shards *w, strbuf *out);

#endif
