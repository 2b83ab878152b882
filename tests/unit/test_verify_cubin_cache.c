/* test_verify_cubin_cache: the on-disk cache of reference cubins (issue 37). Its name changes
 * with the source, the arch, the NVRTC version and the options and with nothing else; where it
 * is comes from KC_CUBIN_CACHE, XDG_CACHE_HOME or HOME; a second compile of the same reference
 * is read from the cache, byte for byte; a cut, altered or renamed entry is compiled again and
 * replaced, never loaded; a directory that cannot be made degrades to no cache (every compile
 * still succeeds). NVRTC runs on the CPU: no GPU needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/fsutil.h"
#include "common/hash.h"
#include "verify/service/cubin_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *source =
    "extern \"C\" __global__ void scale(float *x, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] *= 2.0f;\n"
    "}\n";

static char scratch[64];

static int setup(void **state)
{
    (void)state;
    snprintf(scratch, sizeof scratch, "/tmp/kc-cubin-test-XXXXXX");
    return mkdtemp(scratch) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    remove_tree(scratch);
    return 0;
}

/* A cache in scratch/name. */
static cubin_cache *cache_in(const char *name)
{
    strbuf dir = STRBUF_INIT;
    sb_addf(&dir, "%s/%s", scratch, name);
    setenv("KC_CUBIN_CACHE", dir.buf, 1);
    sb_free(&dir);
    return cubin_cache_open();
}

static void key_names_what_made_the_cubin(void **state)
{
    (void)state;
    char base[SHA256_HEX_LEN + 1], other[SHA256_HEX_LEN + 1];
    cubin_cache_key(source, "sm_90", "13.0", "-arch=sm_90\n", base);
    cubin_cache_key(source, "sm_90", "13.0", "-arch=sm_90\n", other);
    assert_string_equal(base, other);
    cubin_cache_key(source, "sm_100", "13.0", "-arch=sm_90\n", other);
    assert_string_not_equal(base, other);
    cubin_cache_key(source, "sm_90", "13.1", "-arch=sm_90\n", other);
    assert_string_not_equal(base, other);
    cubin_cache_key(source, "sm_90", "13.0", "-arch=sm_90\n-G\n", other);
    assert_string_not_equal(base, other);
    cubin_cache_key("// another reference\n", "sm_90", "13.0", "-arch=sm_90\n", other);
    assert_string_not_equal(base, other);
    /* the parts cannot run into each other: ("sm_9", "013.0") is not ("sm_90", "13.0") */
    cubin_cache_key(source, "sm_9", "013.0", "-arch=sm_90\n", other);
    assert_string_not_equal(base, other);
}

static void dir_from_the_environment(void **state)
{
    (void)state;
    setenv("KC_CUBIN_CACHE", "/somewhere/cubins", 1);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    setenv("HOME", "/home/someone", 1);
    cubin_cache *c = cubin_cache_open();
    assert_string_equal(cubin_cache_dir(c), "/somewhere/cubins");
    cubin_cache_close(c);
    unsetenv("KC_CUBIN_CACHE");
    c = cubin_cache_open();
    assert_string_equal(cubin_cache_dir(c), "/xdg/kcorpus/cubins");
    cubin_cache_close(c);
    setenv("XDG_CACHE_HOME", "relative", 1); /* ignored, as the XDG spec says */
    c = cubin_cache_open();
    assert_string_equal(cubin_cache_dir(c), "/home/someone/.cache/kcorpus/cubins");
    cubin_cache_close(c);
    setenv("KC_CUBIN_CACHE", "off", 1);
    c = cubin_cache_open();
    assert_null(cubin_cache_dir(c));
    assert_int_equal(cubin_cache_writable(c), 0);
    cubin_cache_close(c);
}

/* Compiles source through c; returns where it came from, the cubin in out. */
static enum cubin_origin trusted(cubin_cache *c, const char *arch, strbuf *out)
{
    strbuf err = STRBUF_INIT;
    enum cubin_origin origin = CUBIN_CACHED;
    if (cubin_cache_trusted(c, source, arch, out, &origin, &err))
        fail_msg("compile: %s", err.buf);
    sb_free(&err);
    return origin;
}

