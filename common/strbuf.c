/* strbuf: growable NUL-terminated string buffer (see strbuf.h). */
#include "common/strbuf.h"
#include "common/die.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char kc_strbuf_empty[1];

void sb_init(strbuf *sb) { *sb = (strbuf)STRBUF_INIT; }

/* cap 0: buf is kc_strbuf_empty (or NULL in a zero-filled strbuf), owned by no one. */
void sb_free(strbuf *sb)
{
    if (sb->cap)
        free(sb->buf);
    sb_init(sb);
}

void sb_reset(strbuf *sb)
{
    sb->len = 0;
    if (sb->cap)
        sb->buf[0] = '\0';
}

void sb_grow(strbuf *sb, size_t extra)
{
    size_t need = sb->len + extra + 1;
    if (need <= sb->cap)
        return;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < need)
        cap = cap * 2;
    char *p = realloc(sb->cap ? sb->buf : NULL, cap);
    if (!p)
        die("out of memory growing a buffer to %zu bytes", cap);
    if (!sb->cap)
        p[0] = '\0'; /* was empty (len 0) */
    sb->buf = p;
    sb->cap = cap;
}

void sb_add(strbuf *sb, const void *data, size_t len)
{
    sb_grow(sb, len);
    if (len)
        memcpy(sb->buf + sb->len, data, len);
    sb->len += len;
    sb->buf[sb->len] = '\0';
}

void sb_adds(strbuf *sb, const char *s) { sb_add(sb, s, strlen(s)); }

void sb_addch(strbuf *sb, char c) { sb_add(sb, &c, 1); }

void sb_vaddf(strbuf *sb, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0)
        die("bad format string '%s'", fmt);
    sb_grow(sb, (size_t)n);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void sb_addf(strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vaddf(sb, fmt, ap);
    va_end(ap);
}

char *sb_detach(strbuf *sb)
{
    if (!sb->cap)
        sb_grow(sb, 0);
    char *s = sb->buf;
    sb_init(sb);
    return s;
}

const char *sb_str(const strbuf *sb) { return sb->buf ? sb->buf : ""; }

void sb_setlen(strbuf *sb, size_t len)
{
    if (len > sb->len)
        die("sb_setlen beyond length");
    sb->len = len;
    if (sb->cap)
        sb->buf[len] = '\0';
}

void sb_trim(strbuf *sb)
{
    if (!sb->cap)
        return;
    size_t start = 0;
    while (start < sb->len && isspace((unsigned char)sb->buf[start]))
        start++;
    size_t end = sb->len;
    while (end > start && isspace((unsigned char)sb->buf[end - 1]))
        end--;
    memmove(sb->buf, sb->buf + start, end - start);
    sb->len = end - start;
    sb->buf[sb->len] = '\0';
}
