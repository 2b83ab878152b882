/* cli: what every tool's command line shares, in one mechanism (git's parse-options and curl's
 * tool_getparam are the models): the exit-status table; an option table per command that
 * kc_parse_options reads (--opt value, --opt=value, -o value, -ovalue; a missing value, an
 * unknown option and a bad number are usage errors naming the option); --version and --help
 * (the command's own usage, exit 0, on stdout); and usage errors in the one voice ("tool cmd:
 * error: what; see 'tool cmd --help'", the tool's usage status: one line, never the whole
 * usage). */
#ifndef KC_CLI_H
#define KC_CLI_H
#include "common/strbuf.h"

#include <stdint.h>

/* Exit statuses, the same in every tool (docs/USAGE.md, "Exit status"). kverify check/compile
 * keep their verdict statuses (0 correct or compiled, 1 mismatch/unsafe, 2 extract/policy/compile
 * error, 3 launch/runtime error or timeout) and report usage and system errors as 4. */
enum {
    KC_EXIT_OK = 0,
    KC_EXIT_FAILURE = 1,  /* the work failed or was refused: unreachable endpoint, bad database,
                             nothing exported, unfinished run */
    KC_EXIT_USAGE = 2,    /* a bad command line: unknown option, missing or bad value, argument */
    KC_EXIT_KVERIFY_NO_GPU = 3, /* kverify gpus and racecheck (and kverify-gpu gpus, which
                                   kverify gpus runs) without a usable GPU */
    KC_EXIT_KVERIFY_USAGE = 4,  /* kverify's usage and system errors (kverify-gpu's too) */
    KC_EXIT_SIGINT = 130  /* interrupted by Ctrl-C or SIGTERM (common/interrupt.h) */
};

/* ---- commands and their options ---- */

/* A command: the tool ("kverify"), the subcommand ("check"; NULL for a tool without
 * subcommands), its whole --help text, and how many operands (non-option arguments) it takes
 * (0: none; KC_ANY_OPERANDS: any number). */
typedef struct kc_command {
    const char *tool, *name, *usage;
    int max_operands;
} kc_command;
#define KC_ANY_OPERANDS (-1)

typedef struct kc_option kc_option;
/* A callback option's action: value is the option's value (NULL for a KC_OPT_CALL_FLAG). Returns
 * 0, or -1 with a message in err that names the option (kc_option_fail does): a usage error. */
typedef int (*kc_option_fn)(const kc_option *opt, const char *value, strbuf *err);

enum kc_option_type {
    KC_OPT_END,       /* ends a table */
    KC_OPT_TRUE,      /* no value: *(int *)dest = 1 */
    KC_OPT_FALSE,     /* no value: *(int *)dest = 0 */
    KC_OPT_STRING,    /* *(const char **)dest = the value (pointing into argv) */
    KC_OPT_INT,       /* *(int *)dest = a whole number in [min, max] */
    KC_OPT_INT64,     /* *(int64_t *)dest = a whole number in [min, max] */
    KC_OPT_NUMBER,    /* *(double *)dest = a finite number in [min, max] */
    KC_OPT_CALL,      /* fn(opt, value, err) with a value */
    KC_OPT_CALL_FLAG  /* fn(opt, NULL, err): no value */
};

struct kc_option {
    enum kc_option_type type;
    const char *name;  /* the long name without "--" ("db") */
    int short_name;    /* 'o' for -o, or 0 */
    void *dest;        /* where the value goes; a callback's context */
    double min, max;   /* KC_OPT_INT, KC_OPT_INT64, KC_OPT_NUMBER: the range */
    kc_option_fn fn;   /* KC_OPT_CALL, KC_OPT_CALL_FLAG */
    const char *data;  /* what the option means to its callback (a setting's name) */
};

