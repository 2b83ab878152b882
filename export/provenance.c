/* provenance: runs, models and synthetic answers behind an export; stale labels and the kcurate
 * command that relabels; staging directories of killed exports (see provenance.h). */
#include "export/provenance.h"
#include "common/error.h"
#include "common/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- runs ---- */

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A URL without user:password@ (never shown in an export). */
static json_t *safe_url(const char *url)
{
    if (!url)
        return json_null();
    const char *p = strstr(url, "://");
    const char *host = p ? p + 3 : url;
    const char *at = strchr(host, '@'), *slash = strchr(host, '/');
    if (!at || (slash && at > slash))
        return json_string(url);
    strbuf sb = STRBUF_INIT;
    sb_add(&sb, url, (size_t)(host - url));
    sb_adds(&sb, at + 1);
    json_t *s = json_string(sb.buf);
    sb_free(&sb);
    return s;
}

static void add_unique(json_t *a, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) if (!strcmp(json_string_value(v), s)) return;
    json_array_append_new(a, json_string(s));
}

/* A run of the manifest; context: the context policy its requests were sent under (full:
 * earlier answers sent back with their reasoning, drop-reasoning: without). */
static json_t *run_json(sqlite3_stmt *q, int64_t id, long records)
{
    const char *model = (const char *)sqlite3_column_text(q, 0);
    const char *server = (const char *)sqlite3_column_text(q, 4);
    return json_pack("{s:I, s:s?, s:o, s:s?, s:b, s:s?, s:s, s:I}", "id", (json_int_t)id, "model",
                     model, "endpoint", safe_url((const char *)sqlite3_column_text(q, 1)), "api",
                     (const char *)sqlite3_column_text(q, 2), "synthetic",
                     sqlite3_column_int(q, 3), "server", server, "context",
                     (const char *)sqlite3_column_text(q, 5), "records", (json_int_t)records);
}

json_t *provenance_json(sqlite3 *db, const export_ctx *x)
{
    int n = x->n_runs;
    int64_t *ids = xcalloc((size_t)n + 1, sizeof *ids);
    if (n) /* x->run_ids is NULL when no record was exported */
        memcpy(ids, x->run_ids, (size_t)n * sizeof *ids);
    qsort(ids, (size_t)n, sizeof *ids, cmp_id);
    json_t *runs = json_array(), *models = json_array(), *servers = json_array();
    sqlite3_stmt *q = kc_db_prepare(db, "SELECT model, endpoint, api, synthetic, server,"
                                        " coalesce(CASE WHEN json_valid(config_json) THEN"
                                        " json_extract(config_json, '$.sampling.context') END,"
                                        " 'drop-reasoning') FROM runs WHERE id = ?", NULL);
    for (int i = 0; q && i < n; i++) {
        long records = 0;
        for (int k = 0; k < n; k++)
            if (x->run_ids[k] == ids[i])
                records = x->run_records[k];
        sqlite3_bind_int64(q, 1, ids[i]);
        if (sqlite3_step(q) == SQLITE_ROW) {
            json_array_append_new(runs, run_json(q, ids[i], records));
            if (sqlite3_column_text(q, 0))
                add_unique(models, (const char *)sqlite3_column_text(q, 0));
            if (sqlite3_column_int(q, 3))
                add_unique(servers, sqlite3_column_text(q, 4) ? (const char *)sqlite3_column_text(q, 4)
                                                              : "unnamed");
        }
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    free(ids);
    /* records are counted once each: a record drawing on two runs counts in each run's
     * "records" but once in synthetic_records and records_several_runs */
    return json_pack("{s:o, s:o, s:b, s:b, s:b, s:o, s:I, s:I}", "runs", runs, "models", models,
                     "mixed_runs", n > 1, "mixed_models", json_array_size(models) > 1, "synthetic",
                     json_array_size(servers) > 0, "synthetic_servers", servers,
                     "synthetic_records", (json_int_t)x->counts.synthetic,
                     "records_several_runs", (json_int_t)x->counts.several_runs);
}

static void join_strings(const json_t *a, strbuf *out)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) sb_addf(out, "%s%s", i ? ", " : "", json_string_value(v));
}

