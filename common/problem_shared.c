/* problem_shared: the shared/ includes of a reference kernel, expanded when its manifest loads
 * (problem.c's load_reference; see problem_internal.h). */
#include "common/problem.h"
#include "common/problem_internal.h"
#include "common/error.h"
#include "common/fsutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A reference may take kernel code shared by several problems of its suite from lines of the
 * exact form `#include "shared/NAME.cuh"`, expanded here, at load: everything downstream (the
 * policy, the compile servers, the fake LLM's echo, the database) sees one self-contained
 * source in the candidate format. Candidates cannot do this (the policy allows toolkit headers
 * only), and a shared file may not include another. NAME is looked up in the suite's own
 * shared/ folder first, then in the problems root's shared/ (kernels used by several suites). */
#define SHARED_DIR "shared/"

/* Whether a line of text starts with a quoted #include (a shared file may not have one). */
static int has_quoted_include(const char *text)
{
    const char *line = text;
    while (*line) {
        if (strncmp(line + strspn(line, " \t"), "#include \"", 10) == 0)
            return 1;
        const char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
    return 0;
}

static int valid_shared_name(const char *name)
{
    size_t n = strlen(name);
    if (n < 5 || strcmp(name + n - 4, ".cuh") != 0 || strstr(name, ".."))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!problem_name_start(name[i]) && !(name[i] >= '0' && name[i] <= '9') && name[i] != '.' &&
            name[i] != '-')
            return 0;
    return 1;
}

/* Appends the shared file named on line line_no of the reference file ref, or fails naming
 * both. */
static int append_shared(struct problem_ctx *c, const char *dir, const char *ref, const char *name,
                         int line_no, strbuf *out)
{
    strbuf path = STRBUF_INIT, text = STRBUF_INIT, e = STRBUF_INIT, what = STRBUF_INIT;
    int rc = 0;
    sb_addf(&path, "%s/" SHARED_DIR "%s", dir, name);
    if (valid_shared_name(name) && !file_exists(path.buf)) {
        /* not in the suite's own shared/: the one of all suites, problems/shared/ */
        sb_reset(&path);
        sb_addf(&path, "%s/../" SHARED_DIR "%s", dir, name);
    }
    if (!valid_shared_name(name))
        sb_addf(&what, "%s:%d: \"" SHARED_DIR "%s\" is not a shared file name (NAME.cuh)", ref,
                line_no, name);
    else if (read_file(path.buf, &text, &e))
        sb_addf(&what, "%s:%d: %s", ref, line_no, e.buf);
    else if (has_quoted_include(text.buf))
        sb_addf(&what, "%s:%d: %s includes another file, which shared files may not", ref,
                line_no, path.buf);
    if (what.len) {
        rc = problem_field_fail(c, "reference", what.buf);
    } else {
        sb_add(out, text.buf, text.len);
        if (text.len && text.buf[text.len - 1] != '\n')
            sb_addch(out, '\n');
    }
    sb_free(&path), sb_free(&text), sb_free(&e), sb_free(&what);
    return rc;
}

int problem_expand_shared_includes(struct problem_ctx *c, const char *dir, const char *ref, strbuf *src)
{
    strbuf out = STRBUF_INIT;
    int rc = 0, line_no = 1;
    for (const char *line = sb_str(src); *line && rc == 0; line_no++) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        char name[128];
        if (sscanf(line, "#include \"" SHARED_DIR "%127[^\"\n]\"", name) == 1)
            rc = append_shared(c, dir, ref, name, line_no, &out);
        else
            sb_add(&out, line, len);
        line += len;
    }
    if (rc == 0) {
        sb_reset(src);
        sb_add(src, sb_str(&out), out.len);
    }
    sb_free(&out);
    return rc;
}
