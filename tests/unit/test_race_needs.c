/* test_race_needs: which correct labels need a race check (common/race_needs.c, issue 34): shared
 * memory in the source, in the compile's stats or as a launch line's dynamic size, atomics,
 * fences, volatile, cooperative groups and inline PTX need one; an elementwise kernel does not.
 * Then the query kverify racecheck and kexport share: a correct label that needs a check waits
 * until a clean race_checks row or an inline racecheck that exited 0 names its verification,
 * and a newer verification waits again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/db.h"
#include "common/race_needs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ELEMENTWISE                                                                              \
    "extern \"C\" __global__ void relu(const float *x, float *y, long long n)\n"                 \
    "{\n"                                                                                        \
    "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"                      \
    "    if (i < n) y[i] = fmaxf(x[i], 0.0f);\n"                                                 \
    "}\n"

static int needs(const char *source, const char *kernels_json, const char *why_part)
{
    strbuf why = STRBUF_INIT;
    int n = race_check_needed(source, kernels_json, &why);
    if (why_part && !strstr(sb_str(&why), why_part))
        fail_msg("reason '%s' does not mention '%s'", sb_str(&why), why_part);
    sb_free(&why);
    return n;
}

static void elementwise_needs_none(void **state)
{
    (void)state;
    assert_int_equal(needs(ELEMENTWISE "// @launch relu<<<cdiv(B*D, 256), 256>>>(x, y, B*D);\n",
                           "[{\"name\":\"relu\",\"registers\":8,\"shared_bytes\":0}]", NULL), 0);
    /* no compile stats recorded: the source alone decides */
    assert_int_equal(needs(ELEMENTWISE "// @launch relu<<<cdiv(B*D, 256), 256, 0>>>(x, y, B*D);\n",
                           NULL, NULL), 0);
    /* dim3 with commas and an explicit 0 bytes of dynamic shared memory */
    assert_int_equal(needs(ELEMENTWISE "// @launch relu<<<dim3(cdiv(D, 32), B, 1), dim3(32, 8), 0>>>"
                           "(x, y, B*D);\n", "[]", NULL), 0);
    /* words that contain "asm" are not inline PTX */
    assert_int_equal(needs("// plasma fasm_x\n" ELEMENTWISE, NULL, NULL), 0);
}

static void shared_memory_needs_one(void **state)
{
    (void)state;
    assert_int_equal(needs("__global__ void k() { __shared__ float t[256]; }", NULL, "__shared__"), 1);
    assert_int_equal(needs("__global__ void k() { extern __shared__ float t[]; }", NULL, "__shared__"), 1);
    /* static shared memory seen only in the compile's stats (hidden behind token pasting) */
    assert_int_equal(needs(ELEMENTWISE, "[{\"name\":\"relu\",\"shared_bytes\":0},"
                                        "{\"name\":\"red\",\"shared_bytes\":1024}]",
                           "kernel red: 1024 bytes"), 1);
    /* dynamic shared memory on a launch line, with dim3 commas before it */
    assert_int_equal(needs(ELEMENTWISE "// @launch relu<<<dim3(cdiv(D, 32), B), 256, 32*4>>>(x, y, B*D);\n",
                           "[]", "dynamic shared memory"), 1);
    assert_int_equal(needs(ELEMENTWISE "// @launch relu<<<B, 256, D * 4>>>(x, y, B*D);\n", NULL,
                           "dynamic"), 1);
}

