/* fuzz_sse: libFuzzer target for the server-sent-events parser (collect/sse.c),
 * which reads the byte stream of a streaming LLM reply. Input: byte 0 is a
 * chunk size, the rest the stream. Property beyond no crash, UB or leak: the
 * events delivered do not depend on how the bytes are split, so the stream fed
 * whole, fed in chunks and fed byte by byte gives the same events, counts and
 * comment count. */
#include "collect/sse.h"
#include "fuzz_common.h"

struct trace {
    strbuf log; /* event name, data, separated by NULs: what was delivered, in order */
    long n;
};

static int on_event(const char *event, const char *data, void *ctx)
{
    struct trace *t = ctx;
    FZ_CHECK(event && data && *event);
    sb_adds(&t->log, event);
    sb_addch(&t->log, '\0');
    sb_adds(&t->log, data);
    sb_addch(&t->log, '\0');
    t->n++;
    return 0;
}

static void run(const char *bytes, size_t len, size_t chunk, struct trace *t, long *comments)
{
    sse_parser p;
    sse_init(&p, on_event, t);
    long delivered = 0;
    for (size_t off = 0; off < len; off += chunk) {
        int rc = sse_feed(&p, bytes + off, len - off < chunk ? len - off : chunk);
        FZ_CHECK(rc >= 0);
        delivered += rc;
    }
    int rc = sse_finish(&p);
    FZ_CHECK(rc >= 0);
    delivered += rc;
    FZ_CHECK(delivered == t->n && p.events == t->n);
    *comments = p.comments;
    sse_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = data[0] ? data[0] : 1;
    const char *bytes = (const char *)data + 1;
    size_t len = size - 1;
    struct trace whole = {STRBUF_INIT, 0}, chunked = {STRBUF_INIT, 0}, bytewise = {STRBUF_INIT, 0};
    long c1, c2, c3;
    run(bytes, len, len ? len : 1, &whole, &c1);
    run(bytes, len, chunk, &chunked, &c2);
    run(bytes, len, 1, &bytewise, &c3);
    FZ_CHECK(whole.n == chunked.n && whole.n == bytewise.n);
    FZ_CHECK(whole.log.len == chunked.log.len && whole.log.len == bytewise.log.len);
    FZ_CHECK(memcmp(sb_str(&whole.log), sb_str(&chunked.log), whole.log.len) == 0);
    FZ_CHECK(memcmp(sb_str(&whole.log), sb_str(&bytewise.log), whole.log.len) == 0);
    FZ_CHECK(c1 == c2 && c1 == c3);
    sb_free(&whole.log), sb_free(&chunked.log), sb_free(&bytewise.log);
    return 0;
}
