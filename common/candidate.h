/* candidate: the "kc-cuda v1" candidate format. Extracts the code block from
 * an LLM response (fences, <think> sections, several blocks) and parses its
 * "// @launch" and "// @scratch" lines against a problem, with errors that
 * name the line. */
#ifndef KC_CANDIDATE_H
#define KC_CANDIDATE_H
#include "common/problem.h"
#include "common/strbuf.h"

/* Limits of the candidate format, checked before anything is parsed (sizes, counts) or, for
 * values, under every dim set of the problem before anything reaches the GPU worker. A
 * candidate past one is an extract_error that names the line. */
#define KC_MAX_RESPONSE_BYTES (1024 * 1024) /* a model's whole answer */
#define KC_MAX_SOURCE_BYTES (256 * 1024)    /* the code block */
#define KC_MAX_DIRECTIVE_LINE 4096          /* bytes of one @launch or @scratch line */
#define KC_MAX_LAUNCHES 16
#define KC_MAX_ARGS 32
#define KC_MAX_SCRATCH 8
#define KC_MAX_GRID_X 2147483647LL          /* CUDA's limits on sm_90 */
#define KC_MAX_GRID_YZ 65535LL
#define KC_MAX_BLOCK_XY 1024LL
#define KC_MAX_BLOCK_Z 64LL
#define KC_MAX_BLOCK_THREADS 1024LL
#define KC_MAX_DYNAMIC_SMEM 232448LL        /* 227 KiB: the H100's opt-in shared memory per block */
#define KC_MAX_SCRATCH_BYTES (16LL << 30)   /* all scratch buffers of a candidate together */

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

/* Pulls the kernel source out of a model's answer: exactly one code block (```cuda, ```cu,
 * ```c++ ..., or any fenced block with a // @launch line; blocks in other languages are
 * ignored); two or more are an error that says so. */
int candidate_extract(const char *response, strbuf *code, strbuf *err);
/* The one rule for a model's answer or a candidate file, in kcollect and every kverify command:
 * text with a ``` fence goes through candidate_extract; text without one is the source itself
 * when it has a // @launch line (a .cu file), else "no ```cuda code block"; and the source
 * must be UTF-8 text (candidate_check_text). */
int candidate_source(const char *text, strbuf *code, strbuf *err);
/* 0 when s[0..len) is UTF-8 text without NUL bytes; else -1 naming the line and the byte. */
int candidate_check_text(const char *s, size_t len, strbuf *err);
/* Parses launch and scratch lines; names are checked against the problem, and every
 * expression is evaluated under each dim set of the problem (default, small, alt): geometry,
 * shared memory and scratch sizes must lie within the limits above. */
int candidate_parse(const char *source, const problem *p, launch_unit *out, strbuf *err);
void launch_unit_free(launch_unit *u);
/* Evaluates grid, block and smem of a launch under dims. */
int launch_geometry(const launch *l, const dimset *dims, int64_t grid[3], int64_t block[3],
                    int64_t *smem, strbuf *err);

#endif
