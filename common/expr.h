/* expr: integer expressions over named dims, as used in manifests (shapes,
 * bytes, flops) and candidate launch/scratch lines:
 *   literals, names, + - * / % (int64, C semantics), unary -, parentheses,
 *   cdiv(a,b), min(a,b), max(a,b).
 * Division or modulo by zero and int64 overflow of any operator (INT64_MIN / -1,
 * cdiv(INT64_MIN, -1), -INT64_MIN, literals past 2^63-1) are errors, never UB.
 * Text longer than KC_EXPR_MAX_LEN or nested deeper than KC_EXPR_MAX_DEPTH is
 * refused before it is parsed. There are no shifts or other operators. An expression can also
 * be compiled once and run many times (expr_compile, expr_run). */
#ifndef KC_EXPR_H
#define KC_EXPR_H
#include "common/strbuf.h"
#include <stdint.h>

#define KC_MAX_DIMS 48
#define KC_EXPR_MAX_LEN 1024 /* bytes of one expression */
#define KC_EXPR_MAX_DEPTH 32 /* nested parentheses, calls and unary minus */
#define KC_EXPR_MAX_NAME 63  /* bytes of a name */

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

/* A compiled expression: parsed once, its names resolved to positions in an environment, then
 * run on that environment's values without parsing (the CPU checks evaluate each expression of
 * a launch at every launch of an expanded schedule). It computes what expr_eval computes; it
 * fails where expr_eval fails, without a message: ask expr_eval for the message. */
typedef struct expr_prog {
    int n;
    struct expr_op *ops; /* postfix */
} expr_prog;
/* Compiles text against env's names (-1 with expr_eval's message on a syntax error or an
 * unknown name; out then holds nothing). */
int expr_compile(const char *text, const dimset *env, expr_prog *out, strbuf *err);
/* Runs a compiled expression on values laid out as the env it was compiled against: 0 and the
 * value, or -1 (overflow, division by zero). */
int expr_run(const expr_prog *prog, const int64_t *values, int64_t *out);
void expr_prog_free(expr_prog *prog);
/* Fills names used in an expression; returns the count, or -1 on a syntax error or when
 * more than max distinct names are used. */
int expr_names(const char *text, char names[][64], int max, strbuf *err);

#endif
