/* expr: integer expressions over named dims, as used in manifests (shapes,
 * bytes, flops) and candidate launch/scratch lines:
 *   literals, names, + - * / % (int64, C semantics), unary -, parentheses,
 *   cdiv(a,b), min(a,b), max(a,b).
 * Division or modulo by zero and int64 overflow are errors. */
#ifndef KC_EXPR_H
#define KC_EXPR_H
#include "common/strbuf.h"
#include <stdint.h>

#define KC_MAX_DIMS 48

typedef struct dimset {
    int n;
    char *names[KC_MAX_DIMS];
    int64_t values[KC_MAX_DIMS];
} dimset;

void dimset_free(dimset *d);
void dimset_copy(dimset *dst, const dimset *src);
/* Sets (adds or replaces) a dim. Returns -1 when full. */
int dimset_set(dimset *d, const char *name, int64_t value);
/* Returns 1 and the value when present. */
int dimset_get(const dimset *d, const char *name, int64_t *value);

int expr_eval(const char *text, const dimset *env, int64_t *out, strbuf *err);
/* Fills names (up to max) used in an expression; returns count or -1 on syntax error. */
int expr_names(const char *text, char names[][64], int max, strbuf *err);

#endif
