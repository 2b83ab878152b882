/* provenance: what an export says about where its records came from, and whether its labels are
 * current. The runs its records drew on (model, endpoint, synthetic or not, records of each) for
 * manifest.json and the datasheet, saying when runs or models are mixed and when any answers
 * were synthetic (written by a test server, not a model); stale labels (candidates collected or
 * verified after the last kcurate run), with the exact kcurate command that relabels them and a
 * way to run it; and the removal of staging directories that killed exports left behind. */
#ifndef KC_EXPORT_PROVENANCE_H
#define KC_EXPORT_PROVENANCE_H
#include "common/db.h"
#include "curate/stale.h"
#include "export/records.h"

#include <jansson.h>

/* {"runs": [...], "models": [...], "mixed_runs", "mixed_models", "synthetic",
 * "synthetic_servers", "synthetic_records", "records_several_runs"} for the runs x's records
 * drew on; each run names its model, endpoint, api, the context policy of its requests
 * ("context": full | drop-reasoning) and the records that draw on it. Every record counts once in
 * synthetic_records (it draws on a synthetic run) and records_several_runs (an rl record draws on
 * every run whose candidates its counts include; a preference pair on its two sides' runs). */
json_t *provenance_json(sqlite3 *db, const export_ctx *x);
/* A datasheet paragraph saying the same in words (empty when there is nothing to say);
 * run_field: where a record of the format marks its run synthetic (provenance.run, ...). */
void provenance_datasheet(const json_t *prov, const char *run_field, strbuf *out);
/* Warnings on stderr for a mixed or synthetic export. */
void provenance_warn(const json_t *prov);

/* Looks at the database's last curate run (curate/stale.h); the command is built for db_path. */
int provenance_stale(const char *db_path, stale_labels *s, strbuf *err);
/* The command as one shell line. */
void provenance_command_line(const stale_labels *s, strbuf *out);
/* Runs the command (the kcurate beside this program); 0 when it succeeded. */
int provenance_curate(const stale_labels *s, strbuf *err);

/* Removes DIR/.kexport-stage-<pid> directories whose process is gone (or is no kexport). */
void provenance_clean_stages(const char *out_dir);

#endif
