/* test_candidate_layers: "// @layer NAME BUFFER[INDEX] DTYPE[COUNT]" lines (issue 38,
 * docs/CANDIDATE_FORMAT.md, docs/LEVEL3.md "Which layer went wrong first"): the grammar, {expr}
 * parts of names over loop variables, the region checked inside its buffer under every dims
 * set, the 256-line and 4096-point limits, every error with its line, and the schedule:
 * launch_iter_next skips layer points (checked and timed runs are unchanged) while
 * launch_iter_step yields them in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/candidate.h"
#include "common/error.h"
#include "common/problem.h"
#include "common/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* level1/023_softmax: x, y f32[B, D]; dims default B=4096 D=393216, small B=8 D=1000. */
static problem softmax;

static int setup(void **state)
{
    (void)state;
    strbuf err = STRBUF_INIT;
    int rc = problem_load_by_id("level1/023_softmax", &softmax, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.buf);
    sb_free(&err);
    return rc;
}

static int teardown(void **state)
{
    (void)state;
    problem_free(&softmax);
    return 0;
}

/* Parses src; expects exactly the error want (NULL: success). */
static void expect(const char *src, const char *want)
{
    launch_unit u;
    strbuf err = STRBUF_INIT;
    int rc = candidate_parse(src, &softmax, &u, &err);
    launch_unit_free(&u);
    if (!want && rc != 0)
        fail_msg("expected the candidate to parse:\n%s\ngot: %s", src, err.buf);
    if (want && (rc != -1 || strcmp(sb_str(&err), want) != 0))
        fail_msg("for:\n%s\nexpected: %s\ngot (rc %d): %s", src, want, rc, sb_str(&err));
    sb_free(&err);
}

/* The steps of one execution under the small dims: "k k" with launch_iter_next, or "k
 * [name@index+count] k" with launch_iter_step. */
static void walk(const launch_unit *u, int layers, strbuf *out)
{
    launch_iter it;
    strbuf err = STRBUF_INIT, name = STRBUF_INIT;
    if (launch_iter_start(&it, u, &softmax.dims_small, "small", &err))
        fail_msg("launch_iter_start: %s", err.buf);
    int i, is_layer = 0;
    while ((i = layers ? launch_iter_step(&it, &is_layer) : launch_iter_next(&it)) >= 0) {
        sb_adds(out, out->len ? " " : "");
        if (!is_layer) {
            sb_adds(out, u->launches[i].kernel);
            continue;
        }
        int64_t index, count;
        const layer_spec *l = &u->layers[i];
        if (layer_name(l, &it.env, &name, &err) ||
            layer_region(l, &it.env, 8000, &index, &count, &err))
            fail_msg("layer %s: %s", l->name, err.buf);
        sb_addf(out, "[%s@%lld+%lld]", name.buf, (long long)index, (long long)count);
    }
    launch_iter_free(&it);
    sb_free(&err), sb_free(&name);
}

static void parse_ok(const char *src, launch_unit *u)
{
    strbuf err = STRBUF_INIT;
    if (candidate_parse(src, &softmax, u, &err))
        fail_msg("parse: %s", err.buf);
    sb_free(&err);
}

static void test_layers_in_order(void **state)
{
    (void)state;
    const char *src = "// @scratch t f32[B*D]\n"
                      "// @launch a<<<1, 1>>>(x, t);\n"
                      "// @layer features.0 t[0] f32[B*D]\n"
                      "// @for l in 0..2\n"
                      "//   @launch b<<<1, 1>>>(t, y);\n"
                      "//   @layer layer1.{l}.conv2 y[l*D] f32[D]\n"
                      "// @end\n"
                      "// @layer fc y[ 0 ] f32[ B*D ]\n";
    launch_unit u;
    parse_ok(src, &u);
    assert_int_equal(u.n_layers, 3);
    assert_int_equal(u.layers[1].line, 6);
    assert_string_equal(u.layers[1].name, "layer1.{l}.conv2");
    assert_int_equal(u.layers[1].tensor, 1); /* y: inputs, then outputs, then scratch */
    assert_string_equal(u.layers[2].index, "0");
    strbuf launches = STRBUF_INIT, all = STRBUF_INIT;
    walk(&u, 0, &launches);
    walk(&u, 1, &all);
    assert_string_equal(launches.buf, "a b b");
    assert_string_equal(all.buf, "a [features.0@0+8000] b [layer1.0.conv2@0+1000] b "
                                 "[layer1.1.conv2@1000+1000] [fc@0+8000]");
    launch_iter it;
    strbuf err = STRBUF_INIT;
    assert_int_equal(launch_iter_start(&it, &u, &softmax.dims_default, "default", &err), 0);
    assert_int_equal(it.total, 3);
    assert_int_equal(it.layers, 4);
    launch_iter_free(&it);
    sb_free(&launches), sb_free(&all), sb_free(&err);
    launch_unit_free(&u);
}

