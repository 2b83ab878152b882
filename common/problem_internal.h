/* problem_internal: what problem.c and problem_shared.c share while a manifest loads: the
 * load context (the file, the error buffer) and its field errors. */
#ifndef KC_PROBLEM_INTERNAL_H
#define KC_PROBLEM_INTERNAL_H
#include "common/strbuf.h"

struct problem_ctx {
    const char *file;
    strbuf *err;
};

/* Fails with "FILE: field 'FIELD': WHAT" in c->err; returns -1. */
int problem_field_fail(struct problem_ctx *c, const char *field, const char *what);
/* Whether c may start a name (a letter or '_'). */
int problem_name_start(char c);
/* Expands the `#include "shared/NAME.cuh"` lines of src, the reference ref in dir. */
int problem_expand_shared_includes(struct problem_ctx *c, const char *dir, const char *ref, strbuf *src);

#endif