#define KC_OPT_FLAG(n, s, d) {KC_OPT_TRUE, (n), (s), (d), 0, 0, NULL, NULL}
#define KC_OPT_UNSET(n, s, d) {KC_OPT_FALSE, (n), (s), (d), 0, 0, NULL, NULL}
#define KC_OPT_STR(n, s, d) {KC_OPT_STRING, (n), (s), (d), 0, 0, NULL, NULL}
#define KC_OPT_INTEGER(n, s, d, lo, hi) {KC_OPT_INT, (n), (s), (d), (lo), (hi), NULL, NULL}
#define KC_OPT_INTEGER64(n, s, d, lo, hi) {KC_OPT_INT64, (n), (s), (d), (lo), (hi), NULL, NULL}
#define KC_OPT_NUM(n, s, d, lo, hi) {KC_OPT_NUMBER, (n), (s), (d), (lo), (hi), NULL, NULL}
#define KC_OPT_FN(n, s, f, d, data) {KC_OPT_CALL, (n), (s), (d), 0, 0, (f), (data)}
#define KC_OPT_FN_FLAG(n, s, f, d, data) {KC_OPT_CALL_FLAG, (n), (s), (d), 0, 0, (f), (data)}
#define KC_OPT_END_OF_TABLE {KC_OPT_END, NULL, 0, NULL, 0, 0, NULL, NULL}

/* Parses argv[1..argc) (argv[0] is the command's name) by the table opts, in order:
 * - "-h"/"--help" anywhere before "--" prints cmd->usage on stdout and exits 0; "--version"
 *   prints "tool VERSION" and exits 0;
 * - "--name value", "--name=value", "-x value" and "-xvalue" give a value; a flag given a value
 *   ("--json=1"), a value option at the end of argv or followed by one of the command's own
 *   options ("--samples --compile-only"), an unknown option, a number that does not parse or
 *   is out of range, and a callback's -1 are usage errors naming the option;
 * - "--" ends the options: what follows is operands; "-" and words not starting with '-' are
 *   operands; more operands than cmd->max_operands is a usage error ("unexpected argument").
 * Operands are moved to argv[1..n] in their order; returns n. Sets cmd as the command that
 * later usage errors (kc_usage_error) name. */
int kc_parse_options(const kc_command *cmd, const kc_option *opts, int argc, char **argv);

/* "--name" (or "-x" for an option with no long name) of an option, for messages. */
const char *kc_option_name(const kc_option *opt, char *buf, size_t size);
/* A callback's error: "--name MESSAGE" in err; returns -1. */
int kc_option_fail(const kc_option *opt, strbuf *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Numbers, as every option and setting reads them. "WHAT takes a whole number from LO to HI,
 * not 'TEXT'" (kc_parse_int) or "WHAT takes a number from LO to HI, not 'TEXT'" (kc_parse_number:
 * finite, decimal or with an exponent) in err on failure: 0 or -1. */
int kc_parse_int(const char *what, const char *text, long long lo, long long hi, long long *out,
                 strbuf *err);
int kc_parse_number(const char *what, const char *text, double lo, double hi, double *out,
                    strbuf *err);

/* ---- tools with subcommands ---- */

/* The top level of a tool with subcommands (kverify, kcurate; top: the tool's command, name
 * NULL): "--version" or "-h"/"--help" as argv[1] print the version or top's usage and exit 0;
 * no argument ("no command (COMMANDS)"), or an option where the command belongs, is a usage
 * error. Returns argv[1], the command's name (an unknown one is the caller's to refuse). */
const char *kc_cli_subcommand(const kc_command *top, const char *commands, int argc, char **argv);

/* ---- usage errors ---- */

/* The exit status of a usage error in this tool (default KC_EXIT_USAGE; kverify: 4). */
void kc_cli_usage_status(int status);
/* The command that usage errors name (kc_parse_options sets it; NULL: the tool alone). */
void kc_cli_set_command(const kc_command *cmd);
/* A usage error: "tool cmd: error: <message>; see 'tool cmd --help'" on stderr, one line, exit
 * with the tool's usage status. */
_Noreturn void kc_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
