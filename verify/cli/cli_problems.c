/* cli_problems: `kverify problems`: list a suite, and with --check load every
 * manifest, validate its hidden-dims generator (KC_CHECK_DRAWS draws), the "vary" of its
 * constant inputs and params and its value classes ("values"), and verify every reference in
 * compile-only mode (parse, policy,
 * sandboxed NVRTC compile, entry points), in parallel; --json prints the list or the check as
 * one JSON object instead of text; --show-reference prints one reference as loaded; --draw
 * prints drawn hidden dims as JSON lines, --boundary and --stratified the coverage sets of a
 * seed (the names `kverify dump --dims` takes). */
#include "common/cli.h"
#include "common/error.h"
#include "common/problem.h"
#include "verify/cli/verify_cli.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KC_CHECK_DRAWS 1000 /* seeds 0..999; even seeds index 0 (a whole-range draw), odd
                              seeds index 1 (a small draw) */

enum gen_state { GEN_UNLOADED, GEN_OK, GEN_MISSING, GEN_BAD };

/* The generator of a loaded problem: present, each constant input and param varied, the
 * value classes declared, every draw valid. */
static enum gen_state check_generator(const problem *p, strbuf *report)
{
    enum gen_state st = problem_values_missing(p, report) ? GEN_MISSING : GEN_OK;
    for (int i = 0; i < p->n_inputs; i++) {
        if (p->inputs[i].dist == KC_DIST_CONSTANT && p->inputs[i].vary_dist == KC_DIST_NONE) {
            sb_addf(report, "%sinputs[%d] '%s': a constant init without \"vary\"",
                    report->len ? "\n  " : "", i, p->inputs[i].name);
            st = GEN_MISSING;
        }
        for (int k = 0; k < p->inputs[i].n_views; k++) {
            const tensor_spec *v = &p->inputs[i].views[k];
            if (v->dist == KC_DIST_CONSTANT && v->vary_dist == KC_DIST_NONE) {
                sb_addf(report, "%sinputs[%d].views[%d] '%s': a constant init without \"vary\"",
                        report->len ? "\n  " : "", i, k, v->name);
                st = GEN_MISSING;
            }
        }
    }
    if (!problem_has_hidden(p)) {
        sb_addf(report, "%sno \"hidden\" generator", report->len ? "\n  " : "");
        return GEN_MISSING;
    }
    strbuf err = STRBUF_INIT;
    for (int seed = 0; seed < KC_CHECK_DRAWS; seed++) {
        dimset d;
        if (problem_draw_dims(p, (uint64_t)seed, seed % 2, &d, &err)) {
            sb_addf(report, "%s%s", report->len ? "\n  " : "", err.buf);
            st = GEN_BAD;
            break;
        }
        dimset_free(&d);
    }
    sb_free(&err);
    return st;
}

struct check_job {
    char **ids;
    int n;
    int next;
    pthread_mutex_t lock;
    kv_service *svc;
    strbuf *reports; /* one per problem */
    int *ok;
    double *ms;
    enum gen_state *gen;
    strbuf *gen_reports;
};

static void check_one(struct check_job *job, int i)
{
    problem p;
    strbuf err = STRBUF_INIT;
    if (problem_load_by_id(job->ids[i], &p, &err)) {
        sb_addf(&job->reports[i], "%s", err.buf);
        sb_free(&err);
        return;
    }
    job->gen[i] = check_generator(&p, &job->gen_reports[i]);
    kv_result r;
    kv_result_init(&r);
    if (kv_verify(job->svc, &p, p.reference_source.buf, &r, &err))
        sb_addf(&job->reports[i], "%s", err.buf);
    else if (strcmp(r.verdict, "compiled") != 0)
        sb_addf(&job->reports[i], "%s: reference: %s: %s%s%s", p.reference_path, r.verdict,
                sb_str(&r.message), r.compile_log.len ? "\n" : "", sb_str(&r.compile_log));
    else if (r.keeps_state) /* docs/PROBLEMS.md: no variables at namespace scope */
        sb_addf(&job->reports[i], "%s: the reference's module has device globals (a variable at "
                "namespace scope, constexpr too, under NVRTC's -default-device): as a candidate it "
                "would be reloaded before every execution; use enumerators or macros",
                p.reference_path);
    else
        job->ok[i] = 1, job->ms[i] = r.compile_ms;
    kv_result_free(&r);
    problem_free(&p);
    sb_free(&err);
}

