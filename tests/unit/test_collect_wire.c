/* test_collect_wire: the LLM client's pure parts. SSE framing under any
 * split, OpenAI and Anthropic replies streamed and not, reasoning kept apart
 * (fields, <think> tags, a missing opening tag), usage and finish reasons,
 * HTTP error classes, request bodies without secrets, the cache key, backoff,
 * prompts under both context policies, config precedence, cost and run key. */
#include "collect/config.h"
#include "collect/llm.h"
#include "collect/prompt.h"
#include "collect/sse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <math.h>
#include <unistd.h>

/* ---- SSE ---- */

struct seen {
    strbuf log;
    int n;
};

static int record_event(const char *event, const char *data, void *ctx)
{
    struct seen *s = ctx;
    sb_addf(&s->log, "[%s|%s]", event, data);
    s->n++;
    return 0;
}

static const char sse_stream[] = ": keep-alive\r\n\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\n"
                                 ": ping\n\ndata: {\"x\": 1}\n\nid: 7\nretry: 10\ndata: last\r\rdata: tail";

static void sse_any_split(void **state)
{
    (void)state;
    size_t len = strlen(sse_stream);
    for (size_t cut1 = 0; cut1 <= len; cut1 += 3) {
        for (size_t step = 1; step <= 7; step += 3) {
            struct seen s = {STRBUF_INIT, 0};
            sse_parser p;
            sse_init(&p, record_event, &s);
            size_t i = 0;
            assert_true(sse_feed(&p, sse_stream, cut1) >= 0);
            for (i = cut1; i < len; i += step)
                assert_true(sse_feed(&p, sse_stream + i, i + step > len ? len - i : step) >= 0);
            assert_true(sse_finish(&p) >= 0);
            assert_string_equal(s.log.buf, "[a|one\ntwo][message|{\"x\": 1}][message|last][message|tail]");
            assert_int_equal(p.comments, 2);
            assert_int_equal(p.events, 4);
            sse_free(&p);
            sb_free(&s.log);
        }
    }
}

static int stop_at_second(const char *event, const char *data, void *ctx)
{
    (void)event, (void)data;
    return ++*(int *)ctx == 2 ? -1 : 0;
}

static void sse_callback_stops(void **state)
{
    (void)state;
    int n = 0;
    sse_parser p;
    sse_init(&p, stop_at_second, &n);
    assert_int_equal(sse_feed(&p, "data: 1\n\ndata: 2\n\ndata: 3\n\n", 27), -1);
    assert_int_equal(n, 2);
    sse_free(&p);
}

/* ---- replies ---- */

static void openai_body_with_reasoning_field(void **state)
{
    (void)state;
    llm_reply r;
    llm_reply_init(&r);
    strbuf err = STRBUF_INIT;
    const char *body = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"```cuda\\nx\\n```\","
                       "\"reasoning_content\":\"think hard\"},\"finish_reason\":\"length\"}],"
                       "\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":22,"
                       "\"completion_tokens_details\":{\"reasoning_tokens\":5}}}";
    assert_int_equal(llm_parse_body(LLM_OPENAI, body, &r, &err), 0);
    assert_string_equal(r.content.buf, "```cuda\nx\n```");
    assert_string_equal(r.reasoning.buf, "think hard");
    assert_string_equal(r.finish_reason, "length");
    assert_int_equal(r.truncated, 1);
    assert_int_equal(r.prompt_tokens, 11);
    assert_int_equal(r.completion_tokens, 22);
    assert_int_equal(r.reasoning_tokens, 5);
    llm_reply_free(&r);
    sb_free(&err);
}

static void openai_malformed_and_empty(void **state)
{
    (void)state;
    llm_reply r;
    llm_reply_init(&r);
    strbuf err = STRBUF_INIT;
    assert_int_equal(llm_parse_body(LLM_OPENAI, "{\"choices\": [{\"message\": {\"content\": \"x", &r, &err), -1);
    assert_non_null(strstr(err.buf, "malformed JSON"));
    assert_int_equal(llm_parse_body(LLM_OPENAI, "{\"choices\": []}", &r, &err), -1);
    llm_reply_free(&r);
    sb_free(&err);
}

static void anthropic_body_with_thinking(void **state)
{
    (void)state;
    llm_reply r;
    llm_reply_init(&r);
    strbuf err = STRBUF_INIT;
    const char *body = "{\"type\":\"message\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"hmm\","
                       "\"signature\":\"s\"},{\"type\":\"text\",\"text\":\"answer\"}],"
                       "\"stop_reason\":\"max_tokens\",\"usage\":{\"input_tokens\":7,\"output_tokens\":9}}";
    assert_int_equal(llm_parse_body(LLM_ANTHROPIC, body, &r, &err), 0);
    assert_string_equal(r.content.buf, "answer");
    assert_string_equal(r.reasoning.buf, "hmm");
    assert_string_equal(r.finish_reason, "length");
    assert_int_equal(r.truncated, 1);
    assert_int_equal(r.prompt_tokens, 7);
    assert_int_equal(r.completion_tokens, 9);
    llm_reply_free(&r);
    sb_free(&err);
}

static void think_tags(void **state)
{
    (void)state;
    static const struct {
        const char *in, *answer, *reasoning;
    } cases[] = {
        {"<think>plan</think>\n\nthe code", "the code", "plan"},
        {"plan without an opening tag</think>the code", "the code", "plan without an opening tag"},
        {"a<think>x</think>b<think>y</think>c", "abc", "x\ny"},
        {"no tags here", "no tags here", ""},
        {"<think>cut off by the length limit", "", "cut off by the length limit"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        llm_reply r;
        llm_reply_init(&r);
        sb_adds(&r.content, cases[i].in);
        llm_split_think(&r);
        assert_string_equal(sb_str(&r.content), cases[i].answer);
        assert_string_equal(sb_str(&r.reasoning), cases[i].reasoning);
        llm_reply_free(&r);
    }
}

static void feed_bytewise(llm_stream *s, const char *text)
{
    strbuf err = STRBUF_INIT;
    for (size_t i = 0; text[i]; i++)
        assert_int_equal(llm_stream_feed(s, text + i, 1, &err), 0);
    sb_free(&err);
}

static void openai_stream(void **state)
{
    (void)state;
    llm_reply r;
    llm_reply_init(&r);
    strbuf err = STRBUF_INIT;
    llm_stream *s = llm_stream_new(LLM_OPENAI, &r);
    feed_bytewise(s, ": keep-alive\n\n"
                     "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
                     "data: {\"choices\":[{\"delta\":{\"reasoning\":\"mull\"}}]}\n\n"
                     "data: {\"choices\":[{\"delta\":{\"content\":\"<think>more</think>hel\"}}]}\n\n"
                     ": keep-alive\n\n"
                     "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n"
                     "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}\n\n"
                     "data: [DONE]\n\n");
    assert_int_equal(llm_stream_finish(s, &err), 0);
    assert_string_equal(r.content.buf, "hello");
    assert_string_equal(r.reasoning.buf, "mull\nmore");
    assert_string_equal(r.finish_reason, "stop");
    assert_int_equal(r.completion_tokens, 4);
    assert_int_equal(llm_stream_progress(s), 6); /* data events only, not the comments */
    llm_stream_free(s);
    llm_reply_free(&r);
    sb_free(&err);
}

static void stream_cut_and_error_event(void **state)
{
    (void)state;
    llm_reply r;
    llm_reply_init(&r);
    strbuf err = STRBUF_INIT;
    llm_stream *s = llm_stream_new(LLM_OPENAI, &r);
    feed_bytewise(s, "data: {\"choices\":[{\"delta\":{\"content\":\"half\"}}]}\n\n");
    assert_int_equal(llm_stream_finish(s, &err), -1);
    assert_non_null(strstr(err.buf, "cut mid-way"));
    llm_stream_free(s);

    llm_reply_reset(&r);
    s = llm_stream_new(LLM_ANTHROPIC, &r);
    const char *ev = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy\"}}\n\n";
    assert_int_equal(llm_stream_feed(s, ev, strlen(ev), &err), -1);
    assert_non_null(strstr(err.buf, "overloaded_error"));
    llm_stream_free(s);
    llm_reply_free(&r);
    sb_free(&err);
}

static void anthropic_stream(void **state)
{
    (void)state;
    llm_reply r;
    llm_reply_init(&r);
    strbuf err = STRBUF_INIT;
    llm_stream *s = llm_stream_new(LLM_ANTHROPIC, &r);
    feed_bytewise(s,
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n"
        "event: ping\ndata: {\"type\":\"ping\"}\n\n"
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"t1\"}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"ans\"}}\n\n"
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":30}}\n\n"
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    assert_int_equal(llm_stream_finish(s, &err), 0);
    assert_string_equal(r.content.buf, "ans");
    assert_string_equal(r.reasoning.buf, "t1");
    assert_string_equal(r.finish_reason, "stop");
    assert_int_equal(r.prompt_tokens, 12);
    assert_int_equal(r.completion_tokens, 30);
    assert_int_equal(llm_stream_progress(s), 6); /* the ping is not progress */
    llm_stream_free(s);
    llm_reply_free(&r);
    sb_free(&err);
}

static void classify_http(void **state)
{
    (void)state;
    strbuf why = STRBUF_INIT;
    assert_int_equal(llm_classify_http(429, "{\"error\":{\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}", &why), LLM_RETRY);
    assert_int_equal(llm_classify_http(429, "{\"error\":{\"type\":\"insufficient_quota\",\"code\":\"insufficient_quota\",\"message\":\"pay\"}}", &why), LLM_FATAL_RUN);
    assert_non_null(strstr(why.buf, "insufficient_quota"));
    assert_int_equal(llm_classify_http(401, "{}", &why), LLM_FATAL_RUN);
    assert_int_equal(llm_classify_http(404, "{\"error\":{\"code\":\"model_not_found\"}}", &why), LLM_FATAL_RUN);
    assert_int_equal(llm_classify_http(400, "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\"}}", &why), LLM_FATAL_RUN);
    assert_int_equal(llm_classify_http(500, "oops", &why), LLM_RETRY);
    assert_int_equal(llm_classify_http(529, NULL, &why), LLM_RETRY);
    assert_int_equal(llm_classify_http(400, "{\"error\":{\"code\":\"context_length_exceeded\"}}", &why), LLM_FATAL_REQUEST);
    sb_free(&why);
}

/* ---- requests ---- */

static void request_bodies_and_hash(void **state)
{
    (void)state;
    llm_message m[1] = {{"user", "Problem level1/019_relu: ReLU"}};
    llm_request q = {"m1", "sys", m, 1, 100, 0.5, 3, 1};
    strbuf body = STRBUF_INIT;
    llm_request_body(&q, LLM_OPENAI, &body);
    assert_string_equal(body.buf,
        "{\"model\":\"m1\",\"messages\":[{\"role\":\"system\",\"content\":\"sys\"},{\"role\":\"user\","
        "\"content\":\"Problem level1/019_relu: ReLU\"}],\"max_tokens\":100,\"seed\":3,"
        "\"temperature\":0.5,\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
    llm_request_body(&q, LLM_ANTHROPIC, &body);
    assert_string_equal(body.buf,
        "{\"model\":\"m1\",\"system\":\"sys\",\"messages\":[{\"role\":\"user\",\"content\":"
        "\"Problem level1/019_relu: ReLU\"}],\"max_tokens\":100,\"temperature\":0.5,\"stream\":true}");
    char h1[65], h2[65], h3[65];
    llm_request_hash(&q, h1);
    q.stream = 0; /* streaming or not: the same answer */
    llm_request_hash(&q, h2);
    assert_string_equal(h1, h2);
    q.seed = 4; /* another sample: another answer */
    llm_request_hash(&q, h3);
    assert_string_not_equal(h1, h3);
    sb_free(&body);
}

static void backoff_bounds(void **state)
{
    (void)state;
    llm_client_options o;
    llm_client_options_default(&o);
    o.backoff_base_ms = 100;
    o.backoff_max_ms = 1000;
    for (int n = 1; n <= 8; n++) {
        double cap = n >= 5 ? 1000 : 100 << (n - 1);
        assert_true(llm_backoff_ms(&o, n, -1, 0.0) >= cap / 2);
        assert_true(llm_backoff_ms(&o, n, -1, 0.999) <= cap);
    }
    /* Retry-After wins over the backoff, whatever the attempt. */
    assert_true(llm_backoff_ms(&o, 1, 2, 0.5) >= 2000);
    assert_true(llm_backoff_ms(&o, 1, 2, 0.5) < 2300);
}

static void endpoint_urls(void **state)
{
    (void)state;
    strbuf u = STRBUF_INIT;
    llm_endpoint e = {"http://h:1/v1/", LLM_OPENAI, NULL, 0};
    llm_endpoint_url(&e, &u);
    assert_string_equal(u.buf, "http://h:1/v1/chat/completions");
    e = (llm_endpoint){"https://api.anthropic.com", LLM_ANTHROPIC, NULL, 0};
    llm_endpoint_url(&e, &u);
    assert_string_equal(u.buf, "https://api.anthropic.com/v1/messages");
    e = (llm_endpoint){"http://h/v1/chat/completions", LLM_OPENAI, NULL, 0};
    llm_endpoint_url(&e, &u);
    assert_string_equal(u.buf, "http://h/v1/chat/completions");
    sb_free(&u);
}

/* ---- prompts ---- */

static void prompt_policies(void **state)
{
    (void)state;
    turn_history h[2] = {{"spec", "answer0", "why0", "feedback0", "src0"}, {"feedback0", "answer1", NULL, "feedback1", NULL}};
    prompt_messages pm;
    prompt_build("spec", h, 2, CONTEXT_DROP_REASONING, &pm);
    assert_int_equal(pm.n, 5);
    assert_string_equal(pm.messages[0].content, "spec");
    assert_string_equal(pm.messages[1].role, "assistant");
    assert_string_equal(pm.messages[1].content, "answer0");
    assert_string_equal(pm.messages[2].content, "feedback0");
    assert_string_equal(pm.messages[4].content, "feedback1");
    prompt_messages_free(&pm);
    prompt_build("spec", h, 2, CONTEXT_FULL, &pm);
    assert_string_equal(pm.messages[1].content, "<think>\nwhy0\n</think>\n\nanswer0");
    assert_string_equal(pm.messages[3].content, "answer1");
    prompt_messages_free(&pm);
    /* An overlong answer goes back as its code block only. */
    strbuf big = STRBUF_INIT;
    while (big.len <= PROMPT_MAX_ANSWER)
        sb_adds(&big, "prose prose prose prose\n");
    h[0].answer = big.buf;
    prompt_build("spec", h, 1, CONTEXT_DROP_REASONING, &pm);
    assert_true(strlen(pm.messages[1].content) < 200);
    assert_non_null(strstr(pm.messages[1].content, "```cuda\nsrc0\n```"));
    prompt_messages_free(&pm);
    sb_free(&big);
    assert_non_null(strstr(prompt_system_text(), "// @launch"));
    assert_non_null(strstr(prompt_system_text(), "```cuda"));
}

/* ---- config ---- */

static void config_precedence_and_secrets(void **state)
{
    (void)state;
    char path[] = "/tmp/kc_collect_cfg_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *json = "{\"model\": \"from-file\", \"samples\": 3, \"endpoint\": [\"http://a/v1\", \"http://b/v1\"],"
                       " \"prices\": {\"m2\": [1.0, 10.0, 20.0]}}";
    assert_int_equal(write(fd, json, strlen(json)), (int)strlen(json));
    close(fd);
    setenv("OPENAI_API_KEY", "sk-secret-123", 1);
    collect_config c;
    config_defaults(&c);
    config_from_env(&c);
    strbuf err = STRBUF_INIT;
    assert_int_equal(config_load_file(&c, path, &err), 0);
    assert_int_equal(config_set(&c, "model", "m2", &err), 0); /* a flag wins over the file */
    assert_int_equal(config_set(&c, "problems", "level1", &err), 0);
    assert_int_equal(config_finish(&c, &err), 0);
    assert_string_equal(c.model, "m2");
    assert_int_equal(c.samples, 3);
    assert_int_equal(c.n_endpoints, 2);
    assert_string_equal(config_key_for(&c, LLM_OPENAI), "sk-secret-123");
    /* 1M in at $1, 1M visible out at $10, 1M reasoning at $20 */
    assert_true(fabs(config_cost(&c, 1000000, 2000000, 1000000) - 31.0) < 1e-9);
    strbuf json_out = STRBUF_INIT;
    config_json(&c, &json_out);
    assert_null(strstr(json_out.buf, "sk-secret"));
    char k1[65], k2[65];
    config_run_key(&c, k1);
    assert_int_equal(config_set(&c, "concurrency", "9", &err), 0); /* not part of the identity */
    config_run_key(&c, k2);
    assert_string_equal(k1, k2);
    /* more turns, samples, budget extend the run; another sampling setting is another run */
    assert_int_equal(config_set(&c, "turns", "9", &err), 0);
    assert_int_equal(config_set(&c, "samples", "7", &err), 0);
    assert_int_equal(config_set(&c, "budget", "99", &err), 0);
    config_run_key(&c, k2);
    assert_string_equal(k1, k2);
    assert_int_equal(config_set(&c, "temperature", "0.7", &err), 0);
    config_run_key(&c, k2);
    assert_string_not_equal(k1, k2);
    /* the same endpoints however spelt */
    strbuf e1 = STRBUF_INIT, e2 = STRBUF_INIT;
    const char *same[] = {"http://127.0.0.1:8000/v1", "http://localhost:8000/v1/",
                          "HTTP://[::1]:8000/v1//", "http://user:pw@LOCALHOST:8000/v1"};
    config_endpoint_identity(same[0], &e1);
    assert_string_equal(e1.buf, "http://localhost:8000/v1");
    for (int i = 1; i < 4; i++) {
        config_endpoint_identity(same[i], &e2);
        assert_string_equal(e1.buf, e2.buf);
    }
    config_endpoint_identity("https://api.example.com:443/v1/", &e1);
    config_endpoint_identity("https://API.example.com/v1", &e2);
    assert_string_equal(e1.buf, e2.buf);
    config_endpoint_identity("http://127.0.0.1:8001/v1", &e2);
    assert_string_not_equal(e2.buf, "http://localhost:8000/v1");
    sb_free(&e1);
    sb_free(&e2);
    assert_int_equal(config_set(&c, "samples", "zero", &err), -1);
    assert_int_equal(config_set(&c, "no_such", "1", &err), -1);
    config_free(&c);

    /* OPENAI_BASE_URL names the endpoint when nothing else does; flags replace it. */
    setenv("OPENAI_BASE_URL", "http://env-host:9/v1", 1);
    config_defaults(&c);
    config_from_env(&c);
    assert_int_equal(c.n_endpoints, 1);
    assert_string_equal(c.endpoint_urls[0], "http://env-host:9/v1");
    assert_int_equal(config_set(&c, "endpoint", "http://flag-host/v1", &err), 0);
    assert_string_equal(c.endpoint_urls[0], "http://flag-host/v1");
    assert_int_equal(config_set(&c, "endpoint", "ftp://x", &err), -1);
    config_free(&c);
    unsetenv("OPENAI_BASE_URL");
    /* No endpoint at all: the bundled server, with a default model. */
    config_defaults(&c);
    assert_int_equal(config_set(&c, "problems", "level1", &err), 0);
    assert_int_equal(config_finish(&c, &err), 0);
    assert_true(config_is_bundled(&c));
    assert_string_equal(c.model, "fake-echo");
    config_free(&c);

    /* A key in the config file is refused. */
    fd = open(path, O_WRONLY | O_TRUNC);
    const char *bad = "{\"api_key\": \"sk-x\"}";
    assert_int_equal(write(fd, bad, strlen(bad)), (int)strlen(bad));
    close(fd);
    config_defaults(&c);
    assert_int_equal(config_load_file(&c, path, &err), -1);
    config_free(&c);
    unlink(path);
    sb_free(&err);
    sb_free(&json_out);
    unsetenv("OPENAI_API_KEY");
}

/* One rule for a reply with no choices: an error streamed or not (a streamed one was an empty
 * paid answer); parsing a committed raw answer gives what the live parse gave. */
static void no_choices_and_raw_answers(void **state)
{
    (void)state;
    llm_reply r;
    llm_reply_init(&r);
    strbuf err = STRBUF_INIT;
    assert_int_equal(llm_parse_body(LLM_OPENAI, "{\"choices\": []}", &r, &err), -1);
    assert_non_null(strstr(err.buf, "no choices"));
    const char *sse = "data: {\"choices\": []}\n\ndata: {\"choices\": [], \"usage\": "
                      "{\"prompt_tokens\": 3, \"completion_tokens\": 0}}\n\ndata: [DONE]\n\n";
    llm_reply_reset(&r);
    assert_int_equal(llm_parse_raw(LLM_OPENAI, 1, sse, strlen(sse), &r, &err), -1);
    assert_non_null(strstr(err.buf, "no choices"));
    const char *ok = "data: {\"choices\": [{\"delta\": {\"content\": \"hi\"}}]}\n\n"
                     "data: {\"choices\": [{\"delta\": {}, \"finish_reason\": \"stop\"}]}\n\n"
                     "data: [DONE]\n\n";
    llm_reply_reset(&r);
    assert_int_equal(llm_parse_raw(LLM_OPENAI, 1, ok, strlen(ok), &r, &err), 0);
    assert_string_equal(r.content.buf, "hi");
    assert_true(r.stream_end);
    const char *body = "{\"choices\": [{\"message\": {\"content\": \"x\"}, \"finish_reason\": \"stop\"}]}";
    llm_reply_reset(&r);
    assert_int_equal(llm_parse_raw(LLM_OPENAI, 0, body, strlen(body), &r, &err), 0);
    assert_string_equal(r.content.buf, "x");
    llm_reply_free(&r);
    sb_free(&err);
}

/* A key the server echoes is replaced wherever it appears; short or absent keys change nothing. */
static void redaction(void **state)
{
    (void)state;
    strbuf s = STRBUF_INIT;
    sb_adds(&s, "Incorrect API key provided: sk-0123456789abc; again sk-0123456789abc.");
    llm_redact(&s, "sk-0123456789abc");
    assert_string_equal(s.buf, "Incorrect API key provided: [redacted]; again [redacted].");
    llm_redact(&s, "short");
    llm_redact(&s, NULL);
    assert_string_equal(s.buf, "Incorrect API key provided: [redacted]; again [redacted].");
    sb_free(&s);
}

/* Cutting an answer at the cap keeps whole UTF-8 characters and says what arrived. */
static void answer_cap(void **state)
{
    (void)state;
    llm_reply r;
    llm_reply_init(&r);
    sb_adds(&r.content, "ab\xc3\xa9\xc3\xa9"); /* 6 bytes */
    sb_adds(&r.raw, "raw bytes of the answer");
    llm_cap_answer(&r, 10);
    assert_false(r.truncated); /* under the cap: untouched */
    llm_cap_answer(&r, 5);
    assert_string_equal(r.content.buf, "ab\xc3\xa9"); /* not half of the second e-acute */
    assert_int_equal(r.answer_bytes, 6);
    assert_true(r.truncated);
    assert_string_equal(r.finish_reason, "answer_cap");
    assert_int_equal(r.raw.len, 5);
    llm_reply_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sse_any_split),
        cmocka_unit_test(sse_callback_stops),
        cmocka_unit_test(openai_body_with_reasoning_field),
        cmocka_unit_test(openai_malformed_and_empty),
        cmocka_unit_test(anthropic_body_with_thinking),
        cmocka_unit_test(think_tags),
        cmocka_unit_test(openai_stream),
        cmocka_unit_test(stream_cut_and_error_event),
        cmocka_unit_test(anthropic_stream),
        cmocka_unit_test(classify_http),
        cmocka_unit_test(request_bodies_and_hash),
        cmocka_unit_test(backoff_bounds),
        cmocka_unit_test(endpoint_urls),
        cmocka_unit_test(prompt_policies),
        cmocka_unit_test(config_precedence_and_secrets),
        cmocka_unit_test(no_choices_and_raw_answers),
        cmocka_unit_test(redaction),
        cmocka_unit_test(answer_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
