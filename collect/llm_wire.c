/* llm_wire: request bodies and reply parsing for OpenAI-compatible chat
 * completions and Anthropic messages, streamed or not (see llm.h). Pure
 * functions over text: no I/O here. */
#include "collect/llm.h"
#include "collect/sse.h"
#include "common/error.h"
#include "common/hash.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *llm_api_name(enum llm_api api) { return api == LLM_ANTHROPIC ? "anthropic" : "openai"; }

int llm_api_parse(const char *s, enum llm_api *out)
{
    if (!strcmp(s, "openai"))
        *out = LLM_OPENAI;
    else if (!strcmp(s, "anthropic"))
        *out = LLM_ANTHROPIC;
    else
        return -1;
    return 0;
}

const char *llm_outcome_name(enum llm_outcome o)
{
    static const char *names[] = {"ok", "retry", "fatal_request", "fatal_run", "deadline",
                                  "cancelled"};
    return names[o];
}

void llm_reply_init(llm_reply *r)
{
    memset(r, 0, sizeof *r);
    r->retry_after_s = -1;
}

void llm_reply_reset(llm_reply *r)
{
    sb_reset(&r->raw);
    sb_reset(&r->content);
    sb_reset(&r->reasoning);
    sb_reset(&r->error);
    r->finish_reason[0] = 0;
    r->http_status = 0;
    r->truncated = 0;
    r->prompt_tokens = r->completion_tokens = r->reasoning_tokens = 0;
    r->retry_after_s = -1;
    r->stream_done = r->stream_end = r->choices_seen = 0;
    r->answer_bytes = 0;
    r->connect_failed = 0;
}

void llm_reply_free(llm_reply *r)
{
    sb_free(&r->raw);
    sb_free(&r->content);
    sb_free(&r->reasoning);
    sb_free(&r->error);
    sb_free(&r->attempt_errors);
}

/* ---- request bodies ---- */

static json_t *messages_json(const llm_request *q, int with_system)
{
    json_t *a = json_array();
    if (with_system && q->system && *q->system)
        json_array_append_new(a, json_pack("{s:s, s:s}", "role", "system", "content", q->system));
    for (int i = 0; i < q->n_messages; i++)
        json_array_append_new(a, json_pack("{s:s, s:s}", "role", q->messages[i].role, "content",
                                           q->messages[i].content));
    return a;
}

static void dump_into(json_t *o, strbuf *out)
{
    char *s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
    sb_reset(out);
    sb_adds(out, s ? s : "null");
    free(s);
    json_decref(o);
}

void llm_request_body(const llm_request *q, enum llm_api api, strbuf *body)
{
    json_t *o = json_object();
    json_object_set_new(o, "model", json_string(q->model));
    if (api == LLM_ANTHROPIC) {
        if (q->system && *q->system)
            json_object_set_new(o, "system", json_string(q->system));
        json_object_set_new(o, "messages", messages_json(q, 0));
        json_object_set_new(o, "max_tokens", json_integer(q->max_tokens > 0 ? q->max_tokens : 4096));
    } else {
        json_object_set_new(o, "messages", messages_json(q, 1));
        if (q->max_tokens > 0)
            json_object_set_new(o, "max_tokens", json_integer(q->max_tokens));
        if (q->seed >= 0)
            json_object_set_new(o, "seed", json_integer(q->seed));
    }
    if (q->temperature >= 0)
        json_object_set_new(o, "temperature", json_real(q->temperature));
    if (q->stream) {
        json_object_set_new(o, "stream", json_true());
        if (api == LLM_OPENAI)
            json_object_set_new(o, "stream_options", json_pack("{s:b}", "include_usage", 1));
    }
    dump_into(o, body);
}

void llm_request_hash(const llm_request *q, char *out)
{
    json_t *o = json_object();
    json_object_set_new(o, "model", json_string(q->model));
    json_object_set_new(o, "system", json_string(q->system ? q->system : ""));
    json_object_set_new(o, "messages", messages_json(q, 0));
    json_object_set_new(o, "max_tokens", json_integer(q->max_tokens));
    json_object_set_new(o, "temperature", json_real(q->temperature));
    json_object_set_new(o, "seed", json_integer(q->seed));
    strbuf s = STRBUF_INIT;
    dump_into(o, &s);
    sha256_hex(s.buf, s.len, out);
    sb_free(&s);
}

/* ---- replies ---- */

