/* candidate: the "kc-cuda v1" candidate format. Extracts the code block from
 * an LLM response (fences, <think> sections, several blocks) and parses its
 * "// @launch", "// @scratch", "// @for ... // @end" and "// @layer" lines against a problem,
 * with errors that name the line (docs/CANDIDATE_FORMAT.md). Running the parsed
 * unit, loops expanded: common/schedule.h. */
#ifndef KC_CANDIDATE_H
#define KC_CANDIDATE_H
#include "common/problem.h"
#include "common/strbuf.h"

/* Limits of the candidate format, checked before anything is parsed (sizes, counts) or, for
 * values, under every dim set of the problem before anything reaches the GPU worker. A
 * candidate past one is an extract_error that names the line. */
#define KC_MAX_RESPONSE_BYTES (1024 * 1024) /* a model's whole answer */
#define KC_MAX_SOURCE_BYTES (256 * 1024)    /* the code block */
#define KC_MAX_DIRECTIVE_LINE 4096          /* bytes of one @launch, @scratch, @for or @end line */
#define KC_MAX_LAUNCHES 1024                /* @launch lines (512, 16 before level 3's networks) */
#define KC_MAX_LOOPS 64                     /* @for lines (16 before) */
#define KC_MAX_LOOP_DEPTH 4                 /* @for blocks nested in one another */
#define KC_MAX_UNIT_LAUNCHES 65536          /* launches of one execution, loops expanded */
#define KC_MAX_ARGS 32
#define KC_MAX_SCRATCH 16                   /* (8 before); worker.h's WK_SUM_SLOTS counts them */
#define KC_MAX_GRID_X 2147483647LL          /* CUDA's limits on sm_90 */
#define KC_MAX_GRID_YZ 65535LL
#define KC_MAX_BLOCK_XY 1024LL
#define KC_MAX_BLOCK_Z 64LL
#define KC_MAX_BLOCK_THREADS 1024LL
#define KC_MAX_DYNAMIC_SMEM 232448LL        /* 227 KiB: the H100's opt-in shared memory per block */
#define KC_MAX_SCRATCH_BYTES (16LL << 30)   /* all scratch buffers of a candidate together */
#define KC_MAX_LAYER_LINES 256              /* @layer lines */
#define KC_MAX_UNIT_LAYERS 4096             /* layer points of one execution, loops expanded */
#define KC_MAX_LAYER_NAME 128               /* bytes of a layer's name, {expr} parts evaluated */

enum kc_arg_kind {
    KC_ARG_TENSOR, /* input, output or scratch: a device pointer */
    KC_ARG_INT,    /* integer expression over dims, 32 or 64 bit as the kernel wants */
    KC_ARG_PARAM,  /* a scalar param of the problem */
    KC_ARG_FLOAT,  /* a floating literal */
    KC_ARG_OFFSET  /* NAME[EXPR]: a device pointer to element EXPR of a tensor, or of a view
                      of a packed input (a view's name alone is VIEW[0]) */
};

/* Tensor references index the buffer list: inputs, then outputs, then scratch. */
typedef struct launch_arg {
    enum kc_arg_kind kind;
    char *text;
    int tensor;   /* KC_ARG_TENSOR, KC_ARG_OFFSET */
    int param;    /* KC_ARG_PARAM */
    double fval;  /* KC_ARG_FLOAT */
    char *offset; /* KC_ARG_OFFSET: the element index, an expression; else NULL */
    const tensor_spec *view; /* KC_ARG_OFFSET into a view: the view (the problem's), and offset
                                indexes the view; tensor is its packed input. Else NULL */
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

/* "// @for VAR in FIRST..END" ... "// @end": the lines between run with VAR = FIRST, FIRST+1,
 * ..., END-1 (not at all when END <= FIRST). FIRST and END are expressions over dims. */
typedef struct loop_spec {
    int line, end_line; /* of the @for and of its @end */
    char *var;
    char *first, *end;
    int depth;          /* 0: outermost */
    int body, close;    /* steps: the first of its body, its KC_STEP_END */
} loop_spec;

/* "// @layer NAME BUFFER[INDEX] DTYPE[COUNT]": after the launches before it, the COUNT elements
 * from element INDEX of BUFFER (an output or a scratch buffer, of dtype DTYPE) hold the output of
 * layer NAME. NAME may hold {expr} parts over dims and loop variables (layer_name gives it under
 * an env). Read only by the worker's diagnosis run after a mismatch (docs/LEVEL3.md). */
typedef struct layer_spec {
    int line;
    char *name;   /* as written, {expr} parts included */
    int tensor;   /* into the buffer list, as launch_arg's */
    enum kc_dtype dtype;
    char *index, *count; /* expressions */
} layer_spec;

/* The unit in source order: launches, the opening and closing of loops around them, and layer
 * points (which schedule.h's launch_iter_next skips unless asked for). */
enum kc_step_kind { KC_STEP_LAUNCH, KC_STEP_FOR, KC_STEP_END, KC_STEP_LAYER };
typedef struct kc_step {
    enum kc_step_kind kind;
    int index; /* into launches (KC_STEP_LAUNCH), loops or layers (KC_STEP_LAYER) */
} kc_step;
#define KC_MAX_STEPS (KC_MAX_LAUNCHES + 2 * KC_MAX_LOOPS + KC_MAX_LAYER_LINES)

typedef struct launch_unit {
    int n_launches;
    launch *launches; /* KC_MAX_LAUNCHES of them, allocated by candidate_parse */
    int n_scratch;
    scratch_spec scratch[KC_MAX_SCRATCH];
    int n_loops;
    loop_spec loops[KC_MAX_LOOPS];
    int n_layers;
    layer_spec *layers; /* KC_MAX_LAYER_LINES of them, allocated by candidate_parse */
    int n_steps;
    kc_step steps[KC_MAX_STEPS];
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
/* Parses launch, scratch and loop lines; names are checked against the problem, and every
 * expression is evaluated under each dim set of the problem (default, small, alt), at every
 * launch of the expanded schedule (each value of the loop variables): geometry, shared memory,
 * offsets, scratch sizes and the number of launches must lie within the limits above. */
int candidate_parse(const char *source, const problem *p, launch_unit *out, strbuf *err);
void launch_unit_free(launch_unit *u);
/* Evaluates grid, block and smem of a launch under dims (with the loop variables: schedule.h). */
int launch_geometry(const launch *l, const dimset *dims, int64_t grid[3], int64_t block[3],
                    int64_t *smem, strbuf *err);
/* The byte offset a KC_ARG_OFFSET argument adds to its tensor's address under dims: the element
 * index must lie in [0, numel] (numel: a pointer just past the end is allowed, as in C). For a
 * view of a packed input the index must lie in [0, numel of the view] and the offset is the
 * view's start plus the index (numel is then the packed input's). */
int launch_offset_bytes(const launch_arg *a, const dimset *dims, int64_t numel,
                        enum kc_dtype dtype, int64_t *bytes, strbuf *err);

/* Layer l's name under env (dims and loop variables): its {expr} parts evaluated. Fails when a
 * part does not evaluate or the name passes KC_MAX_LAYER_NAME bytes. */
int layer_name(const layer_spec *l, const dimset *env, strbuf *out, strbuf *err);
/* Layer l's region under env: the element index and count, and BUFFER's numel; fails unless
 * 0 <= index, 1 <= count and index + count <= numel. */
int layer_region(const layer_spec *l, const dimset *env, int64_t numel, int64_t *index,
                 int64_t *count, strbuf *err);

#endif
