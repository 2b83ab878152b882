/* problem_hidden: a manifest's "hidden" generator (docs/PROBLEMS.md, problem.h): its loader
 * with precise errors, and the draw of dims from it, a pure function of (problem id, seed,
 * index) that favours irregular sizes and redraws what breaks a require or a cap.
 *
 * The generator (common/problem_rng.h) is seeded with the problem id, then mixed with the seed,
 * then with the index; only integer arithmetic is used, so a draw is the same on every machine.
 * "capacity" (fixed sets past the caps) is loaded here too; problem_cover.c runs them. */
#include "common/error.h"
#include "common/problem.h"
#include "common/problem_rng.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* ---- loading ---- */

struct hctx {
    const char *file;
    strbuf *err;
};

static int hfail(struct hctx *c, const char *field, const char *what)
{
    return kc_fail(c->err, "%s: field '%s': %s", c->file, field, what);
}

static int hfailf(struct hctx *c, const char *field, const char *fmt, const char *arg)
{
    strbuf m = STRBUF_INIT;
    sb_addf(&m, fmt, arg);
    hfail(c, field, m.buf);
    sb_free(&m);
    return -1;
}

static int is_derived(const problem *p, const char *name)
{
    for (int i = 0; i < p->n_derived; i++)
        if (strcmp(p->derived_name[i], name) == 0)
            return 1;
    return 0;
}

/* A dim of dims.default or a derived one (p->dims_default holds both once loaded). */
static int known_dim(const problem *p, const char *name)
{
    int64_t v;
    return dimset_get(&p->dims_default, name, &v);
}

/* Index of name among the hidden dims listed before position before, or -1. */
static int earlier_dim(const problem_hidden *h, int before, const char *name)
{
    for (int i = 0; i < before; i++)
        if (strcmp(h->dims[i].name, name) == 0)
            return i;
    return -1;
}

static int valid_dim_value(json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= 0 &&
           json_integer_value(v) <= KC_MAX_DIM_VALUE;
}

static int load_range(struct hctx *c, json_t *rule, const char *field, hidden_dim *d)
{
    json_t *lo = json_object_get(rule, "min"), *hi = json_object_get(rule, "max");
    if (!valid_dim_value(lo) || !valid_dim_value(hi))
        return hfail(c, field, "a range needs min and max, integers from 0 to 2^40");
    d->rule = KC_HIDDEN_RANGE;
    d->min = json_integer_value(lo), d->max = json_integer_value(hi);
    return d->min <= d->max ? 0 : hfail(c, field, "min must not exceed max");
}

static int load_values(struct hctx *c, json_t *vals, const char *field, hidden_dim *d)
{
    size_t n = json_array_size(vals);
    if (!json_is_array(vals) || n == 0 || n > KC_MAX_HIDDEN_VALUES)
        return hfail(c, field, "values: expected an array of 1 to 64 integers");
    d->rule = KC_HIDDEN_VALUES;
    d->values = xcalloc(n, sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        if (!valid_dim_value(json_array_get(vals, i)))
            return hfail(c, field, "values: expected integers from 0 to 2^40");
        d->values[d->n_values++] = json_integer_value(json_array_get(vals, i));
    }
    return 0;
}

/* expr: a dim expression over the dims listed before this one. */
static int load_expr_rule(struct hctx *c, const problem_hidden *h, int pos, json_t *e,
                          const char *field, hidden_dim *d)
{
    if (!json_is_string(e))
        return hfail(c, field, "expr: expected a dim expression string");
    d->rule = KC_HIDDEN_EXPR;
    d->expr = xstrdup(json_string_value(e));
    char names[KC_MAX_DIMS][64];
    strbuf e2 = STRBUF_INIT;
    int n = expr_names(d->expr, names, KC_MAX_DIMS, &e2), rc = 0;
    if (n < 0)
        rc = hfail(c, field, e2.buf);
    for (int i = 0; i < n && !rc; i++)
        if (earlier_dim(h, pos, names[i]) < 0)
            rc = hfailf(c, field, "expr uses '%s', not a dim listed before this one", names[i]);
    sb_free(&e2);
    return rc;
}

static int load_divisor_of(struct hctx *c, const problem_hidden *h, int pos, json_t *e,
                           const char *field, hidden_dim *d)
{
    if (!json_is_string(e))
        return hfail(c, field, "divisor_of: expected the name of a dim listed before this one");
    d->rule = KC_HIDDEN_DIVISOR_OF;
    d->expr = xstrdup(json_string_value(e));
    if (earlier_dim(h, pos, d->expr) < 0)
        return hfailf(c, field, "divisor_of names '%s', not a dim listed before this one",
                      d->expr);
    return 0;
}

