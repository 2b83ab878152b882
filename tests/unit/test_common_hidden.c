/* test_common_hidden: the "hidden" dims generator and "vary" of manifests (common/problem_hidden.c):
 * draws are a pure function of (id, seed, index), honour every rule, require and cap, redraw
 * what breaks one, favour irregular sizes and fail clearly when nothing fits; the loader names
 * the field of each mistake in "hidden" and "vary"; every attention manifest has a generator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/error.h"
#include "common/fsutil.h"
#include "common/problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/kc-test-hidden-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    remove_tree(tmpdir);
    return 0;
}

#define RELU_REF "\"reference\": \"019_relu.cu\""
#define RELU_INIT "\"init\": {\"dist\": \"normal\", \"mean\": 0, \"std\": 1}"

/* The relu manifest (dims B, D; flops B*D; x and y f32 of B x D) with substitutions (pairs of
 * from, to; NULL-terminated), loaded from a copy under tmpdir; returns problem_load's status,
 * the error in err. */
static int load_edits(const char *const *pairs, problem *p, strbuf *err)
{
    strbuf src = STRBUF_INIT, root = STRBUF_INIT, path = STRBUF_INIT, out = STRBUF_INIT;
    problems_root(&root);
    sb_addf(&path, "%s/level1/019_relu.json", root.buf);
    assert_int_equal(read_file(path.buf, &src, err), 0);
    for (int k = 0; pairs[k]; k += 2) {
        char *hit = strstr(src.buf, pairs[k]);
        assert_non_null(hit);
        sb_reset(&out);
        sb_add(&out, src.buf, (size_t)(hit - src.buf));
        sb_adds(&out, pairs[k + 1]);
        sb_adds(&out, hit + strlen(pairs[k]));
        sb_reset(&src);
        sb_add(&src, out.buf, out.len);
    }
    sb_reset(&path);
    sb_addf(&path, "%s/level1", tmpdir);
    assert_int_equal(mkdir_p(path.buf, err), 0);
    sb_adds(&path, "/019_relu.cu");
    assert_int_equal(write_file_atomic(path.buf, "// x\n", 5, err), 0);
    sb_reset(&path);
    sb_addf(&path, "%s/level1/019_relu.json", tmpdir);
    assert_int_equal(write_file_atomic(path.buf, src.buf, src.len, err), 0);
    int rc = problem_load(path.buf, p, err);
    sb_free(&src), sb_free(&root), sb_free(&path), sb_free(&out);
    return rc;
}

static int load_edit(const char *from, const char *to, problem *p, strbuf *err)
{
    const char *pairs[] = {from, to, NULL};
    return load_edits(pairs, p, err);
}

/* Loads relu with the given "hidden" body ("dims": ..., and the rest). */
static void load_hidden(const char *body, problem *p)
{
    strbuf to = STRBUF_INIT, err = STRBUF_INIT;
    sb_addf(&to, "\"hidden\": {%s, \"why\": \"test\"}, " RELU_REF, body);
    if (load_edit(RELU_REF, to.buf, p, &err))
        fail_msg("hidden %s: %s", body, err.buf);
    assert_true(problem_has_hidden(p));
    sb_free(&to), sb_free(&err);
}

static void expect_hidden_error(const char *from, const char *to, const char *needle)
{
    problem p;
    strbuf err = STRBUF_INIT;
    int rc = load_edit(from, to, &p, &err);
    if (rc == 0 || !strstr(err.buf, needle) || !strstr(err.buf, "019_relu.json"))
        fail_msg("%s: expected an error containing '%s', got '%s'", to, needle, err.buf);
    problem_free(&p);
    sb_free(&err);
}

static int64_t dim(const dimset *d, const char *name)
{
    int64_t v = -1;
    assert_true(dimset_get(d, name, &v));
    return v;
}

static void draw_ok(const problem *p, uint64_t seed, int index, dimset *d)
{
    strbuf err = STRBUF_INIT;
    if (problem_draw_dims(p, seed, index, d, &err))
        fail_msg("draw seed %llu index %d: %s", (unsigned long long)seed, index, err.buf);
    sb_free(&err);
}

