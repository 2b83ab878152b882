/* test_collect_client: the LLM client against the fake LLM server on
 * loopback, one fault at a time: 429 with Retry-After (waited for), 500,
 * quota/auth/model errors (never retried), a hung reply (attempt timeout), a
 * stream that only sends keep-alives (the idle timeout fires anyway), a reset
 * connection, a stream cut mid-way, malformed JSON, a 20 MB answer, failover
 * to a second endpoint, requests spread round the endpoints in turn, the total deadline, and
 * the rate limiter. The server
 * counts requests, so each test also asserts how many were sent. */
#include "collect/llm.h"
#include "collect/ratelimit.h"
#include "common/fsutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t server_pid;
static int server_port;
static char base_url[64];

static int start_server(void)
{
    const char *bin = getenv("KC_BIN");
    if (!bin)
        bin = "bin";
    strbuf exe = STRBUF_INIT;
    sb_addf(&exe, "%s/fake_llm", bin);
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    server_pid = fork();
    if (server_pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl(exe.buf, exe.buf, "--port", "0", "--think", "field", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char line[128] = "";
    ssize_t n = read(fds[0], line, sizeof line - 1);
    close(fds[0]);
    sb_free(&exe);
    if (n <= 0)
        return -1;
    line[n] = 0;
    server_port = atoi(strrchr(line, ':') + 1);
    snprintf(base_url, sizeof base_url, "http://127.0.0.1:%d/v1", server_port);
    return 0;
}

static int setup(void **state)
{
    (void)state;
    setenv("KC_PROBLEMS", getenv("KC_PROBLEMS") ? getenv("KC_PROBLEMS") : "problems", 0);
    return start_server();
}

static int teardown(void **state)
{
    (void)state;
    kill(server_pid, SIGTERM);
    waitpid(server_pid, NULL, 0);
    return 0;
}

static size_t collect_body(char *d, size_t s, size_t n, void *u)
{
    sb_add(u, d, s * n);
    return s * n;
}

/* GET or POST a control path of the server. */
static void control(const char *path, const char *post, strbuf *out)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", server_port, path);
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    if (post)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, post);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_cleanup(c);
}

static void set_faults(const char *list)
{
    strbuf out = STRBUF_INIT;
    control("/faults", list, &out);
    sb_free(&out);
}

static long stat_requests(void)
{
    strbuf out = STRBUF_INIT;
    control("/stats", NULL, &out);
    json_t *o = json_loads(out.buf, 0, NULL);
    long n = (long)json_integer_value(json_object_get(o, "requests"));
    json_decref(o);
    sb_free(&out);
    return n;
}

static llm_client_options fast_options(void)
{
    llm_client_options o;
    llm_client_options_default(&o);
    o.backoff_base_ms = 20;
    o.backoff_max_ms = 100;
    o.deadline_s = 20;
    o.idle_timeout_s = 0.6;
    o.attempt_timeout_s = 0.8;
    return o;
}

static const llm_message spec_msg[1] = {{"user", "Problem level1/019_relu: ReLU activation"}};
static int request_seq;

/* One call with a fresh request (distinct seed) against the server. */
static int call(enum llm_api api, int stream, const char *faults, const llm_client_options *o,
                llm_reply *r, long *sent, strbuf *err)
{
    set_faults(faults);
    long before = stat_requests();
    llm_endpoint e = {base_url, api, "sk-test-secret", 0};
    llm_client c;
    llm_client_init(&c, &e, 1, o, NULL, NULL);
    llm_request q = {"fake", "system text", spec_msg, 1, 1000, -1, request_seq++, stream};
    strbuf body = STRBUF_INIT;
    int rc = llm_call(&c, &q, r, &body, err);
    assert_null(strstr(body.buf, "sk-test-secret"));
    *sent = stat_requests() - before;
    llm_client_destroy(&c);
    sb_free(&body);
    return rc;
}

static void assert_relu_answer(const llm_reply *r, enum llm_api api)
{
    assert_non_null(strstr(r->content.buf, "relu_ref"));
    assert_non_null(strstr(r->content.buf, "```cuda"));
    assert_non_null(strstr(sb_str(&r->reasoning), "Turn 0"));
    assert_null(strstr(r->content.buf, "Turn 0")); /* reasoning kept apart */
    assert_string_equal(r->finish_reason, "stop");
    assert_true(r->prompt_tokens > 0 && r->completion_tokens > 0);
    if (api == LLM_OPENAI) /* Anthropic counts thinking inside output tokens */
        assert_true(r->reasoning_tokens > 0);
}

