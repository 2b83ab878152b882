/* problem_cover: the dims sets every verification runs besides its random draws, so that the
 * classes of sizes real kernels get wrong are exercised every time, not on a share of
 * verifications (issue 34, docs/INTEGRITY.md "Coverage"):
 *  - boundary sets: per range dim its low end and 1, a small and a large prime, 2^k - 1 and
 *    2^k + 1, values 1 past an odd multiple of 32, 64, 128 and 256, its high end; every value
 *    of a values dim; every quotient 1..16 of a divisor_of dim; the manifest's capacity sets.
 *    The kinds are fixed, the values within a kind drawn from the verification's secret seed
 *    (which prime, which k, which odd multiple, which quotient base, how far past the capacity
 *    sets), so a kernel cannot recognise them (issue 34's residual); then octave rows: every
 *    range dim a value drawn from each of its power-of-two bands (2^(j-1), 2^j];
 *  - stratified draws: a Latin hypercube over KC_STRATA equal strata of every range dim, pairings
 *    from the verification's secret seed, so any band of 10% of a dim's range holds a value.
 * Sets the caps (max_bytes, max_flops, requires) exclude in their first pairing are remade with
 * the other dims small, or up a ladder of their ranges where a require refuses them small; a value
 * no set can take is counted, never silently dropped. */
#include "common/error.h"
#include "common/problem.h"
#include "common/problem_rng.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Kinds of boundary value, in the order of the aligned rows. */
enum bkind { BK_LOW, BK_ONE, BK_SMALL_PRIME, BK_LARGE_PRIME, BK_POW_MINUS, BK_POW_PLUS, BK_OFF32,
             BK_OFF64, BK_OFF128, BK_OFF256, BK_HIGH, BK_N };

#define PRIME_SEARCH 4000
#define QUOTIENT_MAX 16 /* every group size 1..16 of a divisor_of dim */

static int64_t prime_from(int64_t start, int64_t lo, int64_t hi, int step)
{
    for (int64_t x = start, n = 0; x >= lo && x <= hi && n < PRIME_SEARCH; x += step, n++)
        if (is_prime(x))
            return x;
    return -1;
}

/* The part of [a, hi] a seeded draw of the low or high end takes: its first or last
 * KC_STRATA-th (at least one value). */
static int64_t part_span(int64_t a, int64_t hi)
{
    int64_t span = (hi - a + 1) / KC_STRATA;
    return span > 0 ? span : 1;
}

/* The valid k of 2^k - 1 and 2^k + 1 in [lo, hi] (k in 2..40, both in range): [*k0, *k1], or
 * -1 when there is none. */
static int pow_range(int64_t lo, int64_t hi, int *k0, int *k1)
{
    int a = 2;
    while (a <= 40 && ((int64_t)1 << a) - 1 < lo)
        a++;
    int b = a;
    while (b < 40 && ((int64_t)1 << (b + 1)) + 1 <= hi)
        b++;
    if (a > 40 || ((int64_t)1 << b) + 1 > hi)
        return -1;
    *k0 = a, *k1 = b;
    return 0;
}

/* The boundary value of kind k in [lo, hi], its value within the kind drawn from r where the
 * kind has several in range (the kinds are fixed, the values are not: a kernel cannot
 * recognise them), or -1 when the range has none:
 *  - a small prime: the first prime from a uniform start in the first KC_STRATA-th of
 *    [max(lo, 11), hi] (else the first prime >= max(lo, 11));
 *  - a large prime: the first prime down from a uniform start in the last KC_STRATA-th (else
 *    the largest prime);
 *  - 2^k - 1 and 2^k + 1: k drawn (independently for each) in the upper half of the valid k;
 *  - one past an odd multiple of m: (2j + 1) m + 1, j drawn among the valid j. */
