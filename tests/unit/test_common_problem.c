/* test_common_problem: the manifest loader accepts the suite and names the
 * file, field and expectation of each mistake; the value classes ("values", params' "vary") and
 * what --check refuses undeclared; suite selection; the database schema, its migrations and
 * the content-addressed blob store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>

#include "common/db.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/problem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/kc-test-problem-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    remove_tree(tmpdir);
    return 0;
}

/* Cuts the text from the first `from` up to and including the next `to` after it (if both). */
static void cut(strbuf *src, const char *from, const char *to)
{
    char *start = strstr(src->buf, from), *end = start ? strstr(start + 1, to) : NULL;
    if (!end)
        return;
    end += strlen(to);
    memmove(start, end, strlen(end) + 1);
    sb_setlen(src, strlen(src->buf));
}

/* Drops the manifest's "values" block and its hidden capacity sets: both depend on the inputs
 * (the classes name the inputs they shape, the sets their bytes), which the substitutions below
 * change. */
static void drop_values(strbuf *src)
{
    cut(src, "  \"values\": {\n", "\n  },\n");
    cut(src, ",\n    \"capacity\": {", "}\n"); /* one line, the last of "hidden" */
}

/* Writes suite/name.json with the relu manifest edited by one substitution (without its value
 * classes). */
static void write_variant(const char *from, const char *to, strbuf *path)
{
    strbuf src = STRBUF_INIT, err = STRBUF_INIT, root = STRBUF_INIT;
    problems_root(&root);
    sb_addf(path, "%s/level1/019_relu.json", root.buf);
    assert_int_equal(read_file(path->buf, &src, &err), 0);
    drop_values(&src);
    char *hit = strstr(src.buf, from);
    assert_non_null(hit);
    strbuf out = STRBUF_INIT;
    sb_add(&out, src.buf, (size_t)(hit - src.buf));
    sb_adds(&out, to);
    sb_adds(&out, hit + strlen(from));
    sb_reset(path);
    sb_addf(path, "%s/level1", tmpdir);
    assert_int_equal(mkdir_p(path->buf, &err), 0);
    sb_adds(path, "/019_relu.json");
    assert_int_equal(write_file_atomic(path->buf, out.buf, out.len, &err), 0);
    strbuf cu = STRBUF_INIT;
    sb_addf(&cu, "%s/level1/019_relu.cu", tmpdir);
    assert_int_equal(write_file_atomic(cu.buf, "// x\n", 5, &err), 0);
    sb_free(&src), sb_free(&err), sb_free(&root), sb_free(&out), sb_free(&cu);
}

static void expect_error(const char *from, const char *to, const char *needle)
{
    strbuf path = STRBUF_INIT, err = STRBUF_INIT;
    write_variant(from, to, &path);
    problem p;
    int rc = problem_load(path.buf, &p, &err);
    if (rc == 0 || !strstr(err.buf, needle) || !strstr(err.buf, path.buf))
        fail_msg("substituting %s -> %s: expected error containing '%s', got '%s'", from, to, needle,
                 err.buf);
    problem_free(&p);
    sb_free(&path), sb_free(&err);
}

static void test_suite_loads(void **state)
{
    (void)state;
    strbuf root = STRBUF_INIT, err = STRBUF_INIT;
    problems_root(&root);
    char **ids;
    int n;
    assert_int_equal(problems_select(root.buf, "level1", &ids, &n, &err), 0);
    assert_int_equal(n, 100);
    for (int i = 0; i < n; i++) {
        problem p;
        if (problem_load_by_id(ids[i], &p, &err))
            fail_msg("%s", err.buf);
        assert_string_equal(p.id, ids[i]);
        assert_true(p.n_alt >= 1);
        assert_true(p.reference_source.len > 0);
        problem_free(&p);
    }
    problems_free_ids(ids, n);
    assert_int_equal(problems_select(root.buf, "level1/01*,level1/019_relu", &ids, &n, &err), 0);
    assert_int_equal(n, 10); /* 010..019, 019 once */
    problems_free_ids(ids, n);
    assert_int_equal(problems_select(root.buf, "level9", &ids, &n, &err), -1);
    assert_non_null(strstr(err.buf, "no problems match 'level9'"));
    sb_free(&root), sb_free(&err);
}

