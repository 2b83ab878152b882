/* cli_warm: `kverify warm`: compiles every reference of the chosen suites (all by default) for
 * each chosen arch into the cubin cache (verify/service/cubin_cache.h), in parallel over the
 * CPUs, so that no verification waits for a reference compile; a second warm compiles nothing.
 * Reports how many were compiled, how many were already cached and how many damaged entries were
 * compiled again. */
#include "common/cli.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/problem.h"
#include "verify/cli/verify_cli.h"
#include "verify/service/cubin_cache.h"
#include "verify/service/nvrtc_compile.h"

#include <ctype.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WARM_MAX_ARCHS 16
#define WARM_MAX_THREADS 64

/* One compile: a problem for an arch. */
struct warm_item {
    const char *id, *arch;
    enum cubin_origin origin;
    int failed;
    strbuf why;
};

struct warm_job {
    cubin_cache *cache;
    struct warm_item *items;
    int n, next;
    pthread_mutex_t lock; /* next, and stdout */
};

static void warm_one(struct warm_job *job, struct warm_item *it)
{
    problem p;
    strbuf cubin = STRBUF_INIT;
    double t0 = now_ms();
    if (problem_load_by_id(it->id, &p, &it->why)) {
        it->failed = 1;
        return;
    }
    it->failed = cubin_cache_trusted(job->cache, p.reference_source.buf, it->arch, &cubin,
                                     &it->origin, &it->why) != 0;
    problem_free(&p);
    sb_free(&cubin);
    if (it->failed || it->origin == CUBIN_CACHED)
        return;
    pthread_mutex_lock(&job->lock);
    printf("%-10s %-56s %s  %.1f s\n", it->origin == CUBIN_RECOMPILED ? "recompiled" : "compiled",
           it->id, it->arch, (now_ms() - t0) / 1000);
    fflush(stdout);
    pthread_mutex_unlock(&job->lock);
}

static void *warm_thread(void *arg)
{
    struct warm_job *job = arg;
    for (;;) {
        pthread_mutex_lock(&job->lock);
        int i = job->next++;
        pthread_mutex_unlock(&job->lock);
        if (i >= job->n)
            return NULL;
        warm_one(job, &job->items[i]);
    }
}

static void warm_run(struct warm_job *job, int threads)
{
    pthread_t tid[WARM_MAX_THREADS];
    int started = 0;
    if (threads > job->n)
        threads = job->n;
    for (int t = 0; t < threads; t++)
        started += pthread_create(&tid[started], NULL, warm_thread, job) == 0;
    if (!started)
        warm_thread(job);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
}

/* The summary line and the failures; returns the exit status (0 every reference is in the cache,
 * 1 one failed or the cache could not keep them). */
static int warm_report(struct warm_job *job, int n_archs, const char *arch_list)
{
    int compiled = 0, cached = 0, damaged = 0, failed = 0;
    for (int i = 0; i < job->n; i++) {
        struct warm_item *it = &job->items[i];
        if (it->failed) {
            failed++;
            printf("FAIL %s (%s): %s\n", it->id, it->arch, sb_str(&it->why));
            continue;
        }
        compiled += it->origin != CUBIN_CACHED;
        cached += it->origin == CUBIN_CACHED;
        damaged += it->origin == CUBIN_RECOMPILED;
    }
    char nvrtc[32];
    nvrtc_version_string(nvrtc, sizeof nvrtc);
    const char *dir = cubin_cache_dir(job->cache);
    int refs = job->n / n_archs;
    printf("%d reference%s for %s (NVRTC %s): %d compiled, %d already cached", refs,
           refs == 1 ? "" : "s", arch_list, nvrtc, compiled, cached);
    if (damaged)
        printf(" (%d damaged entr%s compiled again)", damaged, damaged == 1 ? "y" : "ies");
    if (failed)
        printf(", %d failed", failed);
    printf("; cache: %s\n", dir ? dir : "none (KC_CUBIN_CACHE=off)");
    int kept = cubin_cache_writable(job->cache);
    if (!kept && compiled)
        printf("nothing compiled was kept: the cache is %s\n", dir ? "not writable" : "off");
    return failed || (compiled && !kept) ? 1 : 0;
}

