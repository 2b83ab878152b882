/* test_common_cover: the dims sets every verification runs besides its random draws
 * (common/problem_cover.c, issue 34): the boundary sets hold, for every range dim, its low end,
 * 1, a small and a large prime, 2^k - 1 and 2^k + 1, values 1 past odd multiples of 32..256 and
 * its high end whatever the seed, pair values of one kind (an MSE's B*D is 1 past a multiple of
 * 256 in some set), give every GQA group size 1..16, are the same for the same seed and differ
 * between seeds (the primes, the 2^k +- 1, the quotient bases, the capacity jitter); the
 * stratified draws put a value in each of the 20 strata of every range dim (so every band of 10%
 * of a range holds one) whatever the seed; octave rows put a value in every power-of-two band
 * of every range dim (band_gemm_batch's B in 9..16); a value the low ends cannot hold under a
 * require is run once, with the other dims drawn up a ladder of their ranges; every set meets the caps; capacity sets load with
 * precise errors, bypass the byte cap and are jittered upward only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/error.h"
#include "common/fsutil.h"
#include "common/problem.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/kc-test-cover-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    remove_tree(tmpdir);
    return 0;
}

static void load_shipped(const char *id, problem *p)
{
    strbuf root = STRBUF_INIT, path = STRBUF_INIT, err = STRBUF_INIT;
    problems_root(&root);
    sb_addf(&path, "%s/%s.json", root.buf, id);
    if (problem_load(path.buf, p, &err))
        fail_msg("%s", err.buf);
    sb_free(&root), sb_free(&path), sb_free(&err);
}

static int64_t dim(const dimset *d, const char *name)
{
    int64_t v = -1;
    assert_true(dimset_get(d, name, &v));
    return v;
}

static int has_value(const dimset *sets, int n, const char *name, int64_t v)
{
    for (int i = 0; i < n; i++)
        if (dim(&sets[i], name) == v)
            return 1;
    return 0;
}

static void free_sets(dimset *sets, int n)
{
    for (int i = 0; i < n; i++)
        dimset_free(&sets[i]);
}

/* Whether d is capacity set c jittered upward: every dim of c at least c's value, one at most
 * (the largest jittered) past it, by at most v/32. */
static int jittered_capacity(const problem *p, const dimset *d, int c)
{
    const dimset *cap = &p->hidden.capacity[c];
    int past = 0;
    for (int k = 0; k < cap->n; k++) {
        int64_t v = dim(d, cap->names[k]), want = cap->values[k];
        if (v < want || v > want + want / 32)
            return 0;
        past += v > want;
    }
    return past <= 1;
}

static void assert_admitted(const problem *p, const dimset *sets, int n)
{
    for (int i = 0; i < n; i++) {
        strbuf why = STRBUF_INIT;
        int capacity = 0;
        for (int c = 0; c < p->hidden.n_capacity; c++)
            capacity |= jittered_capacity(p, &sets[i], c);
        if (problem_hidden_admits(p, &sets[i], capacity, &why))
            fail_msg("%s set %d: %s", p->id, i, why.buf);
        sb_free(&why);
    }
}

/* Every capacity set of p is among the sets, jittered upward at most (a set that still exceeds
 * what it was built to exceed); returns how many were jittered. */
static int assert_capacity_kept(const problem *p, const dimset *sets, int n)
{
    int jittered = 0;
    for (int c = 0; c < p->hidden.n_capacity; c++) {
        int found = 0;
        for (int i = 0; i < n && !found; i++)
            if (jittered_capacity(p, &sets[i], c)) {
                found = 1;
                for (int k = 0; k < p->hidden.capacity[c].n; k++)
                    jittered |= dim(&sets[i], p->hidden.capacity[c].names[k]) !=
                                p->hidden.capacity[c].values[k];
            }
        if (!found)
            fail_msg("%s: capacity set %d missing", p->id, c);
    }
    return jittered;
}

#define SEEDS 12

static int is_prime64(int64_t n)
{
    if (n < 2)
        return 0;
    for (int64_t f = 2; f * f <= n; f++)
        if (n % f == 0)
            return 0;
    return 1;
}

/* 2^k + sign for some k >= kmin. */
static int pow_pm(int64_t v, int sign, int kmin)
{
    for (int k = kmin; k < 41; k++)
        if (v == ((int64_t)1 << k) + sign)
            return 1;
    return 0;
}

