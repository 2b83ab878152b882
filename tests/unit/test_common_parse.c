/* test_common_parse: dim expressions, code-block extraction from LLM answers,
 * and kc-cuda v1 launch/scratch parsing with errors that name the line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/candidate.h"
#include "common/error.h"
#include "common/expr.h"
#include "common/problem.h"

#include <stdlib.h>
#include <string.h>

static void test_expr_arithmetic(void **state)
{
    (void)state;
    dimset d = {0};
    dimset_set(&d, "B", 4096);
    dimset_set(&d, "D", 393216);
    int64_t v;
    assert_int_equal(expr_eval("B*D", &d, &v, NULL), 0);
    assert_true(v == 4096LL * 393216LL);
    assert_int_equal(expr_eval("cdiv(B*D, 256)", &d, &v, NULL), 0);
    assert_true(v == 6291456);
    assert_int_equal(expr_eval("cdiv(7, 2) + min(3, B) - max(1, 2) * (5 % 3)", &d, &v, NULL), 0);
    assert_int_equal(v, 4 + 3 - 4);
    assert_int_equal(expr_eval("-7 / 2", &d, &v, NULL), 0);
    assert_int_equal(v, -3); /* C semantics */
    dimset_free(&d);
}

static void test_expr_errors(void **state)
{
    (void)state;
    dimset d = {0};
    dimset_set(&d, "N", 10);
    strbuf err = STRBUF_INIT;
    int64_t v;
    assert_int_equal(expr_eval("N / (N - 10)", &d, &v, &err), -1);
    assert_non_null(strstr(err.buf, "division by zero"));
    assert_int_equal(expr_eval("N * Q", &d, &v, &err), -1);
    assert_non_null(strstr(err.buf, "unknown name 'Q'"));
    assert_int_equal(expr_eval("9223372036854775807 * 2", &d, &v, &err), -1);
    assert_non_null(strstr(err.buf, "overflow"));
    assert_int_equal(expr_eval("N +", &d, &v, &err), -1);
    assert_int_equal(expr_eval("pow(N, 2)", &d, &v, &err), -1);
    assert_non_null(strstr(err.buf, "unknown function 'pow'"));
    sb_free(&err);
    dimset_free(&d);
}

static void test_extract_fences_and_thinking(void **state)
{
    (void)state;
    strbuf code = STRBUF_INIT, err = STRBUF_INIT;
    const char *answer =
        "<think>Maybe ```cuda\nwrong\n```</think>Here it is:\n```cuda\n__global__ void k(){}\n"
        "// @launch k<<<1,1>>>();\n```\nDone.";
    assert_int_equal(candidate_extract(answer, &code, &err), 0);
    assert_non_null(strstr(code.buf, "__global__ void k"));
    assert_null(strstr(code.buf, "wrong"));
    /* A closing tag without its opening one drops everything before it. */
    const char *no_open = "thinking ```cuda\nbad\n// @launch bad<<<1,1>>>();\n```</think>\n```cuda\n"
                          "good\n// @launch good<<<1,1>>>();\n```";
    assert_int_equal(candidate_extract(no_open, &code, &err), 0);
    assert_non_null(strstr(code.buf, "good"));
    assert_null(strstr(code.buf, "bad"));
    /* Blocks in other languages are not code blocks: one ```cuda block and a ```python one. */
    const char *other = "```python\nprint()\n```\n```cuda\nv1\n// @launch a<<<1,1>>>();\n```\n";
    assert_int_equal(candidate_extract(other, &code, &err), 0);
    assert_non_null(strstr(code.buf, "v1"));
    /* Two code blocks: exactly one is the rule (the last one was taken silently before). */
    const char *several = "```cuda\nv1\n// @launch a<<<1,1>>>();\n```\ntext\n```python\nprint()\n```\n"
                          "```cu\nv2\n// @launch b<<<1,1>>>();\n```\n";
    assert_int_equal(candidate_extract(several, &code, &err), -1);
    assert_non_null(strstr(err.buf, "2 ```cuda code blocks"));
    assert_non_null(strstr(err.buf, "exactly one"));
    sb_free(&code), sb_free(&err);
}

/* The one rule of candidate_source: fenced answers, bare .cu files, prose, invalid UTF-8. */
static void test_candidate_source_rule(void **state)
{
    (void)state;
    strbuf code = STRBUF_INIT, err = STRBUF_INIT;
    /* Prose without a block: says there is no ```cuda block (it said "no // @launch line"). */
    assert_int_equal(candidate_source("Sure! I would write a kernel that adds.", &code, &err), -1);
    assert_non_null(strstr(err.buf, "no ```cuda code block"));
    /* A bare source file with launch lines is the source itself. */
    const char *file = "extern \"C\" __global__ void k(float *y) {}\n// @launch k<<<1, 1>>>(y);\n";
    assert_int_equal(candidate_source(file, &code, &err), 0);
    assert_string_equal(code.buf, file);
    /* A fenced answer goes through the extraction. */
    assert_int_equal(candidate_source("Here:\n```cuda\nint x;\n// @launch k<<<1,1>>>();\n```\n", &code, &err), 0);
    assert_string_equal(code.buf, "int x;\n// @launch k<<<1,1>>>();\n");
    /* One 0xFF byte in a comment: rejected up front, naming the line and the byte. */
    const char *bad = "```cuda\n// caf\xff\nint x;\n// @launch k<<<1,1>>>();\n```\n";
    assert_int_equal(candidate_source(bad, &code, &err), -1);
    assert_non_null(strstr(err.buf, "line 1: byte 0xFF is not valid UTF-8"));
    /* Valid multi-byte UTF-8 passes; overlong forms, surrogates and NUL do not. */
    assert_int_equal(candidate_check_text("// \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n", 15, &err), 0);
    assert_int_equal(candidate_check_text("\xc0\xaf", 2, &err), -1);
    assert_int_equal(candidate_check_text("\xed\xa0\x80", 3, &err), -1);
    assert_int_equal(candidate_check_text("a\nb\0c", 5, &err), -1);
    assert_non_null(strstr(err.buf, "line 2: a NUL byte"));
    assert_int_equal(candidate_check_text("\xe2\x82", 2, &err), -1); /* cut sequence */
    sb_free(&code), sb_free(&err);
}

