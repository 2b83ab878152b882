/* cli_racecheck: `kverify racecheck`, the deferred race check. Every candidate whose latest
 * verification is correct, whose launch unit uses shared memory or cross-block communication
 * (common/race_needs.h) and that has no race check for that verification is compiled again in
 * the sandboxed compile servers and run once under compute-sanitizer racecheck at the small
 * dims (sanitizer_racecheck: the code `--sanitizer all` runs inline), one candidate at a time per
 * GPU. Each outcome is a race_checks row. A hazard also records a new verification of the
 * candidate, verdict unsafe, with the tool's report in its evidence ("racecheck"), the way a
 * reverify records a new label: v_latest_verification, the flips, kcurate's labels and kexport
 * all see the candidate as unsafe from then on, and the old label stays for the audit. */
#include "common/cli.h"
#include "common/db.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/interrupt.h"
#include "common/problem.h"
#include "common/race_needs.h"
#include "verify/cli/verify_cli.h"
#include "verify/service/compile_pool.h"
#include "verify/service/driver_version.h"
#include "verify/service/sanitizer.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RACE_MAX_GPUS 16
#define RACE_MAX_PER_GPU 16
#define RACE_DEFAULT_PER_GPU 4 /* H100, 16 CPUs, 16 checks: 19.6 s at 1, 6.8 s at 4, 5.6 s at 8 */

static const char racecheck_usage[] =
    "usage: kverify racecheck --db PATH [--gpus N] [--per-gpu N] [--limit N] [--json]\n"
    "\n"
    "Runs compute-sanitizer racecheck (shared-memory hazards) once, at the problem's small dims,\n"
    "on every candidate whose latest verification is correct, whose launch unit uses shared\n"
    "memory (static or dynamic) or cross-block communication (atomics, fences, volatile,\n"
    "cooperative groups, inline PTX), and that has no race check for that verification yet.\n"
    "Each check is recorded (table race_checks): clean, hazard or error. A hazard records a new\n"
    "verification of the candidate, verdict unsafe, with the report in its evidence, so every\n"
    "view, kcurate and kexport see it as unsafe (run kcurate run again before exporting). kexport\n"
    "refuses correct labels that need a check and have no clean one (--no-racecheck overrides).\n"
    "Racecheck sees shared memory only: races through global memory and between blocks are left\n"
    "to the determinism rerun (docs/INTEGRITY.md, \"Races\").\n"
    "\n"
    "  --db PATH    the database (migrated if older)\n"
    "  --gpus N     use the first N visible GPUs (default: all)\n"
    "  --per-gpu N  checks at a time on each GPU (default 4): each is its own compute-sanitizer\n"
    "               process, mostly start-up on the CPU (about 1.2 s) around a small-dims run;\n"
    "               on an H100 host with 16 CPUs, 4 side by side check 2.9x as fast as 1, 8 3.5x\n"
    "  --limit N    check at most N candidates (the same command goes on with the rest)\n"
    "  --json       one JSON object on stdout: counts, the racecheck time per candidate, and\n"
    "               a result per candidate\n"
    "\n"
    "Exit status: 0 every selected candidate checked (clean or hazard), 1 some could not be\n"
    "checked (result error; the same command tries them again), 3 no GPU (no NVIDIA driver, or\n"
    "none visible), 4 usage or database error, 130 interrupted (Ctrl-C: what finished is\n"
    "recorded, the rest stays unchecked).\n";

typedef struct race_item {
    int64_t verification_id, candidate_id;
    char *problem_id, *source_sha, *seeds, *arch;
} race_item;

typedef struct race_state {
    sqlite3 *db;
    pthread_mutex_t lock; /* the database, the counts, the next item, the results */
    compile_pool *compiles;
    race_item *items;
    int n, next;
    int n_gpus;
    char gpu_names[RACE_MAX_GPUS][128];
    pthread_mutex_t gpu_lock[RACE_MAX_GPUS];
    pthread_cond_t gpu_free[RACE_MAX_GPUS];
    int gpu_busy[RACE_MAX_GPUS]; /* checks under the tool on each GPU, at most per_gpu */
    int per_gpu;
    char driver[32];
    int clean, hazard, relabelled, errors, failed, left;
    double racecheck_ms, compile_ms;
    int timed;
    int json;
    json_t *results;
} race_state;

/* ---- options ---- */

struct racecheck_options {
    const char *db_path;
    int gpus, per_gpu, limit, json;
};

static const kc_command racecheck_cmd = {"kverify", "racecheck", racecheck_usage, 0};

static void parse_options(int argc, char **argv, struct racecheck_options *o)
{
    const kc_option opts[] = {
        KC_OPT_STR("db", 'd', &o->db_path),
        KC_OPT_INTEGER("gpus", 'g', &o->gpus, 1, RACE_MAX_GPUS),
        KC_OPT_INTEGER("per-gpu", 'p', &o->per_gpu, 1, RACE_MAX_PER_GPU),
        KC_OPT_INTEGER("limit", 'l', &o->limit, 1, 1 << 30),
        KC_OPT_FLAG("json", 'j', &o->json),
        KC_OPT_END_OF_TABLE};
    kc_parse_options(&racecheck_cmd, opts, argc, argv);
    if (!o->db_path)
        kc_usage_error("racecheck needs --db PATH");
}

/* ---- the selection ---- */

static void items_free(race_item *items, int n)
{
    for (int i = 0; i < n; i++)
        free(items[i].problem_id), free(items[i].source_sha), free(items[i].seeds),
            free(items[i].arch);
    free(items);
}

static const char *text_or_empty(sqlite3_stmt *st, int col)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    return s ? s : "";
}

static char *column_dup(sqlite3_stmt *st, int col) { return xstrdup(text_or_empty(st, col)); }

static int load_items(race_state *s, int limit, strbuf *err)
{
    if (race_needs_register(s->db, err))
        return -1;
    sqlite3_stmt *st = kc_db_prepare(s->db, race_unchecked_sql, err);
    if (!st)
        return -1;
    sqlite3_bind_int(st, 1, limit > 0 ? limit : -1);
    int cap = 0, step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (s->n == cap)
            cap = cap ? 2 * cap : 64, s->items = xrealloc(s->items, (size_t)cap * sizeof(race_item));
        race_item *it = &s->items[s->n++];
        it->verification_id = sqlite3_column_int64(st, 0);
        it->candidate_id = sqlite3_column_int64(st, 1);
        it->problem_id = column_dup(st, 2);
        it->source_sha = column_dup(st, 3);
        it->seeds = column_dup(st, 4);
        it->arch = column_dup(st, 5);
    }
    int rc = step == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(s->db));
    sqlite3_finalize(st);
    return rc;
}

/* ---- one candidate ---- */

/* The label being checked: what a new verification keeps of it (flags, seeds, errors, its
 * evidence, to which the racecheck's is added). */
