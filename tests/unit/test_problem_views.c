/* test_problem_views: packed inputs (a network's parameters in one buffer, issue 38): the
 * loader's layout of the views (256-byte aligned, constant sizes folded, sizes over dims as
 * cdiv terms, the packed shape), its errors, the varied copy, and views as launch arguments
 * (a view's name, VIEW[INDEX] checked against the view's own size, the byte offset the worker
 * adds) against a synthetic manifest and level3/003_deep_narrow_mlp. */
#include "common/candidate.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/problem.h"
#include "common/prompt_text.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static char tmpdir[64];

/* A synthetic level-3 manifest: x, then params with a constant view (varied), a weight whose
 * size is constant (2 x 3 x 5 x 5 = 150 floats: padded to 192), a stack over L layers and a
 * view over dims (N x 7). VIEWS replaces the views when not NULL. */
static const char manifest_head[] =
    "{\"format\": \"kc-problem v1\", \"id\": \"level3/900_views\", \"title\": \"t\", \"level\": 3,\n"
    " \"description\": \"d\", \"torch_reference\": \"r\",\n"
    " \"dims\": {\"default\": {\"B\": 4, \"L\": 3, \"N\": 10}, \"small\": {\"B\": 1, \"L\": 1, \"N\": 1},\n"
    "          \"alt\": [{\"B\": 2, \"L\": 2, \"N\": 33}]},\n"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\"], \"init\": {\"dist\": \"normal\"}},\n"
    "            {\"name\": \"params\", \"dtype\": \"f32\", \"views\": [\n";
static const char default_views[] =
    "   {\"name\": \"g\", \"shape\": [3], \"init\": {\"dist\": \"constant\", \"value\": 1, \"vary\": {\"dist\": \"normal\", \"mean\": 1, \"std\": 0.5}}, \"torch\": \"bn.weight\"},\n"
    "   {\"name\": \"cw\", \"shape\": [2, 3, 5, 5], \"init\": {\"dist\": \"uniform_fan_in\", \"fan_in\": 75}},\n"
    "   {\"name\": \"stack\", \"shape\": [\"L\", 4, 4], \"init\": {\"dist\": \"uniform_fan_in\", \"fan_in\": 4}, \"torch\": \"l.{i}.weight\"},\n"
    "   {\"name\": \"fc\", \"shape\": [\"N\", 7], \"init\": {\"dist\": \"uniform_fan_in\", \"fan_in\": 7}},\n"
    "   {\"name\": \"st2\", \"shape\": [\"L\", 64], \"init\": {\"dist\": \"normal\"}},\n"
    "   {\"name\": \"st3\", \"shape\": [2, \"L\", 32], \"init\": {\"dist\": \"normal\"}}\n";
static const char manifest_tail[] =
    "  ]}],\n"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\"]}],\n"
    " \"tolerance\": {\"atol\": 0.0001, \"rtol\": 0.0001, \"why\": \"w\"},\n"
    " \"bytes\": \"4*B*N\", \"flops\": \"B*N\", \"reference\": \"900_views.cu\"}\n";

static int load_synthetic(const char *views, const char *extra_input, problem *p, strbuf *err)
{
    strbuf text = STRBUF_INIT, path = STRBUF_INIT, e = STRBUF_INIT;
    sb_adds(&text, manifest_head);
    sb_adds(&text, views ? views : default_views);
    sb_adds(&text, manifest_tail);
    if (extra_input) { /* replaces the packed input's opening with another input object */
        char *at = strstr(text.buf, "{\"name\": \"params\"");
        strbuf t2 = STRBUF_INIT;
        sb_add(&t2, text.buf, (size_t)(at - text.buf));
        sb_adds(&t2, extra_input);
        sb_adds(&t2, at + strlen("{\"name\": \"params\", \"dtype\": \"f32\", \"views\": ["));
        sb_free(&text);
        text = t2;
    }
    sb_addf(&path, "%s/level3", tmpdir);
    assert_int_equal(mkdir_p(path.buf, &e), 0);
    strbuf cu = STRBUF_INIT;
    sb_addf(&cu, "%s/900_views.cu", path.buf);
    assert_int_equal(write_file_atomic(cu.buf, "// x\n", 5, &e), 0);
    sb_adds(&path, "/900_views.json");
    assert_int_equal(write_file_atomic(path.buf, text.buf, text.len, &e), 0);
    int rc = problem_load(path.buf, p, err);
    sb_free(&text), sb_free(&path), sb_free(&e), sb_free(&cu);
    return rc;
}

static int64_t eval_at(const char *expr, const dimset *d)
{
    int64_t v = -1;
    strbuf err = STRBUF_INIT;
    if (expr_eval(expr, d, &v, &err))
        fail_msg("%s: %s", expr, err.buf);
    sb_free(&err);
    return v;
}