static void both_apis_streamed_or_not(void **state)
{
    (void)state;
    llm_client_options o = fast_options();
    for (int api = 0; api < 2; api++)
        for (int stream = 0; stream < 2; stream++) {
            llm_reply r;
            llm_reply_init(&r);
            strbuf err = STRBUF_INIT;
            long sent;
            assert_int_equal(call((enum llm_api)api, stream, "ok", &o, &r, &sent, &err), 0);
            assert_relu_answer(&r, (enum llm_api)api);
            assert_int_equal(sent, 1);
            assert_int_equal(r.attempts, 1);
            llm_reply_free(&r);
            sb_free(&err);
        }
}

static void server_ignoring_stream(void **state)
{
    (void)state;
    llm_client_options o = fast_options();
    for (int api = 0; api < 2; api++) {
        llm_reply r;
        llm_reply_init(&r);
        strbuf err = STRBUF_INIT;
        long sent;
        assert_int_equal(call((enum llm_api)api, 1, "nostream", &o, &r, &sent, &err), 0);
        assert_relu_answer(&r, (enum llm_api)api);
        assert_int_equal(sent, 1);
        llm_reply_free(&r);
        sb_free(&err);
    }
}

static void retried_faults(void **state)
{
    (void)state;
    static const char *faults[] = {"500", "503", "reset", "cut", "malformed", "hang", "idle", "429:0"};
    llm_client_options o = fast_options();
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        for (int stream = 0; stream < 2; stream++) {
            llm_reply r;
            llm_reply_init(&r);
            strbuf err = STRBUF_INIT;
            long sent;
            int rc = call(LLM_OPENAI, stream, faults[i], &o, &r, &sent, &err);
            if (rc != 0)
                fprintf(stderr, "fault %s stream %d: %s\n", faults[i], stream, err.buf);
            assert_int_equal(rc, 0);
            assert_relu_answer(&r, LLM_OPENAI);
            assert_int_equal(r.attempts, 2);
            assert_int_equal(sent, 2);
            llm_reply_free(&r);
            sb_free(&err);
        }
}

static void retry_after_is_honoured(void **state)
{
    (void)state;
    llm_client_options o = fast_options();
    llm_reply r;
    llm_reply_init(&r);
    strbuf err = STRBUF_INIT;
    long sent;
    double t0 = now_ms();
    assert_int_equal(call(LLM_ANTHROPIC, 1, "429:1", &o, &r, &sent, &err), 0);
    assert_true(now_ms() - t0 >= 1000); /* backoff alone would wait 20-40 ms */
    assert_int_equal(sent, 2);
    llm_reply_free(&r);
    sb_free(&err);
}

static void fatal_errors_not_retried(void **state)
{
    (void)state;
    static const char *faults[] = {"quota", "auth", "model"};
    llm_client_options o = fast_options();
    for (size_t i = 0; i < 3; i++)
        for (int api = 0; api < 2; api++) {
            llm_reply r;
            llm_reply_init(&r);
            strbuf err = STRBUF_INIT;
            long sent;
            assert_int_equal(call((enum llm_api)api, 1, faults[i], &o, &r, &sent, &err), -1);
            assert_int_equal(r.outcome, LLM_FATAL_RUN);
            assert_int_equal(sent, 1);
            assert_null(strstr(err.buf, "sk-test-secret"));
            llm_reply_free(&r);
            sb_free(&err);
        }
    /* A request that can never succeed (400) is not retried either, but the run goes on. */
    llm_reply r;
    llm_reply_init(&r);
    strbuf err = STRBUF_INIT;
    long sent;
    assert_int_equal(call(LLM_OPENAI, 0, "bad", &o, &r, &sent, &err), -1);
    assert_int_equal(r.outcome, LLM_FATAL_REQUEST);
    assert_int_equal(sent, 1);
    llm_reply_free(&r);
    sb_free(&err);
}

static void gives_up_after_max_attempts(void **state)
{
    (void)state;
    llm_client_options o = fast_options();
    o.max_attempts = 3;
    llm_reply r;
    llm_reply_init(&r);
    strbuf err = STRBUF_INIT;
    long sent;
    assert_int_equal(call(LLM_OPENAI, 1, "500*5", &o, &r, &sent, &err), -1);
    assert_int_equal(r.outcome, LLM_RETRY);
    assert_int_equal(sent, 3);
    assert_non_null(strstr(err.buf, "gave up after 3 attempts"));
    set_faults("");
    llm_reply_free(&r);
    sb_free(&err);
}

