/* stale: whether the labels of a database are older than its data: candidates collected, or
 * candidates verified again, after the last kcurate run (their labels are missing or may be
 * wrong), and the exact kcurate command that relabels, with the last run's parameters. kexport
 * refuses such labels (export/provenance.h); kcurate stats says so. */
#ifndef KC_CURATE_STALE_H
#define KC_CURATE_STALE_H
#include "common/db.h"

typedef struct stale_labels {
    int curated;            /* a kcurate run exists */
    long long curate_run;   /* its id */
    long new_candidates;    /* collected after the last kcurate run */
    long reverified;        /* labelled, then verified again */
    char **argv;            /* the kcurate command that relabels, with the last run's parameters */
    int argc;
} stale_labels;

/* Counts on an open database; the command is built for db_path (the kcurate beside this
 * program). */
int curate_stale_count(sqlite3 *db, const char *db_path, stale_labels *s, strbuf *err);
/* The same, opening db_path read-only. */
int curate_stale_labels(const char *db_path, stale_labels *s, strbuf *err);
/* The command as one shell line. */
void stale_command_line(const stale_labels *s, strbuf *out);
void stale_labels_free(stale_labels *s);

#endif