static void set_finish(llm_reply *r, const char *reason)
{
    if (!reason)
        return;
    /* Anthropic names, mapped onto OpenAI's. */
    if (!strcmp(reason, "end_turn") || !strcmp(reason, "stop_sequence"))
        reason = "stop";
    else if (!strcmp(reason, "max_tokens"))
        reason = "length";
    else if (!strcmp(reason, "tool_use"))
        reason = "tool_calls";
    snprintf(r->finish_reason, sizeof r->finish_reason, "%s", reason);
    r->truncated = !strcmp(r->finish_reason, "length");
}

static long int_field(json_t *o, const char *name)
{
    json_t *v = json_object_get(o, name);
    return json_is_integer(v) ? (long)json_integer_value(v) : 0;
}

static void openai_usage(json_t *usage, llm_reply *r)
{
    if (!json_is_object(usage))
        return;
    r->prompt_tokens = int_field(usage, "prompt_tokens");
    r->completion_tokens = int_field(usage, "completion_tokens");
    json_t *details = json_object_get(usage, "completion_tokens_details");
    if (json_is_object(details))
        r->reasoning_tokens = int_field(details, "reasoning_tokens");
    else
        r->reasoning_tokens = int_field(usage, "reasoning_tokens");
}

static void anthropic_usage(json_t *usage, llm_reply *r)
{
    if (!json_is_object(usage))
        return;
    if (json_object_get(usage, "input_tokens"))
        r->prompt_tokens = int_field(usage, "input_tokens") +
                           int_field(usage, "cache_read_input_tokens") +
                           int_field(usage, "cache_creation_input_tokens");
    if (json_object_get(usage, "output_tokens"))
        r->completion_tokens = int_field(usage, "output_tokens");
}

/* Appends the string fields reasoning_content / reasoning (vLLM, DeepSeek, OpenRouter). */
static void add_reasoning_fields(json_t *msg, llm_reply *r)
{
    static const char *names[] = {"reasoning_content", "reasoning"};
    for (int i = 0; i < 2; i++) {
        json_t *v = json_object_get(msg, names[i]);
        if (json_is_string(v)) {
            sb_adds(&r->reasoning, json_string_value(v));
            return; /* some servers send both with the same text */
        }
    }
}

static int parse_openai(json_t *root, llm_reply *r, strbuf *err)
{
    json_t *choices = json_object_get(root, "choices");
    json_t *c0 = json_array_get(choices, 0);
    if (!c0)
        return kc_fail(err, "reply has no choices (the server sent no answer)");
    r->choices_seen = 1;
    json_t *msg = json_object_get(c0, "message");
    if (!json_is_object(msg))
        return kc_fail(err, "reply has no choices[0].message");
    json_t *content = json_object_get(msg, "content");
    if (json_is_string(content))
        sb_adds(&r->content, json_string_value(content));
    add_reasoning_fields(msg, r);
    set_finish(r, json_string_value(json_object_get(c0, "finish_reason")));
    openai_usage(json_object_get(root, "usage"), r);
    return 0;
}

static int parse_anthropic(json_t *root, llm_reply *r, strbuf *err)
{
    json_t *content = json_object_get(root, "content");
    if (!json_is_array(content))
        return kc_fail(err, "reply has no content array");
    size_t i;
    json_t *block;
    json_array_foreach(content, i, block) {
        const char *type = json_string_value(json_object_get(block, "type"));
        if (!type)
            continue;
        if (!strcmp(type, "text"))
            sb_adds(&r->content, json_string_value(json_object_get(block, "text")) ?: "");
        else if (!strcmp(type, "thinking"))
            sb_adds(&r->reasoning, json_string_value(json_object_get(block, "thinking")) ?: "");
    }
    set_finish(r, json_string_value(json_object_get(root, "stop_reason")));
    anthropic_usage(json_object_get(root, "usage"), r);
    return 0;
}

int llm_parse_body(enum llm_api api, const char *body, llm_reply *r, strbuf *err)
{
    json_error_t je;
    json_t *root = json_loads(body, 0, &je);
    if (!root)
        return kc_fail(err, "malformed JSON reply: %s (line %d)", je.text, je.line);
    int rc;
    if (json_object_get(root, "error"))
        rc = kc_fail(err, "error object in a 200 reply");
    else
        rc = api == LLM_ANTHROPIC ? parse_anthropic(root, r, err) : parse_openai(root, r, err);
    json_decref(root);
    if (rc == 0) {
        r->stream_done = 1;
        llm_split_think(r);
    }
    return rc;
}

void llm_redact(strbuf *s, const char *secret)
{
    size_t k = secret ? strlen(secret) : 0;
    if (k < 8 || !s->len || !memmem(s->buf, s->len, secret, k))
        return;
    strbuf out = STRBUF_INIT;
    const char *p = s->buf, *end = s->buf + s->len, *q;
    while ((q = memmem(p, (size_t)(end - p), secret, k))) {
        sb_add(&out, p, (size_t)(q - p));
        sb_adds(&out, "[redacted]");
        p = q + k;
    }
    sb_add(&out, p, (size_t)(end - p));
    sb_reset(s);
    sb_add(s, sb_str(&out), out.len);
    sb_free(&out);
}

