/* test_candidate_limits: arithmetic and size in candidate text (issue 10, class 3). Every
 * int64 operator at its edges (INT64_MIN / -1, % -1, cdiv with negative and zero divisors,
 * unary minus, huge literals), nesting and length limits enforced before parsing, and the
 * limits on a candidate (answer and code size, line length, line counts, grid, block, shared
 * memory, scratch bytes) checked under every dim set of the problem, so that any such input is
 * an extract_error naming the line, never a crash, UB or a worker error. Manifests: a bad
 * number or expression is a load error naming file and field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/candidate.h"
#include "common/error.h"
#include "common/expr.h"
#include "common/fsutil.h"
#include "common/problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One row: an expression under N=10, and either its value or a piece of its error. */
struct expr_case {
    const char *text;
    int ok;
    int64_t value;
    const char *error;
};

#define MIN64 "(-9223372036854775807 - 1)"

static const struct expr_case expr_cases[] = {
    {"9223372036854775807", 1, INT64_MAX, NULL},
    {MIN64, 1, INT64_MIN, NULL},
    {"9223372036854775807 + 1", 0, 0, "overflow"},
    {MIN64 " - 1", 0, 0, "overflow"},
    {"3037000500 * 3037000500", 0, 0, "overflow"},
    {MIN64 " * -1", 0, 0, "overflow"},
    {"-" MIN64, 0, 0, "overflow"},
    {MIN64 " / -1", 0, 0, "overflow"},
    {MIN64 " % -1", 1, 0, NULL},
    {MIN64 " / 1", 1, INT64_MIN, NULL},
    {"cdiv(" MIN64 ", -1)", 0, 0, "overflow"},
    {"cdiv(" MIN64 ", 1)", 1, INT64_MIN, NULL},
    {"cdiv(9223372036854775807, 2)", 1, 4611686018427387904LL, NULL},
    {"cdiv(7, 2)", 1, 4, NULL},
    {"cdiv(-7, 2)", 1, -3, NULL},
    {"cdiv(7, -2)", 1, -3, NULL},
    {"cdiv(-7, -2)", 1, 4, NULL},
    {"cdiv(0, -5)", 1, 0, NULL},
    {"cdiv(N, 0)", 0, 0, "division by zero in cdiv"},
    {"cdiv(N, N - 10)", 0, 0, "division by zero in cdiv"},
    {"N / 0", 0, 0, "division by zero"},
    {"N % (N - N)", 0, 0, "division by zero"},
    {"7 % -3", 1, 1, NULL},
    {"-7 % 3", 1, -1, NULL},
    {"min(" MIN64 ", 9223372036854775807)", 1, INT64_MIN, NULL},
    {"max(" MIN64 ", 9223372036854775807)", 1, INT64_MAX, NULL},
    {"99999999999999999999", 0, 0, "literal out of range"},
    {"9223372036854775808", 0, 0, "literal out of range"},
    {"0xffffffffffffffffff", 0, 0, "literal out of range"},
    {"12abc", 0, 0, "malformed integer literal"},
    {"1 << 40", 0, 0, "unexpected trailing text '<< 40'"},
    {"N >> 1", 0, 0, "unexpected trailing text '>> 1'"},
    {"N ** 2", 0, 0, "unexpected '*'"},
    {"", 0, 0, "unexpected end"},
};

static void test_expr_int64_edges(void **state)
{
    (void)state;
    dimset d = {0};
    dimset_set(&d, "N", 10);
    strbuf err = STRBUF_INIT;
    for (size_t i = 0; i < sizeof(expr_cases) / sizeof(expr_cases[0]); i++) {
        const struct expr_case *c = &expr_cases[i];
        int64_t v = 12345;
        sb_reset(&err);
        int rc = expr_eval(c->text, &d, &v, &err);
        if (c->ok && (rc != 0 || v != c->value))
            fail_msg("'%s': expected %lld, got rc %d value %lld (%s)", c->text, (long long)c->value,
                     rc, (long long)v, sb_str(&err));
        if (!c->ok && (rc != -1 || !strstr(sb_str(&err), c->error)))
            fail_msg("'%s': expected an error with '%s', got rc %d value %lld (%s)", c->text,
                     c->error, rc, (long long)v, sb_str(&err));
    }
    sb_free(&err);
    dimset_free(&d);
}

