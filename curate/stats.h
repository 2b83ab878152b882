/* stats: a summary of a curated database that a person reads (kcurate stats). */
#ifndef KC_CURATE_STATS_H
#define KC_CURATE_STATS_H
#include "common/db.h"

/* db_path: as the user gave it, for the hints (the commands to run next). */
int curate_stats(sqlite3 *db, const char *db_path, strbuf *out, strbuf *err);

#endif
