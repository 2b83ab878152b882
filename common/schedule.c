/* schedule: the lazily expanded execution of a launch unit's "// @for" loops (see schedule.h),
 * its "// @layer" points counted beside its launches and yielded only when asked for.
 * Counting never enumerates: a loop's launches are its trips times the launches of one trip,
 * in saturating arithmetic, and a loop whose body issues nothing is skipped whole, so every
 * trip the iterator takes issues at least one launch and walking an execution costs O(its
 * launches). */
#include "common/schedule.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

void launch_describe_dims(const char *label, const dimset *env, int n_dims, strbuf *out)
{
    if (label)
        sb_addf(out, "dims %s (", label);
    else
        sb_adds(out, "these dims (");
    for (int i = 0; i < n_dims; i++)
        sb_addf(out, "%s%s=%lld", i ? ", " : "", env->names[i], (long long)env->values[i]);
    sb_adds(out, ")");
    for (int i = n_dims; i < env->n; i++)
        sb_addf(out, "%s%s=%lld", i == n_dims ? " with " : ", ", env->names[i],
                (long long)env->values[i]);
}

struct count_ctx {
    launch_iter *it;
    const char *label;
    strbuf *err;
};

static int bound(struct count_ctx *c, const loop_spec *l, const char *expr, int64_t *out)
{
    strbuf e = STRBUF_INIT, where = STRBUF_INIT;
    int rc = expr_eval(expr, &c->it->env, out, &e);
    if (rc) {
        launch_describe_dims(c->label, &c->it->env, c->it->n_dims, &where);
        kc_fail(c->err, "line %d: @for %s at %s: %s", l->line, l->var, where.buf, e.buf);
    }
    sb_free(&e), sb_free(&where);
    return rc;
}

static void describe_count(int64_t n, strbuf *out)
{
    if (n == INT64_MAX)
        sb_adds(out, "2^63 or more");
    else
        sb_addf(out, "%lld", (long long)n);
}

/* The cap, passed at a top-level step: names the step and the count. */
static int over_cap(struct count_ctx *c, const kc_step *st, int64_t total, int64_t in_loop)
{
    const launch_unit *u = c->it->u;
    strbuf where = STRBUF_INIT, all = STRBUF_INIT, part = STRBUF_INIT;
    launch_describe_dims(c->label, &c->it->env, c->it->n_dims, &where);
    describe_count(total, &all);
    if (st->kind == KC_STEP_FOR) {
        const loop_spec *l = &u->loops[st->index];
        const launch_iter *it = c->it;
        describe_count(in_loop, &part);
        kc_fail(c->err, "line %d: at %s the launch unit would issue %s launches, %s of them in "
                        "@for %s (%lld trips of %lld); one execution may issue at most %d",
                l->line, where.buf, all.buf, part.buf, l->var,
                (long long)it->trips[st->index], (long long)it->per_trip[st->index],
                KC_MAX_UNIT_LAUNCHES);
    } else {
        kc_fail(c->err, "line %d: at %s the launch unit would issue %s launches; one execution "
                        "may issue at most %d",
                u->launches[st->index].line, where.buf, all.buf, KC_MAX_UNIT_LAUNCHES);
    }
    sb_free(&where), sb_free(&all), sb_free(&part);
    return -1;
}

/* Launches of steps [from, to) in one pass, loops expanded, saturating at INT64_MAX; at the
 * top level (top), fails as soon as the running count passes the cap. A loop's bounds are
 * evaluated where it is met, so the bounds of a loop that never runs are never evaluated. */
static int count_steps(struct count_ctx *c, int from, int to, int top, int64_t *out)
{
    const launch_unit *u = c->it->u;
    int64_t n = 0;
    for (int s = from; s < to; s++) {
        const kc_step *st = &u->steps[s];
        int64_t add = st->kind != KC_STEP_LAYER;
        if (st->kind == KC_STEP_FOR) {
            int k = st->index;
            const loop_spec *l = &u->loops[k];
            launch_iter *it = c->it;
            if (bound(c, l, l->first, &it->first[k]) || bound(c, l, l->end, &it->end[k]))
                return -1;
            int64_t trips = 0, body = 0;
            if (it->end[k] > it->first[k] && __builtin_sub_overflow(it->end[k], it->first[k], &trips))
                trips = INT64_MAX;
            if (trips > 0 && count_steps(c, l->body, l->close, 0, &body))
                return -1;
            it->trips[k] = trips;
            it->per_trip[k] = body;
            add = sat_mul(trips, body);
            s = l->close;
        }
        n = sat_add(n, add);
        if (top && n > KC_MAX_UNIT_LAUNCHES)
            return over_cap(c, st, n, add);
    }
    *out = n;
    return 0;
}

/* Layer points of steps [from, to), loops expanded as the iterator runs them (a loop that issues
 * no launch is skipped whole), saturating; the bounds are those count_steps evaluated. */
