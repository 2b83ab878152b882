/* strbuf: the one growable string buffer used everywhere in kcorpus.
 * Always NUL-terminated; len excludes the terminator. */
#ifndef KC_STRBUF_H
#define KC_STRBUF_H
#include <stdarg.h>
#include <stddef.h>

typedef struct strbuf {
    char *buf;
    size_t len;
    size_t cap;
} strbuf;

#define STRBUF_INIT {0}

void sb_init(strbuf *sb);
void sb_free(strbuf *sb);
void sb_reset(strbuf *sb);
void sb_grow(strbuf *sb, size_t extra);
void sb_add(strbuf *sb, const void *data, size_t len);
void sb_adds(strbuf *sb, const char *s);
void sb_addch(strbuf *sb, char c);
void sb_addf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vaddf(strbuf *sb, const char *fmt, va_list ap);
/* Returns the string (never NULL); the buffer is left empty. Caller frees. */
char *sb_detach(strbuf *sb);
/* Never NULL: "" for an empty buffer. */
const char *sb_str(const strbuf *sb);
void sb_trim(strbuf *sb);
void sb_setlen(strbuf *sb, size_t len);

#endif
