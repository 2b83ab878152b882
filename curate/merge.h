/* merge: copies kcorpus databases (shards, other machines) into one without duplicating problems,
 * blobs or runs. Every copied row is recorded in merge_map under the database and id it was born
 * with, so merging the same source again, or a database that already contains a merged copy,
 * adds nothing twice (idempotent). Two databases that each ran the same collection (the same run
 * identity) hold the same trajectory twice: the same content is kept once, other content is kept
 * apart in a run of its own (merge.c says how). Labels are not copied: run kcurate on the result. */
#ifndef KC_CURATE_MERGE_H
#define KC_CURATE_MERGE_H
#include "common/db.h"

typedef struct curate_merge_counts {
    long rows_added, rows_known, blobs_added, problems_added, problem_conflicts;
    /* the same run collected twice (merge.c): trajectories of the same content kept once, and
     * those of other content kept apart in runs of their own (apart: "run 3, run 4") */
    long trajectories_same, trajectories_apart, runs_apart;
    strbuf apart;
} curate_merge_counts;

/* Merges the databases at paths into dst (open, at the newest schema). Every source is first
 * checked as `kcurate verify-db` checks a database (db_check.h), and one that fails refuses the
 * merge before anything is written; then each source is copied in one transaction. */
int curate_merge_all(sqlite3 *dst, const char *const *paths, int n, curate_merge_counts *counts,
                     strbuf *err);
/* The database's identity (db_info uuid) into out. */
int curate_db_uuid(sqlite3 *db, const char *schema, strbuf *out, strbuf *err);

#endif