/* One dim's rule: exactly one of {min, max}, values, expr, divisor_of. */
static int load_rule(struct hctx *c, problem_hidden *h, int pos, json_t *rule, const char *field)
{
    hidden_dim *d = &h->dims[pos];
    if (!json_is_object(rule))
        return hfail(c, field, "expected {min, max}, {values}, {expr} or {divisor_of}");
    json_t *vals = json_object_get(rule, "values"), *e = json_object_get(rule, "expr"),
           *div = json_object_get(rule, "divisor_of");
    int has_range = json_object_get(rule, "min") || json_object_get(rule, "max");
    if (has_range + !!vals + !!e + !!div != 1)
        return hfail(c, field, "expected exactly one of min/max, values, expr, divisor_of");
    const char *key;
    json_t *v;
    json_object_foreach(rule, key, v)
    {
        if (strcmp(key, "min") && strcmp(key, "max") && strcmp(key, "values") &&
            strcmp(key, "expr") && strcmp(key, "divisor_of"))
            return hfailf(c, field, "unknown key '%s'", key);
    }
    if (has_range)
        return load_range(c, rule, field, d);
    if (vals)
        return load_values(c, vals, field, d);
    if (e)
        return load_expr_rule(c, h, pos, e, field, d);
    return load_divisor_of(c, h, pos, div, field, d);
}

static int load_hidden_dims(struct hctx *c, json_t *dims, problem *p)
{
    problem_hidden *h = &p->hidden;
    if (!json_is_object(dims))
        return hfail(c, "hidden.dims", "missing (expected an object of dim name -> rule)");
    const char *key;
    json_t *rule;
    json_object_foreach(dims, key, rule)
    {
        strbuf f = STRBUF_INIT;
        sb_addf(&f, "hidden.dims.%s", key);
        int64_t v;
        int rc = !dimset_get(&p->dims_default, key, &v) || is_derived(p, key)
                     ? hfail(c, f.buf, "not a dim of dims.default (derived dims are computed)")
                     : 0;
        if (!rc) {
            h->dims[h->n_dims].name = xstrdup(key);
            rc = load_rule(c, h, h->n_dims++, rule, f.buf);
        }
        sb_free(&f);
        if (rc)
            return -1;
    }
    for (int i = 0; i < p->dims_default.n; i++)
        if (!is_derived(p, p->dims_default.names[i]) &&
            earlier_dim(h, h->n_dims, p->dims_default.names[i]) < 0)
            return hfailf(c, "hidden.dims", "no rule for dim '%s' (name every dim of dims.default)",
                          p->dims_default.names[i]);
    return 0;
}

/* "EXPR OP EXPR": the first of = ! < > starts the operator. */
static int parse_require(const char *text, hidden_require *r)
{
    size_t i = strcspn(text, "=!<>");
    if (!text[i])
        return -1;
    char a = text[i], b = text[i + 1];
    size_t oplen = b == '=' ? 2 : 1;
    if ((a == '=' || a == '!') && b != '=')
        return -1;
    r->op = a == '=' ? KC_CMP_EQ : a == '!' ? KC_CMP_NE : a == '<' ? (b == '=' ? KC_CMP_LE : KC_CMP_LT)
                                                                     : (b == '=' ? KC_CMP_GE : KC_CMP_GT);
    const char *rhs = text + i + oplen;
    if (rhs[strcspn(rhs, "=!<>")])
        return -1;
    r->lhs = xstrndup(text, i);
    r->rhs = xstrdup(rhs);
    r->text = xstrdup(text);
    return 0;
}

static int check_require_side(struct hctx *c, const problem *p, const char *side, const char *field)
{
    char names[KC_MAX_DIMS][64];
    strbuf e = STRBUF_INIT;
    int n = strspn(side, " \t") == strlen(side) ? -2 : expr_names(side, names, KC_MAX_DIMS, &e);
    int rc = n == -2 ? hfail(c, field, "expected EXPR OP EXPR (a side is empty)")
             : n < 0 ? hfail(c, field, e.buf)
                     : 0;
    for (int i = 0; i < n && !rc; i++)
        if (!known_dim(p, names[i]))
            rc = hfailf(c, field, "unknown dim '%s' (dims of dims.default or derived)", names[i]);
    sb_free(&e);
    return rc;
}

