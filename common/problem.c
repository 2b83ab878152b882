/* problem: loads and validates kc-problem v1 manifests (see problem.h); the shared/ includes
 * of a reference are expanded by problem_shared.c. */
#include "common/problem.h"
#include "common/problem_internal.h"
#include "common/error.h"
#include "common/fsutil.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *dtype_names[KC_DTYPE_COUNT] = {"f32", "f16", "bf16", "f64",
                                                  "i32", "i64", "u8",  "bool"};
static const size_t dtype_sizes[KC_DTYPE_COUNT] = {4, 2, 2, 8, 4, 8, 1, 1};
static const char *dist_names[KC_DIST_COUNT] = {"none",    "normal",  "uniform",
                                                "randint", "sign",    "simplex",
                                                "uniform_fan_in", "constant", "bernoulli",
                                                "segments"};

const char *dtype_name(enum kc_dtype t) { return t < KC_DTYPE_COUNT ? dtype_names[t] : "?"; }
size_t dtype_size(enum kc_dtype t) { return t < KC_DTYPE_COUNT ? dtype_sizes[t] : 0; }
int dtype_is_float(enum kc_dtype t) { return t <= KC_F64; }
const char *dist_name(enum kc_dist d) { return d < KC_DIST_COUNT ? dist_names[d] : "?"; }

int dtype_parse(const char *s, enum kc_dtype *out)
{
    for (int i = 0; i < KC_DTYPE_COUNT; i++)
        if (strcmp(s, dtype_names[i]) == 0) {
            *out = (enum kc_dtype)i;
            return 0;
        }
    return -1;
}

/* ---- field access with precise errors ---- */


int problem_field_fail(struct problem_ctx *c, const char *field, const char *what)
{
    return kc_fail(c->err, "%s: field '%s': %s", c->file, field, what);
}

static int get_string(struct problem_ctx *c, json_t *obj, const char *key, const char *field, int required,
                      char **out)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (!required)
            return 0;
        return problem_field_fail(c, field, "missing (expected a string)");
    }
    if (!json_is_string(v))
        return problem_field_fail(c, field, "expected a string");
    *out = xstrdup(json_string_value(v));
    return 0;
}

static int get_number(struct problem_ctx *c, json_t *obj, const char *key, const char *field, int required,
                      double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (!required)
            return 0;
        return problem_field_fail(c, field, "missing (expected a number)");
    }
    if (!json_is_number(v))
        return problem_field_fail(c, field, "expected a number");
    *out = json_number_value(v);
    return 0;
}

int problem_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

static int valid_name(const char *s)
{
    if (!*s || !(problem_name_start(*s)))
        return 0;
    for (; *s; s++)
        if (!(problem_name_start(*s) || (*s >= '0' && *s <= '9')))
            return 0;
    return 1;
}

/* ---- dims ---- */

static int load_dimset(struct problem_ctx *c, json_t *obj, const char *field, dimset *out)
{
    if (!json_is_object(obj))
        return problem_field_fail(c, field, "expected an object of dim name -> positive integer");
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        strbuf f = STRBUF_INIT;
        sb_addf(&f, "%s.%s", field, key);
        int bad = !valid_name(key) ? problem_field_fail(c, f.buf, "dim names are identifiers")
                  : !json_is_integer(v) || json_integer_value(v) < 0 ||
                          json_integer_value(v) > KC_MAX_DIM_VALUE
                      ? problem_field_fail(c, f.buf, "expected an integer from 0 to 2^40")
                      : 0;
        if (!bad && dimset_set(out, key, json_integer_value(v)))
            bad = problem_field_fail(c, f.buf, "too many dims");
        sb_free(&f);
        if (bad)
            return -1;
    }
    return 0;
}

int problem_apply_derived(const problem *p, dimset *d, strbuf *why)
{
    for (int i = 0; i < p->n_derived; i++) {
        int64_t v;
        if (expr_eval(p->derived_expr[i], d, &v, why)) {
            strbuf m = STRBUF_INIT;
            sb_addf(&m, "derived.%s: %s", p->derived_name[i], sb_str(why));
            kc_fail(why, "%s", m.buf);
            sb_free(&m);
            return -1;
        }
        dimset_set(d, p->derived_name[i], v);
    }
    return 0;
}

static int apply_derived(struct problem_ctx *c, problem *p, dimset *d, const char *which)
{
    strbuf e = STRBUF_INIT;
    int rc = problem_apply_derived(p, d, &e);
    if (rc) {
        /* e reads "derived.NAME: why": the field, then the message */
        const char *colon = strstr(e.buf, ": ");
        strbuf f = STRBUF_INIT, m = STRBUF_INIT;
        sb_add(&f, e.buf, (size_t)(colon - e.buf));
        sb_addf(&m, "%s (with dims.%s)", colon + 2, which);
        problem_field_fail(c, f.buf, m.buf);
        sb_free(&f), sb_free(&m);
    }
    sb_free(&e);
    return rc;
}

static int same_names(const dimset *a, const dimset *b)
{
    if (a->n != b->n)
        return 0;
    int64_t v;
    for (int i = 0; i < a->n; i++)
        if (!dimset_get(b, a->names[i], &v))
            return 0;
    return 1;
}

static int load_dims(struct problem_ctx *c, json_t *root, problem *p)
{
    json_t *dims = json_object_get(root, "dims");
    if (!json_is_object(dims))
        return problem_field_fail(c, "dims", "missing (expected an object with default, small, alt)");
    json_t *derived = json_object_get(root, "derived");
    if (derived) {
        if (!json_is_object(derived))
            return problem_field_fail(c, "derived", "expected an object of name -> dim expression");
        const char *key;
        json_t *v;
        json_object_foreach(derived, key, v)
        {
            if (!json_is_string(v) || !valid_name(key) || p->n_derived >= KC_MAX_DERIVED)
                return problem_field_fail(c, "derived", "expected identifier -> expression string");
            p->derived_name[p->n_derived] = xstrdup(key);
            p->derived_expr[p->n_derived++] = xstrdup(json_string_value(v));
        }
    }
    if (load_dimset(c, json_object_get(dims, "default"), "dims.default", &p->dims_default) ||
        load_dimset(c, json_object_get(dims, "small"), "dims.small", &p->dims_small))
        return -1;
    if (!same_names(&p->dims_default, &p->dims_small))
        return problem_field_fail(c, "dims.small", "must name exactly the dims of dims.default");
    json_t *alt = json_object_get(dims, "alt");
    if (!json_is_array(alt) || json_array_size(alt) == 0 || json_array_size(alt) > KC_MAX_ALT)
        return problem_field_fail(c, "dims.alt", "expected an array of 1 to 8 dim sets");
    for (size_t i = 0; i < json_array_size(alt); i++) {
        strbuf f = STRBUF_INIT;
        sb_addf(&f, "dims.alt[%zu]", i);
        int rc = load_dimset(c, json_array_get(alt, i), f.buf, &p->dims_alt[i]);
        if (!rc && !same_names(&p->dims_default, &p->dims_alt[i]))
            rc = problem_field_fail(c, f.buf, "must name exactly the dims of dims.default");
        if (!rc)
            rc = apply_derived(c, p, &p->dims_alt[i], f.buf + 5);
        sb_free(&f);
        if (rc)
            return -1;
        p->n_alt++;
    }
    return apply_derived(c, p, &p->dims_default, "default") ||
           apply_derived(c, p, &p->dims_small, "small");
}

