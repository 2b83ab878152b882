/* fuzz_wire: libFuzzer target for the LLM wire formats (collect/llm_wire.c):
 * non-streamed OpenAI and Anthropic bodies (llm_parse_body), their streams
 * (llm_stream_feed/finish over SSE, fed in chunks of varying size), and HTTP
 * error bodies (llm_classify_http). All of it is bytes a remote server sent.
 * Input: byte 0 picks the mode (mod 5), byte 1 the chunk size for streams or
 * the HTTP status for errors, the rest is the body or stream. Properties: no
 * crash, UB, leak or blowup; an error says why; the reply's finish reason is
 * always a terminated string and truncated agrees with it. */
#include "collect/llm.h"
#include "fuzz_common.h"

static void check_reply(const llm_reply *r)
{
    FZ_CHECK(memchr(r->finish_reason, '\0', sizeof r->finish_reason) != NULL);
    FZ_CHECK(r->truncated == (strcmp(r->finish_reason, "length") == 0));
}

static void stream(enum llm_api api, const char *body, size_t len, size_t chunk, llm_reply *r)
{
    strbuf err = STRBUF_INIT;
    llm_stream *s = llm_stream_new(api, r);
    int rc = 0;
    for (size_t off = 0; off < len && rc == 0; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        rc = llm_stream_feed(s, body + off, n, &err);
    }
    if (rc == 0)
        rc = llm_stream_finish(s, &err);
    if (rc)
        FZ_CHECK(err.len > 0);
    FZ_CHECK(llm_stream_progress(s) >= 0);
    llm_stream_free(s);
    sb_free(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int mode = data[0] % 5;
    unsigned arg = data[1];
    char *body = fz_cstr(data + 2, size - 2);
    size_t len = size - 2;
    llm_reply r;
    llm_reply_init(&r);
    strbuf err = STRBUF_INIT;
    switch (mode) {
    case 0:
    case 1:
        if (llm_parse_body(mode ? LLM_ANTHROPIC : LLM_OPENAI, body, &r, &err))
            FZ_CHECK(err.len > 0);
        break;
    case 2:
    case 3:
        stream(mode == 3 ? LLM_ANTHROPIC : LLM_OPENAI, body, len, arg ? arg : len + 1, &r);
        break;
    default: {
        static const int statuses[] = {200, 400, 401, 403, 404, 408, 413, 422, 429, 500, 529, 302};
        enum llm_outcome o = llm_classify_http(statuses[arg % 12], body, &err);
        FZ_CHECK(o >= LLM_OK && o <= LLM_CANCELLED);
        FZ_CHECK(strncmp(err.buf, "HTTP ", 5) == 0);
        FZ_CHECK(llm_outcome_name(o) != NULL);
    }
    }
    check_reply(&r);
    llm_reply_free(&r);
    sb_free(&err);
    free(body);
    return 0;
}
