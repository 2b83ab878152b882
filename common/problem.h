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
#define KC_MAX_VIEWS 1024 /* views of one packed input (docs/PROBLEMS.md, "Packed inputs") */
#define KC_VIEW_ALIGN_BYTES 256 /* every view starts at a multiple of this many bytes */
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
    /* "vary" of a constant init: the dist used instead in the checks that vary constants
     * (KC_DIST_NONE when absent); vary_a, vary_b mean what a, b mean for that dist. Only
     * normal, uniform, sign, simplex and bernoulli are accepted (no dim expressions). */
    enum kc_dist vary_dist;
    double vary_a, vary_b;
    /* A packed input ("views" in the manifest: a network's parameters in one buffer): its
     * views, each a tensor_spec with its own name, shape and init (dtype the packed input's),
     * laid out in order, each starting at a multiple of KC_VIEW_ALIGN_BYTES. The packed
     * input's shape is one dim, the padded total, computed by the loader; it takes no init of
     * its own (dist KC_DIST_NONE). NULL and 0 for every other tensor. */
    struct tensor_spec *views;
    int n_views;
    char *view_offset;   /* a view: the element index of its first element in the packed
                            input, a dim expression computed by the loader; else NULL */
    char *torch_key;     /* a view: the PyTorch state-dict key(s) it holds ("torch"), or NULL */
    int vary_views;      /* set on tensor_spec_varied's copy of a packed input: fill each view
                            with tensor_spec_varied(view) */
} tensor_spec;

#define KC_MAX_PARAM_VARY 8
typedef struct param_spec {
    char *name;
    enum kc_dtype dtype;
    double value;
    /* "vary": the values the checks that vary constants use instead of value, each of them in
     * every verification (negative, zero and large where the operator's semantics hold);
     * n_vary 0 with vary_why saying why the value cannot change (docs/PROBLEMS.md) */
    double vary[KC_MAX_PARAM_VARY];
    int n_vary;
    char *vary_why;
} param_spec;

/* "values": the value classes the checks give the inputs (docs/PROBLEMS.md, "Value classes").
 * Each class is declared with its why, on or off; `kverify problems --check` refuses a
 * manifest without them. "Structured" and "large" apply to float inputs drawn from normal or
 * uniform_fan_in; "special" to float inputs drawn from normal. */
#define KC_MAX_SPECIAL 4
enum kc_special { KC_SPECIAL_NAN, KC_SPECIAL_INF, KC_SPECIAL_NEG_INF, KC_SPECIAL_NEG_ZERO };
typedef struct problem_values {
    int present;
    double large;           /* the large-magnitude run multiplies those inputs by this; 0: none */
    double large_atol;      /* that run's atol, as a multiple of the problem's */
    char *large_why;
    int structure;          /* structured runs: per-row and per-column scales and offsets */
    double spike;           /* and secret spikes of this magnitude (times the std); 0: none */
    double structure_atol;  /* structured runs' atol, as a multiple of the problem's */
    char *structure_why;
    enum kc_special special[KC_MAX_SPECIAL]; /* special values at secret positions */
    int n_special;
    char *special_why;
} problem_values;
/* problem_values.c: "nan", "inf", "-inf", "-0" (the manifest's names); frees the whys. */
const char *special_name(enum kc_special s);
void problem_values_free(problem_values *v);

enum kc_dims_kind { KC_DIMS_DEFAULT, KC_DIMS_SMALL, KC_DIMS_ALT };

/* "hidden": the generator of the dims the verifier draws at verification time
 * (docs/PROBLEMS.md). Each dim of dims.default is drawn, in the listed order, by one rule. */
