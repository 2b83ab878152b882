/* report: `kcurate report`, a static, self-contained HTML report of a database.
 * report_data.c reads the database into one JSON document (the numbers: solve rate against the
 * per-problem budget in minutes and turns per suite, model and strategy, KernelBench fast_p,
 * pass@k, fast_p@k and speedup@k per suite, model and strategy (curate/passk.h), verdict mix
 * per turn, speedup and roofline histograms, cost, the per-problem table, flips, the suspicious
 * list); report_html.c writes it as index.html (Chart.js inlined, the data as JSON in the page),
 * report.json, and one page per linked kernel. The same database gives the same files. */
#ifndef KC_CURATE_REPORT_H
#define KC_CURATE_REPORT_H
#include "common/db.h"
#include <jansson.h>

typedef struct report_options {
    const char *out_dir;
    const char *chartjs_path; /* Chart.js UMD bundle (Debian libjs-chart.js by default) */
    double price_in, price_out; /* $ per million tokens when runs recorded no cost; 0: none */
} report_options;

#define REPORT_CHARTJS_DEFAULT "/usr/share/javascript/chart.js/chart.min.js"

/* The report's data; NULL on a database error. */
json_t *report_data(sqlite3 *db, const report_options *o, strbuf *err);
/* Writes index.html, report.json and kernels/<id>.html under o->out_dir. */
int report_write(sqlite3 *db, const report_options *o, strbuf *err);

#endif