static void test_deterministic_and_seeded(void **state)
{
    (void)state;
    problem p;
    load_hidden("\"dims\": {\"B\": {\"min\": 1, \"max\": 7}, \"D\": {\"min\": 1, \"max\": 20000}}", &p);
    strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    for (int seed = 0; seed < 20; seed++) {
        dimset d1, d2;
        draw_ok(&p, (uint64_t)seed, 2, &d1);
        draw_ok(&p, (uint64_t)seed, 2, &d2);
        strbuf j1 = STRBUF_INIT, j2 = STRBUF_INIT;
        dimset_to_json(&d1, &j1), dimset_to_json(&d2, &j2);
        assert_string_equal(j1.buf, j2.buf); /* same (seed, index): same dims */
        sb_addf(&a, "%s;", j1.buf);
        dimset_free(&d2);
        draw_ok(&p, (uint64_t)seed, 4, &d2); /* another (whole-range) index */
        dimset_to_json(&d2, &b), sb_addch(&b, ';');
        dimset_free(&d1), dimset_free(&d2), sb_free(&j1), sb_free(&j2);
    }
    assert_string_not_equal(a.buf, b.buf);
    /* 20 seeds give many different sets (not a constant, not a few) */
    int distinct = 0;
    char *save = NULL, *copy = xstrdup(a.buf), *seen = xstrdup("");
    for (char *t = strtok_r(copy, ";", &save); t; t = strtok_r(NULL, ";", &save))
        if (!strstr(seen, t)) {
            distinct++;
            char *grown = xcalloc(strlen(seen) + strlen(t) + 2, 1);
            sprintf(grown, "%s%s|", seen, t);
            free(seen), seen = grown;
        }
    assert_true(distinct >= 15);
    free(copy), free(seen);
    /* JSON shape of a drawn set */
    dimset d;
    draw_ok(&p, 0, 0, &d);
    strbuf j = STRBUF_INIT;
    dimset_to_json(&d, &j);
    char want[128];
    snprintf(want, sizeof want, "{\"B\":%lld,\"D\":%lld}", (long long)dim(&d, "B"),
             (long long)dim(&d, "D"));
    assert_string_equal(j.buf, want);
    dimset_free(&d), sb_free(&j), sb_free(&a), sb_free(&b);
    problem_free(&p);
}

/* A require that about 34 draws in 35 break still yields valid draws (by redrawing); one that
 * no draw meets fails with an error naming it. */
/* Odd indices draw small (each range within its lowest 8 values) while the requires allow,
 * and fall back to a whole-range draw when they do not. */
static void test_small_draws(void **state)
{
    (void)state;
    problem p;
    load_hidden("\"dims\": {\"B\": {\"min\": 1, \"max\": 500}, \"D\": {\"min\": 3, \"max\": 20000}}", &p);
    int big = 0;
    for (int seed = 0; seed < 50; seed++) {
        dimset d;
        draw_ok(&p, (uint64_t)seed, 1, &d);
        assert_true(dim(&d, "B") >= 1 && dim(&d, "B") <= 8);
        assert_true(dim(&d, "D") >= 3 && dim(&d, "D") <= 10);
        dimset_free(&d);
        draw_ok(&p, (uint64_t)seed, 0, &d);
        big += dim(&d, "B") > 8 || dim(&d, "D") > 10;
        dimset_free(&d);
    }
    assert_true(big >= 25); /* even indices range over the whole generator */
    problem_free(&p);
    /* a require no small draw meets: the draw falls back to the whole range */
    load_hidden("\"dims\": {\"B\": {\"min\": 1, \"max\": 500}, \"D\": {\"min\": 1, \"max\": 20000}}, "
                "\"require\": [\"D >= 100\"]", &p);
    dimset d;
    draw_ok(&p, 7, 1, &d);
    assert_true(dim(&d, "D") >= 100);
    dimset_free(&d);
    problem_free(&p);
}

static void test_requires(void **state)
{
    (void)state;
    problem p;
    load_hidden("\"dims\": {\"B\": {\"min\": 1, \"max\": 1000}, \"D\": {\"min\": 1, \"max\": 1000}},"
                " \"require\": [\"B % 7 == 3\", \"D % 5 != 0\", \"D%5<=1\"]", &p);
    for (int seed = 0; seed < 50; seed++) {
        dimset d;
        draw_ok(&p, (uint64_t)seed, 0, &d);
        assert_int_equal(dim(&d, "B") % 7, 3);
        assert_int_equal(dim(&d, "D") % 5, 1);
        dimset_free(&d);
    }
    problem_free(&p);
    load_hidden("\"dims\": {\"B\": {\"values\": [1, 2]}, \"D\": {\"min\": 3, \"max\": 10}},"
                " \"require\": [\"D >= 1\", \"B > D\"]", &p);
    dimset d;
    strbuf err = STRBUF_INIT;
    assert_int_equal(problem_draw_dims(&p, 7, 0, &d, &err), -1);
    assert_non_null(strstr(err.buf, "require 'B > D'"));
    assert_non_null(strstr(err.buf, "2000 draws"));
    assert_non_null(strstr(err.buf, "level1/019_relu"));
    assert_int_equal(d.n, 0);
    problem_free(&p);
    sb_free(&err);
}