static void second_compile_is_read_from_the_cache(void **state)
{
    (void)state;
    cubin_cache *c = cache_in("reuse");
    strbuf first = STRBUF_INIT, again = STRBUF_INIT, path = STRBUF_INIT;
    assert_int_equal(trusted(c, "sm_90", &first), CUBIN_COMPILED);
    assert_true(first.len > 0);
    assert_int_equal(cubin_cache_entry_path(c, source, "sm_90", &path), 0);
    assert_true(file_exists(path.buf));
    cubin_cache_close(c);
    c = cache_in("reuse"); /* another run */
    assert_int_equal(trusted(c, "sm_90", &again), CUBIN_CACHED);
    assert_int_equal(again.len, first.len);
    assert_memory_equal(again.buf, first.buf, first.len);
    assert_int_equal(trusted(c, "sm_80", &again), CUBIN_COMPILED); /* another arch, another entry */
    cubin_cache_close(c);
    sb_free(&first), sb_free(&again), sb_free(&path);
}

/* Replaces the entry's file with what damage makes of it; the next compile must not trust it. */
static void damaged_entry_is_compiled_again(void **state)
{
    (void)state;
    cubin_cache *c = cache_in("damage");
    strbuf good = STRBUF_INIT, got = STRBUF_INIT, path = STRBUF_INIT, text = STRBUF_INIT;
    assert_int_equal(trusted(c, "sm_90", &good), CUBIN_COMPILED);
    assert_int_equal(cubin_cache_entry_path(c, source, "sm_90", &path), 0);
    assert_int_equal(read_file(path.buf, &text, NULL), 0);
    for (int damage = 0; damage < 5; damage++) {
        strbuf bad = STRBUF_INIT;
        sb_add(&bad, text.buf, text.len);
        if (damage == 0)
            bad.len -= 100, bad.buf[bad.len] = '\0'; /* cut short */
        else if (damage == 1)
            bad.buf[bad.len - 7] ^= 0x40; /* one byte of the cubin altered */
        else if (damage == 2)
            bad.buf[12] = bad.buf[12] == 'a' ? 'b' : 'a'; /* the name in the header is another's */
        else if (damage == 3)
            sb_reset(&bad); /* empty */
        else
            memcpy(bad.buf, "kc-cubin 2", 10); /* another format */
        assert_int_equal(write_file_atomic(path.buf, bad.buf, bad.len, NULL), 0);
        assert_int_equal(trusted(c, "sm_90", &got), CUBIN_RECOMPILED);
        assert_int_equal(got.len, good.len);
        assert_memory_equal(got.buf, good.buf, good.len);
        assert_int_equal(trusted(c, "sm_90", &got), CUBIN_CACHED); /* replaced by a sound one */
        sb_free(&bad);
    }
    cubin_cache_close(c);
    sb_free(&good), sb_free(&got), sb_free(&path), sb_free(&text);
}

static void unusable_dir_is_no_cache(void **state)
{
    (void)state;
    strbuf file = STRBUF_INIT, got = STRBUF_INIT;
    sb_addf(&file, "%s/a-file", scratch);
    assert_int_equal(write_file_atomic(file.buf, "x", 1, NULL), 0);
    cubin_cache *c = cache_in("a-file/cubins"); /* under a file: no one can make it, root neither */
    assert_true(cubin_cache_writable(c));
    assert_int_equal(trusted(c, "sm_90", &got), CUBIN_COMPILED);
    assert_true(got.len > 0);
    assert_false(cubin_cache_writable(c));
    assert_int_equal(trusted(c, "sm_90", &got), CUBIN_COMPILED); /* still compiles */
    cubin_cache_close(c);
    sb_free(&file), sb_free(&got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(key_names_what_made_the_cubin),
        cmocka_unit_test(dir_from_the_environment),
        cmocka_unit_test(second_compile_is_read_from_the_cache),
        cmocka_unit_test(damaged_entry_is_compiled_again),
        cmocka_unit_test(unusable_dir_is_no_cache),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