static int64_t count_layers(const launch_iter *it, int from, int to)
{
    const launch_unit *u = it->u;
    int64_t n = 0;
    for (int s = from; s < to; s++) {
        const kc_step *st = &u->steps[s];
        if (st->kind == KC_STEP_LAYER)
            n = sat_add(n, 1);
        if (st->kind != KC_STEP_FOR)
            continue;
        int k = st->index;
        if (it->trips[k] > 0 && it->per_trip[k] > 0)
            n = sat_add(n, sat_mul(it->trips[k], count_layers(it, u->loops[k].body, u->loops[k].close)));
        s = u->loops[k].close;
    }
    return n;
}

/* The layer-point cap: names the first top-level step at which the count passes it. */
static int check_layer_cap(struct count_ctx *c)
{
    const launch_unit *u = c->it->u;
    int64_t n = 0;
    for (int s = 0; s < u->n_steps; s++) {
        const kc_step *st = &u->steps[s];
        int next = st->kind == KC_STEP_FOR ? u->loops[st->index].close + 1 : s + 1;
        n = sat_add(n, count_layers(c->it, s, next));
        if (n > KC_MAX_UNIT_LAYERS) {
            strbuf where = STRBUF_INIT, all = STRBUF_INIT;
            launch_describe_dims(c->label, &c->it->env, c->it->n_dims, &where);
            describe_count(c->it->layers = count_layers(c->it, 0, u->n_steps), &all);
            int line = st->kind == KC_STEP_LAYER ? u->layers[st->index].line
                                                 : u->loops[st->index].line;
            kc_fail(c->err, "line %d: at %s the launch unit would have %s layer points (@layer "
                            "lines reached); one execution may have at most %d",
                    line, where.buf, all.buf, KC_MAX_UNIT_LAYERS);
            sb_free(&where), sb_free(&all);
            return -1;
        }
        s = next - 1;
    }
    c->it->layers = n;
    return 0;
}

/* The most deeply nested loop of the unit, or -1 without loops. */
static int deepest(const launch_unit *u)
{
    int d = -1;
    for (int k = 0; k < u->n_loops; k++)
        if (d < 0 || u->loops[k].depth > u->loops[d].depth)
            d = k;
    return d;
}

/* The loop variables must not be names of the dims, and must fit beside them. */
static int check_names(const launch_unit *u, const dimset *dims, strbuf *err)
{
    int64_t v;
    for (int k = 0; k < u->n_loops; k++)
        if (dimset_get(dims, u->loops[k].var, &v))
            return kc_fail(err, "line %d: loop variable '%s' is also a dim", u->loops[k].line,
                           u->loops[k].var);
    int d = deepest(u);
    if (d >= 0 && dims->n + u->loops[d].depth + 1 > KC_MAX_DIMS)
        return kc_fail(err, "line %d: %d dims and %d nested loop variables pass the limit of %d "
                            "names", u->loops[d].line, dims->n, u->loops[d].depth + 1, KC_MAX_DIMS);
    return 0;
}

int launch_iter_start(launch_iter *it, const launch_unit *u, const dimset *dims, const char *label,
                      strbuf *err)
{
    memset(it, 0, sizeof(*it));
    if (check_names(u, dims, err))
        return -1;
    it->u = u;
    dimset_copy(&it->env, dims);
    it->n_dims = it->env.n;
    struct count_ctx c = {it, label, err};
    if (count_steps(&c, 0, u->n_steps, 1, &it->total) || check_layer_cap(&c)) {
        launch_iter_free(it);
        return -1;
    }
    return 0;
}

/* Opens loop k: its variable takes its first value. Room was checked by launch_iter_start. */
static void push(launch_iter *it, int k)
{
    dimset *e = &it->env;
    e->names[e->n] = xstrdup(it->u->loops[k].var);
    e->values[e->n++] = it->first[k];
}

static void pop(launch_iter *it)
{
    free(it->env.names[--it->env.n]);
}

int launch_iter_step(launch_iter *it, int *is_layer)
{
    const launch_unit *u = it->u;
    while (u && it->next < u->n_steps) {
        const kc_step *st = &u->steps[it->next];
        if (st->kind == KC_STEP_LAUNCH || st->kind == KC_STEP_LAYER) {
            *is_layer = st->kind == KC_STEP_LAYER;
            it->next++;
            return st->index;
        }
        const loop_spec *l = &u->loops[st->index];
        if (st->kind == KC_STEP_FOR) {
            int runs = it->trips[st->index] > 0 && it->per_trip[st->index] > 0;
            if (runs)
                push(it, st->index);
            it->next = runs ? l->body : l->close + 1;
            continue;
        }
        int64_t *value = &it->env.values[it->env.n - 1]; /* KC_STEP_END: the innermost loop */
        if (*value + 1 < it->end[st->index]) {
            ++*value;
            it->next = l->body;
        } else {
            pop(it);
            it->next++;
        }
    }
    return -1;
}

int launch_iter_next(launch_iter *it)
{
    int is_layer = 0, i;
    while ((i = launch_iter_step(it, &is_layer)) >= 0 && is_layer)
        ;
    return i;
}

void launch_iter_free(launch_iter *it)
{
    dimset_free(&it->env);
    memset(it, 0, sizeof(*it));
}