static void test_rules(void **state)
{
    (void)state;
    problem p;
    load_hidden("\"dims\": {\"B\": {\"values\": [12, 30, 64]}, \"D\": {\"divisor_of\": \"B\"}}", &p);
    int seen_d[65] = {0}, n_d = 0, seen_b[65] = {0};
    for (int seed = 0; seed < 200; seed++) {
        dimset d;
        draw_ok(&p, (uint64_t)seed, 0, &d);
        int64_t b = dim(&d, "B"), dd = dim(&d, "D");
        assert_true(b == 12 || b == 30 || b == 64);
        assert_true(dd >= 1 && b % dd == 0);
        n_d += !seen_d[dd]++;
        seen_b[b]++;
        dimset_free(&d);
    }
    assert_true(seen_b[12] && seen_b[30] && seen_b[64]);
    assert_true(n_d >= 8); /* divisors of 12, 30, 64: 1 2 3 4 5 6 8 10 12 15 16 30 32 64 */
    problem_free(&p);
    load_hidden("\"dims\": {\"B\": {\"min\": 1, \"max\": 50}, \"D\": {\"expr\": \"2*B+1\"}}", &p);
    for (int seed = 0; seed < 50; seed++) {
        dimset d;
        draw_ok(&p, (uint64_t)seed, 0, &d);
        assert_int_equal(dim(&d, "D"), 2 * dim(&d, "B") + 1);
        dimset_free(&d);
    }
    problem_free(&p);
}

/* max_bytes (x and y: 2*4*B*D bytes), max_flops (B*D) and the 64 GiB limit per tensor. */
static void test_caps(void **state)
{
    (void)state;
    problem p;
    load_hidden("\"dims\": {\"B\": {\"min\": 1, \"max\": 5000}, \"D\": {\"min\": 1, \"max\": 5000}},"
                " \"max_bytes\": 40000", &p);
    int big = 0;
    for (int seed = 0; seed < 200; seed++) {
        dimset d;
        draw_ok(&p, (uint64_t)seed, 0, &d);
        assert_true(8 * dim(&d, "B") * dim(&d, "D") <= 40000);
        big += dim(&d, "B") > 100 || dim(&d, "D") > 100;
        dimset_free(&d);
    }
    assert_true(big > 0); /* the cap bounds the product, not each dim */
    problem_free(&p);
    load_hidden("\"dims\": {\"B\": {\"min\": 1, \"max\": 5000}, \"D\": {\"min\": 1, \"max\": 5000}},"
                " \"max_flops\": 1000", &p);
    for (int seed = 0; seed < 100; seed++) {
        dimset d;
        draw_ok(&p, (uint64_t)seed, 0, &d);
        assert_true(dim(&d, "B") * dim(&d, "D") <= 1000);
        dimset_free(&d);
    }
    problem_free(&p);
    /* dims up to 2^40: only sets whose tensors fit in 64 GiB each are kept */
    load_hidden("\"dims\": {\"B\": {\"min\": 1, \"max\": 1099511627776}, \"D\": {\"min\": 1, \"max\": "
                "1099511627776}}, \"max_bytes\": 9000000000000000000, \"max_flops\": 1e30", &p);
    for (int seed = 0; seed < 100; seed++) {
        dimset d;
        draw_ok(&p, (uint64_t)seed, 0, &d);
        assert_true((__int128)dim(&d, "B") * dim(&d, "D") * 4 <= KC_MAX_TENSOR_BYTES);
        dimset_free(&d);
    }
    problem_free(&p);
}

static int is_prime(int64_t n)
{
    if (n < 2)
        return 0;
    for (int64_t f = 2; f * f <= n; f++)
        if (n % f == 0)
            return 0;
    return 1;
}

