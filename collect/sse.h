/* sse: an incremental parser for server-sent events (text/event-stream), as
 * streamed by OpenAI-compatible and Anthropic servers. Bytes arrive in any
 * split; each complete event (blank-line terminated) is handed to a callback.
 * Comment lines (": keep-alive") are counted apart: they are not progress. */
#ifndef KC_SSE_H
#define KC_SSE_H
#include "common/strbuf.h"
#include <stddef.h>

/* Called per event; return -1 to stop parsing (sse_feed then returns -1). */
typedef int (*sse_event_fn)(const char *event, const char *data, void *ctx);

typedef struct sse_parser {
    strbuf line;    /* the incomplete line carried between feeds */
    strbuf event;   /* "event:" of the event being assembled */
    strbuf data;    /* "data:" lines joined by '\n' */
    int has_data;
    int last_cr;    /* the previous byte was \r: a following \n belongs to it */
    long comments;  /* keep-alive comment lines seen */
    long events;    /* events delivered */
    sse_event_fn fn;
    void *ctx;
} sse_parser;

void sse_init(sse_parser *p, sse_event_fn fn, void *ctx);
void sse_free(sse_parser *p);
/* Feeds bytes; returns the number of events delivered by this feed, or -1
 * when the callback stopped the parse. */
int sse_feed(sse_parser *p, const char *bytes, size_t len);
/* Delivers a final event not followed by a blank line (stream ended). */
int sse_finish(sse_parser *p);

#endif
