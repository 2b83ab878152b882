/* test_verify_deadline: the deadlines of a GPU job's candidate stages (issue 37,
 * verify/service/deadline.c): floor + multiple x the reference's measured time x the run's work
 * ratio + a per-launch allowance; the work ratio from the manifest's bytes and flops (ReLU's
 * capacity set, matmul's N^3), never below 1; launches counted through @for loops; the progress
 * message the worker sends and the client's check of it; the evidence "deadlines" and the
 * client's "timeout". Before issue 37 a hang held the worker 20 s (the first run's fixed
 * deadline): here a level-1 hang costs well under 2 s. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/candidate.h"
#include "common/expr.h"
#include "common/problem.h"
#include "verify/service/deadline.h"
#include "verify/service/gpu_result.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static problem relu, matmul;

static int setup(void **state)
{
    (void)state;
    strbuf err = STRBUF_INIT;
    int rc = problem_load_by_id("level1/019_relu", &relu, &err) ||
             problem_load_by_id("level1/001_square_matmul", &matmul, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.buf);
    sb_free(&err);
    return rc;
}

static int teardown(void **state)
{
    (void)state;
    problem_free(&relu);
    problem_free(&matmul);
    return 0;
}

/* The first run's estimate: 15 x the roofline time at the GPU's f32 peaks + 1 ms; a GPU
 * kc_gpu_peaks does not know gets the slower fallback peaks, hence a longer estimate. */
static void test_estimate(void **state)
{
    (void)state;
    const dimset *d = &relu.dims_default;
    int64_t bytes;
    assert_int_equal(expr_eval(relu.bytes_expr, d, &bytes, NULL), 0);
    double h100 = deadline_estimate_reference_ms(&relu, d, "NVIDIA H100 80GB HBM3");
    assert_true(fabs(h100 - (15.0 * (double)bytes / 3350e6 + 1.0)) < 1e-9 * h100);
    double unknown = deadline_estimate_reference_ms(&relu, d, "Some GPU");
    assert_true(fabs(unknown - (15.0 * (double)bytes / 1000e6 + 1.0)) < 1e-9 * unknown);
    /* the matmul is bound by its flops: 2 N^3 at 67 TFLOP/s */
    const dimset *m = &matmul.dims_default;
    int64_t flops;
    assert_int_equal(expr_eval(matmul.flops_expr, m, &flops, NULL), 0);
    double mm = deadline_estimate_reference_ms(&matmul, m, "NVIDIA H100 80GB HBM3");
    assert_true(fabs(mm - (15.0 * (double)flops / 67e9 + 1.0)) < 1e-9 * mm);
}

static void test_formula(void **state)
{
    (void)state;
    /* a 4 ms reference (ReLU's fp64 reference at the default dims is about that), one launch */
    double d = deadline_candidate_ms(4.0, 1, 1);
    double want = DEADLINE_FLOOR_MS + DEADLINE_MULTIPLE * 4.0 + DEADLINE_PER_LAUNCH_MS;
    assert_true(fabs(d - want) < 1e-9);
    assert_true(d < 2000);   /* a hang costs well under 2 s, not the old 20 s */
    assert_true(d > 4.0 * 25); /* an honest kernel 25 times slower than the reference passes */
    /* the floor alone for a reference too fast to measure; never below it */
    d = deadline_candidate_ms(0, 1, 1);
    assert_true(fabs(d - DEADLINE_FLOOR_MS - DEADLINE_PER_LAUNCH_MS) < 1e-9);
    assert_true(deadline_candidate_ms(-3, 0.2, 0) >= DEADLINE_FLOOR_MS);
    /* scales with the work and the launches */
    assert_true(fabs(deadline_candidate_ms(10, 3, 1) - deadline_candidate_ms(10, 1, 1) -
                     DEADLINE_MULTIPLE * 20) < 1e-9);
    assert_true(fabs(deadline_candidate_ms(1, 1, 65536) - deadline_candidate_ms(1, 1, 1) -
                     DEADLINE_PER_LAUNCH_MS * 65535) < 1e-6);
    /* the numbers the docs state */
    assert_true(DEADLINE_MULTIPLE == 30.0 && DEADLINE_FLOOR_MS == 400.0);
    assert_true(DEADLINE_TRUSTED_MS >= 600000.0);
}

