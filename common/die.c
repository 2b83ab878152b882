/* die: the fatal path beneath everything, strbuf included: the program's name, die's line and
 * the x-allocators, which call die when an allocation fails; die itself allocates nothing. */
#include "common/die.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *progname = "kcorpus";

void kc_set_progname(const char *name) { progname = name; }
const char *kc_progname(void) { return progname; }

/* die's line is formatted into a fixed buffer on the stack: die is what a failed allocation
 * calls (sb_grow, xmalloc), so nothing on its way may allocate. A longer message is cut,
 * ending in "...". */
#define DIE_LINE_MAX 16384

void die(const char *fmt, ...)
{
    char line[DIE_LINE_MAX];
    size_t room = sizeof line - 1; /* the newline's place */
    int n = snprintf(line, room, "%s: error: ", progname);
    size_t used = n < 0 ? 0 : (size_t)n < room ? (size_t)n : room - 1;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + used, room - used, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    if ((size_t)m >= room - used) {
        used = room - 1;
        memcpy(line + used - 3, "...", 3);
    } else {
        used += (size_t)m;
    }
    line[used] = '\n';
    fwrite(line, 1, used + 1, stderr);
    exit(1);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory allocating %zu bytes", n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        die("out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        die("out of memory reallocating %zu bytes", n);
    return q;
}

char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        die("out of memory duplicating a string");
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = strndup(s, n);
    if (!p)
        die("out of memory duplicating a string");
    return p;
}