static int load_label(race_state *s, const race_item *it, kv_result *r, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(s->db,
        "SELECT flags, evidence_json, seeds, max_abs_err, max_rel_err, rel_l2_err "
        "FROM verifications WHERE id = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, it->verification_id);
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : kc_fail(err, "verification %lld is gone",
                                                        (long long)it->verification_id);
    if (rc == 0) {
        sb_adds(&r->flags, text_or_empty(st, 0));
        sb_adds(&r->evidence_json, text_or_empty(st, 1));
        sb_adds(&r->seeds, text_or_empty(st, 2));
        r->has_errors = sqlite3_column_type(st, 3) != SQLITE_NULL;
        r->max_abs_err = sqlite3_column_double(st, 3);
        r->max_rel_err = sqlite3_column_double(st, 4);
        r->rel_l2_err = sqlite3_column_double(st, 5);
    }
    sqlite3_finalize(st);
    return rc;
}

static int load_candidate(race_state *s, const race_item *it, kv_result *r, strbuf *err)
{
    pthread_mutex_lock(&s->lock);
    int rc = kc_blob_get(s->db, it->source_sha, &r->source, err) || load_label(s, it, r, err);
    pthread_mutex_unlock(&s->lock);
    return rc ? -1 : 0;
}

/* Compiles the candidate again (its cubin is not stored), in the sandbox as kverify run does. */
static int compile_candidate(race_state *s, const race_item *it, kv_result *r, strbuf *err)
{
    snprintf(r->arch, sizeof(r->arch), "%s", *it->arch ? it->arch : "sm_90");
    snprintf(r->nvrtc_version, sizeof(r->nvrtc_version), "%s",
             compile_pool_nvrtc_version(s->compiles));
    compile_output co;
    compile_output_init(&co);
    int rc = compile_pool_compile(s->compiles, r->source.buf, r->arch, &co, err);
    if (rc == 0) {
        r->compile_stage_ok = co.ok;
        r->compile_ms = co.ms;
        sb_add(&r->compile_log, sb_str(&co.log), co.log.len);
        sb_add(&r->kernels_json, sb_str(&co.kernels_json), co.kernels_json.len);
        if (co.ok)
            r->cubin = co.cubin, sb_init(&co.cubin);
    }
    compile_output_free(&co);
    return rc;
}

static uint64_t first_seed(const char *seeds)
{
    char *end;
    unsigned long long v = strtoull(seeds, &end, 10);
    return end == seeds ? 1 : (uint64_t)v;
}

/* Runs racecheck on GPU device, alone on it. */
static int race_on_gpu(race_state *s, int device, const problem *p, const race_item *it,
                       kv_result *r, enum sanitizer_race *outcome, double *ms, strbuf *err)
{
    pthread_mutex_lock(&s->gpu_lock[device]);
    while (s->gpu_busy[device] >= s->per_gpu)
        pthread_cond_wait(&s->gpu_free[device], &s->gpu_lock[device]);
    s->gpu_busy[device]++;
    pthread_mutex_unlock(&s->gpu_lock[device]);
    double t0 = now_ms();
    int rc = kc_interrupted() /* while it waited for the GPU: it does not start */
                 ? kc_fail(err, "interrupted before its racecheck started")
                 : sanitizer_racecheck(device, p, first_seed(it->seeds), r, outcome, err);
    *ms = now_ms() - t0;
    pthread_mutex_lock(&s->gpu_lock[device]);
    s->gpu_busy[device]--;
    pthread_cond_signal(&s->gpu_free[device]);
    pthread_mutex_unlock(&s->gpu_lock[device]);
    return rc;
}

/* The report kept in race_checks: the tool's log, else its error or why it did not run. */
static void race_report(const kv_result *r, strbuf *out)
{
    json_t *ev = json_loads(sb_str(&r->evidence_json), 0, NULL);
    json_t *rc = json_object_get(ev, "racecheck");
    json_t *run = json_array_get(json_object_get(rc, "runs"), 0);
    const char *keys[] = {"report", "error"};
    for (int i = 0; i < 2 && !out->len; i++)
        if (json_is_string(json_object_get(run, keys[i])))
            sb_adds(out, json_string_value(json_object_get(run, keys[i])));
    if (!out->len && json_is_string(json_object_get(rc, "skipped")))
        sb_adds(out, json_string_value(json_object_get(rc, "skipped")));
    json_decref(ev);
}

static const char *result_name(enum sanitizer_race o)
{
    return o == SANITIZER_RACE_CLEAN ? "clean" : o == SANITIZER_RACE_HAZARD ? "hazard" : "error";
}

static int insert_race_check(race_state *s, const race_item *it, int device, const char *result,
                             const char *report, int64_t new_vid, double ms, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(s->db,
        "INSERT INTO race_checks(verification_id, tool, result, report, new_verification_id, "
        "seed, duration_ms, gpu_name, verifier_version) VALUES (?,?,?,?,?,?,?,?,?)", err);
    if (!st)
        return -1;
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)first_seed(it->seeds));
    sqlite3_bind_int64(st, 1, it->verification_id);
    sqlite3_bind_text(st, 2, "compute-sanitizer racecheck", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, result, -1, SQLITE_STATIC);
    kc_bind_text_or_null(st, 4, report);
    if (new_vid > 0)
        sqlite3_bind_int64(st, 5, new_vid);
    sqlite3_bind_text(st, 6, seed, -1, SQLITE_TRANSIENT);
    if (ms > 0)
        sqlite3_bind_double(st, 7, ms);
    kc_bind_text_or_null(st, 8, device >= 0 ? s->gpu_names[device] : NULL);
    sqlite3_bind_text(st, 9, KC_VERSION, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(s->db));
    sqlite3_finalize(st);
    return rc;
}

