/* die: the fatal path beneath everything, strbuf included (strbuf's out-of-memory path is
 * die). "<tool>: error: <message>" on stderr and exit 1, formatted without allocating; the
 * allocators that die when memory runs out. The recoverable error path is common/error.h. */
#ifndef KC_DIE_H
#define KC_DIE_H
#include <stddef.h>

void kc_set_progname(const char *name);
const char *kc_progname(void);
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif
