/* kcurate: deduplicates, labels and splits a kcorpus database; merges databases; prints stats.
 *   kcurate run --db FILE [options]      (label; replaces the previous labels)
 *   kcurate merge A.db B.db ... -o OUT.db
 *   kcurate verify-db --db FILE          (integrity checks before trusting a database)
 *   kcurate stats --db FILE [--json]
 *   kcurate runs --db FILE [--json]      (the runs: what kexport --run/--model select)
 *   kcurate flips --db FILE [--json]      (label flips, third-party claim checks)
 *   kcurate report --db FILE --out DIR    (static HTML report) */
#include "common/cli.h"
#include "common/db.h"
#include "common/error.h"
#include "curate/db_check.h"
#include "curate/flips.h"
#include "curate/merge.h"
#include "curate/params.h"
#include "curate/report.h"
#include "curate/run.h"
#include "curate/runs.h"
#include "curate/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: kcurate run --db FILE [options]\n"
    "       kcurate merge A.db B.db ... -o OUT.db\n"
    "           every source is first checked as verify-db checks it; one that fails refuses the\n"
    "           merge before anything is written (a new OUT.db is then not left behind)\n"
    "       kcurate verify-db --db FILE\n"
    "           checks a database before you trust it: SQLite's integrity_check, the schema\n"
    "           version and tables, foreign_key_check, its identity, every value's type, NULLs,\n"
    "           hashes and ids, every blob's hash; prints what it found, exit 1 on any problem\n"
    "       kcurate stats --db FILE [--json]\n"
    "           counts, verdicts, duplicates, tiers, trajectories, splits, pass@k, fast_p@k and\n"
    "           speedup@k per suite, model and strategy; --json adds tokens, cost, one row per run\n"
    "       kcurate runs --db FILE [--json]\n"
    "           the runs: id, status, model, endpoint, synthetic or not, problems, trajectories,\n"
    "           turns, tokens, cost (what kexport --run and --model select)\n"
    "       kcurate flips --db FILE [--json]\n"
    "           label flips between verifications of a candidate (verdict class, verdict, flags,\n"
    "           speedup beyond timing noise) and third-party claims that do not hold\n"
    "       kcurate report --db FILE --out DIR [--price IN,OUT | --price-in USD --price-out USD] [--chartjs FILE]\n"
    "           a static HTML report (solve rate vs budget, fast_p, verdicts, speedups, cost,\n"
    "           per-problem table with kernel pages, flips, suspicious list)\n"
    "\n"
    "run options (defaults in brackets; the values used are recorded in curate_runs):\n"
    "  --shingle N            tokens per MinHash shingle [5]\n"
    "  --num-hashes N         MinHash signature length [128]\n"
    "  --bands N              LSH bands; rows = hashes / bands [16]\n"
    "  --near-threshold F     estimated Jaccard that makes a near duplicate [0.75]\n"
    "  --reward-correct F     reward of a correct turn before its speedup [0.3]\n"
    "  --reward-incorrect F   reward of any other turn [0]\n"
    "  --speedup-weight F     weight of the eager speedup in the reward [1]\n"
    "  --speedup-cap F        speedups above count as this in rewards [10]\n"
    "  --gamma F              discount of later turns in returns [0.4]\n"
    "  --suspicious F         eager speedup flagged for audit [10]\n"
    "  --valid-fraction F     share of problems in valid [0.05]\n"
    "  --test-fraction F      share of problems in test [0.05]\n"
    "  --split-salt S         salt of the problem-id hash [kcorpus-v1]\n"
    "  --heldout IDS          comma separated ids or globs never in train\n"
    "  --heldout-file FILE    the same, one a line ('#' comments)\n";

static _Noreturn void usage(int status)
{
    fputs(usage_text, status ? stderr : stdout);
    exit(status);
}

static double number_arg(const char *opt, const char *v)
{
    char *end;
    double d = strtod(v, &end);
    if (!*v || *end)
        die("%s wants a number, not '%s'", opt, v);
    return d;
}

/* kcurate run's options (each takes a value): an unknown one is named as such. */
static int is_run_option(const char *a)
{
    static const char *const names[] = {
        "--db", "--shingle", "--num-hashes", "--bands", "--near-threshold", "--reward-correct",
        "--reward-incorrect", "--speedup-weight", "--speedup-cap", "--gamma", "--suspicious",
        "--valid-fraction", "--test-fraction", "--split-salt", "--heldout", "--heldout-file", NULL};
    for (int i = 0; names[i]; i++)
        if (!strcmp(a, names[i]))
            return 1;
    return 0;
}