/* Whether every dim of a equals b's. */
static int same_sets(const dimset *a, int na, const dimset *b, int nb)
{
    if (na != nb)
        return 0;
    for (int i = 0; i < na; i++) {
        if (a[i].n != b[i].n)
            return 0;
        for (int k = 0; k < a[i].n; k++)
            if (strcmp(a[i].names[k], b[i].names[k]) || a[i].values[k] != b[i].values[k])
                return 0;
    }
    return 1;
}

/* The kinds of boundary value one seed's sets give a range dim [1, hi] (hi >= 600): the values
 * of each kind it found, in kind[] (-1: none). */
enum { K_SMALLP, K_LARGEP, K_POWM, K_POWP, K_N };
static void kinds_of(const dimset *sets, int n, const char *name, int64_t hi, int64_t *kind)
{
    for (int k = 0; k < K_N; k++)
        kind[k] = -1;
    for (int i = 0; i < n; i++) {
        int64_t v = dim(&sets[i], name);
        if (is_prime64(v) && v >= 11 && v <= 11 + hi / 20 + 100 && kind[K_SMALLP] < 0)
            kind[K_SMALLP] = v;
        if (is_prime64(v) && v >= hi - hi / 20 - 100)
            kind[K_LARGEP] = v;
        /* the upper half of the valid k: 2^k +- 1 at least sqrt-ish of the range */
        if (pow_pm(v, -1, 2) && v * v >= hi / 4)
            kind[K_POWM] = v;
        if (pow_pm(v, 1, 2) && v * v >= hi / 4)
            kind[K_POWP] = v;
    }
}

/* Square matmul, N in 1..1500: for every seed every kind of boundary value of N (1, the ends,
 * a small and a large prime, 2^k - 1 and 2^k + 1, one past an odd multiple of 32..256); the
 * same seed gives the same sets, and the primes and the 2^k +- 1 differ between seeds (a
 * kernel cannot recognise them). */
static void test_boundary_values(void **state)
{
    (void)state;
    problem p;
    load_shipped("level1/001_square_matmul", &p);
    strbuf err = STRBUF_INIT;
    int64_t seen[SEEDS][K_N];
    for (uint64_t s = 0; s < SEEDS; s++) {
        uint64_t seed = s * 0x9e3779b97f4a7c15ull + 7;
        dimset sets[KC_MAX_BOUNDARY], again[KC_MAX_BOUNDARY];
        int skipped = -1;
        int n = problem_boundary_sets(&p, seed, sets, KC_MAX_BOUNDARY, &skipped, &err);
        /* 10 kinds (low = 1): a drawn prime may also be one past an odd multiple of 32 */
        assert_true(n >= 8);
        assert_int_equal(skipped, 0);
        int64_t fixed[] = {1, 1500};
        for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
            if (!has_value(sets, n, "N", fixed[i]))
                fail_msg("seed %llu: N = %lld missing", (unsigned long long)seed,
                         (long long)fixed[i]);
        for (int64_t m = 32; m <= 256; m *= 2) {
            int hit = 0;
            for (int i = 0; i < n; i++)
                hit |= dim(&sets[i], "N") % (2 * m) == m + 1;
            if (!hit)
                fail_msg("seed %llu: no N one past an odd multiple of %lld",
                         (unsigned long long)seed, (long long)m);
        }
        kinds_of(sets, n, "N", 1500, seen[s]);
        for (int k = 0; k < K_N; k++)
            if (seen[s][k] < 0)
                fail_msg("seed %llu: boundary kind %d missing", (unsigned long long)seed, k);
        assert_admitted(&p, sets, n);
        /* the same seed: the same sets */
        assert_int_equal(problem_boundary_sets(&p, seed, again, KC_MAX_BOUNDARY, NULL, &err), n);
        assert_true(same_sets(sets, n, again, n));
        free_sets(sets, n), free_sets(again, n);
    }
    for (int k = 0; k < K_N; k++) {
        int distinct = 0;
        for (int s = 0; s < SEEDS; s++) {
            int first = 1;
            for (int t = 0; t < s; t++)
                first &= seen[t][k] != seen[s][k];
            distinct += first;
        }
        if (distinct < 3)
            fail_msg("boundary kind %d: %d distinct values over %d seeds", k, distinct, SEEDS);
    }
    /* other seeds, other sets */
    dimset a[KC_MAX_BOUNDARY], b[KC_MAX_BOUNDARY];
    int na = problem_boundary_sets(&p, 1, a, KC_MAX_BOUNDARY, NULL, &err);
    int nb = problem_boundary_sets(&p, 2, b, KC_MAX_BOUNDARY, NULL, &err);
    assert_false(same_sets(a, na, b, nb));
    free_sets(a, na), free_sets(b, nb);
    problem_free(&p);
    sb_free(&err);
}