/* ---- what a dims set must satisfy: shared by the loader (fixed sets) and the hidden draw ---- */

static int extent_fault(const char *expr, const dimset *d, strbuf *why)
{
    int64_t v;
    if (expr_eval(expr, d, &v, why))
        return -1;
    return v < 0 ? kc_fail(why, "negative extent %s = %lld", expr, (long long)v) : 0;
}

/* The tensor's bytes under d (numel * element size), within KC_MAX_TENSOR_BYTES. */
static int tensor_bytes_fault(const tensor_spec *t, const dimset *d, int64_t *bytes, strbuf *why)
{
    int64_t numel;
    if (tensor_numel(t, d, &numel, why))
        return -1;
    if (__builtin_mul_overflow(numel, (int64_t)dtype_size(t->dtype), bytes) ||
        *bytes > KC_MAX_TENSOR_BYTES)
        return kc_fail(why, "tensor '%s' is larger than 64 GiB", t->name);
    return 0;
}

static int fan_in_fault(const tensor_spec *t, const dimset *d, strbuf *why)
{
    int64_t v;
    if (expr_eval(t->fan_in_expr, d, &v, why))
        return -1;
    return v <= 0 ? kc_fail(why, "tensor '%s': fan_in %lld is not positive", t->name, (long long)v)
                  : 0;
}

static int segments_fault(const tensor_spec *t, const dimset *d, strbuf *why)
{
    int64_t v;
    if (expr_eval(t->hi_expr, d, &v, why))
        return -1;
    return v < 1 || v > KC_MAX_SEGMENTS
               ? kc_fail(why, "tensor '%s': segments count %lld outside 1..%d", t->name,
                         (long long)v, KC_MAX_SEGMENTS)
               : 0;
}

/* Every check of one tensor under d; adds its bytes to *io_bytes. */
static int tensor_fault(const tensor_spec *t, const dimset *d, int is_input, int64_t *io_bytes,
                        strbuf *why)
{
    int64_t bytes, v;
    for (int i = 0; i < t->rank; i++)
        if (extent_fault(t->shape[i], d, why)) {
            strbuf m = STRBUF_INIT;
            sb_addf(&m, "tensor '%s' shape[%d]: %s", t->name, i, sb_str(why));
            kc_fail(why, "%s", m.buf);
            sb_free(&m);
            return -1;
        }
    if (tensor_bytes_fault(t, d, &bytes, why))
        return -1;
    *io_bytes += bytes; /* at most 32 tensors of 64 GiB: no overflow */
    if (!is_input)
        return 0;
    for (int k = 0; k < t->n_views; k++) { /* their bytes are the packed input's */
        int64_t view_bytes = 0;
        if (tensor_fault(&t->views[k], d, 1, &view_bytes, why))
            return -1;
    }
    if (t->dist == KC_DIST_RANDINT &&
        (expr_eval(t->lo_expr, d, &v, why) || expr_eval(t->hi_expr, d, &v, why)))
        return -1;
    if (t->dist == KC_DIST_UNIFORM_FAN_IN && fan_in_fault(t, d, why))
        return -1;
    if (t->dist == KC_DIST_SEGMENTS && segments_fault(t, d, why))
        return -1;
    return 0;
}

int problem_dims_fault(const problem *p, const dimset *d, int64_t *io_bytes, strbuf *why)
{
    int64_t total = 0, v;
    for (int i = 0; i < p->n_inputs; i++)
        if (tensor_fault(&p->inputs[i], d, 1, &total, why))
            return -1;
    for (int i = 0; i < p->n_outputs; i++)
        if (tensor_fault(&p->outputs[i], d, 0, &total, why))
            return -1;
    if (expr_eval(p->bytes_expr, d, &v, why) || expr_eval(p->flops_expr, d, &v, why))
        return -1;
    if (io_bytes)
        *io_bytes = total;
    return 0;
}

/* ---- tensors and params ---- */

static int dim_sets(const problem *p, const dimset **sets)
{
    int n = 0;
    sets[n++] = &p->dims_default;
    sets[n++] = &p->dims_small;
    for (int i = 0; i < p->n_alt; i++)
        sets[n++] = &p->dims_alt[i];
    return n;
}

/* Evaluates expr under every dim set. */
static int check_expr(struct problem_ctx *c, const problem *p, const char *expr, const char *field)
{
    int64_t v;
    strbuf e = STRBUF_INIT;
    const dimset *sets[2 + KC_MAX_ALT];
    int n = dim_sets(p, sets), rc = 0;
    for (int i = 0; i < n && !rc; i++)
        if (expr_eval(expr, sets[i], &v, &e))
            rc = problem_field_fail(c, field, e.buf);
    sb_free(&e);
    return rc;
}

/* Runs a fault check on every dim set; the first failure becomes an error on field. */
typedef int (*set_check)(const tensor_spec *t, const char *expr, const dimset *d, strbuf *why);
static int check_every_set(struct problem_ctx *c, const problem *p, const tensor_spec *t,
                           const char *expr, set_check check, const char *field,
                           const char *what)
{
    const dimset *sets[2 + KC_MAX_ALT];
    int n = dim_sets(p, sets), rc = 0;
    strbuf why = STRBUF_INIT;
    for (int i = 0; i < n && !rc; i++)
        if (check(t, expr, sets[i], &why))
            rc = problem_field_fail(c, field, what ? what : why.buf);
    sb_free(&why);
    return rc;
}

static int extent_check(const tensor_spec *t, const char *expr, const dimset *d, strbuf *why)
{
    (void)t;
    return extent_fault(expr, d, why);
}

static int bytes_check(const tensor_spec *t, const char *expr, const dimset *d, strbuf *why)
{
    (void)expr;
    int64_t bytes;
    return tensor_bytes_fault(t, d, &bytes, why);
}

static int fan_in_check(const tensor_spec *t, const char *expr, const dimset *d, strbuf *why)
{
    (void)expr;
    return fan_in_fault(t, d, why);
}

static int segments_check(const tensor_spec *t, const char *expr, const dimset *d, strbuf *why)
{
    (void)expr;
    return segments_fault(t, d, why);
}

/* uniform_fan_in: {"fan_in": "CI*K*K"}, an expression positive in every dims set. */
static int load_fan_in(struct problem_ctx *c, const problem *p, json_t *init, const char *field,
                       tensor_spec *t)
{
    json_t *fi = json_object_get(init, "fan_in");
    if (!json_is_string(fi) && !json_is_integer(fi))
        return problem_field_fail(c, field, "uniform_fan_in needs fan_in (an integer or dim expression)");
    strbuf tmp = STRBUF_INIT;
    if (json_is_string(fi))
        sb_adds(&tmp, json_string_value(fi));
    else
        sb_addf(&tmp, "%lld", (long long)json_integer_value(fi));
    t->fan_in_expr = sb_detach(&tmp);
    return check_expr(c, p, t->fan_in_expr, field) ||
           check_every_set(c, p, t, NULL, fan_in_check, field,
                           "fan_in must be positive in every dims set");
}

/* segments: {"count": N} (an integer or dim expression, 1..KC_MAX_SEGMENTS in every dims set)
 * for an integer tensor of rank >= 1. Each row along the last dim (length L) packs N + 1
 * documents of lengths DC, 2*DC, ..., N*DC and DR, where DC = L / (N*(N+1)/2) and DR = L -
 * DC*N*(N+1)/2, in an order drawn per row; positions get their document's id, ids number the
 * non-empty documents 0, 1, 2, ... along the row (sorted, contiguous runs). The lengths, and so
 * the number of same-document pairs, do not depend on the seed; the boundaries do. Stored as
 * lo_expr = the last dim's expression, hi_expr = count, which kc_fill receives as lo and hi. */
static int load_segments(struct problem_ctx *c, const problem *p, json_t *init, const char *field,
                         tensor_spec *t)
{
    json_t *n = json_object_get(init, "count");
    if (!json_is_string(n) && !json_is_integer(n))
        return problem_field_fail(c, field, "segments needs count (an integer or dim expression)");
    if (t->rank < 1 || (t->dtype != KC_I32 && t->dtype != KC_I64))
        return problem_field_fail(c, field, "segments needs an i32 or i64 tensor of rank >= 1");
    strbuf tmp = STRBUF_INIT;
    if (json_is_string(n))
        sb_adds(&tmp, json_string_value(n));
    else
        sb_addf(&tmp, "%lld", (long long)json_integer_value(n));
    t->hi_expr = sb_detach(&tmp);
    t->lo_expr = xstrdup(t->shape[t->rank - 1]);
    return check_expr(c, p, t->hi_expr, field) ||
           check_every_set(c, p, t, NULL, segments_check, field,
                           "segments count must lie in 1..63 in every dims set");
}

/* The parameters of dist (the init object's "dist") into t->dist, a, b and expressions. */
static int load_dist(struct problem_ctx *c, const problem *p, json_t *init, const char *dist,
                     const char *field, tensor_spec *t)
{
    int rc = 0;
    t->dist = KC_DIST_NONE;
    for (int i = 1; i < KC_DIST_COUNT; i++)
        if (strcmp(dist, dist_names[i]) == 0)
            t->dist = (enum kc_dist)i;
    switch (t->dist) {
    case KC_DIST_NORMAL:
        t->a = 0, t->b = 1;
        rc = get_number(c, init, "mean", field, 0, &t->a) ||
             get_number(c, init, "std", field, 0, &t->b);
        break;
    case KC_DIST_UNIFORM:
        t->a = 0, t->b = 1;
        rc = get_number(c, init, "lo", field, 0, &t->a) || get_number(c, init, "hi", field, 0, &t->b);
        if (!rc && !(t->a < t->b))
            rc = problem_field_fail(c, field, "uniform needs lo < hi");
        break;
    case KC_DIST_RANDINT: {
        json_t *lo = json_object_get(init, "lo"), *hi = json_object_get(init, "hi");
        if (!lo || !hi) {
            rc = problem_field_fail(c, field, "randint needs lo and hi (integers or dim expressions)");
            break;
        }
        if ((!json_is_string(lo) && !json_is_integer(lo)) ||
            (!json_is_string(hi) && !json_is_integer(hi))) {
            rc = problem_field_fail(c, field, "randint lo and hi must be integers or dim expressions");
            break;
        }
        t->lo_expr = json_is_string(lo) ? xstrdup(json_string_value(lo)) : NULL;
        t->hi_expr = json_is_string(hi) ? xstrdup(json_string_value(hi)) : NULL;
        strbuf tmp = STRBUF_INIT;
        if (!t->lo_expr) {
            sb_addf(&tmp, "%lld", (long long)json_integer_value(lo));
            t->lo_expr = sb_detach(&tmp);
        }
        if (!t->hi_expr) {
            sb_addf(&tmp, "%lld", (long long)json_integer_value(hi));
            t->hi_expr = sb_detach(&tmp);
        }
        rc = check_expr(c, p, t->lo_expr, field) || check_expr(c, p, t->hi_expr, field);
        if (!rc && t->dtype != KC_I32 && t->dtype != KC_I64 && t->dtype != KC_U8)
            rc = problem_field_fail(c, field, "randint needs an integer dtype (i32, i64, u8)");
        break;
    }
    case KC_DIST_SIGN:
        break;
    case KC_DIST_SIMPLEX:
        t->b = 1;
        rc = get_number(c, init, "std", field, 0, &t->b);
        break;
    case KC_DIST_UNIFORM_FAN_IN:
        rc = load_fan_in(c, p, init, field, t);
        break;
    case KC_DIST_CONSTANT:
        rc = get_number(c, init, "value", field, 1, &t->a);
        break;
    case KC_DIST_BERNOULLI:
        rc = get_number(c, init, "p", field, 1, &t->a);
        if (!rc && !(t->a >= 0 && t->a < 1))
            rc = problem_field_fail(c, field, "bernoulli needs 0 <= p < 1 (the probability of a zero)");
        t->b = rc ? 0 : 1.0 / (1.0 - t->a);
        break;
    case KC_DIST_SEGMENTS:
        rc = load_segments(c, p, init, field, t);
        break;
    default:
        rc = problem_field_fail(c, field, "dist must be normal, uniform, randint, sign, simplex, "
                                  "uniform_fan_in, constant, bernoulli or segments");
    }
    return rc;
}

/* "vary" of a constant init: {"dist": ..., params} in any form but constant itself; forms that
 * take dim expressions (randint, segments, uniform_fan_in) are refused too. */