static void test_layer_errors(void **state)
{
    (void)state;
    const char *head = "// @launch a<<<1, 1>>>(x, y);\n";
    struct { const char *line, *want; } cases[] = {
        {"// @layer fc y f32[1]",
         "line 2: expected '// @layer NAME BUFFER[INDEX] DTYPE[COUNT]', e.g. '// @layer features.0 "
         "a0[0] f32[B*64*55*55]', not '// @layer fc y f32[1]'"},
        {"// @layer fc y[0] f32[1] extra",
         "line 2: expected '// @layer NAME BUFFER[INDEX] DTYPE[COUNT]', e.g. '// @layer features.0 "
         "a0[0] f32[B*64*55*55]', not '// @layer fc y[0] f32[1] extra'"},
        {"// @layer fc-1 y[0] f32[1]",
         "line 2: @layer name 'fc-1': a name is letters, digits, '_' and '.', with {expr} parts "
         "over loop variables"},
        {"// @layer fc.{q} y[0] f32[1]",
         "line 2: unknown name 'q' in a {expr} part of a @layer name (tensors: x y; dims: B D)"},
        {"// @layer fc.{} y[0] f32[1]",
         "line 2: @layer fc.{}: a {expr} part of a name is one expression over dims and "
         "loop variables in braces, not nested"},
        {"// @layer fc x[0] f32[1]",
         "line 2: @layer fc: 'x' is not an output or a scratch buffer: a layer's output is read "
         "where the launches wrote it (tensors: x y; dims: B D)"},
        {"// @layer fc z[0] f32[1]",
         "line 2: @layer fc: 'z' is not an output or a scratch buffer: a layer's output is read "
         "where the launches wrote it (tensors: x y; dims: B D)"},
        {"// @layer fc y[0] f16[1]", "line 2: @layer fc: y is f32, not f16"},
        {"// @layer fc y[0] q8[1]", "line 2: @layer fc: unknown dtype 'q8'"},
        {"// @layer fc y[1] f32[B*D]",
         "line 2: @layer fc at dims default (B=4096, D=393216): the region [1, 1 + B*D) is elements "
         "[1, 1 + 1610612736) of a buffer of 1610612736; it must hold at least one element and "
         "lie inside"},
        {"// @layer fc y[0] f32[D-1000]",
         "line 2: @layer fc at dims small (B=8, D=1000): the region [0, 0 + D-1000) is elements "
         "[0, 0 + 0) of a buffer of 8000; it must hold at least one element and lie inside"},
        {"// @layer fc y[-1] f32[1]",
         "line 2: @layer fc at dims default (B=4096, D=393216): the region [-1, -1 + 1) is "
         "elements [-1, -1 + 1) of a buffer of 1610612736; it must hold at least one element "
         "and lie inside"},
        {"// @layer fc y[0] f32[x]",
         "line 2: tensor used in an integer expression: 'x' in the count of a @layer line "
         "(tensors: x y; dims: B D)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        strbuf src = STRBUF_INIT;
        sb_addf(&src, "%s%s\n", head, cases[i].line);
        expect(src.buf, cases[i].want);
        sb_free(&src);
    }
}

static void test_layer_limits(void **state)
{
    (void)state;
    strbuf src = STRBUF_INIT;
    sb_adds(&src, "// @launch a<<<1, 1>>>(x, y);\n");
    for (int i = 0; i < KC_MAX_LAYER_LINES; i++)
        sb_addf(&src, "// @layer l%d y[0] f32[1]\n", i);
    expect(src.buf, NULL);
    sb_adds(&src, "// @layer one_more y[0] f32[1]\n");
    expect(src.buf, "line 258: too many @layer lines (at most 256)");
    sb_reset(&src);
    sb_adds(&src, "// @launch a<<<1, 1>>>(x, y);\n"
                  "// @for i in 0..4096\n"
                  "//   @launch a<<<1, 1>>>(x, y);\n"
                  "//   @layer l.{i} y[0] f32[1]\n"
                  "// @end\n");
    expect(src.buf, NULL);
    sb_adds(&src, "// @layer last y[0] f32[1]\n");
    expect(src.buf, "line 6: at dims default (B=4096, D=393216) the launch unit would have 4097 "
                    "layer points (@layer lines reached); one execution may have at most 4096");
    sb_reset(&src);
    sb_adds(&src, "// @launch a<<<1, 1>>>(x, y);\n// @layer ");
    for (int i = 0; i < 130; i++)
        sb_adds(&src, "n");
    sb_adds(&src, " y[0] f32[1]\n");
    expect(src.buf, "line 2: a @layer name is at most 128 bytes; this one has 130");
    sb_free(&src);
}

/* A unit without @layer lines has none, and its steps are those it had before. */
static void test_no_layers(void **state)
{
    (void)state;
    launch_unit u;
    parse_ok("// @launch a<<<1, 1>>>(x, y);\n// @launch b<<<1, 1>>>(y, y);\n", &u);
    assert_int_equal(u.n_layers, 0);
    assert_int_equal(u.n_steps, 2);
    strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    walk(&u, 0, &a);
    walk(&u, 1, &b);
    assert_string_equal(a.buf, "a b");
    assert_string_equal(b.buf, "a b");
    sb_free(&a), sb_free(&b);
    launch_unit_free(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layers_in_order),
        cmocka_unit_test(test_layer_errors),
        cmocka_unit_test(test_layer_limits),
        cmocka_unit_test(test_no_layers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