/* MSE over B x D: for every seed some boundary set has B*D one past a multiple of 256, one a
 * single element, and each dim gets every kind. */
static void test_boundary_pairs_kinds(void **state)
{
    (void)state;
    problem p;
    load_shipped("level1/094_mse_loss", &p);
    strbuf err = STRBUF_INIT;
    for (uint64_t seed = 100; seed < 100 + SEEDS; seed++) {
        dimset sets[KC_MAX_BOUNDARY];
        int n = problem_boundary_sets(&p, seed, sets, KC_MAX_BOUNDARY, NULL, &err);
        int off256 = 0, single = 0;
        for (int i = 0; i < n; i++) {
            int64_t e = dim(&sets[i], "B") * dim(&sets[i], "D");
            off256 |= e % 256 == 1 && e > 256;
            single |= e == 1;
        }
        assert_true(off256);
        assert_true(single);
        int64_t kind[K_N];
        kinds_of(sets, n, "D", 100000, kind);
        for (int k = 0; k < K_N; k++)
            if (kind[k] < 0)
                fail_msg("seed %llu: D's boundary kind %d missing", (unsigned long long)seed, k);
        assert_true(has_value(sets, n, "D", 100000) && has_value(sets, n, "B", 5000));
        assert_admitted(&p, sets, n);
        free_sets(sets, n);
    }
    problem_free(&p);
    sb_free(&err);
}

/* GQA: for every seed every group size HQ/HKV from 1 to 16 is in the boundary sets; the bases
 * with HKV >= 2 vary with the seed. */
static void test_boundary_group_sizes(void **state)
{
    (void)state;
    problem p;
    load_shipped("attention/008_gqa_causal", &p);
    strbuf err = STRBUF_INIT;
    int hkv_seen[17] = {0};
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        dimset sets[KC_MAX_BOUNDARY];
        int n = problem_boundary_sets(&p, seed * 31337, sets, KC_MAX_BOUNDARY, NULL, &err);
        int seen[17] = {0};
        for (int i = 0; i < n; i++) {
            int64_t hq = dim(&sets[i], "HQ"), hkv = dim(&sets[i], "HKV");
            assert_int_equal(hq % hkv, 0);
            if (hq / hkv >= 1 && hq / hkv <= 16)
                seen[hq / hkv] = 1;
            if (hq / hkv == 2 && hkv <= 16)
                hkv_seen[hkv] = 1;
        }
        for (int q = 1; q <= 16; q++)
            if (!seen[q])
                fail_msg("seed %llu: group size %d missing", (unsigned long long)seed * 31337, q);
        assert_admitted(&p, sets, n);
        free_sets(sets, n);
    }
    int kinds = 0; /* group size 2 with HKV from 2 to 8: drawn, not always 2 */
    for (int k = 2; k <= 8; k++)
        kinds += hkv_seen[k];
    assert_true(kinds >= 3);
    problem_free(&p);
    sb_free(&err);
}

/* Every stratum of every range dim holds a value, for many seeds; sets differ by seed. */
static void check_strata(const char *id, const char *name, int64_t lo, int64_t hi)
{
    problem p;
    load_shipped(id, &p);
    strbuf err = STRBUF_INIT;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        dimset sets[KC_MAX_STRATIFIED];
        int n = problem_stratified_sets(&p, seed * 7919, sets, KC_MAX_STRATIFIED, &err);
        assert_true(n >= KC_STRATA);
        /* any band of 10% of the range holds a drawn value */
        for (int64_t a = lo; a + (hi - lo + 1) / 10 <= hi; a += (hi - lo + 1) / 37 + 1) {
            int64_t b = a + (hi - lo + 1) / 10;
            int hit = 0;
            for (int i = 0; i < n; i++)
                hit |= dim(&sets[i], name) >= a && dim(&sets[i], name) <= b;
            if (!hit)
                fail_msg("%s seed %llu: no %s in [%lld, %lld]", id, (unsigned long long)seed,
                         name, (long long)a, (long long)b);
        }
        assert_admitted(&p, sets, n);
        free_sets(sets, n);
    }
    problem_free(&p);
    sb_free(&err);
}

/* Octave rows: every power-of-two band of every range dim holds a value in every
 * verification. level2/076's B is drawn from 1..520: a kernel wrong only for B in 9..16 (the
 * catalogue's band_gemm_batch) meets one whatever the seed; so does one wrong for OUT in
 * 2049..4096. */