static void test_loader_errors(void **state)
{
    (void)state;
    expect_error("\"format\": \"kc-problem v1\"", "\"format\": \"v0\"", "field 'format': expected \"kc-problem v1\"");
    expect_error("\"dtype\": \"f32\", \"shape\": [\"B\", \"D\"], \"init\"",
                 "\"dtype\": \"f23\", \"shape\": [\"B\", \"D\"], \"init\"",
                 "field 'inputs[0].dtype': expected one of f32");
    expect_error("\"shape\": [\"B\", \"D\"], \"init\"", "\"shape\": [\"B\", \"Q\"], \"init\"",
                 "field 'inputs[0].shape[1]': unknown name 'Q'");
    expect_error("\"small\": {\"B\": 16, \"D\": 1024}", "\"small\": {\"B\": 16}",
                 "field 'dims.small': must name exactly the dims of dims.default");
    expect_error("\"dist\": \"normal\"", "\"dist\": \"gaussian\"", "field 'inputs[0].init': dist must be");
    expect_error("\"atol\": 0,", "\"atol\": \"0\",", "field 'tolerance.atol': expected a number");
    expect_error("\"bytes\": \"2*4*B*D\"", "\"bytes\": \"2*4*B*\"", "field 'bytes'");
    expect_error("\"reference\": \"019_relu.cu\"", "\"reference\": \"missing.cu\"", "field 'reference': cannot open");
    expect_error("\"title\"", "\"titel\"", "field 'titel': unknown field");
    expect_error("\"level\": 1,", "\"level\": 1,,", "invalid JSON");
}

/* Writes tmpdir/level1/019_relu.cu (reference) and, when part is not NULL, shared/part.cuh;
 * returns the manifest's path in path. */
static void write_reference_with_shared(const char *reference, const char *part, strbuf *path)
{
    strbuf file = STRBUF_INIT, err = STRBUF_INIT;
    write_variant("\"title\"", "\"title\"", path);
    sb_addf(&file, "%s/level1/019_relu.cu", tmpdir);
    assert_int_equal(write_file_atomic(file.buf, reference, strlen(reference), &err), 0);
    sb_reset(&file);
    sb_addf(&file, "%s/level1/shared", tmpdir);
    assert_int_equal(mkdir_p(file.buf, &err), 0);
    sb_adds(&file, "/part.cuh");
    if (part)
        assert_int_equal(write_file_atomic(file.buf, part, strlen(part), &err), 0);
    else
        unlink(file.buf);
    sb_free(&file), sb_free(&err);
}

static void expect_shared_error(const char *reference, const char *part, const char *needle)
{
    strbuf path = STRBUF_INIT, err = STRBUF_INIT;
    write_reference_with_shared(reference, part, &path);
    problem p;
    if (problem_load(path.buf, &p, &err) == 0 || !strstr(err.buf, needle) ||
        !strstr(err.buf, "019_relu.cu:2:"))
        fail_msg("expected an error at 019_relu.cu:2 containing '%s', got '%s'", needle, err.buf);
    problem_free(&p);
    sb_free(&path), sb_free(&err);
}

/* A reference's `#include "shared/NAME.cuh"` lines are replaced by the file at load; nothing
 * else is (toolkit includes stay for NVRTC); bad names, missing files and nesting fail. */
static void test_shared_reference_code(void **state)
{
    (void)state;
    strbuf path = STRBUF_INIT, err = STRBUF_INIT;
    write_reference_with_shared("#define K 3\n#include \"shared/part.cuh\"\n#include <cuda_fp16.h>\n"
                                "// @launch k<<<1, 1>>>(y);\n",
                                "// part\nint part_of_k;", &path);
    problem p;
    if (problem_load(path.buf, &p, &err))
        fail_msg("%s", err.buf);
    assert_string_equal(p.reference_source.buf, "#define K 3\n// part\nint part_of_k;\n"
                                                "#include <cuda_fp16.h>\n// @launch k<<<1, 1>>>(y);\n");
    problem_free(&p);
    expect_shared_error("// a\n#include \"shared/part.cuh\"\n", NULL, "cannot open");
    expect_shared_error("// a\n#include \"shared/../part.cuh\"\n", "int x;\n", "is not a shared file name");
    expect_shared_error("// a\n#include \"shared/part.cuh\"\n", "  #include \"shared/other.cuh\"\n",
                        "includes another file");
    sb_free(&path), sb_free(&err);
}

/* Loads the relu manifest with one substitution; fails the test if it does not load. */
static void load_variant(const char *from, const char *to, problem *p)
{
    strbuf path = STRBUF_INIT, err = STRBUF_INIT;
    write_variant(from, to, &path);
    if (problem_load(path.buf, p, &err))
        fail_msg("substituting %s -> %s: %s", from, to, err.buf);
    sb_free(&path), sb_free(&err);
}

#define RELU_INIT "\"init\": {\"dist\": \"normal\", \"mean\": 0, \"std\": 1}"

/* The level-2 inits: PyTorch's default Linear/Conv init from a fan_in expression (per dims set),
 * constants, dropout masks; and the "degenerate" mark. */