/* A hazard, or the candidate failing under the tool: a new verification with r's verdict
 * (kv_record: the new compile, the verification, no timing), like a reverify's. */
static int record_new_label(race_state *s, const race_item *it, int device, kv_result *r,
                            int64_t *new_vid, strbuf *err)
{
    snprintf(r->gpu_name, sizeof r->gpu_name, "%s", s->gpu_names[device]);
    snprintf(r->driver_version, sizeof r->driver_version, "%s", s->driver);
    r->timed = 0;
    if (kv_record(s->db, it->candidate_id, r, err))
        return -1;
    sqlite3_stmt *st = kc_db_prepare(s->db, "SELECT max(id) FROM verifications WHERE "
                                            "candidate_id = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, it->candidate_id);
    if (sqlite3_step(st) == SQLITE_ROW)
        *new_vid = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return 0;
}

static int record(race_state *s, const race_item *it, int device, kv_result *r,
                  enum sanitizer_race outcome, double ms, int64_t *new_vid, strbuf *err)
{
    strbuf report = STRBUF_INIT;
    if (!r->compile_stage_ok)
        sb_addf(&report, "the candidate does not compile again (NVRTC %s): %s", r->nvrtc_version,
                sb_str(&r->compile_log));
    else
        race_report(r, &report);
    int relabel = outcome == SANITIZER_RACE_HAZARD || outcome == SANITIZER_RACE_FAILED;
    pthread_mutex_lock(&s->lock);
    int rc = kc_db_begin(s->db, err) ||
             (relabel && record_new_label(s, it, device, r, new_vid, err)) ||
             insert_race_check(s, it, device, result_name(outcome), report.buf, *new_vid, ms,
                               err) ||
             kc_db_commit(s->db, err);
    if (rc)
        kc_db_rollback(s->db);
    pthread_mutex_unlock(&s->lock);
    sb_free(&report);
    return rc ? -1 : 0;
}

/* Counts and shows one outcome (a line, or a JSON result). */
static void note_outcome(race_state *s, const race_item *it, const kv_result *r,
                         enum sanitizer_race outcome, double ms, int64_t new_vid)
{
    pthread_mutex_lock(&s->lock);
    s->clean += outcome == SANITIZER_RACE_CLEAN;
    s->hazard += outcome == SANITIZER_RACE_HAZARD;
    s->relabelled += outcome == SANITIZER_RACE_FAILED;
    s->errors += outcome == SANITIZER_RACE_FAILED || outcome == SANITIZER_RACE_NOT_RUN;
    if (ms > 0)
        s->racecheck_ms += ms, s->compile_ms += r->compile_ms, s->timed++;
    if (s->json) {
        json_array_append_new(s->results, json_pack(
            "{s:I, s:s, s:I, s:s, s:s, s:f, s:f, s:s}", "candidate_id", (json_int_t)it->candidate_id,
            "problem_id", it->problem_id, "verification_id", (json_int_t)it->verification_id,
            "result", result_name(outcome), "verdict", r->verdict, "racecheck_ms", ms,
            "compile_ms", r->compile_ms, "message", sb_str(&r->message)));
        if (new_vid > 0)
            json_object_set_new(json_array_get(s->results, json_array_size(s->results) - 1),
                                "new_verification_id", json_integer(new_vid));
    } else {
        printf("candidate %lld %-36s %s", (long long)it->candidate_id, it->problem_id,
               result_name(outcome));
        if (new_vid > 0)
            printf(": now %s", r->verdict);
        if (ms > 0)
            printf(" (racecheck %.2f s)", ms / 1000);
        if (outcome != SANITIZER_RACE_CLEAN && (r->message.len || !r->compile_stage_ok))
            printf(": %s", r->compile_stage_ok ? r->message.buf : "does not compile again");
        printf("\n");
        fflush(stdout);
    }
    pthread_mutex_unlock(&s->lock);
}

static void note_failure(race_state *s, const race_item *it, const char *why)
{
    pthread_mutex_lock(&s->lock);
    if (kc_interrupted()) {
        s->left++;
        if (!s->json)
            printf("candidate %lld %-36s left unchecked (interrupted: %s)\n",
                   (long long)it->candidate_id, it->problem_id, why);
    } else {
        s->failed++;
        error("candidate %lld: %s", (long long)it->candidate_id, why);
    }
    pthread_mutex_unlock(&s->lock);
}

static void check_one(race_state *s, const race_item *it, int device)
{
    strbuf err = STRBUF_INIT;
    kv_result r;
    kv_result_init(&r);
    snprintf(r.verdict, sizeof r.verdict, "correct");
    problem p;
    enum sanitizer_race outcome = SANITIZER_RACE_NOT_RUN;
    double ms = 0;
    int64_t new_vid = 0;
    int rc = problem_load_by_id(it->problem_id, &p, &err);
    if (rc == 0) {
        rc = load_candidate(s, it, &r, &err) || compile_candidate(s, it, &r, &err) ||
             (r.compile_stage_ok && race_on_gpu(s, device, &p, it, &r, &outcome, &ms, &err)) ||
             record(s, it, device, &r, outcome, ms, &new_vid, &err);
        problem_free(&p);
    }
    if (rc)
        note_failure(s, it, err.buf);
    else
        note_outcome(s, it, &r, outcome, ms, new_vid);
    sb_free(&r.cubin);
    kv_result_free(&r);
    sb_free(&err);
}

/* ---- the pass ---- */

struct race_thread {
    race_state *s;
    int device;
    pthread_t tid;
};

static void *race_thread_main(void *arg)
{
    struct race_thread *t = arg;
    race_state *s = t->s;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        int i = kc_interrupted() ? s->n : s->next++; /* interrupted: start nothing new */
        pthread_mutex_unlock(&s->lock);
        if (i >= s->n)
            return NULL;
        check_one(s, &s->items[i], t->device);
    }
}