/* A 1..5000 range: most draws odd or off multiples of 32, some prime, both ends reached. */
static void test_irregular_sizes(void **state)
{
    (void)state;
    problem p;
    load_hidden("\"dims\": {\"B\": {\"min\": 1, \"max\": 5000}, \"D\": {\"values\": [1]}}", &p);
    int irregular = 0, primes = 0, lo = 0, hi = 0, off32 = 0;
    for (int seed = 0; seed < 200; seed++) {
        dimset d;
        draw_ok(&p, (uint64_t)seed, 0, &d);
        int64_t b = dim(&d, "B"), m = b % 32;
        irregular += b % 2 == 1 || m != 0;
        primes += b > 2 && is_prime(b);
        lo += b == 1, hi += b == 5000;
        off32 += b > 32 && (m == 1 || m == 2 || m == 3 || m == 29 || m == 30 || m == 31);
        dimset_free(&d);
    }
    assert_true(irregular > 150);
    assert_true(primes >= 1);
    assert_true(lo >= 1 && hi >= 1);
    assert_true(off32 >= 10);
    problem_free(&p);
}

static void test_loader_errors(void **state)
{
    (void)state;
#define H(body) "\"hidden\": {" body "}, " RELU_REF
#define DIMS_OK "\"dims\": {\"B\": {\"min\": 1, \"max\": 7}, \"D\": {\"min\": 1, \"max\": 9}}"
    expect_hidden_error(RELU_REF, H("\"dims\": {\"B\": {\"min\": 1, \"max\": 7}, \"D\": {\"min\": 1, "
                                    "\"max\": 9}, \"Q\": {\"min\": 1, \"max\": 2}}, \"why\": \"w\""),
                        "field 'hidden.dims.Q': not a dim of dims.default");
    expect_hidden_error(RELU_REF, H("\"dims\": {\"B\": {\"min\": 1, \"max\": 7}}, \"why\": \"w\""),
                        "field 'hidden.dims': no rule for dim 'D'");
    expect_hidden_error(RELU_REF, H("\"dims\": {\"B\": {\"min\": 1, \"max\": 7, \"values\": [1]}, "
                                    "\"D\": {\"min\": 1, \"max\": 9}}, \"why\": \"w\""),
                        "field 'hidden.dims.B': expected exactly one of");
    expect_hidden_error(RELU_REF, H("\"dims\": {\"B\": {\"min\": 8, \"max\": 7}, \"D\": {\"min\": 1, "
                                    "\"max\": 9}}, \"why\": \"w\""),
                        "field 'hidden.dims.B': min must not exceed max");
    expect_hidden_error(RELU_REF, H("\"dims\": {\"B\": {\"min\": 1}, \"D\": {\"min\": 1, "
                                    "\"max\": 9}}, \"why\": \"w\""),
                        "field 'hidden.dims.B': a range needs min and max");
    expect_hidden_error(RELU_REF, H("\"dims\": {\"B\": {\"expr\": \"D\"}, \"D\": {\"min\": 1, "
                                    "\"max\": 9}}, \"why\": \"w\""),
                        "expr uses 'D', not a dim listed before this one");
    expect_hidden_error(RELU_REF, H("\"dims\": {\"B\": {\"min\": 1, \"max\": 7}, \"D\": "
                                    "{\"divisor_of\": \"Z\"}}, \"why\": \"w\""),
                        "field 'hidden.dims.D': divisor_of names 'Z'");
    expect_hidden_error(RELU_REF, H(DIMS_OK ", \"require\": [\"B D\"], \"why\": \"w\""),
                        "field 'hidden.require[0]': expected \"EXPR OP EXPR\"");
    expect_hidden_error(RELU_REF, H(DIMS_OK ", \"require\": [\"B >= 1\", \"B = D\"], \"why\": \"w\""),
                        "field 'hidden.require[1]'");
    expect_hidden_error(RELU_REF, H(DIMS_OK ", \"require\": [\"B >= Q\"], \"why\": \"w\""),
                        "unknown dim 'Q'");
    expect_hidden_error(RELU_REF, H(DIMS_OK ", \"require\": [\" <= B\"], \"why\": \"w\""),
                        "a side is empty");
    expect_hidden_error(RELU_REF, H(DIMS_OK), "field 'hidden.why': missing");
    expect_hidden_error(RELU_REF, H(DIMS_OK ", \"max_bytes\": -1, \"why\": \"w\""),
                        "field 'hidden.max_bytes'");
    expect_hidden_error(RELU_REF, H(DIMS_OK ", \"maxbytes\": 1, \"why\": \"w\""),
                        "field 'hidden': unknown key 'maxbytes'");
    expect_hidden_error(RELU_REF, "\"hidden\": [], " RELU_REF, "field 'hidden': expected an object");
#undef H
#undef DIMS_OK
}