static int load_requires(struct hctx *c, json_t *req, problem *p)
{
    problem_hidden *h = &p->hidden;
    if (!req)
        return 0;
    if (!json_is_array(req) || json_array_size(req) > KC_MAX_REQUIRES)
        return hfail(c, "hidden.require", "expected an array of up to 32 \"EXPR OP EXPR\" strings");
    for (size_t i = 0; i < json_array_size(req); i++) {
        strbuf f = STRBUF_INIT;
        sb_addf(&f, "hidden.require[%zu]", i);
        json_t *s = json_array_get(req, i);
        hidden_require *r = &h->require[h->n_require];
        int rc = !json_is_string(s) || parse_require(json_string_value(s), r)
                     ? hfail(c, f.buf, "expected \"EXPR OP EXPR\" with OP one of == != <= >= < >")
                     : 0;
        if (r->text)
            h->n_require++;
        if (!rc)
            rc = check_require_side(c, p, r->lhs, f.buf) || check_require_side(c, p, r->rhs, f.buf);
        sb_free(&f);
        if (rc)
            return -1;
    }
    return 0;
}

static int load_caps(struct hctx *c, json_t *hj, problem_hidden *h)
{
    json_t *mb = json_object_get(hj, "max_bytes"), *mf = json_object_get(hj, "max_flops");
    h->max_bytes = KC_HIDDEN_MAX_BYTES;
    h->max_flops = KC_HIDDEN_MAX_FLOPS;
    if (mb && (!json_is_integer(mb) || json_integer_value(mb) <= 0))
        return hfail(c, "hidden.max_bytes", "expected a positive integer (bytes)");
    if (mf && (!json_is_number(mf) || !(json_number_value(mf) > 0)))
        return hfail(c, "hidden.max_flops", "expected a positive number");
    if (mb)
        h->max_bytes = json_integer_value(mb);
    if (mf)
        h->max_flops = json_number_value(mf);
    return 0;
}

static int admit_slot(const problem *p, const dimset *d, int capacity, strbuf *why);

/* One capacity set: every dim of dims.default, then the derived dims, within the requires and
 * KC_CAPACITY_MAX_BYTES. */
static int load_capacity_set(struct hctx *c, json_t *set, const char *field, problem *p, dimset *d)
{
    if (!json_is_object(set))
        return hfail(c, field, "expected an object of dim name -> integer");
    const char *key;
    json_t *v;
    json_object_foreach(set, key, v)
    {
        int64_t ignored;
        if (!dimset_get(&p->dims_default, key, &ignored) || is_derived(p, key))
            return hfailf(c, field, "'%s' is not a dim of dims.default", key);
        if (!valid_dim_value(v))
            return hfailf(c, field, "'%s': expected an integer from 0 to 2^40", key);
        dimset_set(d, key, json_integer_value(v));
    }
    for (int i = 0; i < p->dims_default.n; i++) {
        int64_t ignored;
        if (!is_derived(p, p->dims_default.names[i]) &&
            !dimset_get(d, p->dims_default.names[i], &ignored))
            return hfailf(c, field, "no value for dim '%s' (name every dim of dims.default)",
                          p->dims_default.names[i]);
    }
    strbuf why = STRBUF_INIT;
    int rc = problem_apply_derived(p, d, &why) || admit_slot(p, d, 1, &why) >= 0
                 ? hfail(c, field, why.len ? why.buf : "not admitted") : 0;
    sb_free(&why);
    return rc;
}

/* "capacity": {"sets": [...], "why": "..."} */
static int load_capacity(struct hctx *c, json_t *cap, problem *p)
{
    problem_hidden *h = &p->hidden;
    if (!cap)
        return 0;
    json_t *sets = json_object_get(cap, "sets"), *why = json_object_get(cap, "why");
    if (!json_is_object(cap) || !json_is_array(sets) || json_array_size(sets) == 0 ||
        json_array_size(sets) > KC_MAX_CAPACITY)
        return hfail(c, "hidden.capacity", "expected {\"sets\": [1 to 4 dims sets], \"why\"}");
    if (!json_is_string(why) || !*json_string_value(why))
        return hfail(c, "hidden.capacity.why", "missing (say which limits the sets cross)");
    const char *key;
    json_t *v;
    json_object_foreach(cap, key, v)
    {
        if (strcmp(key, "sets") && strcmp(key, "why"))
            return hfailf(c, "hidden.capacity", "unknown key '%s'", key);
    }
    h->capacity_why = xstrdup(json_string_value(why));
    for (size_t i = 0; i < json_array_size(sets); i++) {
        strbuf f = STRBUF_INIT;
        sb_addf(&f, "hidden.capacity.sets[%zu]", i);
        int rc = load_capacity_set(c, json_array_get(sets, i), f.buf, p, &h->capacity[h->n_capacity++]);
        sb_free(&f);
        if (rc)
            return -1;
    }
    return 0;
}

