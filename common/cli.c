/* cli: --version, --help and usage errors in the one voice (see cli.h). */
#include "common/cli.h"
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kc_cli_standard(int argc, char **argv, const char *help)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) /* what follows is not an option */
            return;
        if (!strcmp(argv[i], "--version")) {
            printf("%s %s\n", kc_progname(), KC_VERSION);
            exit(KC_EXIT_OK);
        }
        if (help && (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))) {
            fputs(help, stdout);
            exit(KC_EXIT_OK);
        }
    }
}

static _Noreturn void usage_error(int status, const char *fmt, va_list ap)
{
    strbuf msg = STRBUF_INIT;
    sb_vaddf(&msg, fmt, ap);
    fprintf(stderr, "%s: error: %s; see '%s --help'\n", kc_progname(), msg.buf, kc_progname());
    sb_free(&msg);
    exit(status);
}

void kc_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    usage_error(KC_EXIT_USAGE, fmt, ap);
}

void kc_usage_error_status(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    usage_error(status, fmt, ap);
}