/* A compiled expression (expr_compile, expr_run: the checks over an expanded schedule) succeeds
 * exactly where expr_eval does, with the same value, at every edge above; a name resolves to its
 * position in the env it was compiled against. */
static void test_expr_compiled_agrees(void **state)
{
    (void)state;
    dimset d = {0};
    dimset_set(&d, "N", 10);
    strbuf err = STRBUF_INIT;
    for (size_t i = 0; i < sizeof(expr_cases) / sizeof(expr_cases[0]); i++) {
        const struct expr_case *c = &expr_cases[i];
        expr_prog prog;
        int64_t v = 12345;
        int rc = expr_compile(c->text, &d, &prog, &err);
        if (rc == 0)
            rc = expr_run(&prog, d.values, &v);
        if (c->ok && (rc != 0 || v != c->value))
            fail_msg("'%s' compiled: expected %lld, got rc %d value %lld", c->text,
                     (long long)c->value, rc, (long long)v);
        if (!c->ok && rc != -1)
            fail_msg("'%s' compiled: expected a failure, got %lld", c->text, (long long)v);
        expr_prog_free(&prog);
    }
    dimset_set(&d, "T", 3);
    expr_prog prog;
    int64_t v, values[2] = {7, 5};
    assert_int_equal(expr_compile("cdiv(N * T, 2) - min(T, N) % 2", &d, &prog, &err), 0);
    assert_int_equal(expr_run(&prog, d.values, &v), 0);
    assert_int_equal(v, 14);
    assert_int_equal(expr_run(&prog, values, &v), 0); /* N=7, T=5 */
    assert_int_equal(v, 17);
    expr_prog_free(&prog);
    assert_int_equal(expr_compile("N + Q", &d, &prog, &err), -1);
    assert_string_equal(err.buf, "unknown name 'Q' in expression 'N + Q'");
    assert_null(prog.ops);
    sb_free(&err);
    dimset_free(&d);
}

static char *repeat(const char *unit, int n, const char *middle, const char *closing)
{
    strbuf s = STRBUF_INIT;
    for (int i = 0; i < n; i++)
        sb_adds(&s, unit);
    sb_adds(&s, middle);
    for (int i = 0; closing && i < n; i++)
        sb_adds(&s, closing);
    return sb_detach(&s);
}

/* Deep nesting and long text are refused before parsing: no deep recursion, no stack overflow
 * (the old evaluator recursed once per '(' or unary minus). */
static void test_expr_depth_and_length(void **state)
{
    (void)state;
    dimset d = {0};
    dimset_set(&d, "N", 10);
    strbuf err = STRBUF_INIT;
    int64_t v;
    char *ok = repeat("(", KC_EXPR_MAX_DEPTH, "N", ")");
    assert_int_equal(expr_eval(ok, &d, &v, &err), 0);
    assert_int_equal(v, 10);
    char *deep = repeat("(", KC_EXPR_MAX_DEPTH + 1, "N", ")");
    assert_int_equal(expr_eval(deep, &d, &v, &err), -1);
    assert_non_null(strstr(err.buf, "nested deeper than 32"));
    char *calls = repeat("min(1, ", KC_EXPR_MAX_DEPTH + 1, "N", ")");
    assert_int_equal(expr_eval(calls, &d, &v, &err), -1);
    assert_non_null(strstr(err.buf, "nested deeper than 32"));
    char *minus = repeat("-", KC_EXPR_MAX_DEPTH + 1, "N", NULL);
    assert_int_equal(expr_eval(minus, &d, &v, &err), -1);
    assert_non_null(strstr(err.buf, "nested deeper than 32"));
    char *huge = repeat("(", 400000, "N", ")");
    assert_int_equal(expr_eval(huge, &d, &v, &err), -1);
    assert_non_null(strstr(err.buf, "longer than 1024 bytes"));
    assert_true(err.len < 300); /* the message quotes a bounded piece */
    char *long_minus = repeat("- ", 500000, "N", NULL);
    assert_int_equal(expr_eval(long_minus, &d, &v, &err), -1);
    assert_non_null(strstr(err.buf, "longer than 1024 bytes"));
    char names[4][64];
    assert_int_equal(expr_names(long_minus, names, 4, &err), -1);
    free(ok), free(deep), free(calls), free(minus), free(huge), free(long_minus);
    sb_free(&err);
    dimset_free(&d);
}

