/* test_verify_ipc: the framing between kverify and its child processes: a message is one JSON
 * object, framed by its length (what ipc_send writes) or as one line (the older form), plus
 * payloads whose lengths it lists. Anything else read from a child (a negative, huge or
 * non-integer length, a non-object, a frame length that is not 1-8 digits or is 0 or too
 * large, a line, frame or payload cut short by the end of the stream, too many payloads) is
 * IPC_ERROR with a message, never a message; a clean end between messages is IPC_EOF. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "verify/service/ipc.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
        "5\n{\"a\"",                      /* frame cut short */
        "12",                               /* frame length cut short */
        "0\n",                              /* empty frame */
        "123456789\n{}",                    /* nine digits */
        "16777217\n{}",                     /* over IPC_MAX_LINE */
        "1x\n{}",                           /* not a number */
        "2\n[]",                            /* framed, not an object */
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

/* What ipc_send writes reads back, payloads included, framed by the JSON's length; a framed
 * message and an unframed line follow each other on one stream. */
static void test_send_frames_and_both_forms_read(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    json_t *j = json_pack("{s:s,s:i}", "progress", "checks", "job", 7);
    const void *blobs[2] = {"src", "\x7f" "ELF"};
    size_t lens[2] = {3, 4};
    assert_int_equal(ipc_send(fds[1], j, blobs, lens, 2), 0);
    json_decref(j);
    static const char line[] = "{\"result\":1}\n";
    assert_int_equal(write(fds[1], line, sizeof(line) - 1), (ssize_t)(sizeof(line) - 1));
    close(fds[1]);
    char got[64] = {0};
    ipc_msg m;
    strbuf err = STRBUF_INIT;
    assert_int_equal(ipc_recv(fds[0], &m, -1, &err), IPC_OK);
    assert_string_equal(json_string_value(json_object_get(m.json, "progress")), "checks");
    assert_int_equal(m.n_blobs, 2);
    assert_memory_equal(m.blobs[0].buf, "src", 3);
    assert_memory_equal(m.blobs[1].buf, "\x7f" "ELF", 4);
    ipc_msg_free(&m);
    assert_int_equal(ipc_recv(fds[0], &m, -1, &err), IPC_OK);
    assert_int_equal(json_integer_value(json_object_get(m.json, "result")), 1);
    ipc_msg_free(&m);
    assert_int_equal(ipc_recv(fds[0], &m, -1, &err), IPC_EOF);
    ipc_msg_free(&m);
    close(fds[0]);
    /* the bytes ipc_send writes: the length line, then exactly the JSON */
    assert_int_equal(pipe(fds), 0);
    j = json_pack("{s:i}", "job", 7);
    assert_int_equal(ipc_send(fds[1], j, NULL, NULL, 0), 0);
    json_decref(j);
    close(fds[1]);
    ssize_t n = read(fds[0], got, sizeof(got) - 1);
    close(fds[0]);
    assert_true(n > 0);
    assert_string_equal(got, "20\n{\"job\":7,\"blobs\":[]}");
    sb_free(&err);
}

/* A message over the reader's limit (16 MiB of JSON) is framed like any other; the reader
 * refuses it from its length line alone, without reading it, and the writer's next write then
 * fails instead of blocking (the reader gone). */
static void test_message_over_the_limit_is_refused_at_once(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(fds[0]);
        signal(SIGPIPE, SIG_IGN);
        size_t n = (17u << 20);
        char *big = malloc(n + 1);
        memset(big, 'x', n);
        big[n] = 0;
        json_t *j = json_pack("{s:s}", "log", big);
        int rc = ipc_send(fds[1], j, NULL, NULL, 0);
        _exit(rc == 0 ? 0 : 3);
    }
    close(fds[1]);
    ipc_msg m;
    strbuf err = STRBUF_INIT;
    assert_int_equal(ipc_recv(fds[0], &m, -1, &err), IPC_ERROR);
    assert_non_null(strstr(err.buf, "16777216"));
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 3); /* its write failed: nobody reads */
    sb_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_message_with_payloads),
        cmocka_unit_test(test_clean_end_is_eof),
        cmocka_unit_test(test_malformed_messages_are_errors),
        cmocka_unit_test(test_send_frames_and_both_forms_read),
        cmocka_unit_test(test_message_over_the_limit_is_refused_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
