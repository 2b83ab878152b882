/* problem: the problem manifest (format "kc-problem v1", schemas/problem.schema.json),
 * its loader with precise errors (file, field, what was expected), dims sets,
 * suite discovery, and the spec text shown to a model. */
#ifndef KC_PROBLEM_H
#define KC_PROBLEM_H
#include "common/expr.h"
#include "common/strbuf.h"
#include <stdint.h>

#define KC_MAX_RANK 8
#define KC_MAX_TENSORS 16
#define KC_MAX_PARAMS 16
#define KC_MAX_ALT 8
#define KC_MAX_DERIVED 16
#define KC_MAX_SEGMENTS 63 /* dist segments: documents per row (harness.cu's SEG_MAX - 1) */
#define KC_MAX_DIM_VALUE (1LL << 40)      /* a dim in a manifest */
#define KC_MAX_TENSOR_BYTES (64LL << 30)  /* one input or output under any dim set */

enum kc_dtype { KC_F32, KC_F16, KC_BF16, KC_F64, KC_I32, KC_I64, KC_U8, KC_BOOL, KC_DTYPE_COUNT };
enum kc_dist {
    KC_DIST_NONE,    /* outputs */
    KC_DIST_NORMAL,  /* mean, std */
    KC_DIST_UNIFORM, /* lo, hi */
    KC_DIST_RANDINT, /* integers in [lo, hi): lo/hi may be dim expressions */
    KC_DIST_SIGN,    /* -1 or +1 */
    KC_DIST_SIMPLEX, /* positive, each row along the last dim sums to 1 (softmax of N(0, std)) */
    KC_DIST_UNIFORM_FAN_IN, /* PyTorch's Linear/Conv init: uniform(-1/sqrt(fan_in), +1/sqrt(fan_in)) */
    KC_DIST_CONSTANT,       /* every element = value */
    KC_DIST_BERNOULLI,      /* a dropout mask: 0 with probability p, else 1/(1-p) */
    KC_DIST_SEGMENTS,       /* document ids along the last dim: sorted runs (see problem.c) */
    KC_DIST_COUNT
};

const char *dtype_name(enum kc_dtype t);
int dtype_parse(const char *s, enum kc_dtype *out);
size_t dtype_size(enum kc_dtype t);
int dtype_is_float(enum kc_dtype t);
const char *dist_name(enum kc_dist d);

typedef struct tensor_spec {
    char *name;
    enum kc_dtype dtype;
    int rank;
    char *shape[KC_MAX_RANK];   /* dim expressions */
    enum kc_dist dist;
    double a, b;                /* normal: mean,std; uniform: lo,hi; simplex: std;
                                   constant: value; bernoulli: p, 1/(1-p) */
    char *lo_expr, *hi_expr;    /* randint bounds; segments: the last dim and count */
    char *fan_in_expr;          /* uniform_fan_in: fan_in as a dim expression */
} tensor_spec;

typedef struct param_spec {
    char *name;
    enum kc_dtype dtype;
    double value;
} param_spec;

enum kc_dims_kind { KC_DIMS_DEFAULT, KC_DIMS_SMALL, KC_DIMS_ALT };

typedef struct problem {
    char *id;           /* level1/019_relu */
    char *suite;        /* level1 */
    char *title;
    int level;
    int kernelbench_id; /* 0 when not from KernelBench */
    char *description;
    char *torch_reference;
    char *manifest_path;
    char *reference_path;
    strbuf manifest_text;
    strbuf reference_source;
    dimset dims_default, dims_small;
    dimset dims_alt[KC_MAX_ALT];
    int n_alt;
    int n_derived;
    char *derived_name[KC_MAX_DERIVED], *derived_expr[KC_MAX_DERIVED];
    tensor_spec inputs[KC_MAX_TENSORS];
    int n_inputs;
    tensor_spec outputs[KC_MAX_TENSORS];
    int n_outputs;
    param_spec params[KC_MAX_PARAMS];
    int n_params;
    double atol, rtol;
    char *tolerance_why;
    char *bytes_expr, *flops_expr;
    char *degenerate; /* NULL, or why the output is trivial (kept out of training exports) */
} problem;

int problem_load(const char *manifest_path, problem *p, strbuf *err);
void problem_free(problem *p);
/* The dims for a kind (alt_index used for KC_DIMS_ALT), derived dims included. */
const dimset *problem_dims(const problem *p, enum kc_dims_kind kind, int alt_index);
int dims_kind_parse(const char *s, enum kc_dims_kind *kind, int *alt_index);
/* Element count of a tensor under dims. */
int tensor_numel(const tensor_spec *t, const dimset *dims, int64_t *out, strbuf *err);
/* The generator's parameters (a, b) of an input under dims: uniform_fan_in becomes
 * (-1/sqrt(fan_in), +1/sqrt(fan_in)); other dists return their stored a, b. */
int tensor_init_params(const tensor_spec *t, const dimset *dims, double *a, double *b,
                       strbuf *err);
/* Looks a tensor up among inputs then outputs; returns its spec or NULL. */
const tensor_spec *problem_tensor(const problem *p, const char *name, int *is_output);
const param_spec *problem_param(const problem *p, const char *name);

/* Where problems live: $KC_PROBLEMS, else <exe dir>/../problems (or up to two levels higher:
 * build/NAME/bin), else ./problems. */
void problems_root(strbuf *out);
/* Where problems_root looks, and how to point it elsewhere (KC_PROBLEMS): for error messages. */
extern const char *problems_root_help;
/* Resolves an id (level1/019_relu) to its manifest path. */
int problem_manifest_path(const char *root, const char *id, strbuf *out, strbuf *err);
/* Lists problem ids matching a selector: a suite ("level1"), an id, a glob
 * ("level1/01*"), or several of those separated by commas. Sorted, unique. */
int problems_select(const char *root, const char *selector, char ***ids, int *n, strbuf *err);
void problems_free_ids(char **ids, int n);

/* Loads a problem by id from problems_root(). */
int problem_load_by_id(const char *id, problem *p, strbuf *err);
/* Inserts or updates the problem's row (manifest, reference, spec as blobs). problem_db.c */
typedef struct sqlite3 sqlite3;
int problem_register(sqlite3 *db, const problem *p, strbuf *err);

#endif