/* ---- <think> tags ---- */

void llm_split_think(llm_reply *r)
{
    const char *text = sb_str(&r->content);
    const char *open = strstr(text, "<think>");
    const char *close = strstr(text, "</think>");
    if (!open && !close)
        return;
    strbuf answer = STRBUF_INIT, thought = STRBUF_INIT;
    const char *p = text;
    if (close && (!open || close < open)) { /* the opening tag was stripped by the server */
        sb_add(&thought, p, (size_t)(close - p));
        p = close + strlen("</think>");
    }
    for (;;) {
        const char *o = strstr(p, "<think>");
        if (!o) {
            sb_adds(&answer, p);
            break;
        }
        sb_add(&answer, p, (size_t)(o - p));
        const char *c = strstr(o, "</think>");
        if (thought.len)
            sb_addch(&thought, '\n');
        if (!c) { /* unterminated: the rest is reasoning (cut by the length limit) */
            sb_adds(&thought, o + strlen("<think>"));
            break;
        }
        sb_add(&thought, o + strlen("<think>"), (size_t)(c - o - strlen("<think>")));
        p = c + strlen("</think>");
    }
    sb_trim(&thought);
    sb_trim(&answer);
    if (thought.len) {
        if (r->reasoning.len)
            sb_addch(&r->reasoning, '\n');
        sb_add(&r->reasoning, thought.buf, thought.len);
    }
    sb_reset(&r->content);
    sb_add(&r->content, sb_str(&answer), answer.len);
    sb_free(&answer);
    sb_free(&thought);
}

/* ---- streaming ---- */

struct llm_stream {
    enum llm_api api;
    llm_reply *r;
    sse_parser sse;
    long progress;
    strbuf err;
};

static int openai_chunk(llm_stream *s, json_t *root)
{
    llm_reply *r = s->r;
    json_t *c0 = json_array_get(json_object_get(root, "choices"), 0);
    if (c0)
        r->choices_seen = 1;
    json_t *delta = json_object_get(c0, "delta");
    if (json_is_object(delta)) {
        json_t *content = json_object_get(delta, "content");
        if (json_is_string(content))
            sb_adds(&r->content, json_string_value(content));
        add_reasoning_fields(delta, r);
    }
    const char *fr = json_string_value(json_object_get(c0, "finish_reason"));
    if (fr) {
        set_finish(r, fr);
        r->stream_done = 1;
    }
    json_t *usage = json_object_get(root, "usage");
    if (json_is_object(usage))
        openai_usage(usage, r);
    return 0;
}

static int anthropic_event(llm_stream *s, const char *event, json_t *root)
{
    llm_reply *r = s->r;
    const char *type = json_string_value(json_object_get(root, "type"));
    if (!type)
        type = event;
    if (!strcmp(type, "message_start")) {
        anthropic_usage(json_object_get(json_object_get(root, "message"), "usage"), r);
    } else if (!strcmp(type, "content_block_start")) {
        json_t *b = json_object_get(root, "content_block");
        const char *bt = json_string_value(json_object_get(b, "type"));
        if (bt && !strcmp(bt, "text"))
            sb_adds(&r->content, json_string_value(json_object_get(b, "text")) ?: "");
    } else if (!strcmp(type, "content_block_delta")) {
        json_t *d = json_object_get(root, "delta");
        const char *dt = json_string_value(json_object_get(d, "type"));
        if (dt && !strcmp(dt, "text_delta"))
            sb_adds(&r->content, json_string_value(json_object_get(d, "text")) ?: "");
        else if (dt && !strcmp(dt, "thinking_delta"))
            sb_adds(&r->reasoning, json_string_value(json_object_get(d, "thinking")) ?: "");
    } else if (!strcmp(type, "message_delta")) {
        set_finish(r, json_string_value(json_object_get(json_object_get(root, "delta"), "stop_reason")));
        anthropic_usage(json_object_get(root, "usage"), r);
    } else if (!strcmp(type, "message_stop")) {
        r->stream_done = r->stream_end = 1;
    }
    return 0;
}

