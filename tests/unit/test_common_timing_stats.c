/* test_common_timing_stats: the timing statistics (common/timing_stats.c) the worker applies to
 * a candidate's samples: the median's noise, the stopping criterion, and the rule that keeps
 * only the plain samples (manifest constants, unstructured inputs) when the others spread them,
 * with the figures of the attention softcap kernels measured on the H100. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/timing_stats.h"

#define NOISE 0.005 /* kverify's default timing noise */

static void quantiles_interpolate(void **state)
{
    (void)state;
    const double s[] = {1, 2, 3, 4, 5};
    assert_float_equal(kc_quantile(s, 5, 0.5), 3, 1e-12);
    assert_float_equal(kc_quantile(s, 5, 0.25), 2, 1e-12);
    assert_float_equal(kc_quantile(s, 4, 0.5), 2.5, 1e-12);
    assert_float_equal(kc_quantile(s, 1, 0.75), 1, 1e-12);
}

static void noise_follows_the_spread(void **state)
{
    (void)state;
    const double flat[] = {24.28, 24.27, 24.28, 24.28, 24.28};
    const double mixed[] = {24.13, 26.27, 25.91, 25.45, 25.63};
    assert_true(kc_median_noise(flat, 5) < NOISE);
    assert_true(kc_median_noise(mixed, 5) > NOISE);
    assert_true(kc_median_noise(mixed, 0) == 0);
    /* one outlier does not move the interquartile range */
    const double one_slow[] = {1.70, 1.437, 1.437, 1.437, 1.436};
    assert_true(kc_median_noise(one_slow, 5) < NOISE);
}

static void enough_needs_five_quiet_samples(void **state)
{
    (void)state;
    const double flat[] = {5.0, 5.0, 5.0, 5.0, 5.0};
    assert_false(kc_timing_enough(flat, 4, KC_TIMING_MIN_REPS, NOISE));
    assert_true(kc_timing_enough(flat, 5, KC_TIMING_MIN_REPS, NOISE));
    const double two_modes[] = {1.70, 1.70, 1.70, 1.437, 1.437};
    assert_false(kc_timing_enough(two_modes, 5, KC_TIMING_MIN_REPS, NOISE));
}

static void plain_samples_left_after_a_drop_need_three(void **state)
{
    (void)state;
    /* attention/007's plain seed-1 sample and two plain extra reps (24.1 ms on the H100) */
    const double plain[] = {24.13, 24.10, 24.12};
    assert_false(kc_timing_enough(plain, 2, KC_TIMING_MIN_PLAIN, NOISE));
    assert_true(kc_timing_enough(plain, 3, KC_TIMING_MIN_PLAIN, NOISE));
    /* the noise criterion still decides */
    const double noisy[] = {24.1, 26.3, 25.2};
    assert_false(kc_timing_enough(noisy, 3, KC_TIMING_MIN_PLAIN, NOISE));
    assert_true(KC_TIMING_MIN_PLAIN < KC_TIMING_MIN_REPS);
}

static void quiet_samples_stay_whatever_their_kind(void **state)
{
    (void)state;
    double t[] = {6.23, 6.24, 6.23, 6.24, 6.23}, c[] = {1, 2, 3, 4, 5};
    const int plain[] = {1, 0, 0, 0, 0};
    assert_int_equal(kc_timing_keep_plain(t, c, plain, 5, NOISE), 5);
    assert_float_equal(t[4], 6.23, 1e-12);
    assert_float_equal(c[1], 2, 1e-12);
}

static void spread_samples_leave_the_plain_ones_in_order(void **state)
{
    (void)state;
    /* attention/007 on the H100: seed 1 plain, seeds 2-5 at softcap 3, 10, 1000, 3 (4-5
     * structured) */
    double t[] = {24.31, 26.45, 26.07, 24.23, 26.15}, c[] = {1979, 1978, 1980, 1977, 1979};
    const int plain[] = {1, 0, 0, 0, 0};
    assert_int_equal(kc_timing_keep_plain(t, c, plain, 5, NOISE), 1);
    assert_float_equal(t[0], 24.31, 1e-12);
    assert_float_equal(c[0], 1979, 1e-12);
    double u[] = {10, 12, 11, 13, 10.5}, d[] = {1, 2, 3, 4, 5};
    const int some[] = {0, 1, 0, 1, 1};
    assert_int_equal(kc_timing_keep_plain(u, d, some, 5, NOISE), 3);
    assert_float_equal(u[0], 12, 1e-12);
    assert_float_equal(u[1], 13, 1e-12);
    assert_float_equal(u[2], 10.5, 1e-12);
    assert_float_equal(d[2], 5, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quantiles_interpolate),
        cmocka_unit_test(noise_follows_the_spread),
        cmocka_unit_test(plain_samples_left_after_a_drop_need_three),
        cmocka_unit_test(enough_needs_five_quiet_samples),
        cmocka_unit_test(quiet_samples_stay_whatever_their_kind),
        cmocka_unit_test(spread_samples_leave_the_plain_ones_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
