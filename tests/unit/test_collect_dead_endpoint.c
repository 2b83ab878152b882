/* test_collect_dead_endpoint: kcollect's dead-endpoint counter (llm_endpoint_count_attempt):
 * 3 consecutive attempts that reached no server mark the endpoint dead, whichever calls
 * (trajectories) they belong to; a reply in between (a success, or an HTTP error such as a 500:
 * the server is there) resets the count, and HTTP errors never count; and through llm_call, three
 * calls of one attempt each to a port where nothing listens: the third finds the endpoint dead
 * (run-fatal, no retry) and marks it so. */
#include "collect/llm.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum attempt { REFUSED, OK_200, HTTP_500, HTTP_429, NO_STATUS };

/* Counts one attempt of the given kind; returns the counter's verdict (1: dead). */
static int count(llm_endpoint *e, enum attempt a)
{
    llm_reply r;
    llm_reply_init(&r);
    r.connect_failed = a == REFUSED;
    r.http_status = a == OK_200 ? 200 : a == HTTP_500 ? 500 : a == HTTP_429 ? 429 : 0;
    int dead = llm_endpoint_count_attempt(e, &r, 3);
    llm_reply_free(&r);
    return dead;
}

static void three_failures_in_a_row_are_dead(void **state)
{
    (void)state;
    llm_endpoint e = {0};
    assert_int_equal(count(&e, REFUSED), 0);
    assert_int_equal(count(&e, REFUSED), 0);
    assert_int_equal(count(&e, REFUSED), 1);
    assert_int_equal(e.connect_failures, 3);
}

static void a_success_in_between_resets(void **state)
{
    (void)state;
    llm_endpoint e = {0};
    assert_int_equal(count(&e, REFUSED), 0);
    assert_int_equal(count(&e, REFUSED), 0);
    assert_int_equal(count(&e, OK_200), 0);
    assert_int_equal(e.connect_failures, 0);
    assert_int_equal(count(&e, REFUSED), 0);
    assert_int_equal(count(&e, REFUSED), 0);
    assert_int_equal(count(&e, REFUSED), 1);
}

static void http_errors_do_not_count(void **state)
{
    (void)state;
    llm_endpoint e = {0};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(count(&e, HTTP_500), 0);
        assert_int_equal(count(&e, HTTP_429), 0);
    }
    assert_int_equal(e.connect_failures, 0);
    /* a 5xx answers: the server is there, so it breaks a run of connection failures */
    assert_int_equal(count(&e, REFUSED), 0);
    assert_int_equal(count(&e, REFUSED), 0);
    assert_int_equal(count(&e, HTTP_500), 0);
    assert_int_equal(count(&e, REFUSED), 0);
    assert_int_equal(count(&e, REFUSED), 0);
    assert_int_equal(e.connect_failures, 2);
}

static void an_attempt_without_reply_leaves_the_count(void **state)
{
    (void)state;
    llm_endpoint e = {0};
    assert_int_equal(count(&e, REFUSED), 0);
    assert_int_equal(count(&e, REFUSED), 0);
    assert_int_equal(count(&e, NO_STATUS), 0); /* e.g. a timeout after connecting */
    assert_int_equal(e.connect_failures, 2);
    assert_int_equal(count(&e, REFUSED), 1);
}

static void zero_limit_never_dead(void **state)
{
    (void)state;
    llm_endpoint e = {0};
    llm_reply r;
    llm_reply_init(&r);
    r.connect_failed = 1;
    for (int i = 0; i < 10; i++)
        assert_int_equal(llm_endpoint_count_attempt(&e, &r, 0), 0);
    llm_reply_free(&r);
}

/* A loopback port where nothing listens: bound, then closed. */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void consecutive_calls_add_up(void **state)
{
    (void)state;
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", closed_port());
    llm_endpoint e = {.url = url, .api = LLM_OPENAI};
    llm_client_options o;
    llm_client_options_default(&o);
    o.max_attempts = 1; /* one attempt per call: each call stands for a trajectory */
    o.backoff_base_ms = o.backoff_max_ms = 1;
    llm_client c;
    llm_client_init(&c, &e, 1, &o, NULL, NULL);
    llm_message m = {"user", "hi"};
    llm_request q = {"m", "s", &m, 1, 10, -1, -1, 0, NULL, NULL};
    strbuf body = STRBUF_INIT, err = STRBUF_INIT;
    for (int call = 1; call <= 3; call++) {
        llm_reply r;
        llm_reply_init(&r);
        assert_int_not_equal(llm_call(&c, &q, &r, &body, &err), 0);
        assert_int_equal(r.connect_failed, 1);
        assert_int_equal(e.connect_failures, call);
        assert_int_equal(r.outcome, call < 3 ? LLM_RETRY : LLM_FATAL_RUN);
        assert_int_equal(e.dead, call == 3);
        llm_reply_free(&r);
    }
    assert_non_null(strstr(err.buf, "3 connection attempts in a row reached no server"));
    sb_free(&body), sb_free(&err);
    llm_client_destroy(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(three_failures_in_a_row_are_dead),
        cmocka_unit_test(a_success_in_between_resets),
        cmocka_unit_test(http_errors_do_not_count),
        cmocka_unit_test(an_attempt_without_reply_leaves_the_count),
        cmocka_unit_test(zero_limit_never_dead),
        cmocka_unit_test(consecutive_calls_add_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
