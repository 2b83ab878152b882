/* strbuf: the one growable string buffer used everywhere in kcorpus.
 * Always NUL-terminated; len excludes the terminator. An empty strbuf made by STRBUF_INIT or
 * sb_init (and one after sb_free or sb_detach) points at a static empty string, as git's
 * strbuf_slopbuf: its buf is never NULL and it owns no memory until it grows (cap 0). A
 * zero-filled one (a member of a calloc'd or {0} struct) works with every function here too,
 * but its buf is NULL until it grows: read such a buffer through sb_str. */
#ifndef KC_STRBUF_H
#define KC_STRBUF_H
#include <stdarg.h>
#include <stddef.h>

typedef struct strbuf {
    char *buf;
    size_t len;
    size_t cap;
} strbuf;

/* The shared buffer of empty strbufs: one NUL byte, never written. */
extern char kc_strbuf_empty[1];
#define STRBUF_INIT {.buf = kc_strbuf_empty}

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
/* Never NULL: "" for an empty buffer, a zero-filled one included. */
const char *sb_str(const strbuf *sb);
void sb_trim(strbuf *sb);
void sb_setlen(strbuf *sb, size_t len);

#endif
