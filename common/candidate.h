/* candidate: the "kc-cuda v1" candidate format. Extracts the code block from
 * an LLM response (fences, <think> sections, several blocks) and parses its
 * "// @launch" and "// @scratch" lines against a problem, with errors that
 * name the line. */
#ifndef KC_CANDIDATE_H
#define KC_CANDIDATE_H
#include "common/problem.h"
#include "common/strbuf.h"

#define KC_MAX_LAUNCHES 16
#define KC_MAX_ARGS 32
#define KC_MAX_SCRATCH 8

enum kc_arg_kind {
    KC_ARG_TENSOR, /* input, output or scratch: a device pointer */
    KC_ARG_INT,    /* integer expression over dims, 32 or 64 bit as the kernel wants */
    KC_ARG_PARAM,  /* a scalar param of the problem */
    KC_ARG_FLOAT   /* a floating literal */
};

/* Tensor references index the buffer list: inputs, then outputs, then scratch. */
typedef struct launch_arg {
    enum kc_arg_kind kind;
    char *text;
    int tensor;  /* KC_ARG_TENSOR */
    int param;   /* KC_ARG_PARAM */
    double fval; /* KC_ARG_FLOAT */
} launch_arg;

typedef struct launch {
    int line;
    char *kernel;
    char *grid[3], *block[3]; /* expressions; y,z default "1" */
    char *smem;               /* expression, "0" when absent */
    int n_args;
    launch_arg args[KC_MAX_ARGS];
} launch;

typedef struct scratch_spec {
    int line;
    char *name;
    enum kc_dtype dtype;
    char *count; /* element count expression */
} scratch_spec;

typedef struct launch_unit {
    int n_launches;
    launch launches[KC_MAX_LAUNCHES];
    int n_scratch;
    scratch_spec scratch[KC_MAX_SCRATCH];
} launch_unit;

/* Pulls the kernel source out of a model's answer. */
int candidate_extract(const char *response, strbuf *code, strbuf *err);
/* Parses launch and scratch lines; names are checked against the problem. */
int candidate_parse(const char *source, const problem *p, launch_unit *out, strbuf *err);
void launch_unit_free(launch_unit *u);
/* Evaluates grid, block and smem of a launch under dims. */
int launch_geometry(const launch *l, const dimset *dims, int64_t grid[3], int64_t block[3],
                    int64_t *smem, strbuf *err);

#endif
