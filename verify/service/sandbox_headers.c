/* sandbox_headers: the header tree of the compile sandbox (see sandbox.h). Starting from the
 * allow-list (common/allowed_headers.h), it follows every #include line of every file it
 * reaches, resolved as NVRTC resolves them (a quoted name beside the including file first,
 * then the search directories <include> and <include>/cccl in that order), and keeps the
 * text of each file found under the toolkit's include directory. Lines are followed whether
 * or not their #if holds, so the tree is a superset of what any allowed header opens, and
 * nothing else: an off-list toolkit header is absent unless an allowed one names it. */
#include "common/allowed_headers.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "verify/service/sandbox.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_TREE_FILES 8192
#define MAX_TREE_BYTES (128LL << 20)

static const char *const search_dirs[] = {"", "cccl/", NULL};

void header_tree_free(header_tree *t)
{
    for (int i = 0; i < t->n; i++) {
        free(t->files[i].path);
        sb_free(&t->files[i].text);
    }
    free(t->files);
    memset(t, 0, sizeof(*t));
}

static int tree_has(const header_tree *t, const char *rel)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->files[i].path, rel) == 0)
            return 1;
    return 0;
}

/* Normalizes "a/b/../c" to "a/c" in place; fails on a path that leaves the include dir. */
static int normalize(char *path)
{
    char *parts[256];
    int n = 0;
    for (char *save, *tok = strtok_r(path, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (strcmp(tok, ".") == 0)
            continue;
        if (strcmp(tok, "..") == 0) {
            if (n == 0)
                return -1;
            n--;
            continue;
        }
        if (n == 256)
            return -1;
        parts[n++] = tok;
    }
    if (n == 0)
        return -1;
    strbuf out = STRBUF_INIT;
    for (int i = 0; i < n; i++)
        sb_addf(&out, "%s%s", i ? "/" : "", parts[i]);
    strcpy(path, out.buf); /* never longer than the input */
    sb_free(&out);
    return 0;
}

static int is_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Resolves an include of name (quoted or not) from the file at rel (NULL for the allow-list)
 * to a path relative to include_dir; returns 0 and fills out when found. */
static int resolve(const char *include_dir, const char *rel, const char *name, int quoted,
                   strbuf *out)
{
    strbuf full = STRBUF_INIT;
    int found = 0;
    if (name[0] == '/')
        return -1; /* absolute: never in the tree */
    if (quoted && rel) {
        const char *slash = strrchr(rel, '/');
        sb_reset(out);
        if (slash)
            sb_add(out, rel, (size_t)(slash - rel + 1));
        sb_adds(out, name);
        sb_addf(&full, "%s/%s", include_dir, out->buf);
        found = normalize(out->buf) == 0 && is_regular_file(full.buf);
    }
    for (int i = 0; !found && search_dirs[i]; i++) {
        sb_reset(out), sb_reset(&full);
        sb_addf(out, "%s%s", search_dirs[i], name);
        sb_addf(&full, "%s/%s", include_dir, out->buf);
        found = normalize(out->buf) == 0 && is_regular_file(full.buf);
    }
    if (found)
        out->len = strlen(out->buf);
    sb_free(&full);
    return found ? 0 : -1;
}

/* Scans one line for `# include <name>` / `# include "name"`; returns the quote char. */
static char include_on_line(const char *line, const char *end, strbuf *name)
{
    const char *p = line;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end || *p++ != '#')
        return 0;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if ((size_t)(end - p) < 7 || strncmp(p, "include", 7) != 0)
        return 0;
    p += 7; /* #include_next is not followed: no toolkit header uses it */
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end || (*p != '<' && *p != '"'))
        return 0;
    char close = *p == '<' ? '>' : '"';
    const char *q = memchr(p + 1, close, (size_t)(end - p - 1));
    if (!q)
        return 0;
    sb_reset(name);
    sb_add(name, p + 1, (size_t)(q - p - 1));
    return *p;
}

static int add_file(header_tree *t, const char *include_dir, const char *rel, strbuf *err)
{
    if (t->n == MAX_TREE_FILES)
        return kc_fail(err, "sandbox headers: more than %d files", MAX_TREE_FILES);
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->files = xrealloc(t->files, (size_t)t->cap * sizeof(*t->files));
    }
    header_file *f = &t->files[t->n];
    strbuf full = STRBUF_INIT;
    sb_addf(&full, "%s/%s", include_dir, rel);
    sb_init(&f->text);
    int rc = read_file(full.buf, &f->text, err);
    sb_free(&full);
    if (rc) {
        sb_free(&f->text);
        return -1;
    }
    f->path = xstrdup(rel);
    t->bytes += (long long)f->text.len;
    t->n++;
    if (t->bytes > MAX_TREE_BYTES)
        return kc_fail(err, "sandbox headers: more than %lld bytes", MAX_TREE_BYTES);
    return 0;
}

/* Adds the includes of file i that are not in the tree yet. */
static int follow(header_tree *t, const char *include_dir, int i, strbuf *err)
{
    strbuf name = STRBUF_INIT, rel = STRBUF_INIT;
    int rc = 0;
    for (size_t off = 0; rc == 0 && off < t->files[i].text.len;) {
        const char *line = t->files[i].text.buf + off;
        const char *nl = memchr(line, '\n', t->files[i].text.len - off);
        const char *end = nl ? nl : t->files[i].text.buf + t->files[i].text.len;
        char q = include_on_line(line, end, &name);
        off = (size_t)(end - t->files[i].text.buf) + 1;
        if (q && resolve(include_dir, t->files[i].path, name.buf, q == '"', &rel) == 0 &&
            !tree_has(t, rel.buf))
            rc = add_file(t, include_dir, rel.buf, err);
    }
    sb_free(&name), sb_free(&rel);
    return rc;
}

#define ALLOWED_ITEM(name) name,
static const char *const allowed[] = {KC_ALLOWED_HEADERS(ALLOWED_ITEM) NULL};

int header_tree_collect(const char *include_dir, header_tree *t, strbuf *err)
{
    memset(t, 0, sizeof(*t));
    strbuf rel = STRBUF_INIT;
    int rc = 0;
    for (int i = 0; rc == 0 && allowed[i]; i++) {
        /* An older toolkit may lack a newer header (it then fails to compile, as it would
         * without the sandbox); a toolkit without the first one is the wrong directory. */
        if (resolve(include_dir, NULL, allowed[i], 0, &rel)) {
            if (i == 0)
                rc = kc_fail(err, "sandbox headers: <%s> is not under %s (set CUDA to the "
                                  "toolkit's directory)", allowed[i], include_dir);
        } else if (!tree_has(t, rel.buf))
            rc = add_file(t, include_dir, rel.buf, err);
    }
    for (int i = 0; rc == 0 && i < t->n; i++)
        rc = follow(t, include_dir, i, err);
    sb_free(&rel);
    if (rc)
        header_tree_free(t);
    return rc;
}
