/* dispatch: runs the record format kexport was asked for (export/formats.h) over a curated
 * database: the one entry from the bundle to the formats. */
#ifndef KC_EXPORT_DISPATCH_H
#define KC_EXPORT_DISPATCH_H
#include "common/strbuf.h"
#include "export/records.h"

/* Exports x->cfg->format's records into x->shards; refuses a database with no labels yet. */
int export_records(export_ctx *x, strbuf *err);

#endif