static int64_t boundary_value(int64_t lo, int64_t hi, enum bkind k, rng *r)
{
    int64_t a = lo > 11 ? lo : 11, v;
    int k0, k1, m = 32;
    switch (k) {
    case BK_LOW: return lo;
    case BK_ONE: return lo <= 1 && 1 <= hi ? 1 : -1;
    case BK_SMALL_PRIME:
        if (a > hi)
            return -1;
        v = prime_from(uniform_in(r, a, a + part_span(a, hi) - 1), lo, hi, 1);
        return v >= 0 ? v : prime_from(a, lo, hi, 1);
    case BK_LARGE_PRIME:
        if (hi >= (1LL << 40) || a > hi)
            return hi < (1LL << 40) ? prime_from(hi, lo, hi, -1) : -1;
        v = prime_from(uniform_in(r, hi - part_span(a, hi) + 1, hi), lo, hi, -1);
        return v >= 0 ? v : prime_from(hi, lo, hi, -1);
    case BK_POW_MINUS:
    case BK_POW_PLUS:
        if (pow_range(lo, hi, &k0, &k1))
            return -1;
        k0 += (k1 - k0 + 1) / 2; /* the upper half: sizes that still matter */
        return ((int64_t)1 << uniform_in(r, k0, k1)) + (k == BK_POW_PLUS ? 1 : -1);
    case BK_OFF256: m *= 2; /* fall through */
    case BK_OFF128: m *= 2; /* fall through */
    case BK_OFF64: m *= 2; /* fall through */
    case BK_OFF32: {
        /* (2j + 1) m + 1 in [lo, hi]: j from ceil((lo - 1 - m) / 2m) (at least 0) */
        int64_t j1 = hi < m + 1 ? -1 : (hi - 1 - m) / (2 * m), j0 = 0;
        if (lo - 1 - m > 0)
            j0 = (lo - 1 - m + 2 * m - 1) / (2 * m);
        return j1 >= j0 ? (2 * uniform_in(r, j0, j1) + 1) * m + 1 : -1;
    }
    case BK_HIGH: return hi;
    case BK_N: break;
    }
    return -1;
}

/* The generator of dim i's kind-k value, or of a divisor_of dim's quotient draws: one stream
 * each, so a value depends on the seed and its place alone. */
#define BOUNDARY_STREAM (0xb0d4ull << 48)
static rng boundary_rng(const problem *p, uint64_t seed, int i, int k)
{
    return rng_for(p->id, seed, BOUNDARY_STREAM | (uint64_t)i << 16 | (uint64_t)k);
}

/* A growing list of distinct sets. */
struct setlist {
    dimset *sets;
    int n, max, skipped;
    int alone_dim[KC_MAX_BOUNDARY]; /* values already run alone (try_alone), by dim */
    int64_t alone_value[KC_MAX_BOUNDARY];
    int n_alone;
};

static int same_dims(const dimset *a, const dimset *b)
{
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->names[i], b->names[i]) || a->values[i] != b->values[i])
            return 0;
    return 1;
}

/* Keeps d (derived dims computed) when it is admitted and new; returns 1 kept or already there,
 * 0 refused. d is consumed. */
static int keep_set(const problem *p, struct setlist *l, dimset *d, int capacity)
{
    strbuf why = STRBUF_INIT;
    int ok = problem_apply_derived(p, d, &why) == 0 &&
             problem_hidden_admits(p, d, capacity, &why) == 0;
    sb_free(&why);
    for (int i = 0; ok && i < l->n; i++)
        if (same_dims(&l->sets[i], d)) {
            dimset_free(d);
            return 1;
        }
    if (ok && l->n < l->max) {
        l->sets[l->n++] = *d;
        memset(d, 0, sizeof(*d));
        return 1;
    }
    dimset_free(d);
    return 0;
}

/* The low end every other dim takes in a set that tries one value: a range's min, a values
 * dim's first value, a divisor_of dim 1 (always a divisor). */
static int64_t low_value(const hidden_dim *h)
{
    return h->rule == KC_HIDDEN_RANGE ? h->min : h->rule == KC_HIDDEN_VALUES ? h->values[0] : 1;
}

