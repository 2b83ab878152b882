/* error: error/warning reporting and the kc_fail error-message convention, on a strbuf; die
 * and the allocators are beneath strbuf, in die.c. */
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>

static void report(const char *prefix, const char *fmt, va_list ap)
{
    strbuf sb = STRBUF_INIT;
    sb_addf(&sb, "%s: %s", kc_progname(), prefix);
    sb_vaddf(&sb, fmt, ap);
    sb_addch(&sb, '\n');
    fputs(sb.buf, stderr);
    sb_free(&sb);
}

int error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("error: ", fmt, ap);
    va_end(ap);
    return -1;
}

void warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("warning: ", fmt, ap);
    va_end(ap);
}

int kc_fail(strbuf *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    sb_reset(err);
    sb_vaddf(err, fmt, ap);
    va_end(ap);
    return -1;
}