/* per_gpu + 1 threads per GPU: one compiles while the others' candidates are under the tool. */
static void run_all(race_state *s)
{
    int n = (s->per_gpu + 1) * s->n_gpus;
    struct race_thread *t = xcalloc((size_t)n, sizeof *t);
    for (int i = 0; i < n; i++) {
        t[i] = (struct race_thread){.s = s, .device = i % s->n_gpus};
        pthread_create(&t[i].tid, NULL, race_thread_main, &t[i]);
    }
    for (int i = 0; i < n; i++)
        pthread_join(t[i].tid, NULL);
    free(t);
}

static void read_driver(char *out, size_t n)
{
    char line[512];
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    out[0] = 0;
    if (f && fgets(line, sizeof line, f) && driver_version_from_proc_line(line, out, n) != 0)
        out[0] = 0;
    if (f)
        fclose(f);
}

/* The GPUs to use: the driver must load and kverify-gpu must see at least one. */
static int find_gpus(race_state *s, int wanted)
{
    int status = cli_gpu_driver_check();
    if (status)
        return status;
    s->n_gpus = cli_gpu_names(s->gpu_names, RACE_MAX_GPUS);
    if (s->n_gpus <= 0) {
        error("no usable GPU (kverify-gpu found none): racecheck runs the candidates on a GPU");
        return CLI_EXIT_NO_GPU;
    }
    if (wanted > 0 && wanted < s->n_gpus)
        s->n_gpus = wanted;
    read_driver(s->driver, sizeof s->driver);
    return 0;
}