static void test_layout(void **state)
{
    (void)state;
    problem p;
    strbuf err = STRBUF_INIT;
    if (load_synthetic(NULL, NULL, &p, &err))
        fail_msg("%s", err.buf);
    const tensor_spec *t = &p.inputs[1];
    assert_int_equal(t->n_views, 6);
    assert_int_equal(t->rank, 1);
    /* g: 3 floats at 0 (padded to 64); cw: 150 at 64 (padded to 192); stack at 256: its size
     * is over dims (16 L), a cdiv term; fc after it; st2 and st3 are 64 L each: one grouped
     * term (L)*128, no padding needed */
    assert_string_equal(t->views[0].view_offset, "0");
    assert_string_equal(t->views[1].view_offset, "64");
    assert_string_equal(t->views[2].view_offset, "256");
    assert_string_equal(t->views[3].view_offset, "cdiv(16*(L), 64)*64 + 256");
    assert_string_equal(t->views[5].view_offset,
                        "(L)*64 + cdiv(16*(L), 64)*64 + cdiv(7*(N), 64)*64 + 256");
    assert_string_equal(t->shape[0], "(L)*128 + cdiv(16*(L), 64)*64 + cdiv(7*(N), 64)*64 + 256");
    assert_string_equal(t->views[2].torch_key, "l.{i}.weight");
    /* default: L = 3 (48 floats, padded 64), N = 10 (70, padded 128) */
    assert_int_equal(eval_at(t->views[3].view_offset, &p.dims_default), 320);
    assert_int_equal(eval_at(t->views[5].view_offset, &p.dims_default), 448 + 192);
    assert_int_equal(eval_at(t->shape[0], &p.dims_default), 448 + 384);
    int64_t off, n;
    assert_int_equal(view_extent(&t->views[3], &p.dims_alt[0], &off, &n, &err), 0);
    assert_int_equal(off, 256 + 64);
    assert_int_equal(n, 33 * 7);
    int input = -1;
    assert_ptr_equal(problem_view(&p, "stack", &input), &t->views[2]);
    assert_int_equal(input, 1);
    assert_null(problem_view(&p, "x", NULL));
    assert_true(problem_has_views(&p));
    /* the varied copy: the packed input varies its views; a view varies alone */
    tensor_spec tmp, tmp2;
    const tensor_spec *v = tensor_spec_varied(t, &tmp);
    assert_ptr_equal(v, &tmp);
    assert_int_equal(tmp.vary_views, 1);
    v = tensor_spec_varied(&t->views[0], &tmp2);
    assert_int_equal(v->dist, KC_DIST_NORMAL);
    assert_ptr_equal(tensor_spec_varied(&t->views[1], &tmp2), &t->views[1]);
    problem_free(&p);
    sb_free(&err);
}

static void expect_load_error(const char *views, const char *extra, const char *needle)
{
    problem p;
    strbuf err = STRBUF_INIT;
    int rc = load_synthetic(views, extra, &p, &err);
    problem_free(&p);
    if (rc == 0 || !strstr(err.buf, needle))
        fail_msg("expected an error with '%s', got '%s'", needle, rc ? err.buf : "(loaded)");
    sb_free(&err);
}

static void test_errors(void **state)
{
    (void)state;
    expect_load_error("   {\"name\": \"x\", \"shape\": [3], \"init\": {\"dist\": \"normal\"}}\n", NULL,
                      "name 'x' is used twice among tensors, views, params and dims");
    expect_load_error("   {\"name\": \"s\", \"shape\": [3], \"init\": {\"dist\": \"simplex\"}}\n", NULL,
                      "field 'inputs[1].views[0].init': a view takes normal, uniform");
    expect_load_error("   {\"name\": \"s\", \"shape\": [3], \"init\": {\"dist\": \"normal\"}, \"bias\": 1}\n",
                      NULL, "unknown key 'bias' (a view takes name, shape, init, torch)");
    expect_load_error("   {\"name\": \"s\", \"shape\": [\"Q\"], \"init\": {\"dist\": \"normal\"}}\n", NULL,
                      "field 'inputs[1].views[0].shape[0]'");
    expect_load_error(NULL, "{\"name\": \"params\", \"dtype\": \"f32\", \"shape\": [4], \"views\": [",
                      "a packed input (views) takes no shape or init");
    expect_load_error(NULL, "{\"name\": \"params\", \"dtype\": \"i32\", \"views\": [",
                      "a packed input is a float tensor");
}