static void cross_block_communication_needs_one(void **state)
{
    (void)state;
    static const struct { const char *code, *why; } cases[] = {
        {"atomicAdd(&y[0], v);", "atomics"},
        {"cuda::atomic_ref<float, cuda::thread_scope_device> r(y[0]);", "atomics"},
        {"__threadfence();", "__threadfence"},
        {"__threadfence_block();", "__threadfence"},
        {"volatile float *p = y;", "volatile"},
        {"#include <cooperative_groups.h>", "cooperative groups"},
        {"cg::this_grid().sync();", "this_grid"},
        {"float v = __ldcv(&flag[0]);", "__ldcv"},
        {"asm(\"membar.gl;\");", "inline PTX"},
        {"__nanosleep(100);", "spin"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        strbuf src = STRBUF_INIT;
        sb_addf(&src, "extern \"C\" __global__ void k(float *y) { %s }\n"
                      "// @launch k<<<1, 32>>>(y);\n", cases[i].code);
        assert_int_equal(needs(src.buf, "[]", cases[i].why), 1);
        sb_free(&src);
    }
    assert_int_equal(needs(NULL, NULL, "not known"), 1); /* unknown: checked */
}

/* ---- the query ---- */

static sqlite3 *db;
static char path[64];

static void exec(const char *sql)
{
    strbuf err = STRBUF_INIT;
    if (kc_db_exec(db, sql, &err))
        fail_msg("%s: %s", sql, err.buf);
    sb_free(&err);
}

/* A candidate with source text and a verification of verdict; returns the candidate id. */
static long long add_candidate(const char *source, const char *verdict, const char *evidence)
{
    char sha[SHA256_HEX_LEN + 1];
    strbuf err = STRBUF_INIT;
    assert_int_equal(kc_blob_put_str(db, source, sha, &err), 0);
    strbuf sql = STRBUF_INIT;
    sb_addf(&sql, "INSERT INTO candidates(problem_id, source_sha, origin, status) VALUES "
                  "('level1/047_sum_reduction', '%s', 'import', 'verified');", sha);
    exec(sql.buf);
    long long id = sqlite3_last_insert_rowid(db);
    sb_reset(&sql);
    sb_addf(&sql, "INSERT INTO compiles(candidate_id, ok, stage, kernels_json) VALUES (%lld, 1, "
                  "'compile', '[]'); INSERT INTO verifications(candidate_id, verdict, "
                  "evidence_json, verifier_version) VALUES (%lld, '%s', %s%s%s, 'test');",
            id, id, verdict, evidence ? "'" : "", evidence ? evidence : "NULL", evidence ? "'" : "");
    exec(sql.buf);
    sb_free(&sql), sb_free(&err);
    return id;
}

static long long unchecked(void)
{
    strbuf err = STRBUF_INIT;
    long long n = race_unchecked_count(db, &err);
    if (n < 0)
        fail_msg("%s", err.buf);
    sb_free(&err);
    return n;
}

static int setup_db(void **state)
{
    (void)state;
    strbuf err = STRBUF_INIT;
    snprintf(path, sizeof path, "/tmp/kc-race-needs-%ld.db", (long)getpid());
    kc_db_remove_files(path);
    if (kc_db_open(path, KC_DB_CREATE, &db, &err))
        fail_msg("%s", err.buf);
    sb_free(&err);
    exec("INSERT INTO blobs(sha256, size, data) VALUES ('" /* a problem row needs its blobs */
         "0000000000000000000000000000000000000000000000000000000000000000', 1, x'00');"
         "INSERT INTO problems(id, suite, level, title, manifest_sha, reference_sha) VALUES "
         "('level1/047_sum_reduction', 'level1', 1, 't', "
         "'0000000000000000000000000000000000000000000000000000000000000000', "
         "'0000000000000000000000000000000000000000000000000000000000000000')");
    return 0;
}

static int teardown_db(void **state)
{
    (void)state;
    kc_db_close(db);
    kc_db_remove_files(path);
    return 0;
}

static void correct_labels_wait_for_a_clean_check(void **state)
{
    (void)state;
    long long shared = add_candidate("__global__ void k() { __shared__ float t[32]; }",
                                     "correct", NULL);
    add_candidate(ELEMENTWISE, "correct", NULL);                  /* needs none */
    add_candidate("__global__ void k() { atomicAdd(0, 1); }", "mismatch", NULL); /* not correct */
    long long inline_clean = add_candidate("__global__ void k() { __shared__ float t[32]; }", "correct",
        "{\"sanitizer\":{\"dims\":\"small\",\"runs\":[{\"tool\":\"memcheck\",\"exit\":0},"
        "{\"tool\":\"racecheck\",\"exit\":0}]}}");
    add_candidate("volatile int x;", "correct",                   /* memcheck only: waits */
                  "{\"sanitizer\":{\"runs\":[{\"tool\":\"memcheck\",\"exit\":0}]}}");
    add_candidate("volatile int y;", "correct", "not json");      /* evidence unreadable: waits */
    (void)inline_clean;
    assert_int_equal(unchecked(), 3);

    /* an error or a check of another verification does not count; a clean one does */
    strbuf sql = STRBUF_INIT;
    sb_addf(&sql, "INSERT INTO race_checks(verification_id, tool, result, verifier_version) "
                  "SELECT id, 't', 'error', 'test' FROM verifications WHERE candidate_id = %lld",
            shared);
    exec(sql.buf);
    assert_int_equal(unchecked(), 3);
    sb_reset(&sql);
    sb_addf(&sql, "UPDATE race_checks SET result = 'clean'");
    exec(sql.buf);
    assert_int_equal(unchecked(), 2);

    /* a newer correct verification of the same candidate needs its own check */
    sb_reset(&sql);
    sb_addf(&sql, "INSERT INTO verifications(candidate_id, verdict, verifier_version) VALUES "
                  "(%lld, 'correct', 'test')", shared);
    exec(sql.buf);
    assert_int_equal(unchecked(), 3);
    /* a hazard's new verification (unsafe) takes the candidate out: nothing to export as correct */
    sb_reset(&sql);
    sb_addf(&sql, "INSERT INTO verifications(candidate_id, verdict, verifier_version) VALUES "
                  "(%lld, 'unsafe', 'test')", shared);
    exec(sql.buf);
    assert_int_equal(unchecked(), 2);
    /* the CHECK on result */
    strbuf err = STRBUF_INIT;
    assert_int_not_equal(kc_db_exec(db, "INSERT INTO race_checks(verification_id, tool, result, "
                                        "verifier_version) VALUES (1, 't', 'maybe', 'x')", &err), 0);
    sb_free(&sql), sb_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(elementwise_needs_none),
        cmocka_unit_test(shared_memory_needs_one),
        cmocka_unit_test(cross_block_communication_needs_one),
        cmocka_unit_test_setup_teardown(correct_labels_wait_for_a_clean_check, setup_db,
                                        teardown_db),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
