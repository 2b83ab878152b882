/* kc_jsontypes: checks that JSONL files (plain or gzip) keep one JSON type per path, as typed
 * loaders need (pyarrow.json.read_json, datasets.load_dataset("json"), pandas with dtypes):
 * every value at a path ($.provenance.verification.max_abs_err, $.messages[].role) has the same
 * type in every record of every file given (null allowed anywhere; integer and real are distinct
 * types), and every object at a path has the same keys. A field of objects inside a list
 * ($.turns[].x) must not be null in every record of a file: pyarrow types such a field null and
 * its JSON reader then fails on the file ("Struct child array has length smaller than
 * expected"). Prints each conflict with the file and line of both sides; exit status 1 when
 * there is one, 2 on unreadable input.
 * --null-ok PATH (repeatable) lets that one path be null in every record of a file: a field whose
 * null means something (reasoning_content: the model gave no reasoning), where a typed loader
 * was seen to cope (pyarrow 25.0.1 read such a file alone, and cast to the schema of one where
 * the field is a string, in either order: measured on the device machine for issue 36).
 *
 *   kc_jsontypes [--null-ok PATH]... FILE...   (all files are one dataset: conflicts across
 *                                               files count)
 */
#include "common/error.h"
#include "common/strbuf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_PATHS 4096

/* What one path has shown so far: its non-null type, and for objects its keys. */
typedef struct path_info {
    char *path;
    const char *type; /* NULL until a non-null value is seen */
    char *keys;       /* objects: sorted keys joined by ',' */
    char *where;      /* file:line where type (and keys) were first seen */
    int reported;
    int in_file, nonnull_in_file; /* seen in the current file; with a value other than null */
} path_info;

static path_info paths[MAX_PATHS];
static int n_paths, n_conflicts;
static char **null_ok; /* --null-ok paths */
static int n_null_ok;

static int may_be_null(const char *path)
{
    for (int i = 0; i < n_null_ok; i++)
        if (!strcmp(null_ok[i], path))
            return 1;
    return 0;
}

static unsigned long hash_str(const char *s)
{
    unsigned long h = 1469598103934665603UL;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211UL;
    return h;
}

static path_info *lookup(const char *path)
{
    unsigned long i = hash_str(path) % MAX_PATHS;
    for (int probes = 0; probes < MAX_PATHS; probes++, i = (i + 1) % MAX_PATHS) {
        if (!paths[i].path) {
            if (++n_paths >= MAX_PATHS)
                die("more than %d distinct paths", MAX_PATHS - 1);
            paths[i].path = xstrdup(path);
            return &paths[i];
        }
        if (!strcmp(paths[i].path, path))
            return &paths[i];
    }
    die("path table full");
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "real";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    default: return "null";
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *sorted_keys(json_t *o)
{
    size_t n = json_object_size(o), i = 0;
    const char **keys = xcalloc(n ? n : 1, sizeof(char *));
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
        keys[i++] = k;
    qsort(keys, n, sizeof(char *), cmp_str);
    strbuf sb = STRBUF_INIT;
    for (i = 0; i < n; i++)
        sb_addf(&sb, "%s%s", i ? "," : "", keys[i]);
    free(keys);
    return sb.len ? sb_detach(&sb) : (sb_free(&sb), xstrdup(""));
}

static void conflict(path_info *p, const char *what, const char *where)
{
    n_conflicts++;
    if (p->reported++ < 3)
        printf("%s: %s (at %s; first seen at %s)\n", p->path, what, where, p->where);
}

static void walk(json_t *v, strbuf *path, const char *where)
{
    path_info *p = lookup(path->buf);
    const char *t = type_name(v);
    p->in_file = 1;
    if (!strcmp(t, "null"))
        return;
    p->nonnull_in_file = 1;
    if (!p->type) {
        p->type = t;
        p->where = xstrdup(where);
        if (json_is_object(v))
            p->keys = sorted_keys(v);
    } else if (strcmp(p->type, t)) {
        strbuf msg = STRBUF_INIT;
        sb_addf(&msg, "%s here, %s before", t, p->type);
        conflict(p, msg.buf, where);
        sb_free(&msg);
        return;
    } else if (json_is_object(v)) {
        char *keys = sorted_keys(v);
        if (strcmp(keys, p->keys)) {
            strbuf msg = STRBUF_INIT;
            sb_addf(&msg, "keys {%s} here, {%s} before", keys, p->keys);
            conflict(p, msg.buf, where);
            sb_free(&msg);
        }
        free(keys);
    }
    size_t len = path->len;
    if (json_is_object(v)) {
        const char *k;
        json_t *m;
        json_object_foreach(v, k, m) {
            sb_addf(path, ".%s", k);
            walk(m, path, where);
            path->len = len, path->buf[len] = 0;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *m;
        sb_adds(path, "[]");
        json_array_foreach(v, i, m)
            walk(m, path, where);
        path->len = len, path->buf[len] = 0;
    }
}

static long check_file(const char *file)
{
    gzFile f = gzopen(file, "rb");
    if (!f) {
        fprintf(stderr, "kc_jsontypes: cannot open '%s'\n", file);
        exit(2);
    }
    strbuf line = STRBUF_INIT, path = STRBUF_INIT, where = STRBUF_INIT;
    char buf[1 << 16];
    long lineno = 0, records = 0;
    int eof = 0;
    while (!eof) {
        sb_reset(&line);
        for (;;) {
            if (!gzgets(f, buf, sizeof buf)) {
                eof = 1;
                break;
            }
            sb_adds(&line, buf);
            if (line.len && line.buf[line.len - 1] == '\n')
                break;
        }
        if (!line.len)
            continue;
        lineno++;
        json_error_t je;
        json_t *v = json_loadb(line.buf, line.len, 0, &je);
        if (!v) {
            fprintf(stderr, "kc_jsontypes: %s:%ld: invalid JSON: %s\n", file, lineno, je.text);
            exit(2);
        }
        sb_reset(&path), sb_adds(&path, "$");
        sb_reset(&where), sb_addf(&where, "%s:%ld", file, lineno);
        walk(v, &path, where.buf);
        json_decref(v);
        records++;
    }
    gzclose(f);
    for (int i = 0; i < MAX_PATHS; i++) {
        path_info *p = &paths[i];
        if (p->path && p->in_file && !p->nonnull_in_file && strstr(p->path, "[].") &&
            !may_be_null(p->path)) {
            n_conflicts++;
            printf("%s: null in every record of %s, inside a list of objects (pyarrow's JSON "
                   "reader fails on such a field)\n", p->path, file);
        }
        p->in_file = p->nonnull_in_file = 0;
    }
    sb_free(&line), sb_free(&path), sb_free(&where);
    return records;
}

int main(int argc, char **argv)
{
    kc_set_progname("kc_jsontypes");
    int first = 1;
    while (first + 1 < argc && !strcmp(argv[first], "--null-ok")) {
        null_ok = xrealloc(null_ok, (size_t)(n_null_ok + 1) * sizeof *null_ok);
        null_ok[n_null_ok++] = argv[first + 1];
        first += 2;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: kc_jsontypes [--null-ok PATH]... FILE...\n");
        return 2;
    }
    long records = 0;
    for (int i = first; i < argc; i++)
        records += check_file(argv[i]);
    printf("%ld records, %d paths, %d conflicts\n", records, n_paths, n_conflicts);
    for (int i = 0; i < MAX_PATHS; i++)
        free(paths[i].path), free(paths[i].keys), free(paths[i].where);
    free(null_ok);
    return n_conflicts ? 1 : 0;
}
