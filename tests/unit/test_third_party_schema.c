/* test_third_party_schema: schemas/third_party.schema.json says what `kverify import --jsonl`
 * accepts: its examples and the good lines of tests/cli/test_audit.sh validate; lines the importer
 * rejects for their form (no problem_id, both or neither of code and response, wrong types) do not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/fsutil.h"
#include "tests/lib/json_schema.h"

#include <stdlib.h>
#include <string.h>

static json_t *load_schema(void)
{
    const char *root = getenv("KC_ROOT");
    strbuf path = STRBUF_INIT, err = STRBUF_INIT;
    path_join(&path, root ? root : ".", "schemas/third_party.schema.json");
    json_t *s = json_schema_load(path.buf, &err);
    if (!s)
        fail_msg("%s: %s", path.buf, err.buf);
    sb_free(&path), sb_free(&err);
    return s;
}

static int valid(const json_t *schema, const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (!v)
        fail_msg("test line is not JSON: %s", text);
    strbuf err = STRBUF_INIT;
    int ok = json_schema_validate(schema, v, &err) == 0;
    json_decref(v);
    sb_free(&err);
    return ok;
}

static void examples_and_good_lines_validate(void **state)
{
    (void)state;
    json_t *s = load_schema();
    size_t i;
    json_t *ex;
    json_array_foreach(json_object_get(s, "examples"), i, ex)
    {
        strbuf err = STRBUF_INIT;
        if (json_schema_validate(s, ex, &err))
            fail_msg("example %zu: %s", i, err.buf);
        sb_free(&err);
    }
    assert_true(valid(s, "{\"problem_id\": \"level1/019_relu\", \"code\": \"x\", \"source\": \"a\"}"));
    assert_true(valid(s, "{\"problem_id\": \"level1/019_relu\", \"response\": \"x\", \"claimed_correct\": null,"
                         " \"claimed_speedup\": 1.5, \"id\": 7, \"extra\": {\"kept\": 1}}"));
    json_decref(s);
}

static void malformed_lines_do_not(void **state)
{
    (void)state;
    json_t *s = load_schema();
    static const char *const bad[] = {
        "{\"code\": \"x\", \"source\": \"a\"}",                                    /* no problem_id */
        "{\"problem_id\": \"p\", \"code\": \"x\", \"response\": \"y\"}",           /* both */
        "{\"problem_id\": \"p\", \"source\": \"a\"}",                              /* neither */
        "{\"problem_id\": \"p\", \"code\": \"\"}",                                 /* empty code */
        "{\"problem_id\": \"p\", \"code\": \"x\", \"claimed_correct\": \"yes\"}",  /* not a boolean */
        "{\"problem_id\": \"p\", \"code\": \"x\", \"claimed_speedup\": -2}",       /* negative */
        "{\"problem_id\": \"p\", \"code\": \"x\", \"claimed_speedup\": 0}",        /* zero: must be > 0 */
        "{\"problem_id\": \"p\", \"code\": \"x\", \"claimed_speedup\": 0.0}",      /* zero as a real */
        "{\"problem_id\": \"p\", \"code\": \"x\", \"id\": {\"a\": 1}}",            /* id an object */
        "[\"level1/019_relu\", \"x\"]",                                            /* not an object */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (valid(s, bad[i]))
            fail_msg("schema accepts a malformed line: %s", bad[i]);
    json_decref(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(examples_and_good_lines_validate),
        cmocka_unit_test(malformed_lines_do_not),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