static void print_summary(race_state *s, const char *db_path, double secs)
{
    int done = s->clean + s->hazard + s->errors;
    double per = s->timed ? s->racecheck_ms / s->timed / 1000 : 0;
    double compile = s->timed ? s->compile_ms / s->timed / 1000 : 0;
    if (s->json) {
        json_t *o = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:b, s:f, s:f, s:f, s:i, s:O}",
                              "selected", s->n, "checked", done, "clean", s->clean, "hazard",
                              s->hazard, "relabelled_failed", s->relabelled, "error", s->errors,
                              "failed", s->failed, "interrupted", kc_interrupted() != 0,
                              "seconds", secs, "racecheck_s_per_candidate", per,
                              "compile_s_per_candidate", compile, "gpus", s->n_gpus,
                              "results", s->results);
        char *text = json_dumps(o, JSON_INDENT(2));
        printf("%s\n", text);
        free(text);
        json_decref(o);
        return;
    }
    printf("race-checked %d of %d candidates in %.1f s: %d clean, %d hazard%s (now unsafe), %d "
           "error%s; racecheck %.2f s per candidate (compile again %.2f s)\n", done, s->n, secs,
           s->clean, s->hazard, s->hazard == 1 ? "" : "s", s->errors, s->errors == 1 ? "" : "s",
           per, compile);
    if (s->hazard + s->relabelled)
        printf("labels changed: relabel with kcurate run --db %s before exporting\n", db_path);
    if (s->errors)
        printf("candidates with result error have no race check: run the same command again\n");
}

static int run_pass(race_state *s, const struct racecheck_options *o)
{
    strbuf err = STRBUF_INIT;
    int status = find_gpus(s, o->gpus);
    s->per_gpu = o->per_gpu > 0 ? o->per_gpu : RACE_DEFAULT_PER_GPU;
    compile_pool_options co = {.servers = s->n_gpus * 2,
                               .no_sandbox = getenv("KC_UNSAFE_NO_SANDBOX") != NULL};
    if (status == 0 && compile_pool_start(&co, &s->compiles, &err)) {
        error("%s", err.buf);
        status = KC_EXIT_KVERIFY_USAGE;
    }
    if (status) {
        sb_free(&err);
        return status;
    }
    for (int i = 0; i < s->n_gpus; i++) {
        pthread_mutex_init(&s->gpu_lock[i], NULL);
        pthread_cond_init(&s->gpu_free[i], NULL);
    }
    double t0 = now_ms();
    run_all(s);
    print_summary(s, o->db_path, (now_ms() - t0) / 1000);
    compile_pool_stop(s->compiles);
    sanitizer_shutdown();
    for (int i = 0; i < s->n_gpus; i++) {
        pthread_mutex_destroy(&s->gpu_lock[i]);
        pthread_cond_destroy(&s->gpu_free[i]);
    }
    sb_free(&err);
    if (kc_interrupted()) {
        if (!s->json)
            printf("interrupted: %d of %d candidates not checked (%d given up in flight)\n",
                   s->n - (s->clean + s->hazard + s->errors), s->n, s->left);
        kc_interrupt_print_resume(stdout);
        return KC_EXIT_INTERRUPTED;
    }
    return s->errors || s->failed ? KC_EXIT_FAILURE : KC_EXIT_OK;
}

static void print_nothing(const race_state *s)
{
    long long clean = kc_db_query_int(s->db, "SELECT count(DISTINCT verification_id) FROM "
                                             "race_checks WHERE result = 'clean'");
    if (s->json)
        printf("{\"selected\": 0, \"checked\": 0, \"clean_before\": %lld, \"results\": []}\n", clean);
    else
        printf("nothing to race-check: every correct label that needs a race check has a clean "
               "one (%lld recorded)\n", clean);
}

int cli_racecheck(int argc, char **argv)
{
    struct racecheck_options o = {0};
    parse_options(argc, argv, &o);
    race_state s = {.json = o.json, .results = json_array()};
    pthread_mutex_init(&s.lock, NULL);
    strbuf err = STRBUF_INIT;
    int status = KC_EXIT_KVERIFY_USAGE;
    if (kc_db_open(o.db_path, KC_DB_EXISTING, &s.db, &err) || load_items(&s, o.limit, &err))
        error("%s", err.buf);
    else if (s.n == 0)
        print_nothing(&s), status = KC_EXIT_OK;
    else
        status = run_pass(&s, &o);
    kc_db_close(s.db);
    items_free(s.items, s.n);
    json_decref(s.results);
    pthread_mutex_destroy(&s.lock);
    sb_free(&err);
    return status;
}
