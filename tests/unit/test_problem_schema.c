/* test_problem_schema: schemas/problem.schema.json describes the manifests the loader reads:
 * every manifest of level1, level2, attention and level3 validates (value classes, params' vary and the
 * hidden capacity sets included), and the forms the loader refuses for the value classes do not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/fsutil.h"
#include "common/problem.h"
#include "tests/lib/json_schema.h"

#include <stdlib.h>
#include <string.h>

static json_t *load_schema(void)
{
    const char *root = getenv("KC_ROOT");
    strbuf path = STRBUF_INIT, err = STRBUF_INIT;
    path_join(&path, root ? root : ".", "schemas/problem.schema.json");
    json_t *s = json_schema_load(path.buf, &err);
    if (!s)
        fail_msg("%s: %s", path.buf, err.buf);
    sb_free(&path), sb_free(&err);
    return s;
}

static json_t *load_manifest(const char *id)
{
    strbuf root = STRBUF_INIT, path = STRBUF_INIT, err = STRBUF_INIT;
    problems_root(&root);
    if (problem_manifest_path(root.buf, id, &path, &err))
        fail_msg("%s", err.buf);
    json_error_t je;
    json_t *m = json_load_file(path.buf, 0, &je);
    if (!m)
        fail_msg("%s: %s", path.buf, je.text);
    sb_free(&root), sb_free(&path), sb_free(&err);
    return m;
}

static void every_manifest_validates(void **state)
{
    (void)state;
    json_t *schema = load_schema();
    strbuf root = STRBUF_INIT, err = STRBUF_INIT;
    problems_root(&root);
    const char *suites[] = {"level1", "level2", "attention", "level3"};
    for (int s = 0; s < 4; s++) {
        char **ids;
        int n;
        assert_int_equal(problems_select(root.buf, suites[s], &ids, &n, &err), 0);
        for (int i = 0; i < n; i++) {
            json_t *m = load_manifest(ids[i]);
            if (json_schema_validate(schema, m, &err))
                fail_msg("%s does not match problem.schema.json: %s", ids[i], err.buf);
            assert_non_null(json_object_get(m, "values"));
            json_decref(m);
        }
        problems_free_ids(ids, n);
    }
    json_decref(schema);
    sb_free(&root), sb_free(&err);
}

/* relu with the member at key of "values" (or the param object of leaky relu) replaced */
static int valid_with(const json_t *schema, const char *id, const char *where, const char *key,
                      const char *json)
{
    json_t *m = load_manifest(id);
    json_error_t je;
    json_t *v = json_loads(json, JSON_DECODE_ANY, &je);
    if (!v)
        fail_msg("bad test JSON %s", json);
    json_t *parent = strcmp(where, "values") == 0 ? json_object_get(m, "values")
                                                   : json_array_get(json_object_get(m, "params"), 0);
    json_object_set_new(parent, key, v);
    strbuf err = STRBUF_INIT;
    int ok = json_schema_validate(schema, m, &err) == 0;
    json_decref(m);
    sb_free(&err);
    return ok;
}

