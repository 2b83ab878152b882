/* normalize: tokenizes CUDA C++ source into the dedup normal form (see normalize.h). */
#include "curate/normalize.h"

#include <ctype.h>
#include <string.h>

static int is_ident_start(int c) { return isalpha(c) || c == '_'; }
static int is_ident_char(int c) { return isalnum(c) || c == '_'; }

/* Length of a numeric literal starting at p (digits, '.', suffixes, exponent signs). */
static size_t number_length(const char *p, const char *end)
{
    const char *q = p;
    while (q < end) {
        if (is_ident_char((unsigned char)*q) || *q == '.')
            q++;
        else if ((*q == '+' || *q == '-') && q > p && (q[-1] == 'e' || q[-1] == 'E' ||
                                                       q[-1] == 'p' || q[-1] == 'P'))
            q++;
        else
            break;
    }
    return (size_t)(q - p);
}

/* Length of a string or character literal starting at its quote. */
static size_t quoted_length(const char *p, const char *end)
{
    const char *q = p + 1;
    while (q < end && *q != *p && *q != '\n')
        q += (*q == '\\' && q + 1 < end) ? 2 : 1;
    return (size_t)((q < end && *q == *p ? q + 1 : q) - p);
}

/* Two-character operators kept as one token. */
static int is_pair_operator(const char *p, const char *end)
{
    static const char *const pairs[] = {"<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++",
                                        "--", "+=", "-=", "*=", "/=", "->", "::", "%=", "&=",
                                        "|=", "^="};
    if (p + 1 >= end)
        return 0;
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
        if (p[0] == pairs[i][0] && p[1] == pairs[i][1])
            return 1;
    return 0;
}

/* Appends a token (after a space). curate_normalize reserves room for every token plus its
 * space up front (at most twice the input), so this never grows the buffer. */
static void emit(strbuf *out, const char *tok, size_t n)
{
    char *d = out->buf + out->len;
    if (out->len)
        *d++ = ' ';
    memcpy(d, tok, n);
    d[n] = '\0';
    out->len = (size_t)(d + n - out->buf);
}

/* Whether q[0..end) starts with the word w (a blank or the line's end after it). */
static int starts_word(const char *q, const char *end, const char *w)
{
    size_t n = strlen(w);
    return (size_t)(end - q) >= n && !memcmp(q, w, n) &&
           (q + n == end || q[n] == ' ' || q[n] == '\t' || q[n] == '\r' || q[n] == '\n');
}

/* A "// @launch", "// @scratch", "// @for" or "// @end" line: the directive is kept, its body
 * tokenized. */
static int is_directive_comment(const char *p, const char *end)
{
    const char *q = p + 2;
    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    return (end - q >= 7 && !memcmp(q, "@launch", 7)) || (end - q >= 8 && !memcmp(q, "@scratch", 8)) ||
           starts_word(q, end, "@for") || starts_word(q, end, "@end");
}

void curate_normalize(const char *src, size_t len, strbuf *out)
{
    const char *p = src, *end = src + len;
    sb_reset(out);
    sb_grow(out, 2 * len + 1);
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (isspace(c)) {
            p++;
        } else if (c == '/' && p + 1 < end && p[1] == '/') {
            if (is_directive_comment(p, end)) {
                emit(out, "//", 2);
                p += 2;
                continue;
            }
            while (p < end && *p != '\n')
                p++;
        } else if (c == '/' && p + 1 < end && p[1] == '*') {
            const char *close = p + 2;
            while (close + 1 < end && !(close[0] == '*' && close[1] == '/'))
                close++;
            p = close + 1 < end ? close + 2 : end;
        } else if (is_ident_start(c) || c == '@' || c == '#') {
            size_t n = 1;
            while (p + n < end && is_ident_char((unsigned char)p[n]))
                n++;
            emit(out, p, n);
            p += n;
        } else if (isdigit(c) || (c == '.' && p + 1 < end && isdigit((unsigned char)p[1]))) {
            size_t n = number_length(p, end);
            emit(out, p, n);
            p += n;
        } else if (c == '"' || c == '\'') {
            size_t n = quoted_length(p, end);
            emit(out, p, n);
            p += n;
        } else {
            size_t n = is_pair_operator(p, end) ? 2 : 1;
            emit(out, p, n);
            p += n;
        }
    }
}