/* Names are not truncated (a 63-byte prefix used to match), and expr_names refuses more
 * distinct names than it can report (extra names used to go unchecked). */
static void test_expr_names(void **state)
{
    (void)state;
    dimset d = {0};
    char name[64];
    memset(name, 'A', 63);
    name[63] = '\0';
    dimset_set(&d, name, 7);
    strbuf text = STRBUF_INIT, err = STRBUF_INIT;
    sb_addf(&text, "%sZZ + 1", name);
    int64_t v = 0;
    assert_int_equal(expr_eval(text.buf, &d, &v, &err), -1);
    assert_non_null(strstr(err.buf, "longer than 63"));
    char names[2][64];
    assert_int_equal(expr_names("a + b", names, 2, &err), 2);
    assert_int_equal(expr_names("a + b + c", names, 2, &err), -1);
    assert_non_null(strstr(err.buf, "more than"));
    sb_free(&text), sb_free(&err);
    dimset_free(&d);
}

static problem relu;

static int setup(void **state)
{
    (void)state;
    strbuf err = STRBUF_INIT;
    int rc = problem_load_by_id("level1/019_relu", &relu, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.buf);
    sb_free(&err);
    return rc;
}

static int teardown(void **state)
{
    (void)state;
    problem_free(&relu);
    return 0;
}

/* Parses src against level1/019_relu (dims B, D; alt B=3 D=4097 and B=1 D=1); expects an
 * error containing needle (NULL: success). */
static void expect_parse(const char *src, const char *needle)
{
    launch_unit u;
    strbuf err = STRBUF_INIT;
    int rc = candidate_parse(src, &relu, &u, &err);
    launch_unit_free(&u);
    if (!needle && rc != 0)
        fail_msg("expected the candidate to parse, got: %s", err.buf);
    if (needle && (rc != -1 || !strstr(sb_str(&err), needle)))
        fail_msg("expected an error with '%s' for:\n%.300s\ngot rc %d: %s", needle, src, rc,
                 sb_str(&err));
    sb_free(&err);
}

#define K "extern \"C\" __global__ void k(const float *x, float *y, long long n) {}\n"

/* Values that only the dims reveal: grid, block, shared memory, integer arguments and scratch
 * sizes are evaluated on the CPU under every dim set, not first in the GPU worker. */