int problem_load_hidden(const char *file, struct json_t *root, problem *p, strbuf *err)
{
    struct hctx c = {.file = file, .err = err};
    json_t *hj = json_object_get(root, "hidden");
    if (!hj)
        return 0;
    if (!json_is_object(hj))
        return hfail(&c, "hidden", "expected an object {dims, require, max_bytes, max_flops, why}");
    const char *key;
    json_t *v;
    json_object_foreach(hj, key, v)
    {
        if (strcmp(key, "dims") && strcmp(key, "require") && strcmp(key, "max_bytes") &&
            strcmp(key, "max_flops") && strcmp(key, "why") && strcmp(key, "capacity"))
            return hfailf(&c, "hidden", "unknown key '%s'", key);
    }
    p->hidden.present = 1;
    json_t *why = json_object_get(hj, "why");
    if (!json_is_string(why) || !*json_string_value(why))
        return hfail(&c, "hidden.why", "missing (say what the ranges cover and why)");
    p->hidden.why = xstrdup(json_string_value(why));
    return load_hidden_dims(&c, json_object_get(hj, "dims"), p) ||
           load_requires(&c, json_object_get(hj, "require"), p) || load_caps(&c, hj, &p->hidden) ||
           load_capacity(&c, json_object_get(hj, "capacity"), p);
}

void problem_hidden_free(problem_hidden *h)
{
    for (int i = 0; i < h->n_dims; i++)
        free(h->dims[i].name), free(h->dims[i].values), free(h->dims[i].expr);
    for (int i = 0; i < h->n_require; i++)
        free(h->require[i].text), free(h->require[i].lhs), free(h->require[i].rhs);
    free(h->why);
    for (int i = 0; i < h->n_capacity; i++)
        dimset_free(&h->capacity[i]);
    free(h->capacity_why);
    memset(h, 0, sizeof(*h));
}

int problem_has_hidden(const problem *p) { return p->hidden.present; }

/* ---- the generator ---- */

static int bit_length(int64_t v)
{
    int n = 0;
    for (; v > 0; v >>= 1)
        n++;
    return n;
}

/* Log-uniform in [lo, hi]: a bit length drawn uniformly, then a value of that length. */
static int64_t log_uniform(rng *r, int64_t lo, int64_t hi)
{
    int64_t lo1 = lo < 1 ? 1 : lo;
    if (hi < lo1)
        return lo;
    int k = (int)uniform_in(r, bit_length(lo1), bit_length(hi));
    int64_t a = (int64_t)1 << (k - 1), b = ((int64_t)1 << k) - 1;
    return uniform_in(r, a < lo1 ? lo1 : a, b > hi ? hi : b);
}

#define PRIME_LIMIT (1LL << 31) /* trial division stays cheap below this */
#define PRIME_SEARCH 2000

/* A prime near a log-uniform value, within [lo, hi]; -1 when none is near. */
static int64_t prime_near(rng *r, int64_t lo, int64_t hi)
{
    int64_t v = log_uniform(r, lo, hi);
    if (v > PRIME_LIMIT)
        return -1;
    for (int64_t x = v; x <= hi && x < v + PRIME_SEARCH; x++)
        if (is_prime(x))
            return x;
    for (int64_t x = v - 1; x >= lo && x > v - PRIME_SEARCH; x--)
        if (is_prime(x))
            return x;
    return -1;
}

/* m*k +- 1..3 around a log-uniform value: just off a multiple of m. */
static int64_t off_multiple(rng *r, int64_t lo, int64_t hi, int64_t m)
{
    int64_t v = log_uniform(r, lo, hi), base = (v + m / 2) / m * m;
    int64_t off = 1 + (int64_t)(rng_next(r) % 3);
    return base + ((rng_next(r) & 1) || base == 0 ? off : -off);
}

