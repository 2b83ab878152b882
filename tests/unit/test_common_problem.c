/* test_common_problem: the manifest loader accepts the suite and names the
 * file, field and expectation of each mistake; suite selection; the database
 * schema, its migrations and the content-addressed blob store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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

/* Writes suite/name.json with the relu manifest edited by one substitution. */
static void write_variant(const char *from, const char *to, strbuf *path)
{
    strbuf src = STRBUF_INIT, err = STRBUF_INIT, root = STRBUF_INIT;
    problems_root(&root);
    sb_addf(path, "%s/level1/019_relu.json", root.buf);
    assert_int_equal(read_file(path->buf, &src, &err), 0);
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
        cmocka_unit_test(test_db_schema_and_blobs),
        cmocka_unit_test(test_db_migrates_empty_and_rejects_newer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