static int on_event(const char *event, const char *data, void *ctx)
{
    llm_stream *s = ctx;
    if (!strcmp(event, "ping"))
        return 0; /* Anthropic keep-alive: not progress */
    s->progress++;
    if (s->api == LLM_OPENAI && !strcmp(data, "[DONE]")) {
        s->r->stream_done = s->r->stream_end = 1;
        return 0;
    }
    json_error_t je;
    json_t *root = json_loads(data, 0, &je);
    if (!root)
        return kc_fail(&s->err, "malformed JSON in stream event: %s", je.text);
    int rc = 0;
    json_t *e = json_object_get(root, "error");
    if (e || !strcmp(event, "error")) {
        const char *m = json_string_value(json_object_get(e, "message"));
        const char *t = json_string_value(json_object_get(e, "type"));
        rc = kc_fail(&s->err, "error event in stream: %s%s%s", t ? t : "", t ? ": " : "",
                     m ? m : "(no message)");
    } else if (s->api == LLM_ANTHROPIC) {
        rc = anthropic_event(s, event, root);
    } else {
        rc = openai_chunk(s, root);
    }
    json_decref(root);
    return rc;
}

llm_stream *llm_stream_new(enum llm_api api, llm_reply *r)
{
    llm_stream *s = xcalloc(1, sizeof *s);
    s->api = api;
    s->r = r;
    sse_init(&s->sse, on_event, s);
    return s;
}

void llm_stream_free(llm_stream *s)
{
    if (!s)
        return;
    sse_free(&s->sse);
    sb_free(&s->err);
    free(s);
}

int llm_stream_feed(llm_stream *s, const char *bytes, size_t len, strbuf *err)
{
    if (sse_feed(&s->sse, bytes, len) < 0)
        return kc_fail(err, "%s", sb_str(&s->err));
    return 0;
}

int llm_stream_finish(llm_stream *s, strbuf *err)
{
    if (sse_finish(&s->sse) < 0)
        return kc_fail(err, "%s", sb_str(&s->err));
    if (!s->r->stream_done)
        return kc_fail(err, "stream ended before its end marker (cut mid-way after %ld events)",
                       s->progress);
    /* The same rule as a whole reply: no choice at all is no answer (not an empty one). */
    if (s->api == LLM_OPENAI && !s->r->choices_seen)
        return kc_fail(err, "reply has no choices (the server sent no answer)");
    llm_split_think(s->r);
    return 0;
}

int llm_parse_raw(enum llm_api api, int stream, const char *raw, size_t len, llm_reply *r,
                  strbuf *err)
{
    if (!stream) {
        strbuf body = STRBUF_INIT;
        sb_add(&body, raw, len);
        int rc = llm_parse_body(api, sb_str(&body), r, err);
        sb_free(&body);
        return rc;
    }
    llm_stream *s = llm_stream_new(api, r);
    int rc = llm_stream_feed(s, raw, len, err) < 0 || llm_stream_finish(s, err) < 0 ? -1 : 0;
    llm_stream_free(s);
    return rc;
}

long llm_stream_progress(const llm_stream *s) { return s->progress; }

/* ---- HTTP errors ---- */

static int contains_ci(const char *hay, const char *needle)
{
    return hay && strcasestr(hay, needle) != NULL;
}

enum llm_outcome llm_classify_http(int status, const char *body, strbuf *why)
{
    const char *type = NULL, *code = NULL, *message = NULL;
    json_t *root = body ? json_loads(body, 0, NULL) : NULL;
    json_t *e = json_object_get(root, "error");
    if (json_is_object(e)) {
        type = json_string_value(json_object_get(e, "type"));
        code = json_string_value(json_object_get(e, "code"));
        message = json_string_value(json_object_get(e, "message"));
    }
    sb_reset(why);
    sb_addf(why, "HTTP %d", status);
    if (type || code)
        sb_addf(why, " (%s%s%s)", type ? type : "", type && code ? "/" : "", code ? code : "");
    if (message)
        sb_addf(why, ": %.300s", message);
    enum llm_outcome o;
    if (contains_ci(code, "insufficient_quota") || contains_ci(type, "insufficient_quota") ||
        contains_ci(code, "billing") || contains_ci(type, "billing"))
        o = LLM_FATAL_RUN;
    else if (status == 401 || status == 403 || contains_ci(type, "authentication") ||
             contains_ci(type, "permission"))
        o = LLM_FATAL_RUN;
    else if (status == 404 || contains_ci(code, "model_not_found") || contains_ci(type, "not_found"))
        o = LLM_FATAL_RUN;
    else if (status == 408 || status == 409 || status == 425 || status == 429 || status >= 500)
        o = LLM_RETRY;
    else if (status >= 400)
        o = LLM_FATAL_REQUEST;
    else
        o = LLM_RETRY; /* 1xx/3xx where a reply was expected */
    json_decref(root);
    return o;
}