#define KC_MAX_REQUIRES 32
#define KC_MAX_HIDDEN_VALUES 64
#define KC_HIDDEN_MAX_BYTES (256LL << 20) /* default cap: inputs + outputs bytes */
#define KC_HIDDEN_MAX_FLOPS 2e10          /* default cap on the flops expression */
#define KC_MAX_CAPACITY 4
#define KC_CAPACITY_MAX_BYTES (24LL << 30) /* a capacity set's inputs + outputs */
#define KC_DRAW_TRIES 2000                /* rejection-sampling bound of one draw */
enum kc_hidden_rule { KC_HIDDEN_RANGE, KC_HIDDEN_VALUES, KC_HIDDEN_EXPR, KC_HIDDEN_DIVISOR_OF };
typedef struct hidden_dim {
    char *name;
    enum kc_hidden_rule rule;
    int64_t min, max; /* range, inclusive */
    int64_t *values;  /* values: n_values of them */
    int n_values;
    char *expr;       /* expr: the expression; divisor_of: the earlier dim's name */
} hidden_dim;
enum kc_cmp { KC_CMP_EQ, KC_CMP_NE, KC_CMP_LE, KC_CMP_GE, KC_CMP_LT, KC_CMP_GT };
typedef struct hidden_require {
    char *text;       /* as written, for messages */
    char *lhs, *rhs;  /* dim expressions (derived dims allowed) */
    enum kc_cmp op;
} hidden_require;
typedef struct problem_hidden {
    int present;
    int n_dims;
    hidden_dim dims[KC_MAX_DIMS];
    int n_require;
    hidden_require require[KC_MAX_REQUIRES];
    int64_t max_bytes;
    double max_flops;
    char *why;
    /* "capacity": fixed sets past the caps above that every verification runs (more rows than
     * grid.y can index, more than 2^31 elements), where the operator is cheap enough */
    int n_capacity;
    dimset capacity[KC_MAX_CAPACITY];
    char *capacity_why;
} problem_hidden;

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
    problem_hidden hidden;
    problem_values values;
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
/* Computes the derived dims into d in their listed order; -1 with "derived.NAME: why". */
int problem_apply_derived(const problem *p, dimset *d, strbuf *why);
/* t itself when it has no "vary"; else tmp, filled as a shallow copy of t (its strings are
 * t's: never free tmp) with dist, a, b replaced by the vary ones. A packed input some of whose
 * views have a "vary" gives tmp with vary_views set: its fill varies each view in turn. */
const tensor_spec *tensor_spec_varied(const tensor_spec *t, tensor_spec *tmp);
/* Whether dims d can run the problem: every shape extent >= 0, every tensor within
 * KC_MAX_TENSOR_BYTES, every fan_in > 0, every segments count in 1..KC_MAX_SEGMENTS, randint
 * bounds, bytes and flops evaluate. The loader runs the same checks on the fixed sets (field
 * by field) and the draw on each drawn set. Returns 0 and, when io_bytes is not NULL, the bytes
 * of all inputs and outputs summed; or -1 with what failed in why. */
int problem_dims_fault(const problem *p, const dimset *d, int64_t *io_bytes, strbuf *why);
/* What `kverify problems --check` refuses as undeclared (problem_values.c): no "values", a
 * class of it left out, a param without "vary"; one line per gap appended to report (lines
 * after the first start with "\n  "). Returns the count. */
int problem_values_missing(const problem *p, strbuf *report);

/* ---- hidden dims (problem_hidden.c) ---- */
int problem_has_hidden(const problem *p);
/* Draws dims from the problem's "hidden" generator: a pure function of (problem id, seed,
 * index), the same on any machine. out is overwritten (free it with dimset_free) and holds the
 * dims of dims.default then the derived dims. Odd indices are small draws (each range cut to
 * its lowest 8 values, batch 1 to 8: tails and tiny grids) while the requires allow one, even
 * indices range over the whole generator. Draws that break a require or a cap (bytes of
 * all inputs and outputs, the flops expression, problem_dims_fault) are redrawn, up to
 * KC_DRAW_TRIES times; then -1 with an error naming the requirement that failed most. */
int problem_draw_dims(const problem *p, uint64_t seed, int index, dimset *out, strbuf *err);
/* Whether d (the dims of dims.default, derived ones computed) meets the generator's requires
 * and caps (max_bytes, max_flops; capacity: KC_CAPACITY_MAX_BYTES instead) and
 * problem_dims_fault; 0 when it does, else -1 with why. */
