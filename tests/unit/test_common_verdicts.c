/* test_common_verdicts: the table of verdicts and classes (common/verdicts.c) against what reads
 * it and what must agree with it: kverify's exit codes, kcurate's classes and their ranks, the
 * worker's verdicts, and the schema: schemas/kc.sql's CHECK on verifications.verdict and its
 * verdict-class view, and the verdict enum of schemas/record.schema.json. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/verdicts.h"
#include "curate/labels.h"
#include "verify/service/verify.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char kc_schema_sql[];

static void exit_codes_and_classes_follow_the_table(void **state)
{
    (void)state;
    static const struct { const char *v, *cls; int code; } expect[] = {
        {"correct", "correct", 0},           {"compiled", "compiled", 0},
        {"mismatch", "incorrect", 1},        {"unsafe", "runtime_fail", 1},
        {"runtime_error", "runtime_fail", 3}, {"launch_error", "runtime_fail", 3},
        {"timeout", "runtime_fail", 3},      {"compile_error", "compile_fail", 2},
        {"policy_violation", "format_fail", 2}, {"extract_error", "format_fail", 2}};
    assert_int_equal(sizeof expect / sizeof *expect, KC_N_VERDICTS);
    for (size_t i = 0; i < sizeof expect / sizeof *expect; i++) {
        assert_string_equal(kc_verdicts[i].name, expect[i].v); /* the listing order */
        assert_int_equal(kv_verdict_exit_code(expect[i].v), expect[i].code);
        assert_string_equal(curate_verdict_class(expect[i].v), expect[i].cls);
        assert_non_null(kc_class_find(kc_verdicts[i].verdict_class));
        assert_non_null(kc_verdicts[i].description);
    }
    assert_int_equal(kv_verdict_exit_code("no_such_verdict"), 2);
    assert_string_equal(curate_verdict_class(NULL), "unverified");
    assert_string_equal(curate_verdict_class(""), "unverified");
    assert_string_equal(curate_verdict_class("no_such_verdict"), "unverified");
}

static void worker_says_only_gpu_verdicts(void **state)
{
    (void)state;
    static const char *const gpu[] = {"extract_error", "launch_error", "runtime_error", "timeout",
                                      "mismatch",      "unsafe",       "correct"};
    int n = 0;
    for (int i = 0; i < KC_N_VERDICTS; i++)
        n += kc_verdicts[i].from_worker;
    assert_int_equal(n, 7);
    for (size_t i = 0; i < sizeof gpu / sizeof *gpu; i++)
        assert_true(kc_verdict_find(gpu[i])->from_worker);
    assert_false(kc_verdict_find("compiled")->from_worker);
    assert_false(kc_verdict_find("compile_error")->from_worker);
}

static void class_ranks_order_progress_and_outcome(void **state)
{
    (void)state;
    /* improved: compiled < runtime_fail (it ran); a plan's outcome: compiled is a success. */
    static const char *const progress[] = {"unverified", "format_fail", "compile_fail", "compiled",
                                           "runtime_fail", "incorrect", "correct"};
    static const char *const outcome[] = {"unverified", "format_fail", "compile_fail",
                                          "runtime_fail", "incorrect", "compiled", "correct"};
    for (int i = 1; i < KC_N_CLASSES; i++) {
        assert_true(kc_class_find(progress[i])->progress > kc_class_find(progress[i - 1])->progress);
        assert_true(kc_class_find(outcome[i])->outcome > kc_class_find(outcome[i - 1])->outcome);
    }
    assert_null(kc_class_find("mismatch"));
}

/* The quoted names in the text from after `start` to `end`: each must be a verdict of the table
 * (wanted 1) and all must be there. */
static void schema_lists_the_table(const char *start, const char *end)
{
    const char *p = strstr(kc_schema_sql, start), *stop;
    assert_non_null(p);
    stop = strstr(p, end);
    assert_non_null(stop);
    int seen[KC_N_VERDICTS] = {0}, n = 0;
    for (const char *q = strchr(p + strlen(start), '\''); q && q < stop; q = strchr(q, '\'')) {
        const char *close = strchr(q + 1, '\'');
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(close - q - 1), q + 1);
        const kc_verdict_info *v = kc_verdict_find(name);
        if (!v)
            fail_msg("schemas/kc.sql names verdict '%s', which common/verdicts.c lacks", name);
        seen[v - kc_verdicts] = 1, n++;
        q = close + 1;
    }
    for (int i = 0; i < KC_N_VERDICTS; i++)
        if (!seen[i])
            fail_msg("schemas/kc.sql lacks verdict '%s'", kc_verdicts[i].name);
    assert_int_equal(n, KC_N_VERDICTS);
}

static void kc_sql_check_lists_every_verdict(void **state)
{
    (void)state;
    schema_lists_the_table("verdict IN (", "))");
}

static void kc_sql_view_classes_as_the_table(void **state)
{
    (void)state;
    /* v_verification_pairs: each WHEN line names verdicts and THEN their class. */
    const char *end = strstr(kc_schema_sql, "ELSE v.verdict END AS class");
    assert_non_null(end);
    const char *p = strstr(strstr(kc_schema_sql, "CREATE VIEW v_verification_pairs"), "CASE WHEN");
    assert_non_null(p);
    int classed = 0;
    while ((p = strstr(p, "v.verdict")) && p < end) {
        const char *then = strstr(p, "THEN '");
        const char *cls = then + 6, *cls_end = strchr(cls, '\'');
        for (const char *q = strchr(p, '\''); q && q < then; q = strchr(q, '\'')) {
            const char *close = strchr(q + 1, '\'');
            char name[32], want[32];
            snprintf(name, sizeof name, "%.*s", (int)(close - q - 1), q + 1);
            snprintf(want, sizeof want, "%.*s", (int)(cls_end - cls), cls);
            assert_non_null(kc_verdict_find(name));
            assert_string_equal(kc_verdict_class_of(name), want);
            classed++;
            q = close + 1;
        }
        p = cls_end;
    }
    assert_int_equal(classed, KC_N_VERDICTS - 1); /* compiled: ELSE, its own name */
    assert_string_equal(kc_verdict_class_of("compiled"), "compiled");
}

static void record_schema_enum_is_the_table(void **state)
{
    (void)state;
    const char *root = getenv("KC_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/schemas/record.schema.json", root ? root : ".");
    json_error_t e;
    json_t *doc = json_load_file(path, 0, &e);
    if (!doc)
        fail_msg("%s: %s", path, e.text);
    /* The enum that holds "mismatch": the verdict's. */
    char *text = json_dumps(doc, JSON_COMPACT);
    const char *at = strstr(text, "\"verdict\":{\"enum\":");
    assert_non_null(at);
    json_t *en = json_loads(at + strlen("\"verdict\":{\"enum\":"), JSON_DISABLE_EOF_CHECK, &e);
    assert_non_null(en);
    size_t i, names = 0;
    json_t *v;
    json_array_foreach(en, i, v) {
        if (json_is_null(v))
            continue;
        assert_non_null(kc_verdict_find(json_string_value(v)));
        names++;
    }
    assert_int_equal(names, KC_N_VERDICTS);
    json_decref(en), json_decref(doc), free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exit_codes_and_classes_follow_the_table),
        cmocka_unit_test(worker_says_only_gpu_verdicts),
        cmocka_unit_test(class_ranks_order_progress_and_outcome),
        cmocka_unit_test(kc_sql_check_lists_every_verdict),
        cmocka_unit_test(kc_sql_view_classes_as_the_table),
        cmocka_unit_test(record_schema_enum_is_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