static void *check_thread(void *arg)
{
    struct check_job *job = arg;
    for (;;) {
        pthread_mutex_lock(&job->lock);
        int i = job->next++;
        pthread_mutex_unlock(&job->lock);
        if (i >= job->n)
            return NULL;
        check_one(job, i);
    }
}

static const char *const gen_names[] = {"unloaded", "valid", "missing", "invalid"};

/* One problem's check as JSON: ok, the reference's compile, the generator's state, the reports. */
static json_t *check_json(const struct check_job *job, int i)
{
    int gen_fails = job->gen[i] == GEN_BAD || job->gen[i] == GEN_MISSING;
    return json_pack("{s:s, s:b, s:{s:b, s:o, s:o}, s:s, s:o}", "id", job->ids[i], "ok",
                     job->ok[i] && !gen_fails, "reference", "compiled", job->ok[i], "compile_ms",
                     job->ok[i] ? json_real(job->ms[i]) : json_null(), "error",
                     job->reports[i].len ? json_string(job->reports[i].buf) : json_null(),
                     "generator", gen_names[job->gen[i]], "generator_report",
                     gen_fails && job->gen_reports[i].len ? json_string(job->gen_reports[i].buf)
                                                          : json_null());
}

static void print_json(json_t *doc)
{
    json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    putchar('\n');
    json_decref(doc);
}

/* The text of a check: a line per problem (only failures with json), then the totals. */
static void check_text(const struct check_job *job, int i)
{
    int gen_fails = job->gen[i] == GEN_BAD || job->gen[i] == GEN_MISSING;
    if (!job->ok[i] || gen_fails)
        printf("FAIL %s\n  %s%s%s\n", job->ids[i], sb_str(&job->reports[i]),
               job->reports[i].len && job->gen_reports[i].len ? "\n  " : "",
               gen_fails ? sb_str(&job->gen_reports[i]) : "");
    else
        printf("ok   %-48s reference compiled in %.0f ms%s\n", job->ids[i], job->ms[i],
               job->gen[i] == GEN_OK ? "; hidden dims valid" : "; no hidden generator");
}