static int load_vary(struct problem_ctx *c, const problem *p, json_t *init, const char *field,
                     tensor_spec *t)
{
    json_t *vary = json_object_get(init, "vary");
    if (!vary)
        return 0;
    strbuf f = STRBUF_INIT;
    sb_addf(&f, "%s.vary", field);
    tensor_spec v = {.name = t->name, .dtype = t->dtype};
    char *dist = NULL;
    int rc = 0;
    if (t->dist != KC_DIST_CONSTANT)
        rc = problem_field_fail(c, f.buf, "only a constant init takes vary");
    else if (!json_is_object(vary))
        rc = problem_field_fail(c, f.buf, "expected an init object {\"dist\": ...}");
    else if (get_string(c, vary, "dist", f.buf, 1, &dist))
        rc = -1;
    else if (strcmp(dist, "normal") && strcmp(dist, "uniform") && strcmp(dist, "sign") &&
             strcmp(dist, "simplex") && strcmp(dist, "bernoulli"))
        rc = problem_field_fail(c, f.buf, "vary takes dist normal, uniform, sign, simplex or bernoulli");
    else
        rc = load_dist(c, p, vary, dist, f.buf, &v);
    if (!rc && json_object_get(vary, "vary"))
        rc = problem_field_fail(c, f.buf, "vary cannot nest");
    if (!rc)
        t->vary_dist = v.dist, t->vary_a = v.a, t->vary_b = v.b;
    free(dist);
    sb_free(&f);
    return rc;
}

static int load_init(struct problem_ctx *c, const problem *p, json_t *init, const char *field,
                     tensor_spec *t)
{
    strbuf f = STRBUF_INIT;
    sb_addf(&f, "%s.init", field);
    int rc = 0;
    char *dist = NULL;
    if (!json_is_object(init) || get_string(c, init, "dist", f.buf, 1, &dist)) {
        rc = json_is_object(init) ? -1 : problem_field_fail(c, f.buf, "missing (expected {\"dist\": ...})");
        goto out;
    }
    rc = load_dist(c, p, init, dist, f.buf, t) || load_vary(c, p, init, f.buf, t);
    if (!rc && t->dist != KC_DIST_RANDINT && t->dist != KC_DIST_SEGMENTS &&
        !dtype_is_float(t->dtype))
        rc = problem_field_fail(c, f.buf, "integer tensors take dist randint or segments");
out:
    free(dist);
    sb_free(&f);
    return rc;
}

/* "shape": up to 8 dim expressions, each evaluating to an extent >= 0 under every dims set. */
static int load_shape(struct problem_ctx *c, const problem *p, json_t *obj, const char *field,
                      tensor_spec *t)
{
    json_t *shape = json_object_get(obj, "shape");
    strbuf f = STRBUF_INIT;
    sb_addf(&f, "%s.shape", field);
    int bad = 0;
    if (!json_is_array(shape) || json_array_size(shape) > KC_MAX_RANK)
        bad = problem_field_fail(c, f.buf, "expected an array of up to 8 dim expressions");
    for (size_t i = 0; !bad && i < json_array_size(shape); i++) {
        json_t *d = json_array_get(shape, i);
        strbuf fi = STRBUF_INIT;
        sb_addf(&fi, "%s[%zu]", f.buf, i);
        if (json_is_integer(d)) {
            strbuf num = STRBUF_INIT;
            sb_addf(&num, "%lld", (long long)json_integer_value(d));
            t->shape[t->rank++] = sb_detach(&num);
        } else if (json_is_string(d)) {
            t->shape[t->rank++] = xstrdup(json_string_value(d));
        } else {
            bad = problem_field_fail(c, fi.buf, "expected a dim expression");
        }
        if (!bad)
            bad = check_expr(c, p, t->shape[t->rank - 1], fi.buf) ||
                  check_every_set(c, p, t, t->shape[t->rank - 1], extent_check, fi.buf,
                                  "negative extent under one of the dim sets");
        sb_free(&fi);
    }
    sb_free(&f);
    return bad ? -1 : 0;
}

/* ---- packed inputs ("views") ---- */

/* Whether expr is a constant (evaluates without dims); its value in *v. */
static int constant_expr(const char *expr, int64_t *v)
{
    dimset none = {0};
    strbuf e = STRBUF_INIT;
    int rc = expr_eval(expr, &none, v, &e);
    sb_free(&e);
    return rc == 0;
}

/* A view's element count split as konst * (rest): konst the product of its constant extents,
 * rest the product of the others ("(E1)*(E2)", empty when the shape is constant). 0 on success,
 * -1 when the constant product overflows. */
static int view_size_parts(const tensor_spec *v, int64_t *konst, strbuf *rest)
{
    int64_t n = 1, e;
    sb_reset(rest);
    for (int i = 0; i < v->rank; i++) {
        if (constant_expr(v->shape[i], &e)) {
            if (__builtin_mul_overflow(n, e, &n))
                return -1;
        } else {
            sb_addf(rest, "%s(%s)", rest->len ? "*" : "", v->shape[i]);
        }
    }
    *konst = n;
    return 0;
}

/* The layout's running sum: a literal, terms FACTOR*COEF grouped by factor (views whose size is
 * an aligned constant times extents over dims: a stack of L-1 layers adds (L-1)*SIZE), and
 * cdiv terms for the other sizes over dims. */
struct layout_sum {
    int64_t konst;
    int n;
    char **factor;
    int64_t *coef;
    strbuf cdivs;
};

static void layout_sum_render(const struct layout_sum *ls, strbuf *out)
{
    sb_reset(out);
    for (int i = 0; i < ls->n; i++)
        if (ls->coef[i])
            sb_addf(out, "%s%s*%lld", out->len ? " + " : "", ls->factor[i], (long long)ls->coef[i]);
    if (ls->cdivs.len)
        sb_addf(out, "%s%s", out->len ? " + " : "", ls->cdivs.buf);
    if (ls->konst || !out->len)
        sb_addf(out, "%s%lld", out->len ? " + " : "", (long long)ls->konst);
}

/* The views in order, each starting at a multiple of KC_VIEW_ALIGN_BYTES: every view's
 * view_offset and the packed input's one dim (the padded total), as dim expressions. A
 * constant size adds its padded value to one literal; a size konst * (extents over dims) with
 * konst a multiple of the alignment adds konst to the coefficient of those extents (no padding
 * is needed); any other size over dims adds a term cdiv(NUMEL, A)*A (A: the alignment in
 * elements). */