static void test_extract_errors(void **state)
{
    (void)state;
    strbuf code = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(candidate_extract("I cannot help with that.", &code, &err), -1);
    assert_non_null(strstr(err.buf, "no fenced"));
    assert_int_equal(candidate_extract("```cuda\n__global__ void k(){\n// @launch k<<<1,1>>>();", &code, &err), -1);
    assert_non_null(strstr(err.buf, "not closed"));
    assert_int_equal(candidate_extract("<think>```cuda\nx\n```", &code, &err), -1);
    sb_free(&code), sb_free(&err);
}

static problem *load_softmax(void)
{
    static problem p;
    strbuf err = STRBUF_INIT;
    if (problem_load_by_id("level1/023_softmax", &p, &err))
        fail_msg("%s", err.buf);
    sb_free(&err);
    return &p;
}

static void test_parse_launch_lines(void **state)
{
    (void)state;
    problem *p = load_softmax();
    launch_unit u;
    strbuf err = STRBUF_INIT;
    const char *src = "// @scratch partial f64[B*cdiv(D, 1024)]\n"
                      "extern \"C\" __global__ void a(const float *x, double *p, long long n) {}\n"
                      "// @launch a<<<dim3(cdiv(D, 1024), B), 256, 1024*4>>>(x, partial, D);\n"
                      "// @launch b<<<B, 512>>>(partial, y, D, 1.5f);\n";
    assert_int_equal(candidate_parse(src, p, &u, &err), 0);
    assert_int_equal(u.n_launches, 2);
    assert_int_equal(u.n_scratch, 1);
    assert_string_equal(u.launches[0].kernel, "a");
    assert_string_equal(u.launches[0].grid[1], "B");
    assert_string_equal(u.launches[0].smem, "1024*4");
    assert_int_equal(u.launches[0].args[1].kind, KC_ARG_TENSOR);
    assert_int_equal(u.launches[0].args[1].tensor, p->n_inputs + p->n_outputs); /* scratch */
    assert_int_equal(u.launches[0].args[2].kind, KC_ARG_INT);
    assert_int_equal(u.launches[1].args[3].kind, KC_ARG_FLOAT);
    int64_t grid[3], block[3], smem;
    assert_int_equal(launch_geometry(&u.launches[0], &p->dims_default, grid, block, &smem, &err), 0);
    assert_int_equal(grid[0], 384);
    assert_int_equal(grid[1], 4096);
    assert_int_equal(smem, 4096);
    launch_unit_free(&u);
    sb_free(&err);
    problem_free(p);
}

static void test_parse_errors_name_the_line(void **state)
{
    (void)state;
    problem *p = load_softmax();
    launch_unit u;
    strbuf err = STRBUF_INIT;
    assert_int_equal(candidate_parse("x\n\n// @launch softmax_rows<<<B, 256>>>(x, z, B, D);\n", p, &u, &err), -1);
    assert_string_equal(err.buf, "line 3: unknown tensor 'z' in launch of softmax_rows (tensors: x y; dims: B D)");
    launch_unit_free(&u);
    assert_int_equal(candidate_parse("// @launch k<<<B>>>(x, y);\n", p, &u, &err), -1);
    assert_non_null(strstr(err.buf, "line 1: launch of k needs <<<grid, block"));
    launch_unit_free(&u);
    assert_int_equal(candidate_parse("// @launch k<<<B, 256>>>(x, y, cdiv(D));\n", p, &u, &err), -1);
    assert_non_null(strstr(err.buf, "line 1:"));
    launch_unit_free(&u);
    assert_int_equal(candidate_parse("// @scratch t q13[B]\n// @launch k<<<1,1>>>(x);\n", p, &u, &err), -1);
    assert_non_null(strstr(err.buf, "line 1: scratch t: unknown dtype 'q13'"));
    launch_unit_free(&u);
    assert_int_equal(candidate_parse("__global__ void k() {}\n", p, &u, &err), -1);
    assert_non_null(strstr(err.buf, "no '// @launch"));
    launch_unit_free(&u);
    sb_free(&err);
    problem_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expr_arithmetic),
        cmocka_unit_test(test_expr_errors),
        cmocka_unit_test(test_extract_fences_and_thinking),
        cmocka_unit_test(test_extract_errors),
        cmocka_unit_test(test_candidate_source_rule),
        cmocka_unit_test(test_parse_launch_lines),
        cmocka_unit_test(test_parse_errors_name_the_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
