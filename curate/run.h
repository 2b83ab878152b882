/* run: one kcurate pass over a database: replaces every label (candidates, trajectories,
 * problems) in one transaction and records the parameters used in curate_runs. */
#ifndef KC_CURATE_RUN_H
#define KC_CURATE_RUN_H
#include "common/db.h"
#include "curate/params.h"
#include <stdint.h>

typedef struct curate_summary {
    int64_t curate_run_id;
    long candidates, with_source, exact_duplicates, near_duplicates, trajectories, problems;
    double dedup_seconds, total_seconds;
} curate_summary;

int curate_run(sqlite3 *db, const curate_params *p, curate_summary *out, strbuf *err);

#endif