static int run_checks(char **ids, int n, const char *suite, int json)
{
    kv_options o;
    kv_options_default(&o);
    o.compile_only = 1;
    strbuf err = STRBUF_INIT;
    struct check_job job = {.ids = ids, .n = n};
    if (kv_service_start(&o, &job.svc, &err)) {
        error("%s", err.buf);
        sb_free(&err);
        return 4;
    }
    pthread_mutex_init(&job.lock, NULL);
    job.reports = xcalloc((size_t)n, sizeof(strbuf));
    job.ok = xcalloc((size_t)n, sizeof(int));
    job.ms = xcalloc((size_t)n, sizeof(double));
    job.gen = xcalloc((size_t)n, sizeof(enum gen_state));
    job.gen_reports = xcalloc((size_t)n, sizeof(strbuf));
    int threads = o.compile_procs;
    pthread_t tid[16];
    for (int t = 0; t < threads; t++)
        pthread_create(&tid[t], NULL, check_thread, &job);
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    int compiled = 0, generators = 0, missing = 0, bad = 0;
    json_t *list = json_array();
    for (int i = 0; i < n; i++) {
        compiled += job.ok[i];
        generators += job.gen[i] == GEN_OK || job.gen[i] == GEN_BAD;
        missing += job.gen[i] == GEN_MISSING;
        bad += job.gen[i] == GEN_BAD;
        if (json)
            json_array_append_new(list, check_json(&job, i));
        else
            check_text(&job, i);
        sb_free(&job.reports[i]), sb_free(&job.gen_reports[i]);
    }
    if (json) {
        print_json(json_pack("{s:s, s:s, s:o, s:{s:i, s:i, s:i, s:i, s:i, s:i}}", "format",
                             "kcorpus-problems-check v1", "suite", suite, "problems", list,
                             "summary", "problems", n, "references_compiled", compiled,
                             "generators", generators, "generators_invalid", bad,
                             "manifests_incomplete", missing, "draws_each", KC_CHECK_DRAWS));
    } else {
        json_decref(list);
        if (bad)
            printf("%d generators, %d with an invalid draw\n", generators, bad);
        else if (generators)
            printf("%d generators, %d draws each, all valid\n", generators, KC_CHECK_DRAWS);
        if (missing)
            printf("%d manifests without a generator, a vary or the value classes\n", missing);
        printf("%d problems, %d references compiled\n", n, compiled);
    }
    free(job.reports), free(job.ok), free(job.ms), free(job.gen), free(job.gen_reports);
    pthread_mutex_destroy(&job.lock);
    kv_service_stop(job.svc);
    sb_free(&err);
    return compiled == n && !bad && !missing ? 0 : 1;
}

/* A problem of the list as JSON: its id, title, suite, level, KernelBench id (null when not
 * from KernelBench) and why it is degenerate (null when it is not); an invalid one: its error. */
static json_t *problem_json(const char *id, const problem *p, const char *error)
{
    if (!p)
        return json_pack("{s:s, s:b, s:s}", "id", id, "valid", 0, "error", error);
    return json_pack("{s:s, s:b, s:s, s:s, s:i, s:o, s:o}", "id", p->id, "valid", 1, "title",
                     p->title, "suite", p->suite, "level", p->level, "kernelbench_id",
                     p->kernelbench_id ? json_integer(p->kernelbench_id) : json_null(),
                     "degenerate", p->degenerate ? json_string(p->degenerate) : json_null());
}

static int list_problems(char **ids, int n, const char *suite, int json)
{
    int bad = 0;
    json_t *list = json_array();
    for (int i = 0; i < n; i++) {
        problem p;
        strbuf err = STRBUF_INIT;
        if (problem_load_by_id(ids[i], &p, &err)) {
            if (json)
                json_array_append_new(list, problem_json(ids[i], NULL, err.buf));
            else
                printf("%-40s (invalid: %s)\n", ids[i], err.buf);
            bad = 1;
        } else {
            if (json)
                json_array_append_new(list, problem_json(ids[i], &p, NULL));
            else
                printf("%-40s %s\n", p.id, p.title);
            problem_free(&p);
        }
        sb_free(&err);
    }
    if (json)
        print_json(json_pack("{s:s, s:s, s:i, s:o}", "format", "kcorpus-problems v1", "suite",
                             suite, "count", n, "problems", list));
    else
        json_decref(list);
    return bad;
}

/* The reference as the verifier uses it (shared kernel files expanded), on stdout. */
static int show_reference(const char *id)
{
    problem p;
    strbuf err = STRBUF_INIT;
    int rc = problem_load_by_id(id, &p, &err);
    if (rc) {
        error("%s", err.buf);
    } else {
        fwrite(p.reference_source.buf, 1, p.reference_source.len, stdout);
        problem_free(&p);
    }
    sb_free(&err);
    return rc ? 4 : 0;
}

/* count dims sets drawn for seed, indexes 0..count-1, one JSON line each:
 * {"id": ..., "seed": S, "index": I, "dims": {drawn dims, then derived dims}}. */