static int layout_views(struct problem_ctx *c, tensor_spec *t, const char *field)
{
    const int64_t align = KC_VIEW_ALIGN_BYTES / (int64_t)dtype_size(t->dtype);
    struct layout_sum ls = {0};
    ls.factor = xcalloc((size_t)t->n_views + 1, sizeof(*ls.factor));
    ls.coef = xcalloc((size_t)t->n_views + 1, sizeof(*ls.coef));
    strbuf rest = STRBUF_INIT, off = STRBUF_INIT;
    int rc = 0;
    for (int k = 0; k <= t->n_views && !rc; k++) {
        layout_sum_render(&ls, &off);
        if (off.len > KC_EXPR_MAX_LEN) {
            strbuf f = STRBUF_INIT, m = STRBUF_INIT;
            sb_addf(&f, "%s.views[%d]", field, k < t->n_views ? k : t->n_views - 1);
            sb_addf(&m, "the offset of this view is an expression of %zu bytes (at most %d): put "
                        "views whose size depends on dims after the others, or stack repeated "
                        "layers into one view", off.len, KC_EXPR_MAX_LEN);
            rc = problem_field_fail(c, f.buf, m.buf);
            sb_free(&f), sb_free(&m);
            break;
        }
        if (k == t->n_views) {
            t->shape[0] = sb_detach(&off);
            t->rank = 1;
            break;
        }
        t->views[k].view_offset = xstrdup(off.buf);
        int64_t konst;
        if (view_size_parts(&t->views[k], &konst, &rest) || konst > KC_MAX_TENSOR_BYTES) {
            strbuf f = STRBUF_INIT;
            sb_addf(&f, "%s.views[%d]", field, k);
            rc = problem_field_fail(c, f.buf, "the view is larger than 64 GiB");
            sb_free(&f);
        } else if (!rest.len) {
            int64_t padded = (konst + align - 1) / align * align;
            if (__builtin_add_overflow(ls.konst, padded, &ls.konst)) {
                strbuf f = STRBUF_INIT;
                sb_addf(&f, "%s.views[%d]", field, k);
                rc = problem_field_fail(c, f.buf, "the packed input is larger than 64 GiB");
                sb_free(&f);
            }
        } else if (konst % align == 0) {
            int i = 0;
            while (i < ls.n && strcmp(ls.factor[i], rest.buf))
                i++;
            if (i == ls.n)
                ls.factor[ls.n++] = xstrdup(rest.buf);
            ls.coef[i] += konst; /* at most n_views * 64 GiB */
        } else {
            sb_addf(&ls.cdivs, "%scdiv(", ls.cdivs.len ? " + " : "");
            if (konst != 1)
                sb_addf(&ls.cdivs, "%lld*", (long long)konst);
            sb_addf(&ls.cdivs, "%s, %lld)*%lld", rest.buf, (long long)align, (long long)align);
        }
    }
    for (int i = 0; i < ls.n; i++)
        free(ls.factor[i]);
    free(ls.factor), free(ls.coef);
    sb_free(&ls.cdivs), sb_free(&rest), sb_free(&off);
    return rc;
}

static int load_init(struct problem_ctx *c, const problem *p, json_t *init, const char *field,
                     tensor_spec *t);

/* One view: {name, shape, init, torch}; its dtype is the packed input's. */
static int load_view(struct problem_ctx *c, const problem *p, json_t *obj, const char *field,
                     const tensor_spec *packed, tensor_spec *v)
{
    static const char *const keys[] = {"name", "shape", "init", "torch", NULL};
    v->dtype = packed->dtype;
    if (!json_is_object(obj))
        return problem_field_fail(c, field, "expected a view {name, shape, init, torch}");
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val)
    {
        int known = 0;
        for (int i = 0; keys[i]; i++)
            known |= strcmp(key, keys[i]) == 0;
        if (!known) {
            strbuf m = STRBUF_INIT;
            sb_addf(&m, "unknown key '%s' (a view takes name, shape, init, torch)", key);
            int rc = problem_field_fail(c, field, m.buf);
            sb_free(&m);
            return rc;
        }
    }
    strbuf f = STRBUF_INIT;
    sb_addf(&f, "%s.name", field);
    int rc = get_string(c, obj, "name", f.buf, 1, &v->name);
    if (!rc && !valid_name(v->name))
        rc = problem_field_fail(c, f.buf, "view names are identifiers");
    sb_reset(&f), sb_addf(&f, "%s.torch", field);
    if (!rc)
        rc = get_string(c, obj, "torch", f.buf, 0, &v->torch_key);
    if (!rc)
        rc = load_shape(c, p, obj, field, v) || load_init(c, p, json_object_get(obj, "init"), field, v);
    sb_reset(&f), sb_addf(&f, "%s.init", field);
    if (!rc && v->dist == KC_DIST_SIMPLEX)
        rc = problem_field_fail(c, f.buf, "a view takes normal, uniform, uniform_fan_in, sign, "
                                          "constant or bernoulli");
    sb_free(&f);
    return rc;
}

/* "views": the input is a packed buffer of the views, in order (its shape is computed). */
static int load_views(struct problem_ctx *c, const problem *p, json_t *obj, const char *field,
                      tensor_spec *t)
{
    json_t *arr = json_object_get(obj, "views");
    strbuf f = STRBUF_INIT;
    sb_addf(&f, "%s.views", field);
    int rc = 0;
    if (json_object_get(obj, "shape") || json_object_get(obj, "init"))
        rc = problem_field_fail(c, field, "a packed input (views) takes no shape or init: its "
                                          "shape is computed and each view has its init");
    else if (!json_is_array(arr) || json_array_size(arr) == 0 ||
             json_array_size(arr) > KC_MAX_VIEWS)
        rc = problem_field_fail(c, f.buf, "expected an array of 1 to 1024 views");
    else if (!dtype_is_float(t->dtype))
        rc = problem_field_fail(c, field, "a packed input is a float tensor (f32, f16, bf16, f64)");
    if (!rc) {
        t->views = xcalloc(json_array_size(arr), sizeof(*t->views));
        for (size_t i = 0; i < json_array_size(arr) && !rc; i++) {
            strbuf fi = STRBUF_INIT;
            sb_addf(&fi, "%s[%zu]", f.buf, i);
            t->n_views++; /* counted before it loads: freed when it fails */
            rc = load_view(c, p, json_array_get(arr, i), fi.buf, t, &t->views[i]);
            sb_free(&fi);
        }
    }
    if (!rc)
        rc = layout_views(c, t, field);
    sb_free(&f);
    return rc;
}

static int load_tensor(struct problem_ctx *c, problem *p, json_t *obj, const char *field, int is_input,
                       tensor_spec *t)
{
    char *dtype = NULL;
    strbuf f = STRBUF_INIT;
    int rc = -1;
    if (!json_is_object(obj)) {
        problem_field_fail(c, field, "expected an object with name, dtype, shape");
        goto out;
    }
    sb_addf(&f, "%s.name", field);
    if (get_string(c, obj, "name", f.buf, 1, &t->name))
        goto out;
    if (!valid_name(t->name)) {
        problem_field_fail(c, f.buf, "tensor names are identifiers");
        goto out;
    }
    sb_reset(&f), sb_addf(&f, "%s.dtype", field);
    if (get_string(c, obj, "dtype", f.buf, 1, &dtype))
        goto out;
    if (dtype_parse(dtype, &t->dtype)) {
        problem_field_fail(c, f.buf, "expected one of f32, f16, bf16, f64, i32, i64, u8, bool");
        goto out;
    }
    if (json_object_get(obj, "views")) {
        if (!is_input) {
            problem_field_fail(c, field, "only inputs take views (a packed input)");
            goto out;
        }
        if (load_views(c, p, obj, field, t) ||
            check_every_set(c, p, t, NULL, bytes_check, field,
                            "the packed input is larger than 64 GiB under one of the dim sets"))
            goto out;
        rc = 0;
        goto out;
    }
    if (load_shape(c, p, obj, field, t))
        goto out;
    sb_reset(&f), sb_addf(&f, "%s.shape", field);
    if (check_every_set(c, p, t, NULL, bytes_check, f.buf,
                        "the tensor is larger than 64 GiB under one of the dim sets"))
        goto out;
    if (is_input) {
        if (load_init(c, p, json_object_get(obj, "init"), field, t))
            goto out;
    } else if (json_object_get(obj, "init")) {
        problem_field_fail(c, field, "outputs take no init (they are poisoned by the harness)");
        goto out;
    }
    rc = 0;
out:
    free(dtype);
    sb_free(&f);
    return rc;
}

