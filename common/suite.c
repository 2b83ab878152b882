/* suite: finding problem manifests on disk and selecting them by suite, id or glob. */
#include "common/error.h"
#include "common/fsutil.h"
#include "common/problem.h"

#include <dirent.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

void problems_root(strbuf *out)
{
    sb_reset(out);
    const char *env = getenv("KC_PROBLEMS");
    if (env && *env) {
        sb_adds(out, env);
        return;
    }
    /* Beside the binary's directory or above it: bin/ of a checkout, and build/NAME/bin/. */
    strbuf dir = STRBUF_INIT;
    if (self_exe_dir(&dir, NULL) == 0) {
        static const char *const up[] = {"../problems", "../../problems", "../../../problems"};
        for (size_t i = 0; i < sizeof up / sizeof up[0]; i++) {
            path_join(out, dir.buf, up[i]);
            if (file_exists(out->buf)) {
                sb_free(&dir);
                return;
            }
        }
    }
    sb_free(&dir);
    sb_reset(out);
    sb_adds(out, "problems");
}

const char *problems_root_help =
    "problems are looked up in $KC_PROBLEMS, else in a problems/ directory beside or up to two "
    "levels above the binary's directory, else in ./problems: set KC_PROBLEMS=/path/to/kcorpus/problems";

int problem_manifest_path(const char *root, const char *id, strbuf *out, strbuf *err)
{
    if (!strchr(id, '/') || strstr(id, ".."))
        return kc_fail(err, "bad problem id '%s' (expected <suite>/<name>, e.g. level1/019_relu)",
                       id);
    sb_reset(out);
    sb_addf(out, "%s/%s.json", root, id);
    if (!file_exists(out->buf))
        return kc_fail(err, "no problem '%s' (looked for %s)", id, out->buf);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds every id under root/suite whose name matches pattern (fnmatch). */
static int add_suite_matches(const char *root, const char *suite, const char *pattern,
                             char ***ids, int *n, int *cap)
{
    strbuf dir = STRBUF_INIT;
    sb_addf(&dir, "%s/%s", root, suite);
    DIR *d = opendir(dir.buf);
    sb_free(&dir);
    if (!d)
        return 0;
    struct dirent *de;
    int found = 0;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
            continue;
        strbuf id = STRBUF_INIT;
        sb_addf(&id, "%s/%.*s", suite, (int)(len - 5), de->d_name);
        if (fnmatch(pattern, id.buf, 0) != 0) {
            sb_free(&id);
            continue;
        }
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 64;
            *ids = xrealloc(*ids, (size_t)*cap * sizeof(char *));
        }
        (*ids)[(*n)++] = sb_detach(&id);
        found++;
    }
    closedir(d);
    return found;
}

static void dedup_sorted(char **ids, int *n)
{
    int w = 0;
    for (int i = 0; i < *n; i++) {
        if (w && strcmp(ids[w - 1], ids[i]) == 0) {
            free(ids[i]);
            continue;
        }
        ids[w++] = ids[i];
    }
    *n = w;
}

int problems_select(const char *root, const char *selector, char ***ids, int *n, strbuf *err)
{
    *ids = NULL;
    *n = 0;
    int cap = 0;
    char *copy = xstrdup(selector);
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *slash = strchr(tok, '/');
        strbuf suite = STRBUF_INIT, pattern = STRBUF_INIT;
        if (slash) {
            sb_add(&suite, tok, (size_t)(slash - tok));
            sb_adds(&pattern, tok);
        } else {
            sb_adds(&suite, tok);
            sb_addf(&pattern, "%s/*", tok);
        }
        int found = add_suite_matches(root, suite.buf, pattern.buf, ids, n, &cap);
        sb_free(&suite), sb_free(&pattern);
        if (found == 0) {
            rc = kc_fail(err, file_exists(root) ? "no problems match '%s' under %s (%s)"
                                                : "no problems match '%s': there is no problems directory %s (%s)",
                         tok, root, problems_root_help);
            break;
        }
    }
    free(copy);
    if (rc) {
        problems_free_ids(*ids, *n);
        *ids = NULL, *n = 0;
        return -1;
    }
    qsort(*ids, (size_t)*n, sizeof(char *), cmp_str);
    dedup_sorted(*ids, n);
    return 0;
}

void problems_free_ids(char **ids, int n)
{
    for (int i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
}
