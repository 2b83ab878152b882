/* cli: --version, --help and usage errors in the one voice (see cli.h). */
#include "common/cli.h"
#include "common/error.h"

#include <getopt.h>
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

static int usage_status = KC_EXIT_USAGE;

void kc_cli_usage_status(int status) { usage_status = status; }

int kc_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
    char spec[64];
    snprintf(spec, sizeof spec, ":%s", shortopts); /* ':' first: a missing value is ':' */
    opterr = 0;
    int c = getopt_long(argc, argv, spec, longopts, NULL);
    const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    if (c == ':')
        kc_usage_error("%s needs a value", arg);
    if (c == '?') {
        if (optopt && strncmp(arg, "--", 2) != 0)
            kc_usage_error("unknown option '-%c'", optopt);
        kc_usage_error("unknown option '%.*s'", (int)strcspn(arg, "="), arg);
    }
    return c;
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
    usage_error(usage_status, fmt, ap);
}

void kc_usage_error_status(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    usage_error(status, fmt, ap);
}