static void test_launch_values_checked_under_every_dim_set(void **state)
{
    (void)state;
    expect_parse(K "// @launch k<<<cdiv(B*D, 256), 256>>>(x, y, B*D);\n", NULL);
    expect_parse(K "// @launch k<<<dim3(cdiv(D, 256), B), dim3(16, 16), 232448>>>(x, y, D);\n", NULL);
    expect_parse(K "// @launch k<<<B*D*1024, 256>>>(x, y, B*D);\n",
                 "line 2: grid.x of k is 1649267441664 at dims default (B=4096, D=393216); it must "
                 "lie in [0, 2147483647]");
    expect_parse(K "// @launch k<<<dim3(1, B*D), 256>>>(x, y, 1);\n", "line 2: grid.y of k is");
    expect_parse(K "// @launch k<<<1, dim3(1, 1, 65)>>>(x, y, 1);\n", "line 2: block.z of k is 65");
    expect_parse(K "// @launch k<<<1, 2048>>>(x, y, 1);\n", "line 2: block.x of k is 2048");
    expect_parse(K "// @launch k<<<1, 0>>>(x, y, 1);\n", "line 2: block.x of k is 0");
    expect_parse(K "// @launch k<<<1, dim3(32, 32, 2)>>>(x, y, 1);\n",
                 "line 2: a block of k has 2048 threads");
    expect_parse(K "// @launch k<<<1, 256, 1048576>>>(x, y, 1);\n",
                 "line 2: dynamic shared memory of k is 1048576");
    expect_parse(K "// @launch k<<<1, 256, 0 - 4>>>(x, y, 1);\n", "dynamic shared memory of k is -4");
    expect_parse(K "// @launch k<<<1, 256>>>(x, y, B*D*9223372036854775807);\n",
                 "line 2: argument 3 of k at dims default");
    /* B=3 in dims alt[0]: the division by zero only exists there */
    expect_parse(K "\n// @launch k<<<cdiv(D, B - 3), 256>>>(x, y, D);\n",
                 "line 3: grid.x of k at dims alt[0] (B=3, D=4097): division by zero in cdiv");
    expect_parse(K "// @launch k<<<1, 256>>>(x, y, D % (B - 1));\n",
                 "line 2: argument 3 of k at dims alt[1] (B=1, D=1): division by zero");
    expect_parse("// @scratch t f32[B*D]\n" K "// @launch k<<<1, 256>>>(x, t, 1);\n", NULL);
    expect_parse("// @scratch t f32[4611686018427387904]\n" K "// @launch k<<<1, 256>>>(x, t, 1);\n",
                 "line 1: scratch t: 4611686018427387904 elements of f32");
    expect_parse("// @scratch t f64[2305843009213693952]\n" K "// @launch k<<<1, 256>>>(x, t, 1);\n",
                 "line 1: scratch t:");
    expect_parse("// @scratch t f32[0 - B]\n" K "// @launch k<<<1, 256>>>(x, t, 1);\n",
                 "line 1: the element count of scratch t is -4096");
    /* 8 GiB and 8 GiB + 4 bytes: each fits, together they pass the 16 GiB cap */
    expect_parse("// @scratch a f32[2147483648]\n// @scratch b f32[2147483649]\n" K
                 "// @launch k<<<1, 256>>>(a, b, 1);\n", "line 2: scratch b:");
}