static void test_boundary_octaves(void **state)
{
    (void)state;
    problem p;
    load_shipped("level2/076_gemm_add_relu", &p);
    strbuf err = STRBUF_INIT;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        dimset sets[KC_MAX_BOUNDARY];
        int n = problem_boundary_sets(&p, seed * 0x9e37, sets, KC_MAX_BOUNDARY, NULL, &err);
        assert_true(n > 0);
        for (int j = 1; j <= 10; j++) { /* B's octaves (2^(j-1), 2^j] within 1..520 */
            int64_t lo = ((int64_t)1 << (j - 1)) + 1, hi = (int64_t)1 << j, seen = 0;
            for (int i = 0; i < n; i++) {
                int64_t b = dim(&sets[i], "B");
                seen |= b >= lo && b <= (hi < 520 ? hi : 520);
            }
            if (!seen)
                fail_msg("seed %llu: no B in %lld..%lld", (unsigned long long)seed,
                         (long long)lo, (long long)hi);
        }
        int64_t band = 0, wide = 0;
        for (int i = 0; i < n; i++) {
            band |= dim(&sets[i], "B") >= 9 && dim(&sets[i], "B") <= 16;
            wide |= dim(&sets[i], "OUT") >= 2049 && dim(&sets[i], "OUT") <= 4096;
        }
        assert_true(band && wide);
        for (int i = 0; i < n; i++)
            dimset_free(&sets[i]);
    }
    sb_free(&err);
    problem_free(&p);
}

static void test_stratified_bands(void **state)
{
    (void)state;
    check_strata("level1/001_square_matmul", "N", 1, 1500);
    check_strata("level1/094_mse_loss", "D", 1, 100000);
    check_strata("level1/094_mse_loss", "B", 1, 5000);
    check_strata("attention/008_gqa_causal", "S", 1, 600);
}

static void test_stratified_seeded(void **state)
{
    (void)state;
    problem p;
    load_shipped("level1/094_mse_loss", &p);
    strbuf err = STRBUF_INIT;
    dimset a[KC_MAX_STRATIFIED], b[KC_MAX_STRATIFIED], c[KC_MAX_STRATIFIED];
    int na = problem_stratified_sets(&p, 5, a, KC_MAX_STRATIFIED, &err);
    int nb = problem_stratified_sets(&p, 5, b, KC_MAX_STRATIFIED, &err);
    int nc = problem_stratified_sets(&p, 6, c, KC_MAX_STRATIFIED, &err);
    assert_int_equal(na, nb);
    int same = 1, differs = 0;
    for (int i = 0; i < na; i++)
        same &= dim(&a[i], "D") == dim(&b[i], "D") && dim(&a[i], "B") == dim(&b[i], "B");
    for (int i = 0; i < na && i < nc; i++)
        differs |= dim(&a[i], "D") != dim(&c[i], "D");
    assert_true(same);
    assert_true(differs);
    free_sets(a, na), free_sets(b, nb), free_sets(c, nc);
    problem_free(&p);
    sb_free(&err);
}

/* The relu manifest with its own capacity sets replaced by `capacity`, from a tmpdir copy. */
static int load_with_capacity(const char *capacity, problem *p, strbuf *err)
{
    strbuf src = STRBUF_INIT, root = STRBUF_INIT, path = STRBUF_INIT, out = STRBUF_INIT;
    problems_root(&root);
    sb_addf(&path, "%s/level1/019_relu.json", root.buf);
    assert_int_equal(read_file(path.buf, &src, err), 0);
    char *own = strstr(src.buf, ",\n    \"capacity\":"); /* the shipped sets: replaced */
    if (own) {
        char *eol = strchr(own + 2, '\n');
        memmove(own, eol, strlen(eol) + 1);
        src.len = strlen(src.buf);
    }
    char *hit = strstr(src.buf, "\"max_bytes\": 67108864,");
    assert_non_null(hit);
    hit += strlen("\"max_bytes\": 67108864,");
    sb_add(&out, src.buf, (size_t)(hit - src.buf));
    sb_addf(&out, " \"capacity\": %s,", capacity);
    sb_adds(&out, hit);
    sb_reset(&path);
    sb_addf(&path, "%s/level1", tmpdir);
    assert_int_equal(mkdir_p(path.buf, err), 0);
    sb_adds(&path, "/019_relu.cu");
    assert_int_equal(write_file_atomic(path.buf, "// x\n", 5, err), 0);
    sb_reset(&path);
    sb_addf(&path, "%s/level1/019_relu.json", tmpdir);
    assert_int_equal(write_file_atomic(path.buf, out.buf, out.len, err), 0);
    int rc = problem_load(path.buf, p, err);
    sb_free(&src), sb_free(&root), sb_free(&path), sb_free(&out);
    return rc;
}

