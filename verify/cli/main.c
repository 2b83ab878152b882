/* kverify: the verifier's command line. check and compile single candidates,
 * validate a suite (problems --check), compile its references into the cubin cache (warm), dump
 * inputs and reference outputs,
 * verify every pending candidate of a database (run), import candidates (files, or
 * third-party JSONL with claimed labels), verify stored candidates again (reverify), race-check
 * correct labels (racecheck). */
#include "common/cli.h"
#include "common/db.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/interrupt.h"
#include "common/problem.h"
#include "verify/service/verify.h"
#include "verify/cli/verify_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char commands[] =
    "check, compile, problems, warm, dump, import, run, reverify, racecheck, serve, gpus";
static const kc_command kverify_cmd = {"kverify", NULL, kverify_usage, 0};

int main(int argc, char **argv)
{
    kc_set_progname("kverify");
    kc_cli_usage_status(KC_EXIT_KVERIFY_USAGE); /* 2 is a verdict status here */
    if (argc >= 2 && strcmp(argv[1], "compile-server") == 0) /* internal: started by kverify */
        return compile_server_main(argc > 2 && strcmp(argv[2], "--no-sandbox") == 0);
    const char *cmd = kc_cli_subcommand(&kverify_cmd, commands, argc, argv);
    /* Ctrl-C: nothing new starts, the verifications in flight finish or stay pending, exit 130;
     * a second Ctrl-C quits at once (interrupt.h). */
    if (!strcmp(cmd, "run") || !strcmp(cmd, "reverify") || !strcmp(cmd, "serve") ||
        !strcmp(cmd, "racecheck"))
        kc_interrupt_install(argc, argv);
    if (strcmp(cmd, "check") == 0)
        return cli_check(argc - 1, argv + 1, 0);
    if (strcmp(cmd, "compile") == 0)
        return cli_check(argc - 1, argv + 1, 1);
    if (strcmp(cmd, "problems") == 0)
        return cli_problems(argc - 1, argv + 1);
    if (strcmp(cmd, "warm") == 0)
        return cli_warm(argc - 1, argv + 1);
    if (strcmp(cmd, "import") == 0)
        return cli_import(argc - 1, argv + 1);
    if (strcmp(cmd, "racecheck") == 0)
        return cli_racecheck(argc - 1, argv + 1);
    if (strcmp(cmd, "serve") == 0)
        return cli_serve(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0)
        return cli_run(argc - 1, argv + 1);
    if (strcmp(cmd, "reverify") == 0)
        return cli_reverify(argc - 1, argv + 1);
    if (strcmp(cmd, "gpus") == 0)
        return cli_gpus(argc - 1, argv + 1);
    if (strcmp(cmd, "dump") == 0)
        return cli_dump(argc - 1, argv + 1);
    kc_usage_error("unknown command '%s' (%s)", cmd, commands);
}