static void test_level2_inits(void **state)
{
    (void)state;
    problem p;
    strbuf err = STRBUF_INIT;
    double a, b;
    load_variant(RELU_INIT, "\"init\": {\"dist\": \"uniform_fan_in\", \"fan_in\": \"D+3\"}", &p);
    assert_int_equal(p.inputs[0].dist, KC_DIST_UNIFORM_FAN_IN);
    assert_int_equal(tensor_init_params(&p.inputs[0], &p.dims_default, &a, &b, &err), 0);
    assert_true(fabs(b - 1.0 / sqrt(393216 + 3)) < 1e-15 && a == -b); /* D = 393216 by default */
    int64_t d_small;
    assert_true(dimset_get(&p.dims_small, "D", &d_small));
    assert_int_equal(tensor_init_params(&p.inputs[0], &p.dims_small, &a, &b, &err), 0);
    assert_true(fabs(b - 1.0 / sqrt((double)(d_small + 3))) < 1e-15); /* alt dims change fan_in */
    assert_null(p.degenerate);
    problem_free(&p);
    load_variant(RELU_INIT, "\"init\": {\"dist\": \"bernoulli\", \"p\": 0.2}", &p);
    assert_int_equal(p.inputs[0].dist, KC_DIST_BERNOULLI);
    assert_int_equal(tensor_init_params(&p.inputs[0], &p.dims_default, &a, &b, &err), 0);
    assert_true(a == 0.2 && fabs(b - 1.25) < 1e-15); /* kept values scaled as F.dropout does */
    problem_free(&p);
    load_variant(RELU_INIT, "\"init\": {\"dist\": \"constant\", \"value\": 1}", &p);
    assert_int_equal(p.inputs[0].dist, KC_DIST_CONSTANT);
    assert_true(p.inputs[0].a == 1.0);
    problem_free(&p);
    load_variant("\"level\": 1,", "\"level\": 1, \"degenerate\": \"always zero\",", &p);
    assert_string_equal(p.degenerate, "always zero");
    problem_free(&p);
    expect_error(RELU_INIT, "\"init\": {\"dist\": \"uniform_fan_in\"}", "needs fan_in");
    expect_error(RELU_INIT, "\"init\": {\"dist\": \"uniform_fan_in\", \"fan_in\": \"D-D\"}",
                 "fan_in must be positive");
    expect_error(RELU_INIT, "\"init\": {\"dist\": \"uniform_fan_in\", \"fan_in\": \"Q\"}",
                 "unknown name 'Q'");
    expect_error(RELU_INIT, "\"init\": {\"dist\": \"bernoulli\", \"p\": 1}", "0 <= p < 1");
    expect_error(RELU_INIT, "\"init\": {\"dist\": \"constant\"}", "field 'inputs[0].init': missing");
    expect_error("\"level\": 1,", "\"level\": 1, \"degenerate\": \"\",", "field 'degenerate'");
    expect_error("\"level\": 1,", "\"level\": 1, \"degenerate\": true,", "expected a string");
    sb_free(&err);
}

#define RELU_X "\"dtype\": \"f32\", \"shape\": [\"B\", \"D\"], " RELU_INIT

/* dist segments (document ids for the attention suite): integer tensors only, count an expression
 * within 1..63 in every dims set, kept as lo_expr = the last dim and hi_expr = count, which is
 * what the worker hands to kc_fill as lo and hi. */
static void test_segments_init(void **state)
{
    (void)state;
    problem p;
    load_variant(RELU_X, "\"dtype\": \"i32\", \"shape\": [\"B\", \"D\"], \"init\": "
                         "{\"dist\": \"segments\", \"count\": \"min(B, 9)\"}", &p);
    assert_int_equal(p.inputs[0].dist, KC_DIST_SEGMENTS);
    assert_string_equal(dist_name(p.inputs[0].dist), "segments");
    assert_string_equal(p.inputs[0].lo_expr, "D");
    assert_string_equal(p.inputs[0].hi_expr, "min(B, 9)");
    problem_free(&p);
    load_variant(RELU_X, "\"dtype\": \"i64\", \"shape\": [\"B\", \"D\"], \"init\": "
                         "{\"dist\": \"segments\", \"count\": 63}", &p);
    assert_string_equal(p.inputs[0].hi_expr, "63");
    problem_free(&p);
    expect_error(RELU_X, "\"dtype\": \"f32\", \"shape\": [\"B\", \"D\"], \"init\": "
                         "{\"dist\": \"segments\", \"count\": 4}", "an i32 or i64 tensor");
    expect_error(RELU_X, "\"dtype\": \"i32\", \"shape\": [\"B\", \"D\"], \"init\": "
                         "{\"dist\": \"segments\"}", "segments needs count");
    expect_error(RELU_X, "\"dtype\": \"i32\", \"shape\": [\"B\", \"D\"], \"init\": "
                         "{\"dist\": \"segments\", \"count\": 64}", "1..63 in every dims set");
    /* B is 1 in an alt set: B - 1 is 0 there */
    expect_error(RELU_X, "\"dtype\": \"i32\", \"shape\": [\"B\", \"D\"], \"init\": "
                         "{\"dist\": \"segments\", \"count\": \"B-1\"}", "1..63 in every dims set");
    expect_error(RELU_X, "\"dtype\": \"i32\", \"shape\": [\"B\", \"D\"], \"init\": "
                         "{\"dist\": \"segments\", \"count\": \"Q\"}", "unknown name 'Q'");
    /* integer tensors still refuse float dists */
    expect_error(RELU_X, "\"dtype\": \"i32\", \"shape\": [\"B\", \"D\"], " RELU_INIT,
                 "integer tensors take dist randint or segments");
}

