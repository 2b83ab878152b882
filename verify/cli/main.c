/* kverify: the verifier's command line. check and compile single candidates,
 * validate a suite (problems --check), dump inputs and reference outputs,
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

static const char usage[] =
    "usage: kverify <command> [options]\n"
    "\n"
    "  check --problem ID FILE [--json] [--compile-only] [--no-timing] [--seeds S1,S2,..]\n"
    "        [--n-seeds N] [--timing-cap-ms MS] [--sanitizer none|memcheck|all]\n"
    "        [--hidden N] [--hidden-seed S]   dims sets drawn per verification (default 2) and\n"
    "        their seed (default: a fresh secret one, recorded in the evidence as hidden.seed)\n"
    "        [--timing-noise PCT]   extra checked timed reps until the median's relative standard\n"
    "        error is below PCT percent (default 0.5; 0.1 for tighter timings, at a GPU-time cost)\n"
    "        verify one candidate (an LLM answer or bare kc-cuda v1 code); exit status:\n"
    "        0 correct (or compiled with --compile-only), 1 mismatch/unsafe,\n"
    "        2 extract/policy/compile error, 3 launch/runtime error or timeout, 4 usage or system error\n"
    "  compile --problem ID FILE [--json]\n"
    "        extract, check policy and compile in the sandbox (no GPU needed)\n"
    "  problems [--suite S] [--check] [--json]\n"
    "        list a suite's problems; --check validates every manifest and compiles every reference\n"
    "  problems --show-reference ID\n"
    "        print a problem's reference as the verifier uses it (shared kernel files expanded)\n"
    "  dump --problem ID --seed S [--dims default|small|altN|hiddenK] --out DIR   (hiddenK: index K\n"
    "        of the generator drawn with seed S, constant inputs varied)\n"
    "        write inputs and reference outputs as .npy, with meta.json (needs a GPU)\n"
    "  import --db PATH --problem ID FILE...\n"
    "        add candidate files to a database as pending (origin 'import'); each must hold\n"
    "        one candidate (one ```cuda block, or a .cu file with // @launch lines; UTF-8), else\n"
    "        nothing is imported and no database is created or changed (exit 4)\n"
    "  import --db PATH --jsonl FILE [--source NAME]\n"
    "        add third-party kernels with their claimed labels (docs/THIRD_PARTY.md); a bad line\n"
    "        is reported with its number and skipped (exit 1), the others are imported; with no\n"
    "        good line no database is created or changed\n"
    "  run --db PATH [--compile-only] [--limit N] [--threads N] [--sanitizer none|memcheck|all]\n"
    "        [--hidden N] [--hidden-seed S] [--shard I/N] [--timing-noise PCT]\n"
    "        verify every pending candidate of a database and record the results\n"
    "  reverify --db PATH [--problems SEL] [--verdict LIST] [--compile-only] [--limit N]\n"
    "        [--shard I/N]\n"
    "        verify stored candidates again (new verification rows, old ones kept); the same\n"
    "        command resumes an unfinished pass; flips: kcurate flips --db PATH\n"
    "  racecheck --db PATH [--gpus N] [--limit N] [--json]\n"
    "        compute-sanitizer racecheck of every correct label that uses shared memory or\n"
    "        cross-block communication and has no race check yet; a hazard records a new\n"
    "        verification, unsafe (kverify racecheck --help; kexport requires it)\n"
    "  serve --port P [--host 127.0.0.1] [--compile-only] [--gpus LIST] [--db FILE] [--queue N]\n"
    "        the verifier as an HTTP JSON reward service: GET /health, POST /v1/verify\n"
    "        (kverify serve --help lists every option; README: \"Reward service\")\n"
    "  --shard I/N (run, reverify): only shard I (from 0) of N, split by trajectory as\n"
    "        kcollect --shard; N processes (one per GPU) share the database and must agree on N\n"
    "  gpus [--count]\n"
    "        list the visible GPUs\n"
    "\n"
    "run, reverify and racecheck on Ctrl-C (or SIGTERM): nothing new starts, the work in flight\n"
    "finishes or stays pending (never labelled), the summary and the command that resumes are\n"
    "printed, exit 130; a second Ctrl-C quits at once (exit 130).\n"
    "\n"
    "Problems are read from $KC_PROBLEMS, else <bin>/../problems, else ./problems.\n";

static int cmd_gpus(int argc, char **argv)
{
    if (cli_gpu_driver_check())
        return CLI_EXIT_NO_GPU;
    strbuf exe = STRBUF_INIT;
    kverify_gpu_exe_path(&exe);
    char **args = xcalloc((size_t)argc + 2, sizeof(char *));
    args[0] = exe.buf;
    for (int i = 0; i < argc; i++)
        args[i + 1] = argv[i];
    execv(exe.buf, args);
    die("cannot run %s: %m", exe.buf);
}

int main(int argc, char **argv)
{
    kc_set_progname("kverify");
    kc_cli_usage_status(KC_EXIT_KVERIFY_USAGE); /* 2 is a verdict status here */
    if (argc < 2)
        kc_usage_error_status(KC_EXIT_KVERIFY_USAGE, "no command (check, compile, problems, dump, "
                              "import, run, reverify, racecheck, gpus)");
    if (strcmp(argv[1], "racecheck") == 0) { /* its own --help */
        kc_interrupt_install(argc, argv);
        return cli_racecheck(argc - 1, argv + 1);
    }
    if (strcmp(argv[1], "compile-server") != 0) /* --help/--version on every subcommand */
        kc_cli_standard(argc, argv, usage);
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0) {
        printf("kverify %s\n", KC_VERSION);
        return 0;
    }
    if (strcmp(cmd, "compile-server") == 0)
        return compile_server_main(argc > 2 && strcmp(argv[2], "--no-sandbox") == 0);
    if (strcmp(cmd, "check") == 0)
        return cli_check(argc - 1, argv + 1, 0);
    if (strcmp(cmd, "compile") == 0)
        return cli_check(argc - 1, argv + 1, 1);
    if (strcmp(cmd, "problems") == 0)
        return cli_problems(argc - 1, argv + 1);
    if (strcmp(cmd, "import") == 0)
        return cli_import(argc - 1, argv + 1);
    /* Ctrl-C: nothing new starts, the verifications in flight finish or stay pending, exit 130;
     * a second Ctrl-C quits at once (interrupt.h). */
    if (strcmp(cmd, "run") == 0 || strcmp(cmd, "reverify") == 0 || strcmp(cmd, "serve") == 0)
        kc_interrupt_install(argc, argv);
    if (strcmp(cmd, "serve") == 0)
        return cli_serve(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0)
        return cli_run(argc - 1, argv + 1);
    if (strcmp(cmd, "reverify") == 0)
        return cli_reverify(argc - 1, argv + 1);
    if (strcmp(cmd, "gpus") == 0 || strcmp(cmd, "dump") == 0)
        return cmd_gpus(argc - 1, argv + 1);
    kc_usage_error_status(KC_EXIT_KVERIFY_USAGE, "unknown command '%s'", cmd);
}
