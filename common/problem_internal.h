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

/* problem_values.c: a param's "vary" and "vary_why" (o is params[i], field "params[i]"), and
 * the top-level "values" (after the inputs: a class needs an input it can shape). */
struct json_t;
struct param_spec;
struct problem;
int problem_load_param_vary(struct problem_ctx *c, struct json_t *o, const char *field,
                            struct param_spec *ps);
int problem_load_values(struct problem_ctx *c, struct json_t *root, struct problem *p);

#endif
