/* reasoning: what an export says about the reasoning its records carry: the share of records
 * with reasoning, the median length of the texts, how many were cut, the --reasoning mode and the
 * context policies of the runs' requests; as JSON for manifest.json and as a line of the
 * datasheet (and so of the dataset card). */
#ifndef KC_EXPORT_REASONING_H
#define KC_EXPORT_REASONING_H
#include "export/records.h"

#include <jansson.h>

/* Whether the format carries reasoning at all (sft, multiturn, preference, plan). */
int export_format_has_reasoning(enum export_format f);
/* {"mode", "records", "share", "texts", "median_chars", "truncated", "context"} (context: the
 * distinct policies of prov's runs); null for a format without reasoning. */
json_t *export_reasoning_json(const export_ctx *x, const json_t *prov);
/* The datasheet's "- Reasoning: ..." line (ending in a newline); nothing for a format without
 * reasoning. writer: who wrote the answers ("the model", "the test server", ...). */
void export_reasoning_datasheet(const export_ctx *x, const json_t *reasoning, const char *writer,
                                strbuf *out);

#endif
