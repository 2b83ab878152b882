/* explain: why an export wrote no record, in words a user can act on: which filter removed what
 * (the problems in the splits and levels asked for, the verdicts present, what the format keeps:
 * sft's verdicts, multiturn's solved trajectories, preference's pairing rule, --min-speedup,
 * duplicates) and which flag would give records. */
#ifndef KC_EXPORT_EXPLAIN_H
#define KC_EXPORT_EXPLAIN_H
#include "common/db.h"
#include "common/strbuf.h"
#include "export/config.h"

/* Writes the explanation (several lines, each ending in '\n') into out. */
void export_explain_empty(sqlite3 *db, const export_config *c, strbuf *out);

#endif