/* Sizes and counts are checked before anything is parsed. */
static void test_sizes_before_parsing(void **state)
{
    (void)state;
    strbuf src = STRBUF_INIT, err = STRBUF_INIT, code = STRBUF_INIT;
    /* a launch line past 4096 bytes (its arguments would be an error anyway) */
    sb_adds(&src, K "// @launch k<<<1, 256>>>(x, y, ");
    for (int i = 0; i < 3000; i++)
        sb_adds(&src, "1+");
    sb_adds(&src, "1);\n");
    expect_parse(src.buf, "line 2: the @launch line is 6034 bytes long; the limit is 4096");
    /* 1025 launch lines: refused as too many before the first (bad) one is parsed */
    sb_reset(&src);
    sb_adds(&src, "// @launch 9bad<<<1, 1>>>(x);\n");
    for (int i = 0; i < KC_MAX_LAUNCHES; i++)
        sb_adds(&src, "// @launch k<<<1, 1>>>(x, y, 1);\n");
    expect_parse(src.buf, "line 1025: too many launches (at most 1024)");
    sb_reset(&src);
    for (int i = 0; i < KC_MAX_SCRATCH + 1; i++)
        sb_addf(&src, "// @scratch s%d f32[1]\n", i);
    sb_adds(&src, "// @launch k<<<1, 1>>>(x, y, 1);\n");
    expect_parse(src.buf, "line 17: too many scratch buffers (at most 16)");
    /* 1024 launch lines (DenseNet-201's reference has 518 with its convolutions
     * split) and 16 scratch buffers are within the
     * limits */
    sb_reset(&src);
    sb_adds(&src, K);
    for (int i = 0; i < KC_MAX_SCRATCH; i++)
        sb_addf(&src, "// @scratch s%d f32[1]\n", i);
    for (int i = 0; i < KC_MAX_LAUNCHES; i++)
        sb_adds(&src, "// @launch k<<<1, 256>>>(x, y, s15);\n");
    {
        launch_unit u;
        assert_int_equal(candidate_parse(src.buf, &relu, &u, &err), 0);
        assert_int_equal(u.n_launches, KC_MAX_LAUNCHES);
        assert_int_equal(u.n_scratch, KC_MAX_SCRATCH);
        launch_unit_free(&u);
    }
    /* the code block and the whole answer */
    sb_reset(&src);
    sb_adds(&src, K "// @launch k<<<1, 1>>>(x, y, 1);\n");
    while (src.len <= KC_MAX_SOURCE_BYTES)
        sb_adds(&src, "// padding padding padding padding padding padding padding padding\n");
    expect_parse(src.buf, "the code is longer than 262144 bytes");
    strbuf answer = STRBUF_INIT;
    sb_adds(&answer, "```cuda\n" K "// @launch k<<<1, 1>>>(x, y, 1);\n```\n");
    while (answer.len <= KC_MAX_RESPONSE_BYTES)
        sb_adds(&answer, "thinking out loud thinking out loud thinking out loud thinking\n");
    assert_int_equal(candidate_extract(answer.buf, &code, &err), -1);
    assert_non_null(strstr(err.buf, "the answer is longer than 1048576 bytes"));
    /* deep nesting inside a launch line is an error naming the line, not a crash */
    sb_reset(&src);
    sb_adds(&src, K "// @launch k<<<1, 256>>>(x, y, ");
    for (int i = 0; i < 1000; i++)
        sb_adds(&src, "(");
    sb_adds(&src, "1");
    for (int i = 0; i < 1000; i++)
        sb_adds(&src, ")");
    sb_adds(&src, ");\n");
    expect_parse(src.buf, "line 2: expression longer than 1024 bytes");
    sb_reset(&src);
    sb_adds(&src, K "// @launch k<<<1, 256>>>(x, y, ");
    for (int i = 0; i < 40; i++)
        sb_adds(&src, "(");
    sb_adds(&src, "1");
    for (int i = 0; i < 40; i++)
        sb_adds(&src, ")");
    sb_adds(&src, ");\n");
    expect_parse(src.buf, "line 2: expression nested deeper than 32 levels");
    sb_free(&src), sb_free(&err), sb_free(&code), sb_free(&answer);
}

/* Every reference of every suite stays within the limits. */
static void test_references_within_limits(void **state)
{
    (void)state;
    strbuf root = STRBUF_INIT, err = STRBUF_INIT, selector = STRBUF_INIT, dir = STRBUF_INIT;
    problems_root(&root);
    static const char *suites[] = {"level1", "level2", "attention", NULL};
    for (int i = 0; suites[i]; i++) {
        sb_reset(&dir);
        sb_addf(&dir, "%s/%s", root.buf, suites[i]);
        if (access(dir.buf, R_OK) == 0)
            sb_addf(&selector, "%s%s", selector.len ? "," : "", suites[i]);
    }
    char **ids;
    int n;
    if (problems_select(root.buf, selector.buf, &ids, &n, &err))
        fail_msg("%s", err.buf);
    assert_true(n >= 100);
    for (int i = 0; i < n; i++) {
        problem p;
        launch_unit u;
        if (problem_load_by_id(ids[i], &p, &err) ||
            candidate_parse(p.reference_source.buf, &p, &u, &err))
            fail_msg("%s: %s", ids[i], err.buf);
        launch_unit_free(&u);
        problem_free(&p);
    }
    problems_free_ids(ids, n);
    sb_free(&root), sb_free(&err), sb_free(&selector), sb_free(&dir);
}

/* ---- manifests ---- */

static char tmpdir[64];

/* Loads the relu manifest with one substitution; expects an error naming the file and
 * containing needle. */
