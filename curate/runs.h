/* runs: the runs of a database, one row each (kcurate runs): what kexport --run and --model
 * select from. */
#ifndef KC_CURATE_RUNS_H
#define KC_CURATE_RUNS_H
#include "common/db.h"

#include <jansson.h>

/* A table: id, status, model, endpoint, synthetic, problems, trajectories, turns, tokens, cost. */
int curate_runs_text(sqlite3 *db, strbuf *out, strbuf *err);
/* The same rows as a JSON array of objects; NULL with err on a database error. */
json_t *curate_runs_json(sqlite3 *db, strbuf *err);

#endif
