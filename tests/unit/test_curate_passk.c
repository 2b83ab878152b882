/* test_curate_passk: the pass@k and speedup@k estimators of curate/passk.c against hand-computed
 * cases (1 - C(n-c,k)/C(n,k); expected best of k samples by enumerating the subsets), their edges
 * (n < k undefined, n - c < k certain) and their stability where the binomials overflow a double.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "curate/passk.h"

#include <math.h>
#include <stdlib.h>

static void pass_at_k_matches_hand_computed_binomials(void **state)
{
    (void)state;
    /* n=10, c=3, k=5: 1 - C(7,5)/C(10,5) = 1 - 21/252 */
    assert_float_equal(passk_estimate(10, 3, 5), 1.0 - 21.0 / 252.0, 1e-12);
    /* k=1 is the fraction correct */
    assert_float_equal(passk_estimate(10, 3, 1), 0.3, 1e-12);
    assert_float_equal(passk_estimate(5, 1, 1), 0.2, 1e-12);
    /* n=6, c=2, k=2: 1 - C(4,2)/C(6,2) = 1 - 6/15 */
    assert_float_equal(passk_estimate(6, 2, 2), 1.0 - 6.0 / 15.0, 1e-12);
    assert_float_equal(passk_estimate(10, 0, 5), 0.0, 1e-12);
    assert_float_equal(passk_estimate(10, 10, 10), 1.0, 1e-12);
}

static void pass_at_k_edges(void **state)
{
    (void)state;
    assert_true(passk_estimate(4, 2, 5) < 0);   /* n < k: undefined */
    assert_true(passk_estimate(4, 2, 0) < 0);
    assert_float_equal(passk_estimate(10, 3, 8), 1.0, 0); /* n - c = 7 < 8: always a correct one */
    assert_float_equal(passk_estimate(5, 0, 5), 0.0, 1e-12);
}

/* C(1000,500) overflows nothing here but C(2000,1000) does (about 1e600): the product form holds. */
static void pass_at_k_is_stable_for_large_n(void **state)
{
    (void)state;
    assert_float_equal(passk_estimate(200, 1, 100), 0.5, 1e-12);
    double v = passk_estimate(2000, 1000, 10);
    /* 1 - C(1000,10)/C(2000,10), by lgamma */
    double lc = lgamma(1001) - lgamma(11) - lgamma(991) - (lgamma(2001) - lgamma(11) - lgamma(1991));
    assert_true(isfinite(v));
    assert_float_equal(v, 1.0 - exp(lc), 1e-9);
}

static void speedup_at_k_matches_subset_enumeration(void **state)
{
    (void)state;
    double a[] = {3, 1, 2};
    assert_float_equal(speedupk_estimate(a, 3, 1), 2.0, 1e-12);
    double b[] = {1, 3, 2};
    assert_float_equal(speedupk_estimate(b, 3, 2), 8.0 / 3.0, 1e-12); /* {1,2}:2 {1,3}:3 {2,3}:3 */
    double c[] = {2, 1, 3};
    assert_float_equal(speedupk_estimate(c, 3, 3), 3.0, 1e-12);
    double d[] = {0, 0, 5, 1}; /* pairs: 0,5,1,5,1,5 */
    assert_float_equal(speedupk_estimate(d, 4, 2), 17.0 / 6.0, 1e-12);
    double e[] = {1, 2};
    assert_true(speedupk_estimate(e, 2, 5) < 0);
}

/* Every 5-subset of 10 values: the mean of their maxima equals the order-statistics sum. */
static void speedup_at_k_equals_brute_force(void **state)
{
    (void)state;
    double v[10] = {0.5, 2.25, 0, 1.75, 3.5, 0, 1.1, 0.9, 2.0, 0.3}, w[10];
    double sum = 0;
    int subsets = 0;
    for (int mask = 0; mask < 1 << 10; mask++) {
        if (__builtin_popcount((unsigned)mask) != 5)
            continue;
        double best = 0;
        for (int i = 0; i < 10; i++)
            if (mask >> i & 1 && v[i] > best)
                best = v[i];
        sum += best;
        subsets++;
    }
    assert_int_equal(subsets, 252);
    for (int i = 0; i < 10; i++)
        w[i] = v[i];
    assert_float_equal(speedupk_estimate(w, 10, 5), sum / subsets, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pass_at_k_matches_hand_computed_binomials),
        cmocka_unit_test(pass_at_k_edges),
        cmocka_unit_test(pass_at_k_is_stable_for_large_n),
        cmocka_unit_test(speedup_at_k_matches_subset_enumeration),
        cmocka_unit_test(speedup_at_k_equals_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