/* The attention suite loads: every reference takes the shared kernel, and the flops formulas
 * count scored pairs only (document masking: the same count for any order of the lengths). */
static void test_attention_suite(void **state)
{
    (void)state;
    strbuf root = STRBUF_INIT, err = STRBUF_INIT;
    problems_root(&root);
    char **ids;
    int n;
    assert_int_equal(problems_select(root.buf, "attention", &ids, &n, &err), 0);
    assert_int_equal(n, 10);
    for (int i = 0; i < n; i++) {
        problem p;
        if (problem_load_by_id(ids[i], &p, &err))
            fail_msg("%s", err.buf);
        assert_non_null(strstr(p.reference_source.buf, "attention_ref(const"));
        assert_null(strstr(p.reference_source.buf, "#include \"shared/"));
        int64_t flops, d;
        assert_int_equal(expr_eval(p.flops_expr, &p.dims_default, &flops, &err), 0);
        assert_true(dimset_get(&p.dims_default, "D", &d));
        if (strcmp(p.id, "attention/001_causal") == 0) /* B*H*S(S+1)/2 pairs, 4*D flops each */
            assert_true(flops == 4 * d * 16 * 16 * (2048LL * 2049 / 2));
        if (strcmp(p.id, "attention/005_sliding_window") == 0) /* W = 256: 257*258/2 + 1791*257 */
            assert_true(flops == 4 * d * 16 * 16 * (257LL * 258 / 2 + 1791LL * 257));
        if (strcmp(p.id, "attention/006_document_causal") == 0) { /* lengths 56*k, k=1..8, and 32 */
            int64_t pairs = 32 * 33 / 2;
            for (int k = 1; k <= 8; k++)
                pairs += 56LL * k * (56LL * k + 1) / 2;
            assert_true(flops == 4 * d * 16 * 16 * pairs);
            assert_int_equal(p.inputs[3].dist, KC_DIST_SEGMENTS);
        }
        if (strcmp(p.id, "attention/009_neighborhood_2d") == 0) /* every query: 9*13 keys */
            assert_true(flops == 4 * d * 16 * 16 * (48LL * 80) * 9 * 13);
        problem_free(&p);
    }
    problems_free_ids(ids, n);
    sb_free(&root), sb_free(&err);
}

/* A shared file missing from the suite's shared/ is taken from the problems root's shared/;
 * the suite's own copy wins when both exist. */
static void test_shared_from_root(void **state)
{
    (void)state;
    strbuf path = STRBUF_INIT, err = STRBUF_INIT, root_shared = STRBUF_INIT;
    write_reference_with_shared("#include \"shared/common.cuh\"\n", NULL, &path);
    sb_addf(&root_shared, "%s/shared", tmpdir);
    assert_int_equal(mkdir_p(root_shared.buf, &err), 0);
    sb_adds(&root_shared, "/common.cuh");
    assert_int_equal(write_file_atomic(root_shared.buf, "int root_copy;\n", 15, &err), 0);
    problem p;
    if (problem_load(path.buf, &p, &err))
        fail_msg("%s", err.buf);
    assert_string_equal(p.reference_source.buf, "int root_copy;\n");
    problem_free(&p);
    strbuf suite_copy = STRBUF_INIT;
    sb_addf(&suite_copy, "%s/level1/shared/common.cuh", tmpdir);
    assert_int_equal(write_file_atomic(suite_copy.buf, "int suite_copy;\n", 16, &err), 0);
    if (problem_load(path.buf, &p, &err))
        fail_msg("%s", err.buf);
    assert_string_equal(p.reference_source.buf, "int suite_copy;\n");
    problem_free(&p);
    unlink(suite_copy.buf), unlink(root_shared.buf);
    sb_free(&path), sb_free(&err), sb_free(&root_shared), sb_free(&suite_copy);
}

/* ---- value classes ---- */

/* The JSON value at a dotted path ("values.large", "params.0.vary": numbers index arrays) of
 * root, creating nothing; *parent and *key name its slot. */
static json_t *json_slot(json_t *root, const char *path, json_t **parent, char *key, size_t n)
{
    json_t *cur = root;
    const char *s = path;
    for (;;) {
        const char *dot = strchr(s, '.');
        size_t len = dot ? (size_t)(dot - s) : strlen(s);
        assert_true(len < n);
        memcpy(key, s, len), key[len] = 0;
        *parent = cur;
        cur = json_is_array(cur) ? json_array_get(cur, strtoul(key, NULL, 10)) : json_object_get(cur, key);
        if (!dot)
            return cur;
        assert_non_null(cur);
        s = dot + 1;
    }
}

/* Writes tmpdir/level1/NAME.json: problems/level1/NAME.json with edits applied in order (pairs
 * of a path and the JSON put there, NULL JSON: removed; a NULL path ends them), and a stub
 * reference beside it; returns the manifest's path in out. */