static int load_tensor_list(struct problem_ctx *c, problem *p, json_t *root, const char *key, int is_input)
{
    json_t *arr = json_object_get(root, key);
    tensor_spec *list = is_input ? p->inputs : p->outputs;
    int *n = is_input ? &p->n_inputs : &p->n_outputs;
    if (!json_is_array(arr) || json_array_size(arr) == 0 || json_array_size(arr) > KC_MAX_TENSORS)
        return problem_field_fail(c, key, "expected an array of 1 to 16 tensors");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        strbuf f = STRBUF_INIT;
        sb_addf(&f, "%s[%zu]", key, i);
        int rc = load_tensor(c, p, json_array_get(arr, i), f.buf, is_input, &list[i]);
        sb_free(&f);
        (*n)++;
        if (rc)
            return -1;
    }
    return 0;
}

static int check_param_keys(struct problem_ctx *c, json_t *o, const char *field)
{
    static const char *const keys[] = {"name", "dtype", "value", "vary", "vary_why"};
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
    {
        int known = 0;
        for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
            known |= strcmp(key, keys[i]) == 0;
        if (!known) {
            strbuf m = STRBUF_INIT;
            sb_addf(&m, "unknown key '%s' (expected name, dtype, value, vary, vary_why)", key);
            problem_field_fail(c, field, m.buf);
            sb_free(&m);
            return -1;
        }
    }
    return 0;
}

/* "params": [{name, dtype, value, vary, vary_why}] (vary: problem_values.c) */
static int load_params(struct problem_ctx *c, problem *p, json_t *root)
{
    json_t *arr = json_object_get(root, "params");
    if (!arr)
        return 0;
    if (!json_is_array(arr) || json_array_size(arr) > KC_MAX_PARAMS)
        return problem_field_fail(c, "params", "expected an array of {name, dtype, value}");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *o = json_array_get(arr, i);
        param_spec *ps = &p->params[p->n_params++];
        strbuf f = STRBUF_INIT;
        char *dtype = NULL;
        sb_addf(&f, "params[%zu]", i);
        int rc = !json_is_object(o) ? problem_field_fail(c, f.buf, "expected {name, dtype, value}") : 0;
        if (!rc)
            rc = get_string(c, o, "name", f.buf, 1, &ps->name) ||
                 get_string(c, o, "dtype", f.buf, 1, &dtype) ||
                 get_number(c, o, "value", f.buf, 1, &ps->value);
        if (!rc && !valid_name(ps->name))
            rc = problem_field_fail(c, f.buf, "param names are identifiers");
        if (!rc && (dtype_parse(dtype, &ps->dtype) || ps->dtype == KC_F16 || ps->dtype == KC_BF16))
            rc = problem_field_fail(c, f.buf, "param dtype must be f32, f64, i32 or i64");
        if (!rc)
            rc = check_param_keys(c, o, f.buf) || problem_load_param_vary(c, o, f.buf, ps);
        free(dtype);
        sb_free(&f);
        if (rc)
            return -1;
    }
    return 0;
}

static int check_unique_names(struct problem_ctx *c, const problem *p)
{
    int cap = 2 * KC_MAX_TENSORS + KC_MAX_PARAMS + KC_MAX_DIMS, n = 0;
    for (int i = 0; i < p->n_inputs; i++)
        cap += p->inputs[i].n_views;
    const char **names = xcalloc((size_t)cap, sizeof(*names));
    for (int i = 0; i < p->n_inputs; i++)
        names[n++] = p->inputs[i].name;
    for (int i = 0; i < p->n_outputs; i++)
        names[n++] = p->outputs[i].name;
    for (int i = 0; i < p->n_params; i++)
        names[n++] = p->params[i].name;
    for (int i = 0; i < p->dims_default.n; i++)
        names[n++] = p->dims_default.names[i];
    for (int i = 0; i < p->n_inputs; i++)
        for (int k = 0; k < p->inputs[i].n_views; k++)
            names[n++] = p->inputs[i].views[k].name;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        for (int j = i + 1; j < n && !rc; j++)
            if (strcmp(names[i], names[j]) == 0) {
                strbuf m = STRBUF_INIT;
                sb_addf(&m, "name '%s' is used twice among tensors, views, params and dims",
                        names[i]);
                rc = problem_field_fail(c, "inputs/outputs/params/dims", m.buf);
                sb_free(&m);
            }
    free(names);
    return rc;
}

/* ---- top level ---- */

static const char *known_fields[] = {
    "format",    "id",      "title",    "level",  "kernelbench", "description", "torch_reference",
    "dims",      "derived", "inputs",   "outputs", "params",     "tolerance",   "bytes",
    "flops",     "reference", "degenerate", "hidden", "values", "torch_model", NULL};

static int check_known_fields(struct problem_ctx *c, json_t *root)
{
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        int ok = 0;
        for (int i = 0; known_fields[i]; i++)
            ok |= strcmp(key, known_fields[i]) == 0;
        if (!ok)
            return problem_field_fail(c, key, "unknown field (see schemas/problem.schema.json)");
    }
    return 0;
}

static int load_header(struct problem_ctx *c, json_t *root, problem *p)
{
    char *format = NULL;
    if (get_string(c, root, "format", "format", 1, &format))
        return -1;
    int bad = strcmp(format, "kc-problem v1") != 0;
    free(format);
    if (bad)
        return problem_field_fail(c, "format", "expected \"kc-problem v1\"");
    if (get_string(c, root, "id", "id", 1, &p->id) ||
        get_string(c, root, "title", "title", 1, &p->title) ||
        get_string(c, root, "description", "description", 1, &p->description) ||
        get_string(c, root, "torch_reference", "torch_reference", 1, &p->torch_reference))
        return -1;
    const char *slash = strchr(p->id, '/');
    if (!slash || slash == p->id || !slash[1] || strchr(slash + 1, '/'))
        return problem_field_fail(c, "id", "expected '<suite>/<name>', e.g. level1/019_relu");
    p->suite = xstrndup(p->id, (size_t)(slash - p->id));
    json_t *level = json_object_get(root, "level");
    if (!json_is_integer(level) || json_integer_value(level) < 1 || json_integer_value(level) > 99)
        return problem_field_fail(c, "level", "expected an integer from 1 to 99");
    p->level = (int)json_integer_value(level);
    json_t *kb = json_object_get(root, "kernelbench");
    if (kb) {
        json_t *pid = json_object_get(kb, "problem_id");
        if (!json_is_integer(pid) || json_integer_value(pid) < 0 || json_integer_value(pid) > 1000000)
            return problem_field_fail(c, "kernelbench.problem_id", "expected an integer from 0 to 10^6");
        p->kernelbench_id = (int)json_integer_value(pid);
    }
    return 0;
}