#define SMALL_SPAN 7 /* a small draw keeps each range within its lowest values: lo .. lo+7 */

/* A range dim: one of eight strategies, equally likely; a strategy that finds nothing in
 * range falls back to a uniform draw. small: the range is cut to its lowest SMALL_SPAN + 1
 * values (batch 1 to 8, lengths of a few elements: tails and tiny grids). */
static int64_t draw_range(rng *r, int64_t lo, int64_t hi, int small)
{
    int64_t v;
    if (small && hi - lo > SMALL_SPAN)
        hi = lo + SMALL_SPAN;
    switch (rng_next(r) % 8) {
    case 0: return lo;
    case 1: return hi;
    case 2: v = uniform_in(r, lo, hi); break;
    case 3: v = log_uniform(r, lo, hi); break;
    case 4: v = prime_near(r, lo, hi); break;
    case 5: v = log_uniform(r, lo, hi) | 1; break; /* odd */
    case 6: v = off_multiple(r, lo, hi, 32); break;
    default: v = off_multiple(r, lo, hi, 128); break;
    }
    return v >= lo && v <= hi ? v : uniform_in(r, lo, hi);
}

static int draw_one(rng *r, const hidden_dim *hd, const dimset *d, int small, int64_t *v,
                    strbuf *why)
{
    int64_t base = 0;
    switch (hd->rule) {
    case KC_HIDDEN_RANGE:
        *v = draw_range(r, hd->min, hd->max, small);
        return 0;
    case KC_HIDDEN_VALUES:
        *v = hd->values[rng_next(r) % (uint64_t)hd->n_values];
        return 0;
    case KC_HIDDEN_EXPR:
        if (expr_eval(hd->expr, d, v, why))
            return -1;
        if (*v < 0 || *v > KC_MAX_DIM_VALUE)
            return kc_fail(why, "hidden.dims.%s: expr gives %lld, outside 0..2^40", hd->name,
                           (long long)*v);
        return 0;
    case KC_HIDDEN_DIVISOR_OF:
        dimset_get(d, hd->expr, &base);
        if (rng_divisor(r, base, v))
            return kc_fail(why, "hidden.dims.%s: divisor_of %s = %lld (needs 1..2^32)", hd->name,
                           hd->expr, (long long)base);
        return 0;
    }
    return -1;
}

static int compare(int64_t a, enum kc_cmp op, int64_t b)
{
    switch (op) {
    case KC_CMP_EQ: return a == b;
    case KC_CMP_NE: return a != b;
    case KC_CMP_LE: return a <= b;
    case KC_CMP_GE: return a >= b;
    case KC_CMP_LT: return a < b;
    case KC_CMP_GT: return a > b;
    }
    return 0;
}

/* Where a rejected draw failed: a require, or one of these. */
enum { FAIL_DRAW, FAIL_DIMS, FAIL_BYTES, FAIL_FLOPS, FAIL_FIXED };

/* Whether d meets the requires and caps: -1 when it does, else the failure slot (FAIL_FIXED +
 * the require's index, or FAIL_*), with why. capacity: a capacity set, under
 * KC_CAPACITY_MAX_BYTES and no flops cap. */
static int admit_slot(const problem *p, const dimset *d, int capacity, strbuf *why)
{
    const problem_hidden *h = &p->hidden;
    for (int i = 0; i < h->n_require; i++) {
        const hidden_require *q = &h->require[i];
        int64_t a, b;
        if (expr_eval(q->lhs, d, &a, why) || expr_eval(q->rhs, d, &b, why) ||
            !compare(a, q->op, b)) {
            if (!why->len)
                sb_addf(why, "%s", q->text);
            return FAIL_FIXED + i;
        }
    }
    int64_t io_bytes, flops;
    if (problem_dims_fault(p, d, &io_bytes, why))
        return FAIL_DIMS;
    if (io_bytes > (capacity ? KC_CAPACITY_MAX_BYTES : h->max_bytes)) {
        kc_fail(why, "inputs and outputs take %lld bytes", (long long)io_bytes);
        return FAIL_BYTES;
    }
    expr_eval(p->flops_expr, d, &flops, why); /* evaluates: checked by problem_dims_fault */
    if (!capacity && (double)flops > h->max_flops) {
        kc_fail(why, "flops %lld", (long long)flops);
        return FAIL_FLOPS;
    }
    return -1;
}

