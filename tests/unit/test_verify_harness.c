/* test_verify_harness: the harness module built in by make (gen/harness_cubins.c) is what the
 * verifier would compile at run time. For every built-in architecture, a fresh NVRTC compile of
 * the harness source with the trusted options gives the same bytes, so a worker that loads the
 * built-in cubin runs exactly the code it used to compile at start; H100's sm_90 is among them;
 * an architecture that is not built in (sm_75) is compiled on demand, and one NVRTC rejects
 * reports an error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "verify/service/harness_module.h"
#include "verify/service/nvrtc_compile.h"

#include <string.h>

extern const char kc_harness_source[];

static void test_built_in_equals_a_fresh_compile(void **state)
{
    (void)state;
    int n = 0, has_sm90 = 0;
    strbuf fresh = STRBUF_INIT, err = STRBUF_INIT;
    for (const harness_builtin *h = kc_harness_cubins; h->arch; h++, n++) {
        has_sm90 |= strcmp(h->arch, "sm_90") == 0;
        assert_int_equal(nvrtc_compile_trusted(kc_harness_source, h->arch, &fresh, &err), 0);
        assert_int_equal(fresh.len, h->len);
        assert_memory_equal(fresh.buf, h->bytes, h->len);
    }
    assert_true(n >= 1);
    assert_true(has_sm90);
    sb_free(&fresh), sb_free(&err);
}

static void test_lookup(void **state)
{
    (void)state;
    strbuf cubin = STRBUF_INIT, err = STRBUF_INIT;
    int built_in = -1;
    assert_int_equal(harness_module_cubin("sm_90", &cubin, &built_in, &err), 0);
    assert_int_equal(built_in, 1);
    assert_true(cubin.len > 4 && memcmp(cubin.buf, "\177ELF", 4) == 0);
    /* not built in: compiled now, an ELF cubin all the same */
    assert_int_equal(harness_module_cubin("sm_75", &cubin, &built_in, &err), 0);
    assert_int_equal(built_in, 0);
    assert_true(cubin.len > 4 && memcmp(cubin.buf, "\177ELF", 4) == 0);
    /* an architecture NVRTC does not know: an error, said */
    sb_reset(&err);
    assert_int_not_equal(harness_module_cubin("sm_7", &cubin, &built_in, &err), 0);
    assert_int_equal(built_in, 0);
    assert_true(err.len > 0);
    sb_free(&cubin), sb_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_built_in_equals_a_fresh_compile),
        cmocka_unit_test(test_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
