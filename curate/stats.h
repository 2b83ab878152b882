/* stats: a summary of a curated database that a person reads (kcurate stats). */
#ifndef KC_CURATE_STATS_H
#define KC_CURATE_STATS_H
#include "common/db.h"

int curate_stats(sqlite3 *db, strbuf *out, strbuf *err);
/* kcurate stats --json: the database's counts and the pass@k metrics (curate/passk.h) as JSON. */
int curate_stats_json(sqlite3 *db, strbuf *out, strbuf *err);

#endif