static void set_dims(dimset *d, const char *a, int64_t av, const char *b, int64_t bv)
{
    memset(d, 0, sizeof(*d));
    assert_int_equal(dimset_set(d, a, av), 0);
    if (b)
        assert_int_equal(dimset_set(d, b, bv), 0);
}

static void test_work_ratio(void **state)
{
    (void)state;
    dimset cap;
    /* ReLU's 2.4e9-element capacity set against the default 4096 x 393216 */
    set_dims(&cap, "B", 3, "D", 800000011);
    double r = deadline_work_ratio(&relu, &cap, &relu.dims_default);
    assert_true(fabs(r - 3.0 * 800000011.0 / (4096.0 * 393216.0)) < 1e-9);
    dimset_free(&cap);
    /* smaller sets keep the measured set's deadline */
    assert_true(deadline_work_ratio(&relu, &relu.dims_small, &relu.dims_default) == 1.0);
    assert_true(deadline_work_ratio(&relu, &relu.dims_default, &relu.dims_default) == 1.0);
    /* matmul: flops (2 N^3) grow faster than bytes (12 N^2): the larger ratio counts */
    dimset big;
    set_dims(&big, "N", 8192, NULL, 0);
    assert_true(fabs(deadline_work_ratio(&matmul, &big, &matmul.dims_default) - 8.0) < 1e-9);
    /* measured on a small set, the default set's ratio is its flops ratio */
    assert_true(fabs(deadline_work_ratio(&matmul, &matmul.dims_default, &matmul.dims_small) -
                     pow(4096.0 / 64.0, 3)) < 1e-6);
    dimset_free(&big);
}

static void parse(const problem *p, const char *src, launch_unit *u)
{
    strbuf err = STRBUF_INIT;
    if (candidate_parse(src, p, u, &err))
        fail_msg("%s", err.buf);
    sb_free(&err);
}

static void test_launches(void **state)
{
    (void)state;
    launch_unit u;
    parse(&relu, "extern \"C\" __global__ void k(const float *x, float *y, long long n) {}\n"
                 "// @launch k<<<cdiv(B*D, 256), 256>>>(x, y, B*D);\n", &u);
    assert_int_equal(deadline_unit_launches(&u, &relu.dims_default), 1);
    launch_unit_free(&u);
    parse(&relu, "extern \"C\" __global__ void k(const float *x, float *y, long long n) {}\n"
                 "// @for i in 0..B\n"
                 "// @launch k<<<cdiv(D, 256), 256>>>(x, y, D);\n"
                 "// @end\n", &u);
    assert_int_equal(deadline_unit_launches(&u, &relu.dims_small), 16);
    stage_deadline d;
    deadline_for_run(&relu, &u, "small", &relu.dims_small, &relu.dims_default, 2.0, &d);
    assert_string_equal(d.run, "small");
    assert_int_equal(d.launches, 16);
    assert_true(d.work_ratio == 1.0);
    assert_true(fabs(d.ms - deadline_candidate_ms(2.0, 1, 16)) < 1e-9);
    launch_unit_free(&u);
}

