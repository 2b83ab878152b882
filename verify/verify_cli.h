/* verify_cli: the kverify subcommands (cli_*.c), each taking argv from the
 * subcommand name on and returning the process exit status. */
#ifndef KC_VERIFY_CLI_H
#define KC_VERIFY_CLI_H
#include "verify/verify.h"

int cli_check(int argc, char **argv, int compile_only_command);
int cli_problems(int argc, char **argv);
int cli_import(int argc, char **argv);
int cli_run(int argc, char **argv);
/* Parses "1,2,3" into o->seeds; returns -1 on a malformed list. */
int cli_parse_seeds(const char *list, kv_options *o);
/* Prints a human-readable report of a result. */
void cli_print_report(const problem *p, const kv_result *r);

#endif
