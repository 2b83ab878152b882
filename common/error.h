/* error: the one error path. Library functions that can fail return -1 and
 * describe the failure in a caller-supplied strbuf (kc_fail); tools report
 * with error()/die() in one voice: "<tool>: error: <message>". */
#ifndef KC_ERROR_H
#define KC_ERROR_H
#include "common/strbuf.h"

void kc_set_progname(const char *name);
const char *kc_progname(void);
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Replaces err's content with the message and returns -1 (err may be NULL). */
int kc_fail(strbuf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif
