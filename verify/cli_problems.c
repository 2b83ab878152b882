/* cli_problems: `kverify problems`: list a suite, and with --check load every
 * manifest and verify every reference in compile-only mode (parse, policy,
 * sandboxed NVRTC compile, entry points), in parallel; --show-reference prints
 * one reference as loaded. */
#include "common/error.h"
#include "common/problem.h"
#include "verify/verify_cli.h"

#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct check_job {
    char **ids;
    int n;
    int next;
    pthread_mutex_t lock;
    kv_service *svc;
    strbuf *reports; /* one per problem */
    int *ok;
    double *ms;
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
    kv_result r;
    kv_result_init(&r);
    if (kv_verify(job->svc, &p, p.reference_source.buf, &r, &err))
        sb_addf(&job->reports[i], "%s", err.buf);
    else if (strcmp(r.verdict, "compiled") != 0)
        sb_addf(&job->reports[i], "%s: reference: %s: %s%s%s", p.reference_path, r.verdict,
                sb_str(&r.message), r.compile_log.len ? "\n" : "", sb_str(&r.compile_log));
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

static int run_checks(char **ids, int n, int json)
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
    int threads = o.compile_procs;
    pthread_t tid[16];
    for (int t = 0; t < threads; t++)
        pthread_create(&tid[t], NULL, check_thread, &job);
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    int compiled = 0;
    for (int i = 0; i < n; i++) {
        compiled += job.ok[i];
        if (!job.ok[i])
            printf("FAIL %s\n  %s\n", ids[i], job.reports[i].buf);
        else if (!json)
            printf("ok   %-48s reference compiled in %.0f ms\n", ids[i], job.ms[i]);
        sb_free(&job.reports[i]);
    }
    printf("%d problems, %d references compiled\n", n, compiled);
    free(job.reports), free(job.ok), free(job.ms);
    pthread_mutex_destroy(&job.lock);
    kv_service_stop(job.svc);
    sb_free(&err);
    return compiled == n ? 0 : 1;
}

static int list_problems(char **ids, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        problem p;
        strbuf err = STRBUF_INIT;
        if (problem_load_by_id(ids[i], &p, &err)) {
            printf("%-40s (invalid: %s)\n", ids[i], err.buf);
            bad = 1;
        } else {
            printf("%-40s %s\n", p.id, p.title);
            problem_free(&p);
        }
        sb_free(&err);
    }
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

int cli_problems(int argc, char **argv)
{
    static const struct option opts[] = {{"suite", required_argument, NULL, 's'},
                                         {"check", no_argument, NULL, 'c'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"show-reference", required_argument, NULL, 'r'},
                                         {NULL, 0, NULL, 0}};
    const char *suite = "level1";
    int check = 0, json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:cjr:", opts, NULL)) != -1) {
        if (c == 'r')
            return show_reference(optarg);
        if (c == 's')
            suite = optarg;
        else if (c == 'c')
            check = 1;
        else if (c == 'j')
            json = 1;
        else
            return 4;
    }
    strbuf root = STRBUF_INIT, err = STRBUF_INIT;
    problems_root(&root);
    char **ids;
    int n;
    if (problems_select(root.buf, suite, &ids, &n, &err)) {
        error("%s", err.buf);
        sb_free(&root), sb_free(&err);
        return 4;
    }
    int status = check ? run_checks(ids, n, json) : list_problems(ids, n);
    problems_free_ids(ids, n);
    sb_free(&root), sb_free(&err);
    return status;
}
