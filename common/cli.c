/* cli: option tables, --version and --help, and usage errors in the one voice (see cli.h). */
#include "common/cli.h"
#include "common/error.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage_status = KC_EXIT_USAGE;
static const kc_command *current; /* the command usage errors name */

void kc_cli_usage_status(int status) { usage_status = status; }
void kc_cli_set_command(const kc_command *cmd) { current = cmd; }

/* "kverify check" (or the tool alone) into out. */
static void command_words(strbuf *out)
{
    if (current && current->name)
        sb_addf(out, "%s %s", current->tool, current->name);
    else
        sb_adds(out, current ? current->tool : kc_progname());
}

void kc_usage_error(const char *fmt, ...)
{
    strbuf who = STRBUF_INIT, msg = STRBUF_INIT;
    command_words(&who);
    va_list ap;
    va_start(ap, fmt);
    sb_vaddf(&msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: error: %s; see '%s --help'\n", who.buf, msg.buf, who.buf);
    sb_free(&who), sb_free(&msg);
    exit(usage_status);
}

/* ---- numbers ---- */

int kc_parse_int(const char *what, const char *text, long long lo, long long hi, long long *out,
                 strbuf *err)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        return kc_fail(err, "%s takes a whole number from %lld to %lld, not '%s'", what, lo, hi,
                       text);
    *out = v;
    return 0;
}

int kc_parse_number(const char *what, const char *text, double lo, double hi, double *out,
                    strbuf *err)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    /* strtod reads "nan", "inf" and hex floats: none is a number a user means here */
    int odd = strpbrk(text, "nNiIxX") != NULL;
    if (errno || end == text || *end || odd || !isfinite(v) || v < lo || v > hi)
        return kc_fail(err, "%s takes a number from %g to %g, not '%s'", what, lo, hi, text);
    *out = v;
    return 0;
}

/* ---- option tables ---- */

const char *kc_option_name(const kc_option *opt, char *buf, size_t size)
{
    if (opt->name)
        snprintf(buf, size, "--%s", opt->name);
    else
        snprintf(buf, size, "-%c", opt->short_name);
    return buf;
}

int kc_option_fail(const kc_option *opt, strbuf *err, const char *fmt, ...)
{
    char name[64];
    strbuf msg = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    sb_vaddf(&msg, fmt, ap);
    va_end(ap);
    kc_fail(err, "%s %s", kc_option_name(opt, name, sizeof name), msg.buf);
    sb_free(&msg);
    return -1;
}

static int takes_value(const kc_option *o)
{
    return o->type != KC_OPT_TRUE && o->type != KC_OPT_FALSE && o->type != KC_OPT_CALL_FLAG;
}

static const kc_option *find_long(const kc_option *opts, const char *name, size_t len)
{
    for (const kc_option *o = opts; o->type != KC_OPT_END; o++)
        if (o->name && strlen(o->name) == len && !strncmp(o->name, name, len))
            return o;
    return NULL;
}

static const kc_option *find_short(const kc_option *opts, int c)
{
    for (const kc_option *o = opts; o->type != KC_OPT_END; o++)
        if (o->short_name && o->short_name == c)
            return o;
    return NULL;
}

/* Whether arg is one of the command's own options (or --help/--version): then it is not the
 * value of the option before it, which was given none. */
static int is_own_option(const kc_option *opts, const char *arg)
{
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h") || !strcmp(arg, "--version"))
        return 1;
    if (!strncmp(arg, "--", 2) && arg[2])
        return find_long(opts, arg + 2, strcspn(arg + 2, "=")) != NULL;
    return arg[0] == '-' && arg[1] && find_short(opts, (unsigned char)arg[1]) != NULL;
}

