/* test_verify_heap_policy: the module check after compilation (verify/service/policy.c
 * policy_check_module, issue 34): a kernel that calls device malloc or free, directly, through
 * new/delete or through a macro that spells malloc by token pasting, is refused, naming the
 * device heap; honest kernels (printf included: it is not the heap) pass; bytes that are not an
 * ELF64 cubin, or whose section table is cut, are refused without reading past them. Also
 * policy_module_keeps_state, which decides whether the worker reloads a module before each
 * execution: a module with __device__ variables (zero-initialised or not, the catalogue's
 * state_fresh_detect.cu among them) keeps state, one with only kernels, __constant__ data and
 * shared memory does not, and anything unreadable counts as keeping state; namespace-scope
 * constants get device storage under NVRTC's -default-device (enumerators do not), and the
 * attention references, verified as candidates by the bench and the demo, keep none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/problem.h"
#include "verify/service/nvrtc_compile.h"
#include "verify/service/policy.h"

#include <string.h>

/* Compiles source for sm_90 (trusted path: no sandbox needed for this check) and runs the
 * module check; returns its status, the reason in why. */
static int check_source(const char *source, strbuf *why)
{
    strbuf cubin = STRBUF_INIT, err = STRBUF_INIT;
    if (nvrtc_compile_trusted(source, "sm_90", &cubin, &err))
        fail_msg("does not compile: %s", err.buf);
    int rc = policy_check_module(cubin.buf, cubin.len, why);
    sb_free(&cubin), sb_free(&err);
    return rc;
}

static void expect_refused(const char *source)
{
    strbuf why = STRBUF_INIT;
    assert_int_equal(check_source(source, &why), -1);
    if (!strstr(why.buf, "device heap"))
        fail_msg("reason does not name the device heap: %s", why.buf);
    sb_free(&why);
}

static void test_malloc_refused(void **state)
{
    (void)state;
    expect_refused("extern \"C\" __global__ void k(float *y) {\n"
                   "  float *p = (float *)malloc(64); p[0] = 1; y[0] = p[0]; }\n");
    expect_refused("extern \"C\" __global__ void k(float *y) {\n"
                   "  int *p = new int[4]; p[0] = 1; y[0] = p[0]; delete[] p; }\n");
    expect_refused("#define CAT(a, b) a##b\n"
                   "extern \"C\" __global__ void k(float *y) {\n"
                   "  void *p = CAT(mal, loc)(16); y[0] = p != 0; CAT(fr, ee)(p); }\n");
    expect_refused("extern \"C\" __global__ void k(float *y) { free((void *)y); }\n");
}

static void test_honest_passes(void **state)
{
    (void)state;
    strbuf why = STRBUF_INIT;
    assert_int_equal(check_source("extern \"C\" __global__ void relu(const float *x, float *y, long long n) {\n"
                                  "  long long i = blockIdx.x * 256ll + threadIdx.x;\n"
                                  "  if (i < n) y[i] = x[i] > 0 ? x[i] : 0; if (i == 0) printf(\"hi\\n\"); }\n",
                                  &why),
                     0);
    /* a device function of the candidate's own may be called free_list: only the heap's names */
    assert_int_equal(check_source("__device__ __noinline__ float free_list(float v) { return v * 2; }\n"
                                  "extern \"C\" __global__ void k(float *y) { y[0] = free_list(y[1]); }\n",
                                  &why),
                     0);
    sb_free(&why);
}

static void test_not_a_cubin(void **state)
{
    (void)state;
    strbuf why = STRBUF_INIT;
    assert_int_equal(policy_check_module("hello", 5, &why), -1);
    assert_non_null(strstr(why.buf, "not an ELF64 cubin"));
    /* a real cubin cut short: its section table lies past the end */
    strbuf cubin = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(nvrtc_compile_trusted("extern \"C\" __global__ void k(float *y) { y[0] = 1; }\n",
                                           "sm_90", &cubin, &err),
                     0);
    sb_reset(&why);
    assert_int_equal(policy_check_module(cubin.buf, 200, &why), -1);
    assert_non_null(strstr(why.buf, "truncated"));
    sb_free(&cubin), sb_free(&err), sb_free(&why);
}

static int keeps_state(const char *source)
{
    strbuf cubin = STRBUF_INIT, err = STRBUF_INIT;
    if (nvrtc_compile_trusted(source, "sm_90", &cubin, &err))
        fail_msg("does not compile: %s", err.buf);
    int rc = policy_module_keeps_state(cubin.buf, cubin.len);
    sb_free(&cubin), sb_free(&err);
    return rc;
}

static void test_module_state(void **state)
{
    (void)state;
    assert_int_equal(keeps_state("__device__ unsigned runs;\n"
                                 "extern \"C\" __global__ void k(float *y) { y[0] = runs++; }\n"),
                     1);
    assert_int_equal(keeps_state("__device__ int seen[4] = {1, 2, 3, 4};\n"
                                 "extern \"C\" __global__ void k(float *y) { y[0] = seen[1]++; }\n"),
                     1);
    assert_int_equal(keeps_state("__constant__ float c[2] = {1, 2};\n"
                                 "extern \"C\" __global__ void k(float *y) {\n"
                                 "  __shared__ float s[32]; s[threadIdx.x] = c[0]; __syncthreads();\n"
                                 "  y[threadIdx.x] = s[31 - threadIdx.x]; }\n"),
                     0);
    assert_int_equal(policy_module_keeps_state("hello", 5), 1);
    /* NVRTC's -default-device gives namespace-scope constants device storage; enumerators have
     * none */
    assert_int_equal(keeps_state("namespace n { constexpr int B = 64; }\n"
                                 "extern \"C\" __global__ void k(float *y) { y[0] = n::B; }\n"),
                     1);
    assert_int_equal(keeps_state("namespace n { enum : int { B = 64 }; }\n"
                                 "extern \"C\" __global__ void k(float *y) { y[0] = n::B; }\n"),
                     0);
}

/* The attention references, as the bench and the demo verify them as candidates, keep no
 * device state: no module reload before each of their ~60 executions a verification. */
static void test_attention_references_keep_no_state(void **state)
{
    (void)state;
    static const char *const ids[] = {
        "001_causal",        "002_causal_fp32",     "003_relative_bias",  "004_alibi_causal",
        "005_sliding_window", "006_document_causal", "007_softcap_causal", "008_gqa_causal",
        "009_neighborhood_2d", "010_gqa_window_softcap"};
    strbuf root = STRBUF_INIT;
    problems_root(&root);
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        strbuf path = STRBUF_INIT, err = STRBUF_INIT;
        problem p;
        sb_addf(&path, "%s/attention/%s.json", root.buf, ids[i]);
        if (problem_load(path.buf, &p, &err))
            fail_msg("%s", err.buf);
        if (keeps_state(p.reference_source.buf))
            fail_msg("attention/%s's reference has device globals", ids[i]);
        problem_free(&p);
        sb_free(&path), sb_free(&err);
    }
    sb_free(&root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malloc_refused),
        cmocka_unit_test(test_honest_passes),
        cmocka_unit_test(test_not_a_cubin),
        cmocka_unit_test(test_module_state),
        cmocka_unit_test(test_attention_references_keep_no_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