/* Sets dims 0..n-1 of the generator into d; values[i] for a range or values dim (-1: its low
 * end); divisor_of dims take div_pick (0: 1, 1: the base itself); expr dims are computed. */
static int fill_row(const problem *p, const int64_t *values, int div_pick, dimset *d)
{
    const problem_hidden *h = &p->hidden;
    memset(d, 0, sizeof(*d));
    for (int i = 0; i < h->n_dims; i++) {
        const hidden_dim *hd = &h->dims[i];
        int64_t v = values[i] >= 0 ? values[i] : low_value(hd);
        if (hd->rule == KC_HIDDEN_DIVISOR_OF && values[i] < 0) {
            int64_t base = 1;
            dimset_get(d, hd->expr, &base);
            v = div_pick ? base : 1;
        }
        if (hd->rule == KC_HIDDEN_EXPR && expr_eval(hd->expr, d, &v, NULL))
            return -1;
        dimset_set(d, hd->name, v);
    }
    return 0;
}

/* Where the other dims of a set trying one value stand: at their low ends first, then up their
 * ranges an eighth at a time (the first step admitted is about the smallest such set), for
 * requires that the low ends break (a BatchNorm's B*H*W >= 16 with B = 1 and the smallest
 * image). Within step k's eighth, each dim's value is drawn from the verification's seed, as
 * every other boundary value is: a kernel cannot learn the ladder's sizes from the manifest. */
#define LADDER_STEPS 10 /* the low ends, eight drawn eighths, then the high ends exactly */

/* The ladder's draws for one row (aligned row r, or octave row j at LADDER_OCTAVE_ROWS + j): a
 * stream of its own (index LADDER_STREAM, past the dims' and the capacity sets' indexes; row
 * below 2^16). */
#define LADDER_STREAM 0x7fff
#define LADDER_OCTAVE_ROWS 0x4000
static rng ladder_rng(const problem *p, uint64_t seed, int row)
{
    return boundary_rng(p, seed, LADDER_STREAM, row);
}

/* Dim hd drawn within the step-th eighth of its range or values list, at its high end on the
 * last step (-1 at step 0: its low end; and for a divisor_of or computed dim always: fill_row's
 * 1 or its expression). The last step is exact: a require some sets meet only there (B = 1
 * needs DenseNet's largest image) is still met. */
static int64_t ladder_value(const hidden_dim *hd, int step, rng *g)
{
    if (step == 0 || hd->rule == KC_HIDDEN_DIVISOR_OF || hd->rule == KC_HIDDEN_EXPR)
        return -1;
    if (step == LADDER_STEPS - 1)
        return hd->rule == KC_HIDDEN_VALUES ? hd->values[hd->n_values - 1] : hd->max;
    if (hd->rule == KC_HIDDEN_VALUES)
        return hd->values[uniform_in(g, (hd->n_values - 1) * (step - 1) / 8,
                                     (hd->n_values - 1) * step / 8)];
    int64_t span = hd->max - hd->min;
    return uniform_in(g, hd->min + span * (step - 1) / 8, hd->min + span * step / 8);
}

/* One set trying value v for dim j, every other dim at its low end or, when the caps or a
 * require refuse that, on the first step of the ladder they admit. 1 kept, 0 none admitted. */
static int try_alone(const problem *p, struct setlist *l, int j, int64_t v, rng *g)
{
    for (int i = 0; i < l->n_alone; i++)
        if (l->alone_dim[i] == j && l->alone_value[i] == v)
            return 1; /* another row's value (B's low end and its 1): one set is enough */
    for (int step = 0; step < LADDER_STEPS; step++) {
        int64_t vals[KC_MAX_DIMS];
        for (int i = 0; i < p->hidden.n_dims; i++)
            vals[i] = i == j ? v : ladder_value(&p->hidden.dims[i], step, g);
        dimset d;
        if (fill_row(p, vals, 0, &d)) {
            dimset_free(&d);
            continue;
        }
        if (keep_set(p, l, &d, 0)) {
            if (l->n_alone < KC_MAX_BOUNDARY) {
                l->alone_dim[l->n_alone] = j;
                l->alone_value[l->n_alone++] = v;
            }
            return 1;
        }
    }
    return 0;
}