/* Stores value into o's destination; -1 with the message in err. */
static int apply(const kc_option *o, const char *value, strbuf *err)
{
    char name[64];
    kc_option_name(o, name, sizeof name);
    long long n;
    /* a range edge past what a long long holds (INT64_MAX as a double is 2^63) is the edge */
    long long lo = o->min <= -0x1p63 ? LLONG_MIN : (long long)o->min;
    long long hi = o->max >= 0x1p63 ? LLONG_MAX : (long long)o->max;
    double d;
    switch (o->type) {
    case KC_OPT_TRUE: *(int *)o->dest = 1; return 0;
    case KC_OPT_FALSE: *(int *)o->dest = 0; return 0;
    case KC_OPT_STRING: *(const char **)o->dest = value; return 0;
    case KC_OPT_INT:
        if (kc_parse_int(name, value, lo, hi, &n, err))
            return -1;
        *(int *)o->dest = (int)n;
        return 0;
    case KC_OPT_INT64:
        if (kc_parse_int(name, value, lo, hi, &n, err))
            return -1;
        *(int64_t *)o->dest = n;
        return 0;
    case KC_OPT_NUMBER:
        if (kc_parse_number(name, value, o->min, o->max, &d, err))
            return -1;
        *(double *)o->dest = d;
        return 0;
    case KC_OPT_CALL:
    case KC_OPT_CALL_FLAG: return o->fn(o, value, err);
    case KC_OPT_END: break;
    }
    return kc_fail(err, "%s: no action", name);
}

/* --help/-h or --version anywhere before "--": the usage or the version, exit 0. */
static void standard_options(const kc_command *cmd, int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--version")) {
            printf("%s %s\n", cmd->tool, KC_VERSION);
            exit(KC_EXIT_OK);
        }
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(cmd->usage, stdout);
            exit(KC_EXIT_OK);
        }
    }
}

/* The option in argv[*i] (starting with '-'): its value taken (from "=", the same word or the
 * next one, advancing *i) and applied. Usage errors exit. */
static void parse_one(const kc_option *opts, int argc, char **argv, int *i)
{
    const char *arg = argv[*i], *value = NULL;
    const kc_option *o;
    char name[64];
    int attached = 0;
    if (arg[1] == '-') {
        size_t len = strcspn(arg + 2, "=");
        if (!(o = find_long(opts, arg + 2, len)))
            kc_usage_error("unknown option '--%.*s'", (int)len, arg + 2);
        if (arg[2 + len] == '=')
            value = arg + 3 + len, attached = 1;
    } else {
        if (!(o = find_short(opts, (unsigned char)arg[1])))
            kc_usage_error("unknown option '-%c'", arg[1]);
        if (arg[2])
            value = arg + 2, attached = 1;
    }
    kc_option_name(o, name, sizeof name);
    if (!takes_value(o) && attached)
        kc_usage_error("%s takes no value (not '%s')", name, arg);
    if (takes_value(o) && !attached) {
        if (*i + 1 >= argc || !strcmp(argv[*i + 1], "--"))
            kc_usage_error("%s needs a value", name);
        if (is_own_option(opts, argv[*i + 1]))
            kc_usage_error("%s needs a value, not the option '%s'", name, argv[*i + 1]);
        value = argv[++*i];
    }
    strbuf err = STRBUF_INIT;
    if (apply(o, value, &err)) {
        /* a usage error exits: the message is copied to the stack first */
        char line[1024];
        snprintf(line, sizeof line, "%s", err.buf);
        sb_free(&err);
        kc_usage_error("%s", line);
    }
    sb_free(&err);
}

int kc_parse_options(const kc_command *cmd, const kc_option *opts, int argc, char **argv)
{
    kc_cli_set_command(cmd);
    standard_options(cmd, argc, argv);
    /* operands move down in place: argv[1 + n] is a word already read (1 + n <= i) */
    int n = 0, i;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (argv[i][0] == '-' && argv[i][1])
            parse_one(opts, argc, argv, &i);
        else
            argv[1 + n++] = argv[i];
    }
    for (; i < argc; i++)
        argv[1 + n++] = argv[i];
    if (cmd->max_operands != KC_ANY_OPERANDS && n > cmd->max_operands)
        kc_usage_error("unexpected argument '%s'", argv[1 + cmd->max_operands]);
    return n;
}

/* ---- tools with subcommands ---- */

const char *kc_cli_subcommand(const kc_command *top, const char *commands, int argc, char **argv)
{
    kc_cli_set_command(top);
    if (argc < 2)
        kc_usage_error("no command (%s)", commands);
    if (!strcmp(argv[1], "--version")) {
        printf("%s %s\n", top->tool, KC_VERSION);
        exit(KC_EXIT_OK);
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(top->usage, stdout);
        exit(KC_EXIT_OK);
    }
    if (argv[1][0] == '-')
        kc_usage_error("unknown option '%s' (options come after the command: %s)", argv[1],
                       commands);
    return argv[1];
}
