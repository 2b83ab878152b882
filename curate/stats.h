/* stats: a summary of a curated database that a person reads (kcurate stats). */
#ifndef KC_CURATE_STATS_H
#define KC_CURATE_STATS_H
#include "common/db.h"

#include <jansson.h>

/* db_path: as the user gave it, for the hints (the commands to run next). */
int curate_stats(sqlite3 *db, const char *db_path, strbuf *out, strbuf *err);
/* The same as JSON ("format": "kcorpus-stats v1"): database counts, the pass@k metrics per suite,
 * model and strategy ("metrics", curate/passk.h), the curate run (null before kcurate run), tokens in and
 * out, cost_usd, each table of the text (keys like verdict_classes, trajectories; absent before
 * kcurate run), "reasoning" per model ({answers, with_reasoning, share, median_chars (null when
 * none), truncated}: the answers of every turn, lengths in characters) and per-run rows
 * (kcurate runs --json), and "stale_labels": null when the labels are current, else what the
 * tables miss ({curate_run, candidates, labelled, collected_since, verified_again_since, command}:
 * the kcurate command that relabels, for db_path). NULL with err on a database error. */
json_t *curate_stats_json(sqlite3 *db, const char *db_path, strbuf *err);

#endif