/* One set of the row's values (fill_row's vals and div_pick); when the caps refuse the row, each
 * value alone (the other dims low), counting the values no set can take. */
static void keep_row(const problem *p, struct setlist *l, const int64_t *vals, int div_pick,
                     rng *ladder)
{
    dimset d;
    int kept = 0;
    if (fill_row(p, vals, div_pick, &d) == 0)
        kept = keep_set(p, l, &d, 0);
    else
        dimset_free(&d);
    if (kept)
        return;
    for (int i = 0; i < p->hidden.n_dims; i++)
        if (vals[i] >= 0 && !try_alone(p, l, i, vals[i], ladder))
            l->skipped++;
}

/* Row r of the aligned covering array: every range dim its kind-r value, every values dim its
 * r-th value; a value the row cannot hold is tried alone. */
static void aligned_row(const problem *p, uint64_t seed, struct setlist *l, int r)
{
    const problem_hidden *h = &p->hidden;
    int64_t vals[KC_MAX_DIMS];
    for (int i = 0; i < h->n_dims; i++) {
        const hidden_dim *hd = &h->dims[i];
        rng g = boundary_rng(p, seed, i, r);
        vals[i] = hd->rule == KC_HIDDEN_RANGE
                      ? (r < BK_N ? boundary_value(hd->min, hd->max, (enum bkind)r, &g) : -1)
                  : hd->rule == KC_HIDDEN_VALUES ? hd->values[r % hd->n_values]
                                                 : -1;
    }
    rng ladder = ladder_rng(p, seed, r);
    keep_row(p, l, vals, r % 2, &ladder);
}

/* One set with the divisor_of dim j at k and its base dim at q * k, the others low; 1 kept. */
static int quotient_set(const problem *p, struct setlist *l, int base, int j, int64_t q,
                        int64_t k)
{
    const problem_hidden *h = &p->hidden;
    int64_t vals[KC_MAX_DIMS];
    for (int i = 0; i < h->n_dims; i++)
        vals[i] = i == base ? q * k : i == j ? k : -1;
    if (q * k < h->dims[base].min || q * k > h->dims[base].max)
        return 0;
    dimset d;
    if (fill_row(p, vals, 0, &d) == 0)
        return keep_set(p, l, &d, 0);
    dimset_free(&d);
    return 0;
}

/* Every quotient 1..16 of each divisor_of dim: base = q * k, dim = k, with k = 1 and k drawn
 * from seed among the k >= 2 the base's range allows (a k the caps refuse is halved toward 2). */
static void quotient_sets(const problem *p, uint64_t seed, struct setlist *l)
{
    const problem_hidden *h = &p->hidden;
    for (int j = 0; j < h->n_dims; j++) {
        if (h->dims[j].rule != KC_HIDDEN_DIVISOR_OF)
            continue;
        int base = -1;
        for (int i = 0; i < j; i++)
            if (strcmp(h->dims[i].name, h->dims[j].expr) == 0)
                base = i;
        if (base < 0 || h->dims[base].rule != KC_HIDDEN_RANGE)
            continue;
        const hidden_dim *b = &h->dims[base];
        for (int64_t q = 1; q <= QUOTIENT_MAX; q++) {
            int kept = quotient_set(p, l, base, j, q, 1);
            int64_t k0 = (b->min + q - 1) / q, k1 = b->max / q;
            if (k0 < 2)
                k0 = 2;
            if (k1 >= k0) {
                rng g = boundary_rng(p, seed, j, (int)(BK_N + q));
                int64_t k = uniform_in(&g, k0, k1), got = 0;
                for (;;) {
                    if ((got = quotient_set(p, l, base, j, q, k)) || k <= k0)
                        break;
                    k = k0 + (k - k0) / 2;
                }
                kept += (int)got;
            }
            if (!kept && q <= b->max)
                l->skipped++;
        }
    }
}