/* Every suite under the problems root (a directory holding manifests), as a selector. */
static int all_suites(const char *root, strbuf *selector, strbuf *err)
{
    DIR *d = opendir(root);
    if (!d)
        return kc_fail(err, "cannot read the problems directory %s (%s)", root, problems_root_help);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char **ids;
        int n;
        if (de->d_name[0] == '.' || problems_select(root, de->d_name, &ids, &n, NULL))
            continue;
        problems_free_ids(ids, n);
        sb_addf(selector, "%s%s", selector->len ? "," : "", de->d_name);
    }
    closedir(d);
    return selector->len ? 0 : kc_fail(err, "no suites under %s (%s)", root, problems_root_help);
}

/* --suite S (again for more): S is a suite, an id or a glob, or a comma list of them. */
static int opt_suite(const kc_option *opt, const char *value, strbuf *err)
{
    strbuf *selector = opt->dest;
    if (!*value)
        return kc_option_fail(opt, err, "needs a suite, an id or a glob");
    sb_addf(selector, "%s%s", selector->len ? "," : "", value);
    return 0;
}

/* --arch sm_90[,sm_100...]: real architectures. */
static int parse_archs(const char *list, char archs[][16], int *n)
{
    *n = 0;
    for (const char *s = list; *s;) {
        size_t len = strcspn(s, ",");
        int ok = len > 3 && len < 16 && !strncmp(s, "sm_", 3) && isdigit((unsigned char)s[3]);
        for (size_t i = 3; ok && i < len; i++)
            ok = isalnum((unsigned char)s[i]);
        if (!ok || *n == WARM_MAX_ARCHS)
            return -1;
        snprintf(archs[(*n)++], 16, "%.*s", (int)len, s);
        s += len + (s[len] == ',');
    }
    return *n ? 0 : -1;
}

static const kc_command warm_cmd = {"kverify", "warm", kverify_warm_usage, 0};

int cli_warm(int argc, char **argv)
{
    strbuf selector = STRBUF_INIT, root = STRBUF_INIT, err = STRBUF_INIT;
    const char *arch_list = "sm_90";
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cpus < 1 ? 1 : cpus > WARM_MAX_THREADS ? WARM_MAX_THREADS : (int)cpus;
    const kc_option opts[] = {
        KC_OPT_FN("suite", 's', opt_suite, &selector, NULL),
        KC_OPT_STR("arch", 0, &arch_list),
        KC_OPT_INTEGER("threads", 0, &threads, 1, WARM_MAX_THREADS),
        KC_OPT_END_OF_TABLE};
    kc_parse_options(&warm_cmd, opts, argc, argv);
    char archs[WARM_MAX_ARCHS][16];
    int n_archs;
    if (parse_archs(arch_list, archs, &n_archs))
        kc_usage_error("--arch takes real GPU architectures such as sm_90 or sm_90,sm_100 (at "
                       "most %d), not '%s'", WARM_MAX_ARCHS, arch_list);
    problems_root(&root);
    char **ids = NULL;
    int n = 0, status = 4;
    if ((selector.len || all_suites(root.buf, &selector, &err) == 0) &&
        problems_select(root.buf, selector.buf, &ids, &n, &err) == 0) {
        struct warm_job job = {.cache = cubin_cache_open(), .n = n * n_archs};
        job.items = xcalloc((size_t)job.n, sizeof(*job.items));
        for (int i = 0; i < job.n; i++)
            job.items[i] = (struct warm_item){.id = ids[i / n_archs], .arch = archs[i % n_archs],
                                              .why = STRBUF_INIT};
        pthread_mutex_init(&job.lock, NULL);
        warm_run(&job, threads);
        status = warm_report(&job, n_archs, arch_list);
        for (int i = 0; i < job.n; i++)
            sb_free(&job.items[i].why);
        free(job.items);
        pthread_mutex_destroy(&job.lock);
        cubin_cache_close(job.cache);
        problems_free_ids(ids, n);
    } else {
        error("%s", err.buf);
    }
    sb_free(&selector), sb_free(&root), sb_free(&err);
    return status;
}