static void expect_manifest_error(const char *from, const char *to, const char *needle)
{
    strbuf src = STRBUF_INIT, err = STRBUF_INIT, path = STRBUF_INIT, out = STRBUF_INIT;
    assert_int_equal(read_file(relu.manifest_path, &src, &err), 0);
    char *hit = strstr(src.buf, from);
    assert_non_null(hit);
    sb_add(&out, src.buf, (size_t)(hit - src.buf));
    sb_adds(&out, to);
    sb_adds(&out, hit + strlen(from));
    sb_addf(&path, "%s/level1", tmpdir);
    assert_int_equal(mkdir_p(path.buf, &err), 0);
    sb_adds(&path, "/019_relu.json");
    assert_int_equal(write_file_atomic(path.buf, out.buf, out.len, &err), 0);
    problem p;
    int rc = problem_load(path.buf, &p, &err);
    problem_free(&p);
    if (rc == 0 || !strstr(err.buf, needle) || !strstr(err.buf, path.buf))
        fail_msg("substituting %s -> %s: expected an error with '%s', got '%s'", from, to, needle,
                 rc ? err.buf : "(loaded)");
    sb_free(&src), sb_free(&err), sb_free(&path), sb_free(&out);
}

static void test_manifest_numbers_and_expressions(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/kc-test-limits-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    strbuf cu = STRBUF_INIT, err = STRBUF_INIT, dir = STRBUF_INIT;
    sb_addf(&cu, "%s/level1/019_relu.cu", tmpdir);
    sb_addf(&dir, "%s/level1", tmpdir);
    assert_int_equal(mkdir_p(dir.buf, &err), 0);
    assert_int_equal(write_file_atomic(cu.buf, "// x\n", 5, &err), 0);
    expect_manifest_error("\"default\": {\"B\": 4096,", "\"default\": {\"B\": 4611686018427387904,",
                          "field 'dims.default.B': expected an integer from 0 to 2^40");
    expect_manifest_error("\"default\": {\"B\": 4096,", "\"default\": {\"B\": 1099511627776,",
                          "field 'inputs[0].shape': the tensor is larger than 64 GiB");
    expect_manifest_error("\"shape\": [\"B\", \"D\"], \"init\"", "\"shape\": [\"B\", \"0 - D\"], \"init\"",
                          "field 'inputs[0].shape[1]': negative extent");
    expect_manifest_error("\"shape\": [\"B\", \"D\"], \"init\"",
                          "\"shape\": [\"B\", \"D / (B - 3)\"], \"init\"",
                          "field 'inputs[0].shape[1]': division by zero");
    expect_manifest_error("\"bytes\": \"2*4*B*D\"", "\"bytes\": \"2*4*B*D*9223372036854775807\"",
                          "field 'bytes': integer overflow");
    expect_manifest_error("\"flops\": \"B*D\"", "\"flops\": \"99999999999999999999\"",
                          "field 'flops': literal out of range");
    expect_manifest_error("\"flops\": \"B*D\"",
                          "\"flops\": \"((((((((((((((((((((((((((((((((((B))))))))))))))))))))))))))))))))))\"",
                          "field 'flops': expression nested deeper than 32 levels");
    expect_manifest_error("\"level\": 1,", "\"level\": 4294967297,",
                          "field 'level': expected an integer from 1 to 99");
    expect_manifest_error("\"problem_id\": 19", "\"problem_id\": -4294967295",
                          "field 'kernelbench.problem_id'");
    remove_tree(tmpdir);
    sb_free(&cu), sb_free(&err), sb_free(&dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expr_int64_edges),
        cmocka_unit_test(test_expr_compiled_agrees),
        cmocka_unit_test(test_expr_depth_and_length),
        cmocka_unit_test(test_expr_names),
        cmocka_unit_test(test_launch_values_checked_under_every_dim_set),
        cmocka_unit_test(test_sizes_before_parsing),
        cmocka_unit_test(test_references_within_limits),
        cmocka_unit_test(test_manifest_numbers_and_expressions),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
