/* sse: incremental server-sent-events parser (see sse.h). Follows the
 * event-stream rules: lines end in \n, \r\n or \r; "field: value" with one
 * optional space after the colon; data lines joined by '\n'; a blank line
 * dispatches; lines starting with ':' are comments. */
#include "collect/sse.h"

#include <string.h>

void sse_init(sse_parser *p, sse_event_fn fn, void *ctx)
{
    memset(p, 0, sizeof *p);
    p->fn = fn;
    p->ctx = ctx;
}

void sse_free(sse_parser *p)
{
    sb_free(&p->line);
    sb_free(&p->event);
    sb_free(&p->data);
}

/* Returns 1 when an event was delivered, 0 when there was none, -1 when stopped. */
static int dispatch(sse_parser *p)
{
    int rc = 0;
    if (p->has_data) {
        p->events++;
        /* No name, or one a NUL byte empties, is the default type (found by tests/fuzz). */
        const char *name = sb_str(&p->event);
        rc = p->fn(*name ? name : "message", sb_str(&p->data), p->ctx) < 0 ? -1 : 1;
    }
    sb_reset(&p->event);
    sb_reset(&p->data);
    p->has_data = 0;
    return rc;
}

static int handle_line(sse_parser *p, const char *line, size_t len)
{
    if (len == 0)
        return dispatch(p);
    if (line[0] == ':') {
        p->comments++;
        return 0;
    }
    const char *colon = memchr(line, ':', len);
    size_t name_len = colon ? (size_t)(colon - line) : len;
    const char *value = colon ? colon + 1 : line + len;
    size_t value_len = len - (size_t)(value - line);
    if (value_len && *value == ' ') {
        value++;
        value_len--;
    }
    if (name_len == 4 && memcmp(line, "data", 4) == 0) {
        if (p->has_data)
            sb_addch(&p->data, '\n');
        sb_add(&p->data, value, value_len);
        p->has_data = 1;
    } else if (name_len == 5 && memcmp(line, "event", 5) == 0) {
        sb_reset(&p->event);
        sb_add(&p->event, value, value_len);
    }
    /* id:, retry: and unknown fields are ignored. */
    return 0;
}

int sse_feed(sse_parser *p, const char *bytes, size_t len)
{
    int delivered = 0;
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        char c = bytes[i];
        if (c != '\n' && c != '\r') {
            p->last_cr = 0;
            continue;
        }
        sb_add(&p->line, bytes + start, i - start);
        start = i + 1;
        if (c == '\n' && p->last_cr) { /* the \n of a \r\n pair */
            p->last_cr = 0;
            continue;
        }
        p->last_cr = c == '\r';
        int rc = handle_line(p, sb_str(&p->line), p->line.len);
        sb_reset(&p->line);
        if (rc < 0)
            return -1;
        delivered += rc;
    }
    sb_add(&p->line, bytes + start, len - start);
    return delivered;
}

int sse_finish(sse_parser *p)
{
    int delivered = 0;
    if (p->line.len) {
        int rc = handle_line(p, p->line.buf, p->line.len);
        sb_reset(&p->line);
        if (rc < 0)
            return -1;
        delivered += rc;
    }
    int rc = dispatch(p);
    if (rc < 0)
        return -1;
    return delivered + rc;
}