static int load_tolerance(struct problem_ctx *c, json_t *root, problem *p)
{
    json_t *tol = json_object_get(root, "tolerance");
    if (!json_is_object(tol))
        return problem_field_fail(c, "tolerance", "missing (expected {atol, rtol, why})");
    if (get_number(c, tol, "atol", "tolerance.atol", 1, &p->atol) ||
        get_number(c, tol, "rtol", "tolerance.rtol", 1, &p->rtol) ||
        get_string(c, tol, "why", "tolerance.why", 1, &p->tolerance_why))
        return -1;
    if (p->atol < 0 || p->rtol < 0 || p->atol > 1 || p->rtol > 1)
        return problem_field_fail(c, "tolerance", "atol and rtol must lie in [0, 1]");
    return 0;
}

static int load_reference(struct problem_ctx *c, json_t *root, problem *p)
{
    char *ref = NULL;
    if (get_string(c, root, "reference", "reference", 1, &ref))
        return -1;
    if (strchr(ref, '/')) {
        free(ref);
        return problem_field_fail(c, "reference", "expected a file name beside the manifest");
    }
    strbuf dir = STRBUF_INIT, path = STRBUF_INIT, e = STRBUF_INIT;
    path_dirname(p->manifest_path, &dir);
    path_join(&path, dir.buf, ref);
    free(ref);
    p->reference_path = sb_detach(&path);
    int rc = read_file(p->reference_path, &p->reference_source, &e);
    if (rc)
        problem_field_fail(c, "reference", e.buf);
    else
        rc = problem_expand_shared_includes(c, dir.buf, p->reference_path, &p->reference_source);
    sb_free(&dir), sb_free(&e);
    return rc;
}

/* "torch_model" (level 3): how the tools run KernelBench's own source on the harness's inputs
 * (schemas/problem.schema.json). The verifier does not run Python; the loader checks the form
 * and that forward names inputs, which are not packed (a packed input reaches the Model through
 * its views' torch keys). */
static int load_torch_model(struct problem_ctx *c, json_t *root, const problem *p)
{
    json_t *tm = json_object_get(root, "torch_model");
    if (!tm)
        return 0;
    if (!json_is_object(tm))
        return problem_field_fail(c, "torch_model", "expected {globals, init, forward, outputs}");
    const char *key;
    json_t *v;
    json_object_foreach(tm, key, v)
    {
        int ok = !strcmp(key, "globals") ? json_is_object(v)
                 : !strcmp(key, "init") || !strcmp(key, "forward") ? json_is_array(v)
                 : !strcmp(key, "outputs") ? json_is_string(v) : -1;
        if (ok == -1)
            return problem_field_fail(c, "torch_model", "unknown key (expected globals, init, "
                                                        "forward, outputs)");
        if (!ok)
            return problem_field_fail(c, "torch_model", "globals is an object of name -> "
                                      "expression, init and forward arrays, outputs a string");
    }
    json_t *fw = json_object_get(tm, "forward");
    if (!json_object_get(tm, "init") || !fw)
        return problem_field_fail(c, "torch_model", "needs init and forward");
    size_t i;
    json_array_foreach(fw, i, v)
    {
        int is_output = 0;
        const tensor_spec *t = json_is_string(v) ? problem_tensor(p, json_string_value(v), &is_output)
                                                 : NULL;
        if (!t || is_output || t->n_views) {
            strbuf f = STRBUF_INIT;
            sb_addf(&f, "torch_model.forward[%zu]", i);
            int rc = problem_field_fail(c, f.buf, "expected the name of an input that is not packed");
            sb_free(&f);
            return rc;
        }
    }
    return 0;
}

/* "degenerate": why the output is trivial at these inits (identically zero, saturated, the input
 * passed through); such problems stay in the suite but out of training exports by default. */
static int load_degenerate(struct problem_ctx *c, json_t *root, problem *p)
{
    if (get_string(c, root, "degenerate", "degenerate", 0, &p->degenerate))
        return -1;
    if (p->degenerate && !*p->degenerate)
        return problem_field_fail(c, "degenerate", "say why (a non-empty string), or leave the field out");
    return 0;
}

static int check_id_matches_path(struct problem_ctx *c, const problem *p)
{
    /* level1/019_relu must live at <root>/level1/019_relu.json */
    strbuf tail = STRBUF_INIT;
    sb_addf(&tail, "%s.json", p->id);
    size_t n = strlen(p->manifest_path);
    int ok = n >= tail.len && strcmp(p->manifest_path + n - tail.len, tail.buf) == 0 &&
             (n == tail.len || p->manifest_path[n - tail.len - 1] == '/');
    sb_free(&tail);
    return ok ? 0 : problem_field_fail(c, "id", "does not match the manifest's path <suite>/<name>.json");
}

static int load_parts(const char *manifest_path, problem *p, strbuf *err)
{
    memset(p, 0, sizeof(*p));
    p->manifest_path = xstrdup(manifest_path);
    struct problem_ctx c = {.file = manifest_path, .err = err};
    strbuf e = STRBUF_INIT;
    if (read_file(manifest_path, &p->manifest_text, &e)) {
        kc_fail(err, "%s", e.buf);
        sb_free(&e);
        return -1;
    }
    sb_free(&e);
    json_error_t je;
    json_t *root = json_loadb(p->manifest_text.buf, p->manifest_text.len, 0, &je);
    if (!root)
        return kc_fail(err, "%s:%d:%d: invalid JSON: %s", manifest_path, je.line, je.column,
                       je.text);
    int rc = -1;
    if (!json_is_object(root)) {
        kc_fail(err, "%s: expected a JSON object at the top level", manifest_path);
        goto out;
    }
    if (check_known_fields(&c, root) || load_header(&c, root, p) ||
        check_id_matches_path(&c, p) || load_dims(&c, root, p) || load_params(&c, p, root) ||
        load_tensor_list(&c, p, root, "inputs", 1) || load_tensor_list(&c, p, root, "outputs", 0) ||
        check_unique_names(&c, p) || problem_load_values(&c, root, p) || load_tolerance(&c, root, p) ||
        get_string(&c, root, "bytes", "bytes", 1, &p->bytes_expr) ||
        check_expr(&c, p, p->bytes_expr, "bytes") ||
        get_string(&c, root, "flops", "flops", 1, &p->flops_expr) ||
        check_expr(&c, p, p->flops_expr, "flops") || load_degenerate(&c, root, p) ||
        load_torch_model(&c, root, p) ||
        problem_load_hidden(manifest_path, root, p, err) || load_reference(&c, root, p))
        goto out;
    rc = 0;
out:
    json_decref(root);
    return rc;
}

