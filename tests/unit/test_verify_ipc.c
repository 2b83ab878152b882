/* test_verify_ipc: the framing between kverify and its child processes: a message is one JSON
 * object line plus payloads whose lengths it lists. Anything else read from a child (a
 * negative, huge or non-integer length, a non-object, a line or payload cut short by the end
 * of the stream, too many payloads) is IPC_ERROR with a message, never a message; a clean end
 * between messages is IPC_EOF. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "verify/service/ipc.h"

#include <string.h>
#include <unistd.h>

/* Feeds bytes to ipc_recv through a pipe (closed after them) and returns the status. */
static enum ipc_status recv_bytes(const char *bytes, size_t len, ipc_msg *msg, strbuf *err)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], bytes, len), (ssize_t)len);
    close(fds[1]);
    enum ipc_status st = ipc_recv(fds[0], msg, -1, err);
    close(fds[0]);
    return st;
}

static void test_valid_message_with_payloads(void **state)
{
    (void)state;
    static const char bytes[] = "{\"job\":3,\"blobs\":[5,0,3]}\nhelloabc";
    ipc_msg m;
    strbuf err = STRBUF_INIT;
    assert_int_equal(recv_bytes(bytes, sizeof(bytes) - 1, &m, &err), IPC_OK);
    assert_int_equal(m.n_blobs, 3);
    assert_int_equal(m.blobs[0].len, 5);
    assert_memory_equal(m.blobs[0].buf, "hello", 5);
    assert_int_equal(m.blobs[1].len, 0);
    assert_memory_equal(m.blobs[2].buf, "abc", 3);
    ipc_msg_free(&m);
    sb_free(&err);
}

static void test_clean_end_is_eof(void **state)
{
    (void)state;
    ipc_msg m;
    strbuf err = STRBUF_INIT;
    assert_int_equal(recv_bytes("", 0, &m, &err), IPC_EOF);
    ipc_msg_free(&m);
    sb_free(&err);
}

static void test_malformed_messages_are_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"blobs\":[-1]}\n",                 /* negative length */
        "{\"blobs\":[99999999999]}\n",        /* over IPC_MAX_BLOB */
        "{\"blobs\":[1.5]}\nx",               /* not an integer */
        "{\"blobs\":\"5\"}\nhello",           /* not a list */
        "{\"blobs\":[1,1,1,1,1]}\nabcde",     /* too many payloads */
        "[\"result\"]\n",                     /* not an object */
        "{\"result\":{\"verdict\":\"correct\"", /* line cut short */
        "{\"blobs\":[10]}\nabc",              /* payload cut short */
        "not json at all\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ipc_msg m;
        strbuf err = STRBUF_INIT;
        enum ipc_status st = recv_bytes(bad[i], strlen(bad[i]), &m, &err);
        if (st != IPC_ERROR)
            fail_msg("case %zu (%s): status %d, expected IPC_ERROR", i, bad[i], (int)st);
        assert_true(err.len > 0);
        ipc_msg_free(&m);
        sb_free(&err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_message_with_payloads),
        cmocka_unit_test(test_clean_end_is_eof),
        cmocka_unit_test(test_malformed_messages_are_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