int problem_hidden_admits(const problem *p, const dimset *d, int capacity, strbuf *why)
{
    return admit_slot(p, d, capacity, why) < 0 ? 0 : -1;
}

/* One candidate into d; returns -1 for a valid one, else the failure slot (FAIL_* or
 * FAIL_FIXED + the require's index), with why. */
static int draw_candidate(const problem *p, rng *r, int small, dimset *d, strbuf *why)
{
    const problem_hidden *h = &p->hidden;
    dimset_free(d);
    for (int i = 0; i < h->n_dims; i++) {
        int64_t v;
        if (draw_one(r, &h->dims[i], d, small, &v, why))
            return FAIL_DRAW;
        dimset_set(d, h->dims[i].name, v);
    }
    if (problem_apply_derived(p, d, why))
        return FAIL_DIMS;
    return admit_slot(p, d, 0, why);
}

static void fail_label(const problem *p, int slot, strbuf *out)
{
    if (slot >= FAIL_FIXED)
        sb_addf(out, "require '%s'", p->hidden.require[slot - FAIL_FIXED].text);
    else if (slot == FAIL_BYTES)
        sb_addf(out, "max_bytes %lld", (long long)p->hidden.max_bytes);
    else if (slot == FAIL_FLOPS)
        sb_addf(out, "max_flops %g", p->hidden.max_flops);
    else if (slot == FAIL_DRAW)
        sb_adds(out, "a dim's rule");
    else
        sb_adds(out, "the dims checks (shapes, tensor sizes, derived dims)");
}

int problem_draw_dims(const problem *p, uint64_t seed, int index, dimset *out, strbuf *err)
{
    memset(out, 0, sizeof(*out));
    if (!p->hidden.present)
        return kc_fail(err, "%s: no \"hidden\" generator in the manifest", p->id);
    rng r = rng_for(p->id, seed, (uint64_t)(uint32_t)index);
    int counts[FAIL_FIXED + KC_MAX_REQUIRES] = {0};
    strbuf last[FAIL_FIXED + KC_MAX_REQUIRES], why = STRBUF_INIT;
    memset(last, 0, sizeof(last));
    dimset d = {0};
    int worst = 0;
    /* odd indices draw small first (every range near its low end); a generator whose
     * requires small sizes cannot meet gets an ordinary draw after half the tries */
    for (int t = 0; t < KC_DRAW_TRIES; t++) {
        sb_reset(&why);
        int small = index % 2 == 1 && t < KC_DRAW_TRIES / 2;
        int slot = draw_candidate(p, &r, small, &d, &why);
        if (slot < 0) {
            *out = d;
            sb_free(&why);
            for (int i = 0; i < FAIL_FIXED + KC_MAX_REQUIRES; i++)
                sb_free(&last[i]);
            return 0;
        }
        counts[slot]++;
        sb_reset(&last[slot]);
        sb_adds(&last[slot], sb_str(&why));
        if (counts[slot] > counts[worst])
            worst = slot;
    }
    strbuf label = STRBUF_INIT;
    fail_label(p, worst, &label);
    kc_fail(err, "%s: hidden: no valid dims in %d draws (seed %llu, index %d); most often broken: "
                 "%s (%d draws; last: %s)",
            p->id, KC_DRAW_TRIES, (unsigned long long)seed, index, label.buf, counts[worst],
            sb_str(&last[worst]));
    sb_free(&label), sb_free(&why);
    for (int i = 0; i < FAIL_FIXED + KC_MAX_REQUIRES; i++)
        sb_free(&last[i]);
    dimset_free(&d);
    return -1;
}

int problem_dims_from_json(const problem *p, json_t *set, dimset *out, strbuf *err)
{
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < p->dims_default.n; i++) {
        const char *name = p->dims_default.names[i];
        json_t *v = json_object_get(set, name);
        if (is_derived(p, name))
            continue;
        if (!json_is_integer(v))
            return kc_fail(err, "dim %s missing", name);
        dimset_set(out, name, json_integer_value(v));
    }
    return problem_apply_derived(p, out, err) || problem_dims_fault(p, out, NULL, err) ? -1 : 0;
}

void dimset_to_json(const dimset *d, strbuf *out)
{
    json_t *o = json_object();
    for (int i = 0; i < d->n; i++)
        json_object_set_new(o, d->names[i], json_integer(d->values[i]));
    char *s = json_dumps(o, JSON_COMPACT);
    sb_adds(out, s);
    free(s);
    json_decref(o);
}