static void expect_capacity_error(const char *capacity, const char *needle)
{
    problem p;
    strbuf err = STRBUF_INIT;
    assert_int_not_equal(load_with_capacity(capacity, &p, &err), 0);
    if (!strstr(err.buf, needle))
        fail_msg("error '%s' does not say '%s'", err.buf, needle);
    sb_free(&err);
}

static void test_capacity_sets(void **state)
{
    (void)state;
    problem p;
    strbuf err = STRBUF_INIT;
    /* 2^31 + 2 elements (17 GB in and out: past max_bytes, within the capacity cap), and rows
     * past grid.y's 65,535 */
    int rc = load_with_capacity("{\"sets\": [{\"B\": 2, \"D\": 1073741825}, {\"B\": 70001, \"D\": 3}], "
                                "\"why\": \"int32 indices and grid.y\"}", &p, &err);
    if (rc)
        fail_msg("%s", err.buf);
    assert_int_equal(p.hidden.n_capacity, 2);
    int jittered = 0;
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        dimset sets[KC_MAX_BOUNDARY];
        int n = problem_boundary_sets(&p, seed, sets, KC_MAX_BOUNDARY, NULL, &err);
        int big = 0, rows = 0;
        for (int i = 0; i < n; i++) {
            int64_t b = dim(&sets[i], "B"), d = dim(&sets[i], "D");
            big |= b == 2 && d >= 1073741825 && d <= 1073741825 + 1073741825 / 32;
            rows |= b >= 70001 && b <= 70001 + 70001 / 32 && d == 3;
        }
        assert_true(big && rows);
        jittered += assert_capacity_kept(&p, sets, n);
        assert_admitted(&p, sets, n);
        free_sets(sets, n);
    }
    assert_true(jittered >= SEEDS / 2); /* not the manifest's sets every time */
    problem_free(&p);
    /* the shipped sets: 70001 rows and 2.1e9 elements (65539 rows of 32771), jittered within the capacity cap */
    load_shipped("level1/094_mse_loss", &p);
    for (uint64_t seed = 1; seed <= 4; seed++) {
        dimset sets[KC_MAX_BOUNDARY];
        int n = problem_boundary_sets(&p, seed << 40, sets, KC_MAX_BOUNDARY, NULL, &err);
        assert_capacity_kept(&p, sets, n);
        assert_admitted(&p, sets, n);
        free_sets(sets, n);
    }
    problem_free(&p);
    expect_capacity_error("{\"sets\": [{\"B\": 2}], \"why\": \"x\"}", "no value for dim 'D'");
    expect_capacity_error("{\"sets\": [{\"B\": 2, \"D\": 3, \"Q\": 1}], \"why\": \"x\"}",
                          "'Q' is not a dim");
    expect_capacity_error("{\"sets\": [{\"B\": 2, \"D\": 3}]}", "hidden.capacity.why");
    expect_capacity_error("{\"sets\": []}", "hidden.capacity");
    expect_capacity_error("{\"sets\": [{\"B\": 4, \"D\": 1000000000}], \"why\": \"x\"}",
                          "bytes"); /* 32 GB in and out: past the capacity cap */
    sb_free(&err);
}

/* A require the low ends break (DenseNet-201's B*S5H*S5W >= 16): a value tried alone has the
 * other dims climb their ranges until the require admits the set. B = 1 is still run (only the
 * largest image, the ladder's exact last step, admits it), once; NC = 1 is run on a batch and
 * an image drawn within the first eighth of the ranges that admits them (another seed, another
 * image). */