#define CAPACITY_TRIES 4

/* Whether name occurs in expr as a whole identifier. */
static int names_dim(const char *expr, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = expr; (s = strstr(s, name)); s += n) {
        int before = s > expr && (isalnum((unsigned char)s[-1]) || s[-1] == '_');
        int after = isalnum((unsigned char)s[n]) || s[n] == '_';
        if (!before && !after)
            return 1;
    }
    return 0;
}

/* Whether a capacity set's dim may be jittered: a range dim of the generator no other dim of
 * it is computed from or divides (derived dims are recomputed after). */
static int jitter_dim(const problem_hidden *h, const char *name)
{
    int range = 0;
    for (int i = 0; i < h->n_dims; i++) {
        const hidden_dim *hd = &h->dims[i];
        if (strcmp(hd->name, name) == 0)
            range = hd->rule == KC_HIDDEN_RANGE;
        else if ((hd->rule == KC_HIDDEN_EXPR || hd->rule == KC_HIDDEN_DIVISOR_OF) &&
                 names_dim(hd->expr, name))
            return 0;
    }
    return range;
}

/* Capacity set c jittered upward from seed: its largest dim plus uniform(0, v/32), the jitter
 * halved up to CAPACITY_TRIES times while the capacity cap or a require refuses it, then the
 * manifest's set itself. Only upward: the set still exceeds what it was built to exceed. */
static int capacity_set(const problem *p, uint64_t seed, struct setlist *l, int c)
{
    const dimset *cap = &p->hidden.capacity[c];
    int top = -1;
    for (int i = 0; i < cap->n; i++)
        if (jitter_dim(&p->hidden, cap->names[i]) && (top < 0 || cap->values[i] > cap->values[top]))
            top = i;
    rng g = boundary_rng(p, seed, KC_MAX_DIMS + c, 0);
    int64_t v = top >= 0 ? cap->values[top] : 0, add = v >= 32 ? uniform_in(&g, 0, v / 32) : 0;
    for (int t = 0;; t++, add /= 2) {
        int exact = t >= CAPACITY_TRIES || add == 0;
        dimset d = {0};
        dimset_copy(&d, cap);
        if (!exact)
            d.values[top] = v + add;
        if (keep_set(p, l, &d, 1))
            return 1;
        if (exact || l->n == l->max)
            return 0;
    }
}

/* ---- octave rows: a value in every power-of-two band ---- */

#define OCTAVE_KIND 0x0c7a0000 /* the octave rows' streams, apart from the kinds' and quotients' */

/* The value dim i takes in octave row j: one drawn from its j-th octave (2^(j-1), 2^j] within
 * [lo, hi] (octave 0: the value 1), or -1 when the range misses that octave. */
static int64_t octave_value(const problem *p, uint64_t seed, int i, int j)
{
    const hidden_dim *hd = &p->hidden.dims[i];
    if (hd->rule != KC_HIDDEN_RANGE || j > 40)
        return -1;
    int64_t a = j == 0 ? 1 : ((int64_t)1 << (j - 1)) + 1, b = (int64_t)1 << j;
    if (a < hd->min)
        a = hd->min;
    if (b > hd->max)
        b = hd->max;
    if (a > b)
        return -1;
    rng g = boundary_rng(p, seed, i, OCTAVE_KIND + j);
    return uniform_in(&g, a, b);
}

/* Octave row j: every range dim a value from its j-th octave (the others low); a value the row
 * cannot hold is tried alone. Where sizes break is mostly where a power of two is crossed (a
 * tile, a warp count, a split path), so every octave of every dim holds a value in every
 * verification: a kernel wrong only for batch 9..16 of 1..520 meets one each time, which the
 * linear strata (26 values wide there) do not promise. */