static int draw_dims(const char *id, uint64_t seed, int count)
{
    problem p;
    strbuf err = STRBUF_INIT, line = STRBUF_INIT;
    int rc = problem_load_by_id(id, &p, &err);
    for (int i = 0; !rc && i < count; i++) {
        dimset d;
        rc = problem_draw_dims(&p, seed, i, &d, &err);
        if (rc)
            break;
        sb_reset(&line);
        sb_addf(&line, "{\"id\":\"%s\",\"seed\":%llu,\"index\":%d,\"dims\":", p.id,
                (unsigned long long)seed, i);
        dimset_to_json(&d, &line);
        printf("%s}\n", line.buf);
        dimset_free(&d);
    }
    if (rc)
        error("%s", err.buf);
    else
        problem_free(&p);
    sb_free(&err), sb_free(&line);
    return rc ? 4 : 0;
}

/* Every coverage set of family ("bound" or "strat") the verifier would run with seed, one
 * JSON line each: {"id": ..., "seed": S, "name": "boundK", "dims": {...}}; the names are the
 * ones `kverify dump --dims` takes. */
static int cover_dims(const char *id, const char *family, uint64_t seed)
{
    problem p;
    strbuf err = STRBUF_INIT, line = STRBUF_INIT;
    dimset sets[KC_MAX_BOUNDARY > KC_MAX_STRATIFIED ? KC_MAX_BOUNDARY : KC_MAX_STRATIFIED];
    int n = -1;
    if (problem_load_by_id(id, &p, &err) == 0) {
        n = problem_cover_sets(&p, family, seed, sets, (int)(sizeof sets / sizeof *sets), &err);
        for (int i = 0; i < n; i++) {
            sb_reset(&line);
            sb_addf(&line, "{\"id\":\"%s\",\"seed\":%llu,\"name\":\"%s%d\",\"dims\":", p.id,
                    (unsigned long long)seed, family, i);
            dimset_to_json(&sets[i], &line);
            printf("%s}\n", line.buf);
            dimset_free(&sets[i]);
        }
        problem_free(&p);
    }
    if (n < 0)
        error("%s", err.buf);
    sb_free(&err), sb_free(&line);
    return n < 0 ? 4 : 0;
}

static const kc_command problems_cmd = {"kverify", "problems", kverify_problems_usage, 0};

int cli_problems(int argc, char **argv)
{
    const char *suite = "level1", *draw = NULL, *reference = NULL, *boundary = NULL,
               *stratified = NULL;
    int64_t seed = 0;
    int count = 1, check = 0, json = 0;
    /* the short letters are the ones this command has always taken */
    const kc_option opts[] = {
        KC_OPT_STR("suite", 's', &suite),
        KC_OPT_FLAG("check", 'c', &check),
        KC_OPT_FLAG("json", 'j', &json),
        KC_OPT_STR("show-reference", 'r', &reference),
        KC_OPT_STR("draw", 'd', &draw),
        KC_OPT_STR("boundary", 0, &boundary),
        KC_OPT_STR("stratified", 0, &stratified),
        KC_OPT_INTEGER64("seed", 'S', &seed, 0, (double)INT64_MAX),
        KC_OPT_INTEGER("count", 'n', &count, 0, 1000000),
        KC_OPT_END_OF_TABLE};
    kc_parse_options(&problems_cmd, opts, argc, argv);
    if (reference)
        return show_reference(reference);
    if (draw)
        return draw_dims(draw, (uint64_t)seed, (int)count);
    if (boundary || stratified)
        return cover_dims(boundary ? boundary : stratified, boundary ? "bound" : "strat",
                          (uint64_t)seed);
    strbuf root = STRBUF_INIT, err = STRBUF_INIT;
    problems_root(&root);
    char **ids;
    int n;
    if (problems_select(root.buf, suite, &ids, &n, &err)) {
        error("%s", err.buf);
        sb_free(&root), sb_free(&err);
        return 4;
    }
    int status = check ? run_checks(ids, n, suite, json) : list_problems(ids, n, suite, json);
    problems_free_ids(ids, n);
    sb_free(&root), sb_free(&err);
    return status;
}