void provenance_datasheet(const json_t *prov, const char *run_field, strbuf *out)
{
    const json_t *runs = json_object_get(prov, "runs");
    sb_reset(out);
    if (json_is_true(json_object_get(prov, "synthetic"))) {
        sb_addf(out, "**Synthetic data.** %lld records come from runs whose answers were written "
                     "by a test server (",
                (long long)json_integer_value(json_object_get(prov, "synthetic_records")));
        join_strings(json_object_get(prov, "synthetic_servers"), out);
        sb_addf(out, "), not by a language model: `synthetic: true` in manifest.json and in `%s` "
                     "of those records. They are for testing the pipeline, not for training.\n\n",
                run_field);
    }
    if (json_array_size(runs) == 0)
        return;
    sb_addf(out, "**Runs.** The records come from %zu kcollect run%s:", json_array_size(runs),
            json_array_size(runs) > 1 ? "s" : "");
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r) {
        const char *model = json_string_value(json_object_get(r, "model")) ?: "unknown";
        sb_addf(out, "%s run %lld (", i ? ";" : "", (long long)json_integer_value(json_object_get(r, "id")));
        if (json_is_true(json_object_get(r, "synthetic")))
            sb_addf(out, "test server %s, recorded as model %s",
                    json_string_value(json_object_get(r, "server")) ?: "unnamed", model);
        else
            sb_addf(out, "model %s", model);
        sb_addf(out, ", %lld records%s)", (long long)json_integer_value(json_object_get(r, "records")),
                json_is_true(json_object_get(r, "synthetic")) ? ", synthetic" : "");
    }
    sb_adds(out, ".");
    long several = (long)json_integer_value(json_object_get(prov, "records_several_runs"));
    if (several)
        sb_addf(out, " %ld record%s draw%s on several runs and count%s in each of them.", several,
                several == 1 ? "" : "s", several == 1 ? "s" : "", several == 1 ? "s" : "");
    if (json_is_true(json_object_get(prov, "mixed_runs")))
        sb_addf(out, " This export mixes %s; `kexport --run ID` or `--model NAME` keeps them "
                     "apart.", json_is_true(json_object_get(prov, "mixed_models"))
                                   ? "runs of different models" : "several runs");
    sb_adds(out, "\n\n");
}

void provenance_warn(const json_t *prov)
{
    const json_t *runs = json_object_get(prov, "runs");
    if (json_is_true(json_object_get(prov, "mixed_runs"))) {
        strbuf sb = STRBUF_INIT;
        size_t i;
        json_t *r;
        json_array_foreach(runs, i, r)
            sb_addf(&sb, "%s%lld", i ? ", " : "", (long long)json_integer_value(json_object_get(r, "id")));
        sb_adds(&sb, "; models ");
        join_strings(json_object_get(prov, "models"), &sb);
        warning("this export mixes %zu runs (%s): said in manifest.json (provenance); --run or "
                "--model keeps them apart", json_array_size(runs), sb.buf);
        sb_free(&sb);
    }
    if (json_is_true(json_object_get(prov, "synthetic"))) {
        strbuf sb = STRBUF_INIT;
        join_strings(json_object_get(prov, "synthetic_servers"), &sb);
        warning("%lld records come from synthetic runs (%s), marked synthetic: true",
                (long long)json_integer_value(json_object_get(prov, "synthetic_records")), sb.buf);
        sb_free(&sb);
    }
}

/* ---- stale labels (counted and worded by curate/stale.c) ---- */

int provenance_stale(const char *db_path, stale_labels *s, strbuf *err)
{
    return curate_stale_labels(db_path, s, err);
}

void provenance_command_line(const stale_labels *s, strbuf *out) { stale_command_line(s, out); }

int provenance_curate(const stale_labels *s, strbuf *err)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return kc_fail(err, "fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(STDERR_FILENO, STDOUT_FILENO); /* kexport's stdout stays its own summary */
        execv(s->argv[0], s->argv);
        fprintf(stderr, "kexport: cannot run %s: %s\n", s->argv[0], strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return kc_fail(err, "kcurate failed (status %d); labels not refreshed", status);
    return 0;
}

/* ---- staging directories ---- */

/* Whether pid is a running kexport (a reused pid of another program does not count). */
static int live_kexport(long pid)
{
    if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
        return 0;
    char path[64], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1; /* cannot tell: keep it */
    int ok = fgets(comm, sizeof comm, f) != NULL;
    fclose(f);
    return !ok || !strncmp(comm, "kexport", 7);
}

void provenance_clean_stages(const char *out_dir)
{
    static const char prefix[] = ".kexport-stage-";
    DIR *d = opendir(out_dir);
    if (!d)
        return;
    struct dirent *e;
    strbuf path = STRBUF_INIT;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, sizeof prefix - 1))
            continue;
        char *end;
        long pid = strtol(e->d_name + sizeof prefix - 1, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid() || live_kexport(pid))
            continue;
        path_join(&path, out_dir, e->d_name);
        if (remove_tree(path.buf) == 0)
            warning("removed %s, left by an export that was killed (pid %ld)", path.buf, pid);
    }
    closedir(d);
    sb_free(&path);
}