static void write_json_edits(const char *name, const char *const *edits, strbuf *out)
{
    strbuf src = STRBUF_INIT, err = STRBUF_INIT, cu = STRBUF_INIT;
    problems_root(&src);
    sb_addf(&src, "/level1/%s.json", name);
    json_error_t je;
    json_t *root = json_load_file(src.buf, 0, &je), *parent;
    assert_non_null(root);
    for (; edits[0]; edits += 2) {
        char key[64];
        json_slot(root, edits[0], &parent, key, sizeof(key));
        json_t *v = edits[1] ? json_loads(edits[1], JSON_DECODE_ANY, &je) : NULL;
        if (edits[1] && !v)
            fail_msg("bad test JSON %s: %s", edits[1], je.text);
        if (json_is_array(parent))
            assert_int_equal(json_array_set_new(parent, strtoul(key, NULL, 10), v), 0);
        else if (v)
            assert_int_equal(json_object_set_new(parent, key, v), 0);
        else
            json_object_del(parent, key);
    }
    sb_reset(out);
    sb_addf(out, "%s/level1", tmpdir);
    assert_int_equal(mkdir_p(out->buf, &err), 0);
    sb_addf(out, "/%s.json", name);
    assert_int_equal(json_dump_file(root, out->buf, JSON_INDENT(1)), 0);
    sb_addf(&cu, "%s/level1/%s.cu", tmpdir, name);
    assert_int_equal(write_file_atomic(cu.buf, "// x\n", 5, &err), 0);
    json_decref(root);
    sb_free(&src), sb_free(&err), sb_free(&cu);
}

static void load_edits(const char *name, const char *const *edits, problem *p)
{
    strbuf file = STRBUF_INIT, err = STRBUF_INIT;
    write_json_edits(name, edits, &file);
    if (problem_load(file.buf, p, &err))
        fail_msg("%s with %s = %s...: %s", name, edits[0], edits[1] ? edits[1] : "(removed)", err.buf);
    sb_free(&file), sb_free(&err);
}

static void load_json_variant(const char *name, const char *path, const char *json, problem *p)
{
    const char *edits[] = {path, json, NULL};
    load_edits(name, edits, p);
}

/* Loading NAME with the edits must fail naming the file and containing needle. */
static void expect_edits_error(const char *name, const char *const *edits, const char *needle)
{
    strbuf file = STRBUF_INIT, err = STRBUF_INIT;
    write_json_edits(name, edits, &file);
    problem p;
    if (problem_load(file.buf, &p, &err) == 0 || !strstr(err.buf, needle) || !strstr(err.buf, file.buf))
        fail_msg("%s with %s = %s...: expected an error containing '%s', got '%s'", name,
                 edits[0], edits[1] ? edits[1] : "(removed)", needle, err.buf);
    problem_free(&p);
    sb_free(&file), sb_free(&err);
}

#define VALUES_OFF "{\"large\": {\"scale\": 0, \"why\": \"w\"}, \"structure\": {\"on\": false, " \
                   "\"why\": \"w\"}, \"special\": {\"values\": [], \"why\": \"w\"}}"

/* An edit of one member of "values" starts from VALUES_OFF (whatever the manifest declares). */
static void expect_json_error(const char *name, const char *path, const char *json, const char *needle)
{
    const char *member[] = {"values", VALUES_OFF, path, json, NULL};
    const char *edits[] = {path, json, NULL};
    expect_edits_error(name, strncmp(path, "values.", 7) == 0 ? member : edits, needle);
}

#define LARGE_ON "{\"scale\": 100, \"atol\": 50, \"why\": \"softmax-like\"}"
#define STRUCTURE_ON "{\"on\": true, \"spike\": 64, \"atol\": 16, \"why\": \"a reduction\"}"
#define SPECIAL_TWO "{\"values\": [\"nan\", \"-0\"], \"why\": \"propagated\"}"
#define VALUES_ALL "{\"large\": " LARGE_ON ", \"structure\": " STRUCTURE_ON ", \"special\": " SPECIAL_TWO "}"