int problem_hidden_admits(const problem *p, const dimset *d, int capacity, strbuf *why);

/* ---- coverage (problem_cover.c): the sets every verification runs besides random draws ---- */
#define KC_MAX_BOUNDARY 128  /* boundary sets of one problem (octave rows included) */
#define KC_STRATA 20         /* strata per range dim of the stratified draws */
#define KC_MAX_STRATIFIED 48 /* stratified sets (KC_STRATA, plus sets that fill strata caps lost) */
/* The boundary sets the generator implies, their kinds fixed and their values drawn from the
 * verification's secret seed (so a kernel cannot recognise them): per dim its low end and 1, a
 * small prime (from the first KC_STRATA-th of the range) and a large one (from the last),
 * 2^k - 1 and 2^k + 1 (k in the upper half of the valid k), a value 1 past an odd multiple of
 * each of 32, 64, 128 and 256, its high end (aligned rows of a strength-1 covering array, so
 * that a row pairs values of one kind; a value a row cannot take under the caps gets a set of
 * its own with the other dims at their low ends); every quotient 1..16 of a divisor_of dim
 * (with k = 1 and a drawn k >= 2); then the capacity sets, each jittered upward from seed;
 * then octave rows (row j: every range dim a value drawn from (2^(j-1), 2^j] of its range).
 * The same seed gives the same sets. Writes up to max sets to out (free each with
 * dimset_free); *skipped counts values no set could take (the caps exclude them). Returns the
 * count, or -1 with err. */
int problem_boundary_sets(const problem *p, uint64_t seed, dimset *out, int max, int *skipped,
                          strbuf *err);
/* Stratified draws (a Latin hypercube): KC_STRATA sets in which every range dim takes a value
 * from each of its KC_STRATA equal strata exactly once (so any band of 10% of a dim's range
 * holds a drawn value), pairings drawn from seed; a stratum the caps exclude in its pairing is
 * redrawn with the other dims free, then in a set of its own. Returns the count, or -1. */
int problem_stratified_sets(const problem *p, uint64_t seed, dimset *out, int max, strbuf *err);
/* The coverage sets of one family from seed: "bound" (problem_boundary_sets) or "strat"
 * (problem_stratified_sets). Writes them to out (up to max; free each with dimset_free);
 * returns the count, or -1 with err (an unknown family, no generator). */
int problem_cover_sets(const problem *p, const char *family, uint64_t seed, dimset *out, int max,
                       strbuf *err);
/* Appends d as one compact JSON object {name: value} in d's order (drawn dims, then derived:
 * derived ones included). */
void dimset_to_json(const dimset *d, strbuf *out);
struct json_t;
/* The inverse, as a whole dims set of p: every dim of dims.default from the object (a missing
 * one is an error), then the derived dims, checked by problem_dims_fault. */
int problem_dims_from_json(const problem *p, struct json_t *set, dimset *out, strbuf *err);
/* Parses the manifest's "hidden" (absent: p->hidden.present stays 0). problem_hidden.c,
 * called by the loader after dims and tensors. */
struct json_t;
int problem_load_hidden(const char *file, struct json_t *root, problem *p, strbuf *err);
void problem_hidden_free(problem_hidden *h);

/* Looks a tensor up among inputs then outputs; returns its spec or NULL. */
const tensor_spec *problem_tensor(const problem *p, const char *name, int *is_output);
/* Looks a view of a packed input up by name; returns its spec (and the packed input's index
 * in p->inputs in *input) or NULL. */
const tensor_spec *problem_view(const problem *p, const char *name, int *input);
/* Whether the problem has a packed input. */
int problem_has_views(const problem *p);
/* A view's first element in its packed input and its element count under dims. */
int view_extent(const tensor_spec *view, const dimset *dims, int64_t *offset, int64_t *numel,
                strbuf *err);
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