static int run_command(int argc, char **argv)
{
    curate_params p;
    curate_params_defaults(&p);
    const char *db_path = NULL;
    strbuf err = STRBUF_INIT;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            usage(0);
        if (!is_run_option(a))
            kc_usage_error("unknown option '%s'", a);
        if (!v)
            kc_usage_error("%s needs a value", a);
        i++;
        if (!strcmp(a, "--db")) db_path = v;
        else if (!strcmp(a, "--shingle")) p.minhash.shingle = (int)number_arg(a, v);
        else if (!strcmp(a, "--num-hashes")) p.minhash.num_hashes = (int)number_arg(a, v);
        else if (!strcmp(a, "--bands")) p.minhash.bands = (int)number_arg(a, v);
        else if (!strcmp(a, "--near-threshold")) p.minhash.threshold = number_arg(a, v);
        else if (!strcmp(a, "--reward-correct")) p.reward_correct = number_arg(a, v);
        else if (!strcmp(a, "--reward-incorrect")) p.reward_incorrect = number_arg(a, v);
        else if (!strcmp(a, "--speedup-weight")) p.speedup_weight = number_arg(a, v);
        else if (!strcmp(a, "--speedup-cap")) p.speedup_cap = number_arg(a, v);
        else if (!strcmp(a, "--gamma")) p.gamma = number_arg(a, v);
        else if (!strcmp(a, "--suspicious")) p.suspicious_speedup = number_arg(a, v);
        else if (!strcmp(a, "--valid-fraction")) p.valid_fraction = number_arg(a, v);
        else if (!strcmp(a, "--test-fraction")) p.test_fraction = number_arg(a, v);
        else if (!strcmp(a, "--split-salt")) free(p.split_salt), p.split_salt = xstrdup(v);
        else if (!strcmp(a, "--heldout")) curate_params_add_heldout(&p, v);
        else if (!strcmp(a, "--heldout-file")) {
            if (curate_params_load_heldout(&p, v, &err))
                die("%s", err.buf);
        } else
            kc_usage_error("unknown option '%s'", a);
    }
    if (!db_path)
        kc_usage_error("kcurate run needs --db FILE");
    sqlite3 *db;
    if (kc_db_open(db_path, KC_DB_EXISTING, &db, &err))
        die("%s", err.buf);
    curate_summary s;
    if (curate_run(db, &p, &s, &err))
        die("%s: %s", db_path, err.buf);
    printf("curate run %lld: %ld candidates (%ld with a kernel) in %ld problems, %ld trajectories\n"
           "duplicates: %ld exact, %ld near; dedup %.2f s, total %.2f s\n",
           (long long)s.curate_run_id, s.candidates, s.with_source, s.problems, s.trajectories,
           s.exact_duplicates, s.near_duplicates, s.dedup_seconds, s.total_seconds);
    kc_db_close(db);
    curate_params_free(&p);
    sb_free(&err);
    return 0;
}

static int merge_command(int argc, char **argv)
{
    const char *out = NULL;
    int n_src = 0;
    const char **src = xcalloc((size_t)argc + 1, sizeof(*src));
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--out")) {
            if (i + 1 >= argc)
                die("-o needs a file");
            out = argv[++i];
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(0);
        } else {
            src[n_src++] = argv[i];
        }
    }
    if (!out || !n_src)
        kc_usage_error("usage: kcurate merge A.db B.db ... -o OUT.db");
    strbuf err = STRBUF_INIT;
    sqlite3 *db;
    int existed = access(out, F_OK) == 0;
    if (kc_db_open(out, KC_DB_CREATE, &db, &err))
        die("%s", err.buf);
    curate_merge_counts c = {0};
    if (curate_merge_all(db, src, n_src, &c, &err)) {
        kc_db_close(db);
        if (!existed) /* a refused merge leaves no new destination behind */
            kc_db_remove_files(out);
        die("%s", err.buf);
    }
    printf("merged %d database(s) into %s: %ld rows added, %ld already present, %ld blobs and %ld "
           "problems added\n", n_src, out, c.rows_added, c.rows_known, c.blobs_added,
           c.problems_added);
    kc_db_close(db);
    free(src);
    sb_free(&err);
    return 0;
}