static void octave_row(const problem *p, uint64_t seed, struct setlist *l, int j)
{
    const problem_hidden *h = &p->hidden;
    int64_t vals[KC_MAX_DIMS];
    int any = 0;
    for (int i = 0; i < h->n_dims; i++)
        any |= (vals[i] = octave_value(p, seed, i, j)) >= 0;
    rng ladder = ladder_rng(p, seed, LADDER_OCTAVE_ROWS + j);
    if (any)
        keep_row(p, l, vals, 0, &ladder);
}

int problem_boundary_sets(const problem *p, uint64_t seed, dimset *out, int max, int *skipped,
                          strbuf *err)
{
    const problem_hidden *h = &p->hidden;
    if (!h->present)
        return kc_fail(err, "%s: no \"hidden\" generator in the manifest", p->id);
    struct setlist l = {.sets = out, .max = max};
    int rows = BK_N;
    for (int i = 0; i < h->n_dims; i++)
        if (h->dims[i].rule == KC_HIDDEN_VALUES && h->dims[i].n_values > rows)
            rows = h->dims[i].n_values;
    for (int r = 0; r < rows; r++)
        aligned_row(p, seed, &l, r);
    quotient_sets(p, seed, &l);
    for (int c = 0; c < h->n_capacity; c++)
        if (!capacity_set(p, seed, &l, c))
            l.skipped++;
    for (int j = 0; j <= 40; j++)
        octave_row(p, seed, &l, j);
    if (skipped)
        *skipped = l.skipped;
    return l.n;
}

/* ---- stratified draws ---- */

/* The bounds of stratum s of [lo, hi] (KC_STRATA equal parts; a range narrower than that
 * gives single values). */
static void stratum_bounds(int64_t lo, int64_t hi, int s, int64_t *a, int64_t *b)
{
    int64_t span = hi - lo + 1;
    *a = lo + (int64_t)((__int128)span * s / KC_STRATA);
    *b = lo + (int64_t)((__int128)span * (s + 1) / KC_STRATA) - 1;
    if (*b < *a)
        *b = *a;
}

/* strata[i]: the stratum dim i takes (-1: its lowest two strata, drawn freely). */
static int strata_row(const problem *p, rng *r, const int *strata, dimset *d)
{
    const problem_hidden *h = &p->hidden;
    memset(d, 0, sizeof(*d));
    for (int i = 0; i < h->n_dims; i++) {
        const hidden_dim *hd = &h->dims[i];
        int s = strata[i] >= 0 ? strata[i] : (int)(rng_next(r) % 2);
        int64_t v = 0, a, b;
        switch (hd->rule) {
        case KC_HIDDEN_RANGE:
            stratum_bounds(hd->min, hd->max, s, &a, &b);
            v = uniform_in(r, a, b);
            break;
        case KC_HIDDEN_VALUES:
            stratum_bounds(0, hd->n_values - 1, s, &a, &b);
            v = hd->values[uniform_in(r, a, b)];
            break;
        case KC_HIDDEN_DIVISOR_OF:
            dimset_get(d, hd->expr, &v);
            if (rng_divisor(r, v, &v)) /* a base past 2^32: 1 divides it */
                v = 1;
            break;
        case KC_HIDDEN_EXPR:
            if (expr_eval(hd->expr, d, &v, NULL))
                return -1;
            break;
        }
        dimset_set(d, hd->name, v);
    }
    return 0;
}

#define STRATUM_TRIES 64

/* Up to STRATUM_TRIES draws of a row with these strata; 1 when one was kept. */
static int draw_row(const problem *p, rng *r, const int *strata, struct setlist *l)
{
    for (int t = 0; t < STRATUM_TRIES; t++) {
        dimset d;
        if (strata_row(p, r, strata, &d)) {
            dimset_free(&d);
            return 0;
        }
        int before = l->n;
        if (keep_set(p, l, &d, 0) && l->n > before)
            return 1;
        if (l->n == l->max)
            return 0;
    }
    return 0;
}

