/* jsonw: streaming JSON writer with jansson-compatible output (see jsonw.h). */
#include "export/jsonw.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void jw_init(jsonw *w, strbuf *out)
{
    w->out = out;
    w->depth = 0;
    w->first[0] = 1;
    w->bad_utf8 = 0;
}

/* The comma before a value or key that is not the first of its container. */
static void separate(jsonw *w)
{
    if (!w->first[w->depth])
        sb_addch(w->out, ',');
    w->first[w->depth] = 0;
}

static void open_container(jsonw *w, char c)
{
    separate(w);
    sb_addch(w->out, c);
    if (w->depth + 1 < JSONW_MAX_DEPTH)
        w->depth++;
    w->first[w->depth] = 1;
}

static void close_container(jsonw *w, char c)
{
    sb_addch(w->out, c);
    if (w->depth > 0)
        w->depth--;
}

void jw_object(jsonw *w) { open_container(w, '{'); }
void jw_array(jsonw *w) { open_container(w, '['); }
void jw_end_object(jsonw *w) { close_container(w, '}'); }
void jw_end_array(jsonw *w) { close_container(w, ']'); }

void jw_key(jsonw *w, const char *key)
{
    separate(w);
    sb_addch(w->out, '"');
    sb_adds(w->out, key);
    sb_add(w->out, "\":", 2);
    w->first[w->depth] = 1; /* the value that follows takes no comma */
}

/* Length of the valid UTF-8 sequence at p (jansson's rules: no overlong forms, no surrogates,
 * nothing above U+10FFFF), or 0 when it is not one. */
static size_t utf8_sequence(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    size_t n;
    unsigned v;
    if (c < 0xC2 || c > 0xF4)
        return 0;
    if (c < 0xE0)
        n = 2, v = c & 0x1F;
    else if (c < 0xF0)
        n = 3, v = c & 0x0F;
    else
        n = 4, v = c & 0x07;
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || v > 0x10FFFF ||
        (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    return n;
}

/* 0: copy as is; 1: escape; 2: start of a multi-byte sequence (checked). */
static const unsigned char byte_class[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};

int jw_escape(strbuf *out, const char *s, size_t len)
{
    sb_grow(out, len + 2);
    sb_addch(out, '"');
    int rc = jw_escape_part(out, s, len);
    sb_addch(out, '"');
    return rc;
}

int jw_escape_part(strbuf *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len, *run = p;
    int rc = 0;
    sb_grow(out, len);
    while (p < end) {
        unsigned char k = byte_class[*p];
        if (!k) {
            p++;
            continue;
        }
        if (k == 2) {
            size_t n = utf8_sequence(p, end);
            if (n) {
                p += n;
                continue;
            }
            rc = -1; /* the caller reports it; the byte is written as U+FFFD meanwhile */
        }
        sb_add(out, run, (size_t)(p - run));
        char esc[8];
        const char *e = esc;
        switch (*p) {
        case '"': e = "\\\""; break;
        case '\\': e = "\\\\"; break;
        case '\b': e = "\\b"; break;
        case '\f': e = "\\f"; break;
        case '\n': e = "\\n"; break;
        case '\r': e = "\\r"; break;
        case '\t': e = "\\t"; break;
        default:
            if (k == 2)
                e = "\xEF\xBF\xBD";
            else
                snprintf(esc, sizeof esc, "\\u%04X", *p);
        }
        sb_adds(out, e);
        p++;
        run = p;
    }
    sb_add(out, run, (size_t)(p - run));
    return rc;
}

void jw_format_real(strbuf *out, double v)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%.12g", v);
    if (!strchr(buf, '.') && !strchr(buf, 'e')) {
        memcpy(buf + n, ".0", 3);
        n += 2;
    }
    char *e = strchr(buf, 'e');
    if (e) { /* "1e-07" -> "1e-7", "1e+20" -> "1e20", as jansson writes them */
        char *start = e + 1, *digits = e + 2;
        if (*start == '-')
            start++;
        while (*digits == '0')
            digits++;
        if (digits != start) {
            memmove(start, digits, (size_t)(buf + n + 1 - digits));
            n -= (int)(digits - start);
        }
    }
    sb_add(out, buf, (size_t)n);
}

void jw_string(jsonw *w, const char *s, size_t len)
{
    separate(w);
    if (jw_escape(w->out, s, len))
        w->bad_utf8 = 1;
}

void jw_cstring(jsonw *w, const char *s)
{
    if (s)
        jw_string(w, s, strlen(s));
    else
        jw_null(w);
}

void jw_int(jsonw *w, long long v)
{
    separate(w);
    char buf[24], *p = buf + sizeof buf;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *--p = '-';
    sb_add(w->out, p, (size_t)(buf + sizeof buf - p));
}

void jw_real(jsonw *w, double v)
{
    separate(w);
    if (isfinite(v))
        jw_format_real(w->out, v);
    else
        sb_add(w->out, "null", 4);
}

void jw_bool(jsonw *w, int v)
{
    separate(w);
    if (v)
        sb_add(w->out, "true", 4);
    else
        sb_add(w->out, "false", 5);
}

void jw_null(jsonw *w)
{
    separate(w);
    sb_add(w->out, "null", 4);
}

void jw_raw(jsonw *w, const char *json, size_t len)
{
    separate(w);
    sb_add(w->out, json, len);
}
