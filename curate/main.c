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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_SYNOPSIS "run --db FILE [options]\n"
#define RUN_OPTIONS \
    "run options (defaults in brackets; the values used are recorded in curate_runs):\n" \
    "  --shingle N            tokens per MinHash shingle, 1..32 [5]\n" \
    "  --num-hashes N         MinHash signature length, 1..1024 [128]\n" \
    "  --bands N              LSH bands, dividing --num-hashes; rows = hashes / bands [16]\n" \
    "  --near-threshold F     estimated Jaccard that makes a near duplicate, (0, 1] [0.75]\n" \
    "  --reward-correct F     reward of a correct turn before its speedup [0.3]\n" \
    "  --reward-incorrect F   reward of any other turn [0]\n" \
    "  --speedup-weight F     weight of the eager speedup in the reward [1]\n" \
    "  --speedup-cap F        speedups above count as this in rewards [10]\n" \
    "  --gamma F              discount of later turns in returns, 0..1 [0.4]\n" \
    "  --suspicious F         eager speedup flagged for audit [10]\n" \
    "  --valid-fraction F     share of problems in valid [0.05]\n" \
    "  --test-fraction F      share of problems in test [0.05]\n" \
    "  --split-salt S         salt of the problem-id hash [kcorpus-v1]\n" \
    "  --heldout IDS          comma separated ids or globs never in train\n" \
    "  --heldout-file FILE    the same, one a line ('#' comments)\n"
#define MERGE_SYNOPSIS "merge A.db B.db ... -o OUT.db     (-o and --out are one option)\n"
#define MERGE_TEXT \
    "    every source is first checked as verify-db checks it; one that fails refuses the\n" \
    "    merge before anything is written (a new OUT.db is then not left behind). A\n" \
    "    trajectory collected twice (the same run in two databases) is kept once when its\n" \
    "    answers are the same, else the second is kept apart in a run of its own\n"
#define VERIFY_DB_SYNOPSIS "verify-db --db FILE\n"
#define VERIFY_DB_TEXT \
    "    checks a database before you trust it: SQLite's integrity_check, the schema\n" \
    "    version and tables, foreign_key_check, its identity, every value's type, NULLs,\n" \
    "    hashes and ids, every blob's hash; prints what it found, exit 1 on any problem\n"
#define STATS_SYNOPSIS "stats --db FILE [--json]\n"
#define STATS_TEXT \
    "    counts, verdicts, duplicates, tiers, trajectories, splits, pass@k, fast_p@k and\n" \
    "    speedup@k per suite, model and strategy; --json adds tokens, cost, one row per run\n"
#define RUNS_SYNOPSIS "runs --db FILE [--json]\n"
#define RUNS_TEXT \
    "    the runs: id, status, model, endpoint, synthetic or not, problems, trajectories,\n" \
    "    turns, tokens, cost (what kexport --run and --model select)\n"
#define FLIPS_SYNOPSIS "flips --db FILE [--json]\n"
#define FLIPS_TEXT \
    "    label flips between verifications of a candidate (verdict class, verdict, flags,\n" \
    "    speedup beyond timing noise) and third-party claims that do not hold\n"
#define REPORT_SYNOPSIS \
    "report --db FILE --out DIR [--price IN,OUT | --price-in USD --price-out USD]\n" \
    "        [--chartjs FILE]     (-o DIR is --out DIR)\n"
#define REPORT_TEXT \
    "    a static HTML report (solve rate vs budget, fast_p, verdicts, speedups, cost,\n" \
    "    per-problem table with kernel pages, flips, suspicious list)\n"

static const char usage_text[] =
    "usage: kcurate <command> [options]   (kcurate <command> --help: that command's usage)\n"
    "\n"
    "  " RUN_SYNOPSIS "    dedup, labels, rewards, splits (replaces the previous labels)\n"
    "  " MERGE_SYNOPSIS MERGE_TEXT "  " VERIFY_DB_SYNOPSIS VERIFY_DB_TEXT
    "  " STATS_SYNOPSIS STATS_TEXT "  " RUNS_SYNOPSIS RUNS_TEXT "  " FLIPS_SYNOPSIS FLIPS_TEXT
    "  " REPORT_SYNOPSIS REPORT_TEXT "\n" RUN_OPTIONS;

static const char commands[] = "run, merge, verify-db, stats, runs, flips, report";
static const kc_command kcurate_cmd = {"kcurate", NULL, usage_text, 0};
static const kc_command run_cmd = {"kcurate", "run",
                                   "usage: kcurate " RUN_SYNOPSIS "\n" RUN_OPTIONS, 0};
static const kc_command merge_cmd = {"kcurate", "merge", "usage: kcurate " MERGE_SYNOPSIS MERGE_TEXT,
                                     KC_ANY_OPERANDS};
static const kc_command verify_db_cmd = {"kcurate", "verify-db",
                                         "usage: kcurate " VERIFY_DB_SYNOPSIS VERIFY_DB_TEXT, 0};
static const kc_command stats_cmd = {"kcurate", "stats", "usage: kcurate " STATS_SYNOPSIS STATS_TEXT,
                                     0};