static int verify_db_command(int argc, char **argv)
{
    if (argc == 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")))
        usage(0);
    if (argc != 2 || strcmp(argv[0], "--db"))
        kc_usage_error("usage: kcurate verify-db --db FILE");
    strbuf err = STRBUF_INIT;
    db_check_result r = {0};
    if (db_check_file(argv[1], &r, &err))
        die("%s", err.buf);
    fputs(sb_str(&r.report), stdout);
    if (r.problems)
        printf("verify-db: %s: %d problem(s); do not trust or merge it\n", argv[1], r.problems);
    else
        printf("verify-db: %s: ok\n", argv[1]);
    int status = r.problems ? 1 : 0;
    db_check_result_free(&r);
    sb_free(&err);
    return status;
}

/* A read-only view of a database: `kcurate NAME --db FILE [--json]` prints its text form, or its
 * JSON form with --json (stats, runs, flips). */
struct db_view {
    const char *name;
    json_t *(*json)(sqlite3 *db, strbuf *err);
    int (*text)(sqlite3 *db, const char *db_path, strbuf *out, strbuf *err);
};

static int db_view_command(const struct db_view *v, int argc, char **argv)
{
    const char *db_path = NULL;
    int as_json = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc)
            db_path = argv[++i];
        else if (!strcmp(argv[i], "--json"))
            as_json = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return printf("usage: kcurate %s --db FILE [--json]\n", v->name), 0;
        else
            kc_usage_error("unknown option '%s'; usage: kcurate %s --db FILE [--json]", argv[i], v->name);
    }
    if (!db_path)
        kc_usage_error("usage: kcurate %s --db FILE [--json]", v->name);
    strbuf err = STRBUF_INIT, out = STRBUF_INIT;
    sqlite3 *db;
    if (kc_db_open(db_path, KC_DB_READONLY, &db, &err))
        die("%s", err.buf);
    if (as_json) {
        json_t *j = v->json(db, &err);
        if (!j)
            die("%s", err.buf);
        json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
        putchar('\n');
        json_decref(j);
    } else if (v->text(db, db_path, &out, &err)) {
        die("%s", err.buf);
    }
    fputs(sb_str(&out), stdout);
    kc_db_close(db);
    sb_free(&err), sb_free(&out);
    return 0;
}

static int runs_text(sqlite3 *db, const char *db_path, strbuf *out, strbuf *err)
{
    (void)db_path;
    return curate_runs_text(db, out, err);
}

static int flips_text(sqlite3 *db, const char *db_path, strbuf *out, strbuf *err)
{
    (void)db_path;
    return curate_flips_text(db, out, err);
}

static const struct db_view stats_view = {"stats", curate_stats_json, curate_stats};
static const struct db_view runs_view = {"runs", curate_runs_json, runs_text};
static const struct db_view flips_view = {"flips", curate_flips_json, flips_text};

/* --price IN,OUT[,REASONING] as kcollect takes it (dollars per million tokens). */
static void price_pair(const char *v, double *in, double *out)
{
    char *end;
    *in = strtod(v, &end);
    if (end == v || *end != ',')
        kc_usage_error("--price wants IN,OUT dollars per million tokens, not '%s'", v);
    const char *o = end + 1;
    *out = strtod(o, &end);
    if (end == o || (*end && *end != ','))
        kc_usage_error("--price wants IN,OUT dollars per million tokens, not '%s'", v);
}

static int report_command(int argc, char **argv)
{
    report_options o = {0};
    const char *db_path = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            kc_usage_error("usage: kcurate report --db FILE --out DIR [--price IN,OUT | --price-in USD --price-out USD] "
                "[--chartjs FILE]");
        i++;
        if (!strcmp(a, "--db")) db_path = v;
        else if (!strcmp(a, "--out")) o.out_dir = v;
        else if (!strcmp(a, "--chartjs")) o.chartjs_path = v;
        else if (!strcmp(a, "--price-in")) o.price_in = number_arg(a, v);
        else if (!strcmp(a, "--price-out")) o.price_out = number_arg(a, v);
        else if (!strcmp(a, "--price")) price_pair(v, &o.price_in, &o.price_out);
        else kc_usage_error("unknown option '%s'", a);
    }
    if (!db_path || !o.out_dir)
        kc_usage_error("kcurate report needs --db FILE and --out DIR");
    strbuf err = STRBUF_INIT;
    sqlite3 *db;
    if (kc_db_open(db_path, KC_DB_READONLY, &db, &err) || report_write(db, &o, &err))
        die("%s", err.buf);
    printf("report written to %s/index.html (open it from disk; no network needed)\n", o.out_dir);
    kc_db_close(db);
    sb_free(&err);
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_progname("kcurate");
    kc_cli_standard(argc, argv, usage_text);
    if (argc < 2)
        kc_usage_error("no command (run, merge, verify-db, stats, runs, flips, report)");
    if (!strcmp(argv[1], "run"))
        return run_command(argc - 2, argv + 2);
    if (!strcmp(argv[1], "merge"))
        return merge_command(argc - 2, argv + 2);
    if (!strcmp(argv[1], "verify-db"))
        return verify_db_command(argc - 2, argv + 2);
    if (!strcmp(argv[1], "stats"))
        return db_view_command(&stats_view, argc - 2, argv + 2);
    if (!strcmp(argv[1], "runs"))
        return db_view_command(&runs_view, argc - 2, argv + 2);
    if (!strcmp(argv[1], "flips"))
        return db_view_command(&flips_view, argc - 2, argv + 2);
    if (!strcmp(argv[1], "report"))
        return report_command(argc - 2, argv + 2);
    if (!strcmp(argv[1], "--db"))
        return run_command(argc - 1, argv + 1);
    kc_usage_error("unknown command '%s'", argv[1]);
}