static void malformed_value_classes_do_not(void **state)
{
    (void)state;
    json_t *s = load_schema();
    const char *r = "level1/019_relu", *l = "level1/020_leaky_relu";
    assert_true(valid_with(s, r, "values", "large", "{\"scale\": 100, \"atol\": 1, \"why\": \"w\"}"));
    assert_false(valid_with(s, r, "values", "large", "{\"scale\": 100, \"why\": \"w\"}"));
    assert_false(valid_with(s, r, "values", "large", "{\"scale\": 0.5, \"atol\": 1, \"why\": \"w\"}"));
    assert_false(valid_with(s, r, "values", "large", "{\"scale\": 0, \"why\": \"\"}"));
    assert_false(valid_with(s, r, "values", "large", "{\"scale\": 0, \"factor\": 1, \"why\": \"w\"}"));
    assert_true(valid_with(s, r, "values", "structure", "{\"on\": false, \"why\": \"w\"}"));
    assert_false(valid_with(s, r, "values", "structure", "{\"on\": true, \"why\": \"w\"}"));
    assert_false(valid_with(s, r, "values", "structure", "{\"on\": false, \"spike\": 64, \"why\": \"w\"}"));
    assert_false(valid_with(s, r, "values", "structure", "{\"on\": true, \"atol\": 0.5, \"why\": \"w\"}"));
    assert_true(valid_with(s, r, "values", "special", "{\"values\": [\"nan\", \"-0\"], \"why\": \"w\"}"));
    assert_false(valid_with(s, r, "values", "special", "{\"values\": [\"NaN\"], \"why\": \"w\"}"));
    assert_false(valid_with(s, r, "values", "special", "{\"values\": [\"inf\", \"inf\"], \"why\": \"w\"}"));
    assert_false(valid_with(s, r, "values", "special", "{\"values\": []}"));
    assert_false(valid_with(s, r, "values", "extra", "{}"));
    assert_true(valid_with(s, l, "params", "vary", "[-1, 0, 1000]"));
    assert_false(valid_with(s, l, "params", "vary", "[1, 2, 3, 4, 5, 6, 7, 8, 9]"));
    assert_false(valid_with(s, l, "params", "vary", "[\"a\"]"));
    assert_false(valid_with(s, l, "params", "vary", "[]")); /* without vary_why */
    assert_true(valid_with(s, l, "params", "vary_why", "\"why\""));
    assert_false(valid_with(s, l, "params", "vary_why", "\"\""));
    assert_false(valid_with(s, l, "params", "varies", "[1]"));
    json_decref(s);
}

static int valid_text(const char *schema, const char *instance)
{
    json_t *s = json_loads(schema, 0, NULL), *v = json_loads(instance, JSON_DECODE_ANY, NULL);
    assert_non_null(s);
    assert_non_null(v);
    strbuf err = STRBUF_INIT;
    int ok = json_schema_validate(s, v, &err) == 0;
    json_decref(s), json_decref(v);
    sb_free(&err);
    return ok;
}

/* The keywords problem.schema.json needs beyond record.schema.json's. */
static void validator_keywords(void **state)
{
    (void)state;
    assert_true(valid_text("{\"pattern\": \"^[a-z]+/[0-9]+$\"}", "\"ab/12\""));
    assert_false(valid_text("{\"pattern\": \"^[a-z]+/[0-9]+$\"}", "\"ab/12x\""));
    assert_true(valid_text("{\"pattern\": \"(==|<=)\"}", "\"a <= b\"")); /* unanchored */
    assert_true(valid_text("{\"propertyNames\": {\"pattern\": \"^[A-Z]+$\"}}", "{\"AB\": 1}"));
    assert_false(valid_text("{\"propertyNames\": {\"pattern\": \"^[A-Z]+$\"}}", "{\"Ab\": 1}"));
    assert_false(valid_text("{\"minProperties\": 1}", "{}"));
    assert_false(valid_text("{\"dependentRequired\": {\"a\": [\"b\"]}}", "{\"a\": 1}"));
    assert_true(valid_text("{\"dependentRequired\": {\"a\": [\"b\"]}}", "{\"b\": 1}"));
    assert_false(valid_text("{\"uniqueItems\": true}", "[1, 2, 1.0]"));
    assert_true(valid_text("{\"uniqueItems\": true}", "[1, \"1\"]"));
    assert_false(valid_text("{\"not\": {\"required\": [\"a\"]}}", "{\"a\": 1}"));
    const char *cond = "{\"if\": {\"properties\": {\"on\": {\"const\": true}}}, "
                       "\"then\": {\"required\": [\"atol\"]}, \"else\": {\"maxProperties\": 9}}";
    assert_true(valid_text("{\"if\": {\"properties\": {\"on\": {\"const\": true}}}, "
                           "\"then\": {\"required\": [\"atol\"]}}", "{\"on\": false}"));
    assert_false(valid_text("{\"if\": {\"properties\": {\"on\": {\"const\": true}}}, "
                            "\"then\": {\"required\": [\"atol\"]}}", "{\"on\": true}"));
    assert_false(valid_text(cond, "{\"on\": false}")); /* else: maxProperties is not supported */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(validator_keywords),
        cmocka_unit_test(every_manifest_validates),
        cmocka_unit_test(malformed_value_classes_do_not),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
