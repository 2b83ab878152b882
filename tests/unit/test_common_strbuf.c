/* test_common_strbuf: an empty strbuf's buffer is never NULL (STRBUF_INIT, sb_init, after sb_free
 * and sb_detach: the shared empty string, which nothing writes or frees), a zero-filled one
 * works too, and die is safe when memory runs out: a child whose data segment is capped
 * allocates until xmalloc fails, and dies with its one line (the old die formatted through a
 * growing strbuf, which called die again, until the stack overflowed), and die cuts a message
 * longer than its line buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/error.h"
#include "common/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* Under ASan a failed allocation returns NULL, as malloc does, instead of aborting. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

static void empty_strbufs_point_at_an_empty_string(void **state)
{
    (void)state;
    strbuf a = STRBUF_INIT, b;
    sb_init(&b);
    assert_non_null(a.buf);
    assert_string_equal(a.buf, "");
    assert_ptr_equal(a.buf, b.buf);
    assert_int_equal(a.cap, 0);
    sb_reset(&a), sb_trim(&a), sb_setlen(&a, 0); /* nothing written to the shared string */
    assert_string_equal(a.buf, "");
    sb_free(&a); /* frees nothing */
    assert_non_null(a.buf);
    assert_string_equal(kc_strbuf_empty, "");
}

static void grown_then_freed_is_empty_again(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    const char *shared = sb.buf;
    sb_adds(&sb, "kernel");
    assert_ptr_not_equal(sb.buf, shared);
    assert_string_equal(sb.buf, "kernel");
    sb_free(&sb);
    assert_ptr_equal(sb.buf, shared);
    assert_string_equal(kc_strbuf_empty, "");

    char *s = sb_detach(&sb); /* an empty one detaches an allocated "" the caller frees */
    assert_string_equal(s, "");
    assert_ptr_not_equal(s, shared);
    free(s);
    assert_ptr_equal(sb.buf, shared);

    sb_addf(&sb, "%d", 42);
    s = sb_detach(&sb);
    assert_string_equal(s, "42");
    free(s);
    assert_ptr_equal(sb.buf, shared);
}

static void zero_filled_strbuf_still_works(void **state)
{
    (void)state;
    strbuf z;
    memset(&z, 0, sizeof z);
    assert_string_equal(sb_str(&z), "");
    sb_reset(&z), sb_trim(&z);
    sb_adds(&z, "x");
    assert_string_equal(z.buf, "x");
    sb_free(&z);
    assert_non_null(z.buf);
}

/* In a child: cap the data segment, allocate until it fails. Returns the child's stderr. */
static int run_out_of_memory(char *out, size_t cap, int *status)
{
    int fds[2];
    if (pipe(fds))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        struct rlimit lim = {256 << 20, 256 << 20};
        setrlimit(RLIMIT_DATA, &lim);
        setrlimit(RLIMIT_AS, &(struct rlimit){RLIM_INFINITY, RLIM_INFINITY});
        /* Big blocks until none is left, then small ones (the size of a strbuf's first
         * buffer) until xmalloc dies: nothing is left for die to allocate. Leaked on purpose. */
        for (void *p; (p = malloc(1 << 20)) != NULL;)
            memset(p, 1, 1 << 20);
        for (;;)
            memset(xmalloc(64), 1, 64);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < cap && (r = read(fds[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fds[0]);
    waitpid(pid, status, 0);
    return 0;
}

static void die_reports_out_of_memory_without_allocating(void **state)
{
    (void)state;
    char out[4096];
    int status = 0;
    assert_int_equal(run_out_of_memory(out, sizeof out, &status), 0);
    if (!WIFEXITED(status))
        fail_msg("the child did not exit (signal %d): %s", WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                 out);
    assert_memory_equal(out, "kcorpus: error: out of memory", 29); /* die's line, first */
#if defined(__SANITIZE_ADDRESS__)
    /* After die's exit(1), LeakSanitizer's exit-time check finds no memory either and says so. */
    assert_int_not_equal(WEXITSTATUS(status), 0);
#else
    assert_int_equal(WEXITSTATUS(status), 1);
    assert_int_equal(strchr(out, '\n') - out + 1, (long)strlen(out)); /* one line */
#endif
}

static void die_cuts_a_long_message(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        static char big[40000];
        memset(big, 'a', sizeof big - 1);
        kc_set_progname("t");
        die("%s", big);
    }
    close(fds[1]);
    static char out[65536];
    size_t n = 0;
    ssize_t r;
    while ((r = read(fds[0], out + n, sizeof out - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    assert_true(n > 1000 && n < 40000);
    assert_memory_equal(out, "t: error: aaa", 13);
    assert_memory_equal(out + n - 4, "...\n", 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_strbufs_point_at_an_empty_string),
        cmocka_unit_test(grown_then_freed_is_empty_again),
        cmocka_unit_test(zero_filled_strbuf_still_works),
        cmocka_unit_test(die_reports_out_of_memory_without_allocating),
        cmocka_unit_test(die_cuts_a_long_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