/* Marks in seen every stratum of hd that holds v (a range narrower than KC_STRATA has strata
 * of one value each, several of them the same value). */
static void mark_strata(const hidden_dim *hd, int64_t v, int *seen)
{
    int64_t lo = hd->rule == KC_HIDDEN_RANGE ? hd->min : 0;
    int64_t hi = hd->rule == KC_HIDDEN_RANGE ? hd->max : hd->n_values - 1;
    if (hd->rule == KC_HIDDEN_VALUES)
        for (int i = 0; i < hd->n_values; i++)
            if (hd->values[i] == v)
                v = i;
    for (int s = 0; s < KC_STRATA; s++) {
        int64_t a, b;
        stratum_bounds(lo, hi, s, &a, &b);
        if (v >= a && v <= b)
            seen[s] = 1;
    }
}

static int stratified_dim(const hidden_dim *hd)
{
    return hd->rule == KC_HIDDEN_RANGE || hd->rule == KC_HIDDEN_VALUES;
}

/* The strata each dim holds among the sets kept; a stratum none holds gets a set of its own
 * (the other dims in their lowest strata). */
static void fill_missing_strata(const problem *p, rng *r, struct setlist *l)
{
    const problem_hidden *h = &p->hidden;
    for (int j = 0; j < h->n_dims; j++) {
        if (!stratified_dim(&h->dims[j]))
            continue;
        int seen[KC_STRATA] = {0};
        for (int k = 0; k < l->n; k++) {
            int64_t v;
            if (dimset_get(&l->sets[k], h->dims[j].name, &v))
                mark_strata(&h->dims[j], v, seen);
        }
        for (int s = 0; s < KC_STRATA; s++) {
            int strata[KC_MAX_DIMS];
            for (int i = 0; i < h->n_dims; i++)
                strata[i] = i == j ? s : -1;
            if (!seen[s] && !draw_row(p, r, strata, l))
                l->skipped++;
        }
    }
}

int problem_stratified_sets(const problem *p, uint64_t seed, dimset *out, int max, strbuf *err)
{
    const problem_hidden *h = &p->hidden;
    if (!h->present)
        return kc_fail(err, "%s: no \"hidden\" generator in the manifest", p->id);
    rng r = rng_for(p->id, seed, 0x57a7ull << 32);
    int perm[KC_MAX_DIMS][KC_STRATA];
    for (int i = 0; i < h->n_dims; i++) { /* Fisher-Yates per dim */
        for (int s = 0; s < KC_STRATA; s++)
            perm[i][s] = s;
        for (int s = KC_STRATA - 1; s > 0; s--) {
            int e = (int)(rng_next(&r) % (uint64_t)(s + 1)), t = perm[i][s];
            perm[i][s] = perm[i][e], perm[i][e] = t;
        }
    }
    struct setlist l = {.sets = out, .max = max};
    for (int k = 0; k < KC_STRATA; k++) {
        int strata[KC_MAX_DIMS];
        for (int i = 0; i < h->n_dims; i++)
            strata[i] = stratified_dim(&h->dims[i]) ? perm[i][k] : -1;
        draw_row(p, &r, strata, &l);
    }
    fill_missing_strata(p, &r, &l);
    return l.n;
}

int problem_cover_sets(const problem *p, const char *family, uint64_t seed, dimset *out, int max,
                       strbuf *err)
{
    if (strcmp(family, "bound") == 0)
        return problem_boundary_sets(p, seed, out, max, NULL, err);
    if (strcmp(family, "strat") == 0)
        return problem_stratified_sets(p, seed, out, max, err);
    return kc_fail(err, "unknown family of coverage sets '%s' (bound, strat)", family);
}