static void total_deadline(void **state)
{
    (void)state;
    llm_client_options o = fast_options();
    o.deadline_s = 1.0;
    o.attempt_timeout_s = 30;
    llm_reply r;
    llm_reply_init(&r);
    strbuf err = STRBUF_INIT;
    long sent;
    double t0 = now_ms();
    assert_int_equal(call(LLM_OPENAI, 0, "hang", &o, &r, &sent, &err), -1);
    assert_int_equal(r.outcome, LLM_DEADLINE);
    assert_true(now_ms() - t0 < 3000);
    llm_reply_free(&r);
    sb_free(&err);
}

static void huge_answer(void **state)
{
    (void)state;
    llm_client_options o = fast_options();
    o.idle_timeout_s = 10;
    o.attempt_timeout_s = 60;
    o.max_answer_bytes = 0; /* no cap: the whole 20 MB */
    for (int stream = 0; stream < 2; stream++) {
        llm_reply r;
        llm_reply_init(&r);
        strbuf err = STRBUF_INIT;
        long sent;
        assert_int_equal(call(LLM_OPENAI, stream, "huge", &o, &r, &sent, &err), 0);
        assert_true(r.content.len > (20u << 20));
        assert_non_null(strstr(r.content.buf, "relu_ref"));
        assert_false(r.truncated);
        llm_reply_free(&r);
        sb_free(&err);
    }
    /* The answer cap (kcollect --max-answer-bytes): cut there, one request, marked truncated. */
    o.max_answer_bytes = 100000;
    for (int stream = 0; stream < 2; stream++) {
        llm_reply r;
        llm_reply_init(&r);
        strbuf err = STRBUF_INIT;
        long sent;
        assert_int_equal(call(LLM_OPENAI, stream, "huge", &o, &r, &sent, &err), 0);
        assert_int_equal(sent, 1);
        assert_true(r.content.len + r.reasoning.len <= 100000);
        assert_true(r.raw.len <= 100000);
        assert_true(r.answer_bytes > 100000);
        assert_true(r.truncated);
        assert_string_equal(r.finish_reason, "answer_cap");
        llm_reply_free(&r);
        sb_free(&err);
    }
    o.max_answer_bytes = 0;
    /* Over the configured cap: refused, not retried. */
    o.max_response_bytes = 1 << 20;
    llm_reply r;
    llm_reply_init(&r);
    strbuf err = STRBUF_INIT;
    long sent;
    assert_int_equal(call(LLM_OPENAI, 0, "huge", &o, &r, &sent, &err), -1);
    assert_int_equal(sent, 1);
    assert_non_null(strstr(err.buf, "larger than"));
    llm_reply_free(&r);
    sb_free(&err);
}

static void failover_to_second_endpoint(void **state)
{
    (void)state;
    set_faults("");
    llm_client_options o = fast_options();
    /* The first endpoint refuses connections; the second answers. Then a
     * quota error kills the second endpoint for good, and the first one stays dead too. */
    llm_endpoint e[2] = {{"http://127.0.0.1:1/v1", LLM_OPENAI, NULL, 0},
                         {base_url, LLM_OPENAI, NULL, 0}};
    llm_client c;
    llm_client_init(&c, e, 2, &o, NULL, NULL);
    llm_request q = {"fake", "s", spec_msg, 1, 100, -1, 900, 0};
    llm_reply r;
    llm_reply_init(&r);
    strbuf body = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(llm_call(&c, &q, &r, &body, &err), 0);
    assert_int_equal(r.endpoint, 1);
    assert_int_equal(r.attempts, 2);
    set_faults("quota");
    q.seed++;
    assert_int_equal(llm_call(&c, &q, &r, &body, &err), -1);
    assert_int_equal(e[1].dead, 1);
    llm_client_destroy(&c);
    llm_reply_free(&r);
    sb_free(&body);
    sb_free(&err);
}

/* spread: call k starts at endpoint (spread_start + k) mod n, a dead one skipped; without it
 * every call starts at the first live one. Two URLs of the one server stand for two servers. */