static const kc_command runs_cmd = {"kcurate", "runs", "usage: kcurate " RUNS_SYNOPSIS RUNS_TEXT, 0};
static const kc_command flips_cmd = {"kcurate", "flips", "usage: kcurate " FLIPS_SYNOPSIS FLIPS_TEXT,
                                     0};
static const kc_command report_cmd = {"kcurate", "report",
                                      "usage: kcurate " REPORT_SYNOPSIS REPORT_TEXT, 0};

/* --heldout IDS (opt->dest: the curate_params). */
static int heldout_option(const kc_option *opt, const char *v, strbuf *err)
{
    (void)err;
    curate_params_add_heldout(opt->dest, v);
    return 0;
}

/* --heldout-file FILE: a file error, not a usage one (exit 1, naming the file). */
static int heldout_file_option(const kc_option *opt, const char *v, strbuf *err)
{
    strbuf why = STRBUF_INIT;
    if (curate_params_load_heldout(opt->dest, v, &why))
        die("%s", why.buf);
    sb_free(&why);
    (void)err;
    return 0;
}

/* --split-salt S (a copy: the params own their salt). */
static int salt_option(const kc_option *opt, const char *v, strbuf *err)
{
    (void)err;
    curate_params *p = opt->dest;
    free(p->split_salt);
    p->split_salt = xstrdup(v);
    return 0;
}

