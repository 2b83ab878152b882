/* test_fuzz_findings: what the fuzz targets of tests/fuzz/ found, as unit tests that run
 * without clang (LeakSanitizer in `make test` catches the leaks): split_args' parts leaked
 * when a launch line failed to split, a dims.alt set that failed half-loaded was never freed,
 * ipc_recv allocated a payload's announced length before any byte of it arrived, an SSE
 * "event:" value starting with a NUL byte dispatched an event with an empty name, and
 * expr_names (which checks a launch line's names) refused as an overflow what evaluates
 * fine, since it skips '/' and so multiplied the undivided value. The
 * same inputs are replayed by the fuzz smoke run from tests/fuzz/regressions/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/candidate.h"
#include "common/error.h"
#include "collect/sse.h"
#include "common/fsutil.h"
#include "verify/service/ipc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static problem *softmax(void)
{
    static problem p;
    strbuf err = STRBUF_INIT;
    if (!p.id && problem_load_by_id("level1/023_softmax", &p, &err))
        fail_msg("%s", err.buf);
    sb_free(&err);
    return &p;
}

/* Each line fails while splitting grid/block or the arguments after some parts were split;
 * under LeakSanitizer the old code leaked those parts. */
static void test_launch_split_failures_free_parts(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "// @launch k<<<1, 1, 0, 0, 0>>>(x, y);\n", /* more than 3 config parts */
        "// @launch k<<<1, (1>>>(x, y);\n",         /* unbalanced '(' */
        "// @launch k<<<1, 1>>>(x, y), z);\n",      /* ')' closes nothing */
        "// @launch k<<<dim3(1, 2, 3, 4), 1>>>(x, y);\n",
    };
    strbuf err = STRBUF_INIT;
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        launch_unit u;
        assert_int_equal(candidate_parse(lines[i], softmax(), &u, &err), -1);
        assert_non_null(strstr(err.buf, "line 1"));
        launch_unit_free(&u);
    }
    sb_free(&err);
}

/* 9999999999999991/9999999999*999 is 999000000: a launch line may say so. */
static void test_names_do_not_overflow(void **state)
{
    (void)state;
    const char *e = "9999999999999991/9999999999*999";
    strbuf err = STRBUF_INIT;
    dimset none = {0};
    int64_t v = 0;
    assert_int_equal(expr_eval(e, &none, &v, &err), 0);
    assert_int_equal(v, 999000000);
    char names[32][64];
    assert_int_equal(expr_names(e, names, 32, &err), 0);
    assert_int_equal(expr_names("B * 9223372036854775807 * 2 + D", names, 32, &err), 2);
    launch_unit u;
    assert_int_equal(candidate_parse("// @launch k<<<9999999999999991/9999999999*999 / 1000, 256>>>(x, y, D);\n",
                                     softmax(), &u, &err), 0);
    launch_unit_free(&u);
    sb_free(&err);
}

/* dims.alt[0] sets B, then fails on D: the half-loaded set is freed by problem_free. */
static void test_problem_alt_dims_failure_frees(void **state)
{
    (void)state;
    char dir[64] = "/tmp/kc-test-fuzz-XXXXXX";
    assert_non_null(mkdtemp(dir));
    strbuf src = STRBUF_INIT, err = STRBUF_INIT, path = STRBUF_INIT, sub = STRBUF_INIT;
    strbuf relu = STRBUF_INIT;
    problems_root(&relu);
    sb_adds(&relu, "/level1/019_relu.json");
    assert_int_equal(read_file(relu.buf, &src, &err), 0);
    char *at = strstr(src.buf, "\"alt\": [{\"B\": 3, \"D\": 4097}");
    assert_non_null(at);
    memcpy(strstr(at, "4097"), "-1  ", 4);
    sb_addf(&sub, "%s/level1", dir);
    assert_int_equal(mkdir_p(sub.buf, &err), 0);
    sb_addf(&path, "%s/019_relu.json", sub.buf);
    assert_int_equal(write_file_atomic(path.buf, src.buf, src.len, &err), 0);
    problem p;
    assert_int_equal(problem_load(path.buf, &p, &err), -1);
    assert_non_null(strstr(err.buf, "dims.alt[0].D"));
    problem_free(&p);
    remove_tree(dir);
    sb_free(&src), sb_free(&err), sb_free(&path), sb_free(&sub), sb_free(&relu);
}

/* A child announces four payloads of the largest size allowed and sends 3 bytes: the read
 * fails as truncated and the parent never reserved the announced sizes. */
static void test_ipc_memory_follows_bytes(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    strbuf msg = STRBUF_INIT;
    sb_addf(&msg, "{\"blobs\":[%d,%d,%d,%d]}\nabc", IPC_MAX_BLOB, IPC_MAX_BLOB, IPC_MAX_BLOB,
            IPC_MAX_BLOB);
    assert_int_equal(write(fds[1], msg.buf, msg.len), (ssize_t)msg.len);
    sb_free(&msg);
    close(fds[1]);
    ipc_msg m;
    strbuf err = STRBUF_INIT;
    assert_int_equal(ipc_recv(fds[0], &m, -1, &err), IPC_ERROR);
    assert_non_null(strstr(err.buf, "truncated"));
    assert_int_equal(m.n_blobs, 1);
    assert_int_equal(m.blobs[0].len, 3);
    assert_true(m.blobs[0].cap <= (4u << 20));
    ipc_msg_free(&m);
    close(fds[0]);
    sb_free(&err);
}

static int record_event(const char *event, const char *data, void *ctx)
{
    sb_addf(ctx, "[%s|%s]", event, data);
    return 0;
}

/* A NUL byte right after "event:" empties the name: the event is the default "message". */
static void test_sse_event_name_emptied_by_nul(void **state)
{
    (void)state;
    strbuf log = STRBUF_INIT;
    sse_parser p;
    sse_init(&p, record_event, &log);
    static const char stream[] = "event:\0ping\ndata: {}\n\nevent: a\ndata: 1\n\n";
    assert_int_equal(sse_feed(&p, stream, sizeof stream - 1), 2);
    assert_string_equal(log.buf, "[message|{}][a|1]");
    sse_free(&p);
    sb_free(&log);
}

static int teardown(void **state)
{
    (void)state;
    problem_free(softmax());
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launch_split_failures_free_parts),
        cmocka_unit_test(test_problem_alt_dims_failure_frees),
        cmocka_unit_test(test_ipc_memory_follows_bytes),
        cmocka_unit_test(test_sse_event_name_emptied_by_nul),
        cmocka_unit_test(test_names_do_not_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