static int answered_by(llm_client *c, int seed)
{
    llm_request q = {"fake", "s", spec_msg, 1, 100, -1, seed, 0};
    llm_reply r;
    llm_reply_init(&r);
    strbuf body = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(llm_call(c, &q, &r, &body, &err), 0);
    int ep = r.endpoint;
    llm_reply_free(&r);
    sb_free(&body);
    sb_free(&err);
    return ep;
}

static void spread_over_endpoints(void **state)
{
    (void)state;
    set_faults("");
    char other[64];
    snprintf(other, sizeof other, "http://localhost:%d/v1", server_port);
    llm_endpoint e[3] = {{base_url, LLM_OPENAI, NULL, 0}, {other, LLM_OPENAI, NULL, 0},
                         {"http://127.0.0.1:1/v1", LLM_OPENAI, NULL, 0}};
    llm_client_options o = fast_options();
    llm_client c;
    llm_client_init(&c, e, 2, &o, NULL, NULL);
    for (int k = 0; k < 3; k++)
        assert_int_equal(answered_by(&c, 910 + k), 0); /* failover order */
    llm_client_destroy(&c);
    o.spread = 1;
    o.spread_start = 1;
    llm_client_init(&c, e, 2, &o, NULL, NULL);
    for (int k = 0; k < 4; k++)
        assert_int_equal(answered_by(&c, 920 + k), (1 + k) % 2);
    llm_client_destroy(&c);
    e[2].dead = 1; /* found dead earlier: the turn passes it by */
    o.spread_start = 0;
    llm_client_init(&c, e, 3, &o, NULL, NULL);
    int want[6] = {0, 1, 0, 0, 1, 0};
    for (int k = 0; k < 6; k++)
        assert_int_equal(answered_by(&c, 930 + k), want[k]);
    llm_client_destroy(&c);
}

static void rate_limits(void **state)
{
    (void)state;
    ratelimit rl;
    rl_init(&rl, 2, 3, 1000);
    double far = now_ms() + 10000;
    int a = rl_acquire(&rl, 100, far, NULL), b = rl_acquire(&rl, 100, far, NULL);
    assert_true(a >= 0 && b >= 0);
    /* Two in flight: a third must wait (deadline passes). */
    assert_int_equal(rl_acquire(&rl, 100, now_ms() + 100, NULL), -1);
    rl_release(&rl, a, 100);
    rl_release(&rl, b, 100);
    /* rpm 3: the third request in the minute goes, the fourth waits about a minute. */
    int c3 = rl_acquire(&rl, 100, far, NULL);
    assert_true(c3 >= 0);
    rl_release(&rl, c3, 100);
    assert_true(rl_wait_ms(&rl, 100, now_ms()) > 50000);
    rl_destroy(&rl);
    /* tpm 1000: 900 tokens used, 200 more must wait; a corrected count frees room. */
    rl_init(&rl, 0, 0, 1000);
    int d = rl_acquire(&rl, 900, far, NULL);
    assert_true(rl_wait_ms(&rl, 200, now_ms()) > 50000);
    rl_release(&rl, d, 300);
    assert_true(rl_wait_ms(&rl, 200, now_ms()) == 0);
    rl_destroy(&rl);
}

static void cancel_stops_a_call(void **state)
{
    (void)state;
    volatile sig_atomic_t cancel = 1;
    llm_client_options o = fast_options();
    llm_endpoint e = {base_url, LLM_OPENAI, NULL, 0};
    llm_client c;
    llm_client_init(&c, &e, 1, &o, NULL, &cancel);
    set_faults("hang");
    llm_request q = {"fake", "s", spec_msg, 1, 100, -1, 901, 0};
    llm_reply r;
    llm_reply_init(&r);
    strbuf body = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(llm_call(&c, &q, &r, &body, &err), -1);
    assert_int_equal(r.outcome, LLM_CANCELLED);
    set_faults("");
    llm_client_destroy(&c);
    llm_reply_free(&r);
    sb_free(&body);
    sb_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(both_apis_streamed_or_not),
        cmocka_unit_test(server_ignoring_stream),
        cmocka_unit_test(retried_faults),
        cmocka_unit_test(retry_after_is_honoured),
        cmocka_unit_test(fatal_errors_not_retried),
        cmocka_unit_test(gives_up_after_max_attempts),
        cmocka_unit_test(total_deadline),
        cmocka_unit_test(huge_answer),
        cmocka_unit_test(failover_to_second_endpoint),
        cmocka_unit_test(spread_over_endpoints),
        cmocka_unit_test(rate_limits),
        cmocka_unit_test(cancel_stops_a_call),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
