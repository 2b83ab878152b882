/* test_worker_profile: the per-kernel table of kverify dump --profile (verify/worker/
 * worker_profile.c): records add up by kernel name, per execution, the costliest first; past
 * WK_PROFILE_KERNELS names the rest is added up under "(others)", and the totals keep every
 * record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "verify/worker/worker_profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *row(json_t *profile, size_t i)
{
    return json_array_get(json_object_get(profile, "kernels"), i);
}

static double num(json_t *o, const char *key) { return json_number_value(json_object_get(o, key)); }

static void records_add_up_by_name_per_execution(void **state)
{
    (void)state;
    wk_kernel_profile *t = calloc(1, sizeof(*t));
    for (int run = 0; run < 2; run++) { /* two executions: conv 3 launches of 1 ms, sum 1 of 4 ms */
        for (int i = 0; i < 3; i++)
            wk_profile_add(t, "conv2d_ref_split", 1e6);
        wk_profile_add(t, "conv2d_split_sum", 4e6);
    }
    json_t *p = wk_profile_json(t, 2);
    assert_int_equal(json_integer_value(json_object_get(p, "runs")), 2);
    assert_true(num(p, "device_ms") == 7.0 && num(p, "launches") == 4.0);
    assert_int_equal(json_array_size(json_object_get(p, "kernels")), 2);
    assert_string_equal(json_string_value(json_object_get(row(p, 0), "kernel")), "conv2d_split_sum");
    assert_true(num(row(p, 0), "ms") == 4.0 && num(row(p, 0), "launches") == 1.0);
    assert_string_equal(json_string_value(json_object_get(row(p, 1), "kernel")), "conv2d_ref_split");
    assert_true(num(row(p, 1), "ms") == 3.0 && num(row(p, 1), "launches") == 3.0);
    json_decref(p);
    free(t);
}

static void names_past_the_table_go_to_others(void **state)
{
    (void)state;
    wk_kernel_profile *t = calloc(1, sizeof(*t));
    char name[32];
    for (int i = 0; i < WK_PROFILE_KERNELS + 3; i++) { /* kernel i takes i + 1 ns */
        snprintf(name, sizeof name, "k%d", i);
        wk_profile_add(t, name, i + 1.0);
    }
    wk_profile_add(t, "k0", 1.0); /* a kept name still adds up after the table is full */
    json_t *p = wk_profile_json(t, 1);
    json_t *kernels = json_object_get(p, "kernels");
    assert_int_equal(json_array_size(kernels), WK_PROFILE_KERNELS + 1);
    double others = 0, prev = 1e300, sum = 0;
    for (size_t i = 0; i < json_array_size(kernels); i++) {
        double ms = num(row(p, i), "ms");
        assert_true(ms <= prev); /* the costliest first */
        prev = ms, sum += ms;
        if (!strcmp(json_string_value(json_object_get(row(p, i), "kernel")), "(others)")) {
            others = ms;
            assert_true(num(row(p, i), "launches") == 3.0);
        }
        if (!strcmp(json_string_value(json_object_get(row(p, i), "kernel")), "k0"))
            assert_true(num(row(p, i), "launches") == 2.0);
    }
    /* (others): kernels 128, 129, 130 at 129 + 130 + 131 ns */
    assert_true(others == (129 + 130 + 131) / 1e6);
    double all = (WK_PROFILE_KERNELS + 3) * (WK_PROFILE_KERNELS + 4) / 2.0 + 1;
    assert_true(num(p, "launches") == WK_PROFILE_KERNELS + 4);
    assert_true(fabs(num(p, "device_ms") - all / 1e6) < 1e-12 && fabs(sum - all / 1e6) < 1e-12);
    json_decref(p);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(records_add_up_by_name_per_execution),
        cmocka_unit_test(names_past_the_table_go_to_others),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