/* A manifest that fails to load leaves nothing allocated behind (kverify problems --check
 * leaked every failed problem's parts). */
int problem_load(const char *manifest_path, problem *p, strbuf *err)
{
    int rc = load_parts(manifest_path, p, err);
    if (rc)
        problem_free(p);
    return rc;
}

static void tensor_free(tensor_spec *t)
{
    for (int i = 0; i < t->n_views; i++)
        tensor_free(&t->views[i]);
    free(t->views);
    free(t->view_offset);
    free(t->torch_key);
    free(t->name);
    for (int i = 0; i < t->rank; i++)
        free(t->shape[i]);
    free(t->lo_expr);
    free(t->hi_expr);
    free(t->fan_in_expr);
}

void problem_free(problem *p)
{
    free(p->id), free(p->suite), free(p->title), free(p->description), free(p->torch_reference);
    free(p->manifest_path), free(p->reference_path), free(p->tolerance_why);
    free(p->bytes_expr), free(p->flops_expr), free(p->degenerate);
    sb_free(&p->manifest_text), sb_free(&p->reference_source);
    dimset_free(&p->dims_default), dimset_free(&p->dims_small);
    for (int i = 0; i < KC_MAX_ALT; i++) /* an alt set that failed to load is not counted */
        dimset_free(&p->dims_alt[i]);
    for (int i = 0; i < p->n_derived; i++)
        free(p->derived_name[i]), free(p->derived_expr[i]);
    for (int i = 0; i < p->n_inputs; i++)
        tensor_free(&p->inputs[i]);
    for (int i = 0; i < p->n_outputs; i++)
        tensor_free(&p->outputs[i]);
    for (int i = 0; i < p->n_params; i++) /* counted before it loads: a failed one too */
        free(p->params[i].name), free(p->params[i].vary_why);
    problem_hidden_free(&p->hidden);
    problem_values_free(&p->values);
    memset(p, 0, sizeof(*p));
}

const dimset *problem_dims(const problem *p, enum kc_dims_kind kind, int alt_index)
{
    if (kind == KC_DIMS_SMALL)
        return &p->dims_small;
    if (kind == KC_DIMS_ALT)
        return alt_index >= 0 && alt_index < p->n_alt ? &p->dims_alt[alt_index] : NULL;
    return &p->dims_default;
}

int dims_kind_parse(const char *s, enum kc_dims_kind *kind, int *alt_index)
{
    *alt_index = 0;
    if (strcmp(s, "default") == 0)
        *kind = KC_DIMS_DEFAULT;
    else if (strcmp(s, "small") == 0)
        *kind = KC_DIMS_SMALL;
    else if (strncmp(s, "alt", 3) == 0) {
        *kind = KC_DIMS_ALT;
        if (s[3])
            *alt_index = atoi(s + 3);
    } else
        return -1;
    return 0;
}

int tensor_numel(const tensor_spec *t, const dimset *dims, int64_t *out, strbuf *err)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        int64_t d;
        if (expr_eval(t->shape[i], dims, &d, err))
            return -1;
        if (d < 0)
            return kc_fail(err, "tensor '%s' has negative extent %lld", t->name, (long long)d);
        if (__builtin_mul_overflow(n, d, &n))
            return kc_fail(err, "tensor '%s' is too large", t->name);
    }
    *out = n;
    return 0;
}

int tensor_init_params(const tensor_spec *t, const dimset *dims, double *a, double *b,
                       strbuf *err)
{
    *a = t->a, *b = t->b;
    if (t->dist != KC_DIST_UNIFORM_FAN_IN)
        return 0;
    int64_t fan_in;
    if (expr_eval(t->fan_in_expr, dims, &fan_in, err))
        return -1;
    if (fan_in <= 0)
        return kc_fail(err, "tensor '%s': fan_in %lld is not positive", t->name, (long long)fan_in);
    *b = 1.0 / sqrt((double)fan_in);
    *a = -*b;
    return 0;
}

const tensor_spec *tensor_spec_varied(const tensor_spec *t, tensor_spec *tmp)
{
    int views_vary = 0;
    for (int i = 0; i < t->n_views; i++)
        views_vary |= t->views[i].vary_dist != KC_DIST_NONE;
    if (views_vary) {
        *tmp = *t;
        tmp->vary_views = 1;
        return tmp;
    }
    if (t->vary_dist == KC_DIST_NONE)
        return t;
    *tmp = *t;
    tmp->dist = t->vary_dist, tmp->a = t->vary_a, tmp->b = t->vary_b;
    tmp->vary_dist = KC_DIST_NONE;
    return tmp;
}

const tensor_spec *problem_tensor(const problem *p, const char *name, int *is_output)
{
    for (int i = 0; i < p->n_inputs; i++)
        if (strcmp(p->inputs[i].name, name) == 0) {
            if (is_output)
                *is_output = 0;
            return &p->inputs[i];
        }
    for (int i = 0; i < p->n_outputs; i++)
        if (strcmp(p->outputs[i].name, name) == 0) {
            if (is_output)
                *is_output = 1;
            return &p->outputs[i];
        }
    return NULL;
}

const tensor_spec *problem_view(const problem *p, const char *name, int *input)
{
    for (int i = 0; i < p->n_inputs; i++)
        for (int k = 0; k < p->inputs[i].n_views; k++)
            if (strcmp(p->inputs[i].views[k].name, name) == 0) {
                if (input)
                    *input = i;
                return &p->inputs[i].views[k];
            }
    return NULL;
}

int problem_has_views(const problem *p)
{
    for (int i = 0; i < p->n_inputs; i++)
        if (p->inputs[i].n_views)
            return 1;
    return 0;
}

int view_extent(const tensor_spec *view, const dimset *dims, int64_t *offset, int64_t *numel,
                strbuf *err)
{
    if (!view->view_offset)
        return kc_fail(err, "'%s' is not a view of a packed input", view->name);
    return expr_eval(view->view_offset, dims, offset, err) || tensor_numel(view, dims, numel, err)
               ? -1 : 0;
}

const param_spec *problem_param(const problem *p, const char *name)
{
    for (int i = 0; i < p->n_params; i++)
        if (strcmp(p->params[i].name, name) == 0)
            return &p->params[i];
    return NULL;
}