/* A full declaration loads into problem_values and params' vary; --check finds nothing missing. */
static void test_values_load(void **state)
{
    (void)state;
    problem p;
    strbuf report = STRBUF_INIT;
    load_json_variant("020_leaky_relu", "values", VALUES_ALL, &p);
    const problem_values *v = &p.values;
    assert_true(v->present);
    assert_true(v->large == 100 && v->large_atol == 50);
    assert_string_equal(v->large_why, "softmax-like");
    assert_true(v->structure && v->spike == 64 && v->structure_atol == 16);
    assert_string_equal(v->structure_why, "a reduction");
    assert_int_equal(v->n_special, 2);
    assert_int_equal(v->special[0], KC_SPECIAL_NAN);
    assert_int_equal(v->special[1], KC_SPECIAL_NEG_ZERO);
    assert_string_equal(special_name(v->special[1]), "-0");
    assert_string_equal(v->special_why, "propagated");
    problem_free(&p);
    const char *both[] = {"values", VALUES_ALL, "params.0.vary", "[-1.5, 0, 1000]", NULL};
    load_edits("020_leaky_relu", both, &p);
    assert_int_equal(p.params[0].n_vary, 3);
    assert_true(p.params[0].vary[0] == -1.5 && p.params[0].vary[1] == 0 && p.params[0].vary[2] == 1000);
    assert_int_equal(problem_values_missing(&p, &report), 0);
    problem_free(&p);
    /* fixed with a why; off classes need no atol, spike or values */
    load_json_variant("024_log_softmax", "params.0",
                      "{\"name\": \"dim\", \"dtype\": \"i32\", \"value\": 1, \"vary\": [], "
                      "\"vary_why\": \"the softmax dim is the shape's last\"}", &p);
    assert_int_equal(p.params[0].n_vary, 0);
    assert_string_equal(p.params[0].vary_why, "the softmax dim is the shape's last");
    problem_free(&p);
    load_json_variant("019_relu", "values",
                      "{\"large\": {\"scale\": 0, \"why\": \"homogeneous\"}, \"structure\": {\"on\": "
                      "false, \"why\": \"a mask\"}, \"special\": {\"values\": [], \"why\": \"no\"}}", &p);
    assert_true(p.values.present && p.values.large == 0 && !p.values.structure);
    assert_true(p.values.spike == 0 && p.values.n_special == 0);
    assert_int_equal(problem_values_missing(&p, &report), 0);
    problem_free(&p);
    load_json_variant("024_log_softmax", "params.0.vary", "[1, -1]", &p);
    assert_true(p.params[0].n_vary == 2 && p.params[0].vary[1] == -1);
    problem_free(&p);
    sb_free(&report);
}

/* Without "values" or "vary" a manifest still loads; --check's list names each gap. */
static void test_values_missing(void **state)
{
    (void)state;
    problem p;
    strbuf report = STRBUF_INIT;
    const char *none[] = {"values", NULL, "params.0.vary", NULL, "params.0.vary_why", NULL, NULL};
    load_edits("020_leaky_relu", none, &p);
    assert_false(p.values.present);
    assert_int_equal(problem_values_missing(&p, &report), 2);
    assert_non_null(strstr(report.buf, "no \"values\" (declare large, structure and special"));
    assert_non_null(strstr(report.buf, "\n  params[0] 'negative_slope': no \"vary\""));
    problem_free(&p);
    sb_reset(&report);
    load_json_variant("019_relu", "values",
                      "{\"structure\": {\"on\": false, \"why\": \"a mask\"}}", &p);
    assert_int_equal(problem_values_missing(&p, &report), 2);
    assert_non_null(strstr(report.buf, "values: no \"large\" declaration"));
    assert_non_null(strstr(report.buf, "values: no \"special\" declaration"));
    problem_free(&p);
    sb_free(&report);
}