static void test_boundary_ladder(void **state)
{
    (void)state;
    problem p;
    load_shipped("level3/016_densenet201", &p);
    strbuf err = STRBUF_INIT;
    int64_t heights[4] = {0};
    for (uint64_t seed = 1; seed <= 4; seed++) {
        dimset sets[KC_MAX_BOUNDARY];
        int skipped = -1;
        int n = problem_boundary_sets(&p, seed, sets, KC_MAX_BOUNDARY, &skipped, &err);
        assert_true(n > 0);
        int one = 0;
        for (int i = 0; i < n; i++) {
            if (dim(&sets[i], "B") == 1) {
                one++;
                assert_true(dim(&sets[i], "S5H") * dim(&sets[i], "S5W") >= 16);
            }
            if (dim(&sets[i], "NC") == 1)
                heights[seed - 1] = dim(&sets[i], "H");
        }
        assert_true(one <= 1); /* B's low end and its 1 are one value: one set */
        if (!one)
            fail_msg("seed %llu: no boundary set with B = 1", (unsigned long long)seed);
        assert_admitted(&p, sets, n);
        /* H = 32 (its low end) cannot hold 16 values at B <= 3 and W <= 128: counted */
        assert_true(skipped >= 1);
        free_sets(sets, n);
    }
    assert_true(heights[0] > 0);
    assert_false(heights[0] == heights[1] && heights[1] == heights[2] && heights[2] == heights[3]);
    problem_free(&p);
    sb_free(&err);
}

/* A set sent as JSON (dimset_to_json) comes back whole (problem_dims_from_json), derived dims
 * recomputed; a missing dim is named. */
static void test_dims_json_round_trip(void **state)
{
    (void)state;
    problem p;
    load_shipped("attention/008_gqa_causal", &p);
    dimset sets[KC_MAX_BOUNDARY], back;
    strbuf err = STRBUF_INIT;
    int n = problem_boundary_sets(&p, 42, sets, KC_MAX_BOUNDARY, NULL, &err);
    for (int i = 0; i < n; i++) {
        strbuf text = STRBUF_INIT;
        dimset_to_json(&sets[i], &text);
        json_t *o = json_loads(text.buf, 0, NULL);
        if (problem_dims_from_json(&p, o, &back, &err))
            fail_msg("%s: %s", text.buf, err.buf);
        assert_int_equal(back.n, sets[i].n);
        for (int k = 0; k < back.n; k++)
            assert_int_equal(dim(&back, sets[i].names[k]), sets[i].values[k]);
        json_decref(o), dimset_free(&back), sb_free(&text);
    }
    json_t *partial = json_pack("{s:i}", "B", 1);
    assert_int_not_equal(problem_dims_from_json(&p, partial, &back, &err), 0);
    assert_non_null(strstr(err.buf, "missing"));
    json_decref(partial), dimset_free(&back);
    free_sets(sets, n);
    problem_free(&p);
    sb_free(&err);
}

/* problem_cover_sets: "bound" and "strat" are the two families' sets for the seed, one for one
 * (what `kverify problems --boundary/--stratified` and dump's boundK/stratK read); another
 * family is an error. */
static void test_cover_sets_by_family(void **state)
{
    (void)state;
    problem p;
    load_shipped("level1/019_relu", &p);
    dimset a[KC_MAX_BOUNDARY], b[KC_MAX_BOUNDARY];
    strbuf err = STRBUF_INIT;
    int n = problem_cover_sets(&p, "bound", 7, a, KC_MAX_BOUNDARY, &err);
    assert_true(n > 0);
    assert_int_equal(problem_boundary_sets(&p, 7, b, KC_MAX_BOUNDARY, NULL, &err), n);
    for (int i = 0; i < n; i++)
        assert_int_equal(dim(&a[i], "B") * dim(&a[i], "D"), dim(&b[i], "B") * dim(&b[i], "D"));
    free_sets(a, n), free_sets(b, n);
    n = problem_cover_sets(&p, "strat", 7, a, KC_MAX_STRATIFIED, &err);
    assert_int_equal(problem_stratified_sets(&p, 7, b, KC_MAX_STRATIFIED, &err), n);
    for (int i = 0; i < n; i++)
        assert_int_equal(dim(&a[i], "D"), dim(&b[i], "D"));
    free_sets(a, n), free_sets(b, n);
    assert_int_equal(problem_cover_sets(&p, "hidden", 7, a, KC_MAX_BOUNDARY, &err), -1);
    assert_non_null(strstr(err.buf, "unknown family"));
    problem_free(&p);
    sb_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boundary_values),
        cmocka_unit_test(test_boundary_pairs_kinds),
        cmocka_unit_test(test_boundary_group_sizes),
        cmocka_unit_test(test_boundary_octaves),
        cmocka_unit_test(test_stratified_bands),
        cmocka_unit_test(test_stratified_seeded),
        cmocka_unit_test(test_capacity_sets),
        cmocka_unit_test(test_boundary_ladder),
        cmocka_unit_test(test_dims_json_round_trip),
        cmocka_unit_test(test_cover_sets_by_family),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