static void test_vary(void **state)
{
    (void)state;
    problem p;
    strbuf err = STRBUF_INIT;
    tensor_spec tmp;
    /* a constant x leaves structure nothing to shape: it is declared off then */
    const char *pairs[] = {RELU_INIT,
                           "\"init\": {\"dist\": \"constant\", \"value\": 1, \"vary\": "
                           "{\"dist\": \"uniform\", \"lo\": 0.5, \"hi\": 1.5}}",
                           "\"structure\": {\"on\": true, \"atol\": 1,", "\"structure\": {\"on\": false,",
                           "\"values\": [\"inf\", \"-inf\", \"-0\"]", "\"values\": []", NULL};
    if (load_edits(pairs, &p, &err))
        fail_msg("%s", err.buf);
    const tensor_spec *x = &p.inputs[0];
    assert_int_equal(x->dist, KC_DIST_CONSTANT);
    assert_int_equal(x->vary_dist, KC_DIST_UNIFORM);
    const tensor_spec *v = tensor_spec_varied(x, &tmp);
    assert_ptr_equal(v, &tmp);
    assert_int_equal(v->dist, KC_DIST_UNIFORM);
    assert_true(v->a == 0.5 && v->b == 1.5);
    assert_ptr_equal(v->name, x->name); /* a shallow copy */
    assert_int_equal(x->dist, KC_DIST_CONSTANT); /* t itself unchanged */
    problem_free(&p);
    assert_int_equal(load_edit("\"dist\": \"normal\"", "\"dist\": \"normal\"", &p, &err), 0);
    assert_int_equal(p.inputs[0].vary_dist, KC_DIST_NONE);
    assert_ptr_equal(tensor_spec_varied(&p.inputs[0], &tmp), &p.inputs[0]);
    problem_free(&p);
    expect_hidden_error(RELU_INIT, "\"init\": {\"dist\": \"normal\", \"vary\": {\"dist\": \"sign\"}}",
                        "field 'inputs[0].init.vary': only a constant init takes vary");
    expect_hidden_error(RELU_INIT, "\"init\": {\"dist\": \"constant\", \"value\": 1, \"vary\": "
                                   "{\"dist\": \"constant\", \"value\": 2}}",
                        "field 'inputs[0].init.vary': vary takes dist normal, uniform");
    expect_hidden_error(RELU_INIT, "\"init\": {\"dist\": \"constant\", \"value\": 1, \"vary\": "
                                   "{\"dist\": \"uniform\", \"lo\": 2, \"hi\": 1}}",
                        "field 'inputs[0].init.vary': uniform needs lo < hi");
    expect_hidden_error(RELU_INIT, "\"init\": {\"dist\": \"constant\", \"value\": 1, \"vary\": 3}",
                        "field 'inputs[0].init.vary': expected an init object");
    sb_free(&err);
}

/* Every attention manifest has a generator, and its draws are valid for many seeds. */
static void test_attention_generators(void **state)
{
    (void)state;
    strbuf root = STRBUF_INIT, err = STRBUF_INIT;
    problems_root(&root);
    char **ids;
    int n;
    assert_int_equal(problems_select(root.buf, "attention", &ids, &n, &err), 0);
    assert_true(n >= 10);
    for (int i = 0; i < n; i++) {
        problem p;
        if (problem_load_by_id(ids[i], &p, &err))
            fail_msg("%s", err.buf);
        assert_true(problem_has_hidden(&p));
        for (int seed = 0; seed < 100; seed++) {
            dimset d;
            draw_ok(&p, (uint64_t)seed, seed % 3, &d);
            assert_int_equal(problem_dims_fault(&p, &d, NULL, &err), 0);
            dimset_free(&d);
        }
        problem_free(&p);
    }
    problems_free_ids(ids, n);
    sb_free(&root), sb_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic_and_seeded),
        cmocka_unit_test(test_small_draws),
        cmocka_unit_test(test_requires),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_irregular_sizes),
        cmocka_unit_test(test_loader_errors),
        cmocka_unit_test(test_vary),
        cmocka_unit_test(test_attention_generators),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