/* Each malformed form names its field. */
static void test_values_errors(void **state)
{
    (void)state;
    const char *r = "019_relu", *l = "020_leaky_relu";
    expect_json_error(r, "values", "[]", "field 'values': expected {");
    expect_json_error(r, "values.large", "1", "field 'values.large': expected {");
    expect_json_error(r, "values.large", "{\"scale\": 100, \"atol\": 1}", "field 'values.large.why': missing");
    expect_json_error(r, "values.large", "{\"scale\": 100, \"atol\": 1, \"why\": \"\"}",
                      "field 'values.large.why': expected a non-empty string");
    expect_json_error(r, "values.large", "{\"scale\": -1, \"why\": \"w\"}", "field 'values.large.scale': out of range");
    expect_json_error(r, "values.large", "{\"scale\": 1e7, \"why\": \"w\"}", "field 'values.large.scale': out of range");
    expect_json_error(r, "values.large", "{\"scale\": 0.5, \"atol\": 1, \"why\": \"w\"}",
                      "field 'values.large.scale': a factor must exceed 1");
    expect_json_error(r, "values.large", "{\"why\": \"w\"}", "field 'values.large.scale': missing");
    expect_json_error(r, "values.large", "{\"scale\": 100, \"why\": \"w\"}", "field 'values.large.atol': missing");
    expect_json_error(r, "values.large", "{\"scale\": 100, \"atol\": 0.5, \"why\": \"w\"}",
                      "field 'values.large.atol': out of range or not a number (the run's atol");
    expect_json_error(r, "values.large", "{\"scale\": 100, \"atol\": \"1\", \"why\": \"w\"}",
                      "field 'values.large.atol': out of range or not a number");
    expect_json_error(r, "values.large", "{\"factor\": 100, \"why\": \"w\"}",
                      "field 'values.large': unknown key 'factor' (expected scale, atol, why)");
    expect_json_error(r, "values.structure", "{\"atol\": 4, \"why\": \"w\"}", "field 'values.structure.on': missing");
    expect_json_error(r, "values.structure", "{\"on\": 1, \"atol\": 4, \"why\": \"w\"}",
                      "field 'values.structure.on': expected true or false");
    expect_json_error(r, "values.structure", "{\"on\": true, \"why\": \"w\"}", "field 'values.structure.atol': missing");
    expect_json_error(r, "values.structure", "{\"on\": false, \"spike\": 64, \"why\": \"w\"}",
                      "field 'values.structure.spike': spikes come with structured runs");
    expect_json_error(r, "values.structure", "{\"on\": true, \"spike\": -1, \"atol\": 1, \"why\": \"w\"}",
                      "field 'values.structure.spike': out of range");
    expect_json_error(r, "values.structure", "{\"on\": true, \"atol\": 1}", "field 'values.structure.why': missing");
    expect_json_error(r, "values.special", "{\"why\": \"w\"}", "field 'values.special.values': expected an array of up to 4");
    expect_json_error(r, "values.special", "{\"values\": [\"nan\", \"inf\", \"-inf\", \"-0\", \"nan\"], \"why\": \"w\"}",
                      "field 'values.special.values': expected an array of up to 4");
    expect_json_error(r, "values.special", "{\"values\": [\"NaN\"], \"why\": \"w\"}",
                      "field 'values.special.values[0]': expected one of \"nan\", \"inf\", \"-inf\", \"-0\"");
    expect_json_error(r, "values.special", "{\"values\": [\"inf\", \"inf\"], \"why\": \"w\"}",
                      "field 'values.special.values[1]': listed twice");
    expect_json_error(r, "values.special", "{\"values\": [\"nan\"]}", "field 'values.special.why': missing");
    /* unknown keys inside values */
    const char *unknown[] = {"values", VALUES_ALL, "values.big", "{}", NULL};
    expect_edits_error(r, unknown, "field 'values': unknown key 'big' (expected large, structure, special)");
    /* a class needs an input it can shape: normal or uniform_fan_in floats; spikes and special
     * values, normal ones */
    const char *uniform[] = {"values", VALUES_OFF, "inputs.0.init", "{\"dist\": \"uniform\", \"lo\": -1, \"hi\": 1}",
                             "values.large", LARGE_ON, NULL};
    expect_edits_error(r, uniform, "field 'values.large': no float input is drawn from normal or uniform_fan_in");
    const char *structure[] = {"values", VALUES_OFF, "inputs.0.init", "{\"dist\": \"uniform\", \"lo\": -1, \"hi\": 1}",
                               "values.structure", "{\"on\": true, \"atol\": 1, \"why\": \"w\"}", NULL};
    expect_edits_error(r, structure, "field 'values.structure': no float input is drawn from normal or uniform_fan_in");
    const char *spike[] = {"values", VALUES_OFF, "inputs.0.init", "{\"dist\": \"uniform_fan_in\", \"fan_in\": \"D\"}",
                           "values.structure", STRUCTURE_ON, NULL};
    expect_edits_error(r, spike, "field 'values.structure.spike': no float input is drawn from normal");
    const char *special[] = {"values", VALUES_OFF, "inputs.0.init", "{\"dist\": \"uniform_fan_in\", \"fan_in\": \"D\"}",
                             "values.special", SPECIAL_TWO, NULL};
    expect_edits_error(r, special, "field 'values.special.values': no float input is drawn from normal");
    problem p;
    const char *fan_in[] = {"inputs.0.init", "{\"dist\": \"uniform_fan_in\", \"fan_in\": \"D\"}",
                            "values", "{\"large\": " LARGE_ON ", \"structure\": {\"on\": true, "
                            "\"atol\": 2, \"why\": \"w\"}, \"special\": {\"values\": [], \"why\": \"w\"}}",
                            NULL};
    strbuf file = STRBUF_INIT, err = STRBUF_INIT;
    write_json_edits(r, fan_in, &file);
    if (problem_load(file.buf, &p, &err))
        fail_msg("large and structure on uniform_fan_in: %s", err.buf);
    problem_free(&p);
    sb_free(&file), sb_free(&err);
    /* params: vary and vary_why */
    expect_json_error(l, "params.0.vary", "1", "field 'params[0].vary': expected an array of up to 8 numbers");
    expect_json_error(l, "params.0.vary", "[1, 2, 3, 4, 5, 6, 7, 8, 9]", "field 'params[0].vary': expected an array of up to 8");
    expect_json_error(l, "params.0.vary", "[0.5, \"a\"]", "field 'params[0].vary[1]': expected a number");
    expect_json_error(l, "params.0.vary", "[1e39]", "field 'params[0].vary[0]': expected a number within the f32 range");
    const char *empty[] = {"params.0.vary_why", NULL, "params.0.vary", "[]", NULL};
    expect_edits_error(l, empty, "field 'params[0].vary_why': missing: an empty vary needs a why");
    const char *why_alone[] = {"params.0.vary", NULL, "params.0.vary_why", "\"fixed\"", NULL};
    expect_edits_error(l, why_alone, "field 'params[0].vary': missing beside vary_why");
    expect_json_error(l, "params.0.vary_why", "\"\"", "field 'params[0].vary_why': expected a non-empty string");
    expect_json_error(l, "params.0.vary_values", "[1]",
                      "field 'params[0]': unknown key 'vary_values' (expected name, dtype, value, vary, vary_why)");
    expect_json_error("024_log_softmax", "params.0.vary", "[1.5]",
                      "field 'params[0].vary[0]': expected an integer within i32");
    expect_json_error("024_log_softmax", "params.0.vary", "[3000000000]",
                      "field 'params[0].vary[0]': expected an integer within i32");
}