/* Views as launch arguments. */
static void test_arguments(void **state)
{
    (void)state;
    problem p;
    strbuf err = STRBUF_INIT;
    if (load_synthetic(NULL, NULL, &p, &err))
        fail_msg("%s", err.buf);
    const char *k = "extern \"C\" __global__ void k(const float *a, const float *b, float *y) {}\n";
    strbuf src = STRBUF_INIT;
    sb_adds(&src, k);
    sb_adds(&src, "// @for l in 0..L\n// @launch k<<<1, 1>>>(stack[l*16], fc, y);\n// @end\n"
                  "// @launch k<<<1, 1>>>(stack[L*16], cw[149], y);\n");
    launch_unit u;
    if (candidate_parse(src.buf, &p, &u, &err))
        fail_msg("%s", err.buf);
    const launch_arg *a = &u.launches[0].args[0], *b = &u.launches[0].args[1];
    assert_int_equal(a->kind, KC_ARG_OFFSET);
    assert_int_equal(a->tensor, 1);
    assert_ptr_equal(a->view, &p.inputs[1].views[2]);
    assert_int_equal(b->kind, KC_ARG_OFFSET); /* a view's name alone: its first element */
    assert_string_equal(b->offset, "0");
    int64_t bytes;
    dimset d;
    dimset_copy(&d, &p.dims_default);
    dimset_set(&d, "l", 2);
    assert_int_equal(launch_offset_bytes(a, &d, 832, KC_F32, &bytes, &err), 0);
    assert_int_equal(bytes, 4 * (256 + 32));
    assert_int_equal(launch_offset_bytes(b, &d, 832, KC_F32, &bytes, &err), 0);
    assert_int_equal(bytes, 4 * 320);
    dimset_free(&d);
    launch_unit_free(&u);
    /* one past the view's end is refused even where the buffer goes on */
    sb_reset(&src);
    sb_adds(&src, k);
    sb_adds(&src, "// @launch k<<<1, 1>>>(cw[151], g, y);\n");
    assert_int_equal(candidate_parse(src.buf, &p, &u, &err), -1);
    assert_string_equal(err.buf, "line 2: argument 1 of k at dims default (B=4, L=3, N=10): "
                                 "cw[151] is element 151 of view cw of 150 elements; the index "
                                 "must lie in [0, 150]");
    launch_unit_free(&u);
    /* names: a loop variable or scratch cannot take a view's name; an unknown name lists views */
    sb_reset(&src);
    sb_adds(&src, k);
    sb_adds(&src, "// @for fc in 0..L\n// @launch k<<<1, 1>>>(g, g, y);\n// @end\n");
    assert_int_equal(candidate_parse(src.buf, &p, &u, &err), -1);
    assert_string_equal(err.buf, "line 2: loop variable 'fc' is already a view of a packed input: "
                                 "pick another name");
    launch_unit_free(&u);
    sb_reset(&src);
    sb_adds(&src, k);
    sb_adds(&src, "// @launch k<<<1, 1>>>(gg, g, y);\n");
    assert_int_equal(candidate_parse(src.buf, &p, &u, &err), -1);
    assert_string_equal(err.buf, "line 2: unknown tensor 'gg' in launch of k (tensors: x params y; "
                                 "views: g cw stack fc st2 st3; dims: B L N)");
    launch_unit_free(&u);
    problem_free(&p);
    sb_free(&err), sb_free(&src);
}

/* level3/003_deep_narrow_mlp: its reference's stacked view walks the loop inside the view. */
static void test_level3_reference(void **state)
{
    (void)state;
    problem p;
    strbuf err = STRBUF_INIT;
    if (problem_load_by_id("level3/003_deep_narrow_mlp", &p, &err))
        fail_msg("%s", err.buf);
    launch_unit u;
    if (candidate_parse(p.reference_source.buf, &p, &u, &err))
        fail_msg("%s", err.buf);
    strbuf spec = STRBUF_INIT; /* the spec lists the views with their places and torch keys */
    problem_spec_text(&p, &spec);
    assert_non_null(strstr(spec.buf, "- params: f32[cdiv((H)*(IN), 64)*64 + cdiv((H), 64)*64 + "
                                     "cdiv((L-1)*(H)*(H), 64)*64 + "));
    assert_non_null(strstr(spec.buf, "packed parameters: each view below is a contiguous row-major f32"));
    assert_non_null(strstr(spec.buf, "  - fc0_w: [H, IN] at params[0] (network.0.weight)\n"));
    assert_non_null(strstr(spec.buf, "  - fch_w: [L-1, H, H] at params["));
    assert_non_null(strstr(spec.buf, "(network.{2*i+2}.weight)\n"));
    /* then the reference's layers (its @layer lines, issue 38), in order, after the views */
    const char *layers = strstr(spec.buf, "Layers (the reference's, in the order it computes them");
    assert_non_null(layers);
    assert_true(layers > strstr(spec.buf, "(network.{2*i+2}.weight)\n"));
    assert_non_null(strstr(layers, "\n- network.0: f32[(B)*(H)]\n"));
    assert_non_null(strstr(layers, "\n- network.{2*L}: f32[(B)*(OUT)]\n"));
    assert_int_equal(u.n_layers, 2);
    sb_free(&spec);
    const tensor_spec *w = problem_view(&p, "fch_w", NULL);
    assert_non_null(w);
    int64_t off, n;
    assert_int_equal(view_extent(w, &p.dims_default, &off, &n, &err), 0);
    assert_int_equal(off, 8192LL * 1024 + 1024);
    assert_int_equal(n, 15LL * 1024 * 1024);
    launch_unit_free(&u);
    problem_free(&p);
    sb_free(&err);
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/kc-test-views-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_level3_reference),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    strbuf cmd = STRBUF_INIT;
    sb_addf(&cmd, "rm -rf %s", tmpdir);
    if (system(cmd.buf) != 0)
        rc = rc ? rc : 1;
    sb_free(&cmd);
    return rc;
}
