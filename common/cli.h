/* cli: what every tool's command line shares: the exit-status table, --version and --help
 * (exit 0, on stdout), and usage errors in the one voice ("tool: error: what; see 'tool
 * --help'", exit 2: one line, never the whole usage). */
#ifndef KC_CLI_H
#define KC_CLI_H

/* Exit statuses, the same in every tool (README "Exit status"). kverify check/compile keep their
 * verdict statuses (0 correct or compiled, 1 mismatch/unsafe, 2 extract/policy/compile error,
 * 3 launch/runtime error or timeout) and report usage and system errors as 4. */
enum {
    KC_EXIT_OK = 0,
    KC_EXIT_FAILURE = 1,  /* the work failed or was refused: unreachable endpoint, bad database,
                             nothing exported, unfinished run */
    KC_EXIT_USAGE = 2,    /* a bad command line: unknown option, missing value or argument */
    KC_EXIT_KVERIFY_USAGE = 4,
    KC_EXIT_SIGINT = 130  /* interrupted by Ctrl-C or SIGTERM (common/interrupt.h) */
};

/* Handles --version and -h/--help anywhere in argv[1..argc): prints the version ("tool
 * VERSION") or help to stdout and exits 0. help NULL: only --version is handled. */
void kc_cli_standard(int argc, char **argv, const char *help);
/* The exit status of a usage error in this tool (default KC_EXIT_USAGE; kverify: 4). */
void kc_cli_usage_status(int status);
/* getopt_long that reports an unknown option ("unknown option '--x'") or a missing value ("--x
 * needs a value") as a usage error itself instead of returning '?'. */
struct option;
int kc_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts);
/* A usage error: "tool: error: <message>; see 'tool --help'" on stderr, exit KC_EXIT_USAGE. */
_Noreturn void kc_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same with another exit status (kverify: KC_EXIT_KVERIFY_USAGE). */
_Noreturn void kc_usage_error_status(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