static void test_db_schema_and_blobs(void **state)
{
    (void)state;
    strbuf path = STRBUF_INIT, err = STRBUF_INIT, out = STRBUF_INIT;
    sb_addf(&path, "%s/kc.db", tmpdir);
    sqlite3 *db;
    assert_int_equal(kc_db_open(path.buf, KC_DB_CREATE, &db, &err), 0);
    int newest = kc_schema_newest_version();
    assert_true(newest >= 1);
    assert_int_equal(kc_db_user_version(db), newest);
    assert_int_equal(kc_db_query_int(db, "PRAGMA foreign_keys"), 1);
    char sha[SHA256_HEX_LEN + 1], sha2[SHA256_HEX_LEN + 1];
    assert_int_equal(kc_blob_put_str(db, "hello", sha, &err), 0);
    assert_string_equal(sha, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
    assert_int_equal(kc_blob_put_str(db, "hello", sha2, &err), 0);
    assert_int_equal(kc_db_query_int(db, "SELECT count(*) FROM blobs"), 1); /* stored once */
    assert_int_equal(kc_blob_get(db, sha, &out, &err), 0);
    assert_string_equal(out.buf, "hello");
    assert_int_equal(kc_blob_get(db, "00", &out, &err), -1);
    assert_non_null(strstr(err.buf, "missing blob"));
    /* A corrupted blob is detected by its hash. */
    assert_int_equal(kc_db_exec(db, "UPDATE blobs SET data = CAST('hellx' AS BLOB)", &err), 0);
    assert_int_equal(kc_blob_get(db, sha, &out, &err), -1);
    assert_non_null(strstr(err.buf, "corrupt"));
    /* Foreign keys hold. */
    assert_int_equal(kc_db_exec(db, "INSERT INTO candidates(problem_id, origin) VALUES ('nope', 'x')", &err), -1);
    kc_db_close(db);
    /* Reopening leaves the version; an old database migrates forward. */
    assert_int_equal(kc_db_open(path.buf, KC_DB_EXISTING, &db, &err), 0);
    assert_int_equal(kc_db_exec(db, "PRAGMA user_version = 0; DROP VIEW v_verdict_counts;", &err), 0);
    kc_db_close(db);
    assert_int_equal(kc_db_open(path.buf, KC_DB_READONLY, &db, &err), -1);
    assert_non_null(strstr(err.buf, "schema version 0"));
    sb_free(&path), sb_free(&err), sb_free(&out);
}

static void test_db_migrates_empty_and_rejects_newer(void **state)
{
    (void)state;
    strbuf path = STRBUF_INIT, err = STRBUF_INIT;
    sb_addf(&path, "%s/new.db", tmpdir);
    sqlite3 *db;
    assert_int_equal(kc_db_open(path.buf, KC_DB_EXISTING, &db, &err), -1); /* must exist */
    assert_int_equal(kc_db_open(path.buf, KC_DB_CREATE, &db, &err), 0);
    assert_int_equal(kc_db_query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'v_candidate_audit'"), 1);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    assert_int_equal(kc_db_exec(db, "PRAGMA user_version = 999", &err), 0);
    kc_db_close(db);
    assert_int_equal(kc_db_open(path.buf, KC_DB_EXISTING, &db, &err), -1);
    assert_non_null(strstr(err.buf, "newer than this tool"));
    /* A file that is not a database. */
    sb_reset(&path);
    sb_addf(&path, "%s/junk.db", tmpdir);
    assert_int_equal(write_file_atomic(path.buf, "not a database at all, really not", 33, &err), 0);
    assert_int_equal(kc_db_open(path.buf, KC_DB_EXISTING, &db, &err), -1);
    sb_free(&path), sb_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suite_loads),
        cmocka_unit_test(test_loader_errors),
        cmocka_unit_test(test_shared_reference_code),
        cmocka_unit_test(test_level2_inits),
        cmocka_unit_test(test_segments_init),
        cmocka_unit_test(test_attention_suite),
        cmocka_unit_test(test_shared_from_root),
        cmocka_unit_test(test_values_load),
        cmocka_unit_test(test_values_missing),
        cmocka_unit_test(test_values_errors),
        cmocka_unit_test(test_db_schema_and_blobs),
        cmocka_unit_test(test_db_migrates_empty_and_rejects_newer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