static void test_progress_message(void **state)
{
    (void)state;
    stage_deadline d = {.run = "alt0", .ms = 612.5, .reference_ms = 6.8, .work_ratio = 1.5,
                        .launches = 3};
    json_t *m = deadline_progress("candidate", &d);
    assert_string_equal(json_string_value(json_object_get(m, "progress")), "candidate");
    assert_true(json_number_value(json_object_get(m, "deadline_ms")) == 612.5);
    assert_string_equal(json_string_value(json_object_get(m, "run")), "alt0");
    assert_true(json_number_value(json_object_get(m, "reference_ms")) == 6.8);
    assert_true(json_number_value(json_object_get(m, "work_ratio")) == 1.5);
    assert_int_equal(json_integer_value(json_object_get(m, "launches")), 3);
    /* the client accepts it for its job, and a bare trusted-stage report as before */
    const char *why;
    json_object_set_new(m, "job", json_integer(7));
    assert_int_equal(gpu_message_check(m, 7, &why), GPU_MSG_PROGRESS);
    json_t *bare = json_pack("{s:I,s:s,s:f}", "job", (json_int_t)7, "progress", "checks",
                             "deadline_ms", 600000.0);
    assert_int_equal(gpu_message_check(bare, 7, &why), GPU_MSG_PROGRESS);
    json_decref(bare);
    /* a malformed basis is a protocol error, never a deadline */
    static const char *const bad[] = {
        "{\"job\":7,\"progress\":\"candidate\",\"deadline_ms\":500,\"run\":5}",
        "{\"job\":7,\"progress\":\"candidate\",\"deadline_ms\":500,\"reference_ms\":-1}",
        "{\"job\":7,\"progress\":\"candidate\",\"deadline_ms\":500,\"work_ratio\":0.5}",
        "{\"job\":7,\"progress\":\"candidate\",\"deadline_ms\":500,\"launches\":1.5}",
        "{\"job\":7,\"progress\":\"candidate\",\"deadline_ms\":500,\"launches\":9999999}",
        "{\"job\":7,\"progress\":\"candidate\",\"deadline_ms\":500,\"run\":"
        "\"0123456789012345678901234567890123456789012345678901234567890123456789\"}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *b = json_loads(bad[i], 0, NULL);
        assert_non_null(b);
        if (gpu_message_check(b, 7, &why) != GPU_MSG_BAD)
            fail_msg("accepted: %s", bad[i]);
        json_decref(b);
    }
    json_decref(m);
}

static void test_evidence(void **state)
{
    (void)state;
    stage_deadline calib = {.run = "default", .reference_ms = 4.2, .work_ratio = 1, .launches = 1},
                   timed = calib;
    calib.ms = timed.ms = deadline_candidate_ms(4.2, 1, 1);
    json_t *e = deadline_evidence(&calib, &timed);
    static const char *const keys[] = {"reference_ms", "measured_on", "multiple", "floor_ms",
                                       "per_launch_ms", "candidate_ms", "launches",
                                       "timed_rep_ms", "trusted_ms", NULL};
    for (const char *const *k = keys; *k; k++)
        if (!json_object_get(e, *k))
            fail_msg("evidence deadlines lacks %s", *k);
    assert_int_equal(json_object_size(e), sizeof(keys) / sizeof(keys[0]) - 1);
    assert_true(json_number_value(json_object_get(e, "reference_ms")) == 4.2);
    assert_string_equal(json_string_value(json_object_get(e, "measured_on")), "default");
    assert_true(json_number_value(json_object_get(e, "candidate_ms")) == calib.ms);
    assert_true(json_number_value(json_object_get(e, "multiple")) == DEADLINE_MULTIPLE);
    assert_true(json_number_value(json_object_get(e, "trusted_ms")) == DEADLINE_TRUSTED_MS);
    json_decref(e);
}

static void test_timeout_evidence(void **state)
{
    (void)state;
    stage_deadline d = {.run = "bound3", .ms = 530, .reference_ms = 4, .work_ratio = 1,
                        .launches = 1};
    json_t *m = deadline_progress("candidate", &d);
    json_t *t = deadline_timeout_evidence(m, 531.5);
    assert_string_equal(json_string_value(json_object_get(t, "stage")), "candidate");
    assert_true(json_number_value(json_object_get(t, "deadline_ms")) == 530);
    assert_true(json_number_value(json_object_get(t, "waited_ms")) == 531.5);
    assert_string_equal(json_string_value(json_object_get(t, "run")), "bound3");
    assert_true(json_number_value(json_object_get(t, "reference_ms")) == 4);
    json_decref(t);
    json_decref(m);
    /* no progress report yet: the set-up deadline */
    t = deadline_timeout_evidence(NULL, 120001);
    assert_string_equal(json_string_value(json_object_get(t, "stage")), "setup");
    assert_true(json_number_value(json_object_get(t, "deadline_ms")) == DEADLINE_SETUP_MS);
    assert_null(json_object_get(t, "run"));
    json_decref(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formula),
        cmocka_unit_test(test_estimate),
        cmocka_unit_test(test_work_ratio),
        cmocka_unit_test(test_launches),
        cmocka_unit_test(test_progress_message),
        cmocka_unit_test(test_evidence),
        cmocka_unit_test(test_timeout_evidence),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