static int run_command(int argc, char **argv)
{
    curate_params p;
    curate_params_defaults(&p);
    const char *db_path = NULL;
    strbuf err = STRBUF_INIT;
    const kc_option opts[] = {
        KC_OPT_STR("db", 0, &db_path),
        KC_OPT_INTEGER("shingle", 0, &p.minhash.shingle, 1, 32),
        KC_OPT_INTEGER("num-hashes", 0, &p.minhash.num_hashes, 1, CURATE_MAX_HASHES),
        KC_OPT_INTEGER("bands", 0, &p.minhash.bands, 1, CURATE_MAX_HASHES),
        KC_OPT_NUM("near-threshold", 0, &p.minhash.threshold, 1e-9, 1),
        KC_OPT_NUM("reward-correct", 0, &p.reward.correct, -1e6, 1e6),
        KC_OPT_NUM("reward-incorrect", 0, &p.reward.incorrect, -1e6, 1e6),
        KC_OPT_NUM("speedup-weight", 0, &p.reward.speedup_weight, -1e6, 1e6),
        KC_OPT_NUM("speedup-cap", 0, &p.reward.speedup_cap, 1e-9, 1e9),
        KC_OPT_NUM("gamma", 0, &p.gamma, 0, 1),
        KC_OPT_NUM("suspicious", 0, &p.reward.suspicious_speedup, 1e-9, 1e9),
        KC_OPT_NUM("valid-fraction", 0, &p.valid_fraction, 0, 1),
        KC_OPT_NUM("test-fraction", 0, &p.test_fraction, 0, 1),
        KC_OPT_FN("split-salt", 0, salt_option, &p, NULL),
        KC_OPT_FN("heldout", 0, heldout_option, &p, NULL),
        KC_OPT_FN("heldout-file", 0, heldout_file_option, &p, NULL),
        KC_OPT_END_OF_TABLE};
    kc_parse_options(&run_cmd, opts, argc, argv);
    if (!db_path)
        kc_usage_error("run needs --db FILE");
    if (curate_params_check(&p, &err)) {
        char line[512];
        snprintf(line, sizeof line, "%s", err.buf);
        sb_free(&err);
        kc_usage_error("%s", line);
    }
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

/* What a merge did with trajectories collected twice (the same run identity in two databases). */
static void merge_twice_note(const curate_merge_counts *c)
{
    if (c->trajectories_same)
        printf("  %ld trajectories were collected twice with the same answers (the same run, "
               "problem and sample in two databases): kept once\n", c->trajectories_same);
    if (c->trajectories_apart)
        printf("  %ld trajectories were collected twice with other answers (the same run, problem "
               "and sample): the second ones are kept apart in %s, the same identity collected "
               "again; kcurate runs lists it, kexport --run keeps it apart\n",
               c->trajectories_apart, sb_str(&c->apart));
}

static int merge_command(int argc, char **argv)
{
    const char *out = NULL;
    const kc_option opts[] = {KC_OPT_STR("out", 'o', &out), KC_OPT_END_OF_TABLE};
    int n_src = kc_parse_options(&merge_cmd, opts, argc, argv);
    if (!out)
        kc_usage_error("merge needs -o OUT.db");
    if (!n_src)
        kc_usage_error("merge needs the databases to merge (A.db B.db ...)");
    const char **src = xcalloc((size_t)n_src + 1, sizeof(*src));
    for (int i = 0; i < n_src; i++)
        src[i] = argv[1 + i];
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
    merge_twice_note(&c);
    sb_free(&c.apart);
    kc_db_close(db);
    free(src);
    sb_free(&err);
    return 0;
}

static int verify_db_command(int argc, char **argv)
{
    const char *db_path = NULL;
    const kc_option opts[] = {KC_OPT_STR("db", 0, &db_path), KC_OPT_END_OF_TABLE};
    kc_parse_options(&verify_db_cmd, opts, argc, argv);
    if (!db_path)
        kc_usage_error("verify-db needs --db FILE");
    strbuf err = STRBUF_INIT;
    db_check_result r = {0};
    if (db_check_file(db_path, &r, &err))
        die("%s", err.buf);
    fputs(sb_str(&r.report), stdout);
    if (r.problems)
        printf("verify-db: %s: %d problem(s); do not trust or merge it\n", db_path, r.problems);
    else
        printf("verify-db: %s: ok\n", db_path);
    int status = r.problems ? 1 : 0;
    db_check_result_free(&r);
    sb_free(&err);
    return status;
}

/* A read-only view of a database: `kcurate NAME --db FILE [--json]` prints its text form, or its
 * JSON form with --json (stats, runs, flips). */
struct db_view {
    const kc_command *cmd;
    json_t *(*json)(sqlite3 *db, const char *db_path, strbuf *err);
    int (*text)(sqlite3 *db, const char *db_path, strbuf *out, strbuf *err);
};

static int db_view_command(const struct db_view *v, int argc, char **argv)
{
    const char *db_path = NULL;
    int as_json = 0;
    const kc_option opts[] = {KC_OPT_STR("db", 0, &db_path), KC_OPT_FLAG("json", 0, &as_json),
                              KC_OPT_END_OF_TABLE};
    kc_parse_options(v->cmd, opts, argc, argv);
    if (!db_path)
        kc_usage_error("%s needs --db FILE", v->cmd->name);
    strbuf err = STRBUF_INIT, out = STRBUF_INIT;
    sqlite3 *db;
    if (kc_db_open(db_path, KC_DB_READONLY, &db, &err))
        die("%s", err.buf);
    if (as_json) {
        json_t *j = v->json(db, db_path, &err);
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

static json_t *runs_json(sqlite3 *db, const char *db_path, strbuf *err)
{
    (void)db_path;
    return curate_runs_json(db, err);
}

static json_t *flips_json(sqlite3 *db, const char *db_path, strbuf *err)
{
    (void)db_path;
    return curate_flips_json(db, err);
}

static const struct db_view stats_view = {&stats_cmd, curate_stats_json, curate_stats};
static const struct db_view runs_view = {&runs_cmd, runs_json, runs_text};
static const struct db_view flips_view = {&flips_cmd, flips_json, flips_text};

/* --price IN,OUT[,REASONING] as kcollect takes it (dollars per million tokens; opt->dest: the
 * report_options). */
static int price_option(const kc_option *opt, const char *v, strbuf *err)
{
    report_options *o = opt->dest;
    char *end;
    o->price_in = strtod(v, &end);
    const char *rest = end + 1;
    if (end == v || *end != ',' || !isfinite(o->price_in) || o->price_in < 0)
        return kc_option_fail(opt, err, "takes IN,OUT dollars per million tokens, not '%s'", v);
    o->price_out = strtod(rest, &end);
    if (end == rest || (*end && *end != ',') || !isfinite(o->price_out) || o->price_out < 0)
        return kc_option_fail(opt, err, "takes IN,OUT dollars per million tokens, not '%s'", v);
    return 0;
}

static int report_command(int argc, char **argv)
{
    report_options o = {0};
    const char *db_path = NULL;
    const kc_option opts[] = {
        KC_OPT_STR("db", 0, &db_path),
        KC_OPT_STR("out", 'o', &o.out_dir),
        KC_OPT_STR("chartjs", 0, &o.chartjs_path),
        KC_OPT_NUM("price-in", 0, &o.price_in, 0, 1e9),
        KC_OPT_NUM("price-out", 0, &o.price_out, 0, 1e9),
        KC_OPT_FN("price", 0, price_option, &o, NULL),
        KC_OPT_END_OF_TABLE};
    kc_parse_options(&report_cmd, opts, argc, argv);
    if (!db_path || !o.out_dir)
        kc_usage_error("report needs --db FILE and --out DIR");
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
    if (argc >= 2 && !strncmp(argv[1], "--db", 4)) /* kcurate --db FILE ...: the old form of run */
        return run_command(argc, argv);
    const char *cmd = kc_cli_subcommand(&kcurate_cmd, commands, argc, argv);
    if (!strcmp(cmd, "run"))
        return run_command(argc - 1, argv + 1);
    if (!strcmp(cmd, "merge"))
        return merge_command(argc - 1, argv + 1);
    if (!strcmp(cmd, "verify-db"))
        return verify_db_command(argc - 1, argv + 1);
    if (!strcmp(cmd, "stats"))
        return db_view_command(&stats_view, argc - 1, argv + 1);
    if (!strcmp(cmd, "runs"))
        return db_view_command(&runs_view, argc - 1, argv + 1);
    if (!strcmp(cmd, "flips"))
        return db_view_command(&flips_view, argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return report_command(argc - 1, argv + 1);
    kc_usage_error("unknown command '%s' (%s)", cmd, commands);
}
