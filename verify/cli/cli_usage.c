/* cli_usage: kverify's help texts, one block per command: `kverify CMD --help` prints its
 * command's block after "usage: kverify ", and `kverify --help` prints them all, so the two
 * never say different things (racecheck and serve keep their longer texts in their files). */
#include "verify/cli/verify_cli.h"

#define CHECK_BLOCK \
    "check --problem ID FILE [--json] [--compile-only] [--no-timing] [--seeds S1,S2,..]\n" \
    "        [--n-seeds N] [--timing-cap-ms MS] [--sanitizer none|memcheck|all]\n" \
    "        [--hidden N] [--hidden-seed S]   dims sets drawn per verification (default 2) and\n" \
    "        their seed (default: a fresh secret one, recorded in the evidence as hidden.seed)\n" \
    "        [--timing-noise PCT]   extra checked timed reps until the median's relative standard\n" \
    "        error is below PCT percent (default 0.5; 0.1 for tighter timings, at a GPU-time cost)\n" \
    "        verify one candidate (an LLM answer or bare kc-cuda v1 code); exit status:\n" \
    "        0 correct (or compiled with --compile-only), 1 mismatch/unsafe,\n" \
    "        2 extract/policy/compile error, 3 launch/runtime error or timeout, 4 usage or system error\n"
#define COMPILE_BLOCK \
    "compile --problem ID FILE [--json]\n" \
    "        extract, check policy and compile in the sandbox (no GPU needed)\n"
#define PROBLEMS_BLOCK \
    "problems [--suite S] [--check] [--json]\n" \
    "        list a suite's problems; --check validates every manifest and compiles every reference;\n" \
    "        --json: the list or the check as one JSON object\n" \
    "  problems --show-reference ID\n" \
    "        print a problem's reference as the verifier uses it (shared kernel files expanded)\n" \
    "  problems --draw ID [--seed S] [--count N]\n" \
    "        N hidden dims sets drawn from the problem's generator with seed S, one JSON line each\n" \
    "  problems --boundary ID [--seed S] | --stratified ID [--seed S]\n" \
    "        the boundary (boundK) or stratified (stratK) sets a verification with seed S runs,\n" \
    "        one JSON line each\n"
#define WARM_BLOCK \
    "warm [--suite S]... [--arch sm_90[,sm_100..]] [--threads N]\n" \
    "        compile every reference of the suites (default: all) for each arch into the cubin\n" \
    "        cache, in parallel (default: one thread per CPU), so that no verification waits for a\n" \
    "        reference compile; says how many were compiled and how many were already cached\n" \
    "        (exit 0: all in the cache; 1: one failed, or the cache could not keep them)\n"
#define CUBIN_CACHE_NOTE \
    "Reference cubins are kept in $KC_CUBIN_CACHE (off: none), else $XDG_CACHE_HOME/kcorpus/cubins,\n" \
    "else ~/.cache/kcorpus/cubins, named by the sha256 of source, arch, NVRTC version and options.\n"
#define DUMP_BLOCK \
    "dump --problem ID --seed S[,S..] [--dims default|small|altN|hiddenK|boundK|stratK[,..]]\n" \
    "        --out DIR [--device N] [--profile RUNS]   (hiddenK: index K of the generator drawn with seed S;\n" \
    "        boundK, stratK: set K of `problems --boundary/--stratified ID --seed S`; on these\n" \
    "        three constant inputs are varied; -o DIR is --out DIR)\n" \
    "        write inputs and reference outputs as .npy, with meta.json (needs a GPU: without\n" \
    "        the NVIDIA driver it says so and exits 4); --profile RUNS: the reference runs RUNS\n" \
    "        more times under CUPTI and meta.json's \"profile\" gives its device time by kernel\n" \
    "        (the costliest printed)\n"
#define IMPORT_BLOCK \
    "import --db PATH --problem ID FILE...\n" \
    "        add candidate files to a database as pending (origin 'import'); each must hold\n" \
    "        one candidate (one ```cuda block, or a .cu file with // @launch lines; UTF-8), else\n" \
    "        nothing is imported and no database is created or changed (exit 4)\n" \
    "  import --db PATH --jsonl FILE [--source NAME]\n" \
    "        add third-party kernels with their claimed labels (docs/THIRD_PARTY.md); a bad line\n" \
    "        is reported with its number and skipped (exit 1), the others are imported; with no\n" \
    "        good line no database is created or changed\n"
#define BATCH_NOTE \
    "        --batch N: at most N candidates of one problem form a batch (default 1: none; e.g. 32):\n" \
    "        they share secret seeds and dims sets (fresh per batch), and a GPU worker compares\n" \
    "        later ones with the reference outputs it kept from the first instead of running the\n" \
    "        reference again; every check still runs for each (docs/VERIFIER.md, \"Batches\");\n" \
    "        --batch-memory MIB: device memory per GPU for kept outputs (default 4096)\n"
#define RUN_BLOCK \
    "run --db PATH [--compile-only] [--no-timing] [--limit N] [--threads N]\n" \
    "        [--sanitizer none|memcheck|all] [--hidden N] [--hidden-seed S] [--shard I/N]\n" \
    "        [--timing-noise PCT] [--seeds S1,S2,..] [--batch N] [--batch-memory MIB]\n" \
    "        verify every pending candidate of a database and record the results (--seeds: the\n" \
    "        same input seeds for every candidate, to reproduce labels; default fresh secret ones)\n" \
    BATCH_NOTE
#define REVERIFY_BLOCK \
    "reverify --db PATH [--problems SEL] [--verdict LIST] [--compile-only] [--no-timing]\n" \
    "        [--limit N] [--threads N] [--shard I/N] [--batch N] [--batch-memory MIB]\n" \
    "        verify stored candidates again (new verification rows, old ones kept); the same\n" \
    "        command resumes an unfinished pass; flips: kcurate flips --db PATH\n"
#define RACECHECK_BLOCK \
    "racecheck --db PATH [--gpus N] [--limit N] [--json]\n" \
    "        compute-sanitizer racecheck of every correct label that uses shared memory or\n" \
    "        cross-block communication and has no race check yet; a hazard records a new\n" \
    "        verification, unsafe (kverify racecheck --help; kexport requires it)\n"
#define SERVE_BLOCK \
    "serve --port P [--host 127.0.0.1] [--compile-only] [--gpus LIST] [--db FILE] [--queue N]\n" \
    "        [--token-file FILE]\n" \
    "        the verifier as an HTTP JSON reward service: GET /health, POST /v1/verify\n" \
    "        (kverify serve --help lists every option; docs/REWARD_SERVICE.md)\n"
#define SHARD_NOTE \
    "--shard I/N (run, reverify): only shard I (from 0) of N, split by trajectory as\n" \
    "        kcollect --shard; N processes (one per GPU) share the database and must agree on N\n"
#define GPUS_BLOCK \
    "gpus [--count]\n" \
    "        list the visible GPUs (without the NVIDIA driver: says so, exit 3)\n"
#define CTRL_C_NOTE \
    "run, reverify and racecheck on Ctrl-C (or SIGTERM): nothing new starts, the work in flight\n" \
    "finishes or stays pending (never labelled), the summary and the command that resumes are\n" \
    "printed, exit 130; a second Ctrl-C quits at once (exit 130).\n"
#define PROBLEMS_NOTE "Problems are read from $KC_PROBLEMS, else <bin>/../problems, else ./problems.\n"

const char kverify_usage[] =
    "usage: kverify <command> [options]   (kverify <command> --help: that command's usage)\n"
    "\n"
    "  " CHECK_BLOCK "  " COMPILE_BLOCK "  " PROBLEMS_BLOCK "  " WARM_BLOCK "  " DUMP_BLOCK
    "  " IMPORT_BLOCK
    "  " RUN_BLOCK "  " REVERIFY_BLOCK "  " RACECHECK_BLOCK "  " SERVE_BLOCK "  " SHARD_NOTE
    "  " GPUS_BLOCK
    "\n" CTRL_C_NOTE "\n" PROBLEMS_NOTE CUBIN_CACHE_NOTE;

const char kverify_check_usage[] = "usage: kverify " CHECK_BLOCK "\n" PROBLEMS_NOTE;
const char kverify_compile_usage[] = "usage: kverify " COMPILE_BLOCK
    "        exit status: 0 compiled, 2 extract/policy/compile error, 4 usage or system error\n"
    "\n" PROBLEMS_NOTE;
const char kverify_problems_usage[] = "usage: kverify " PROBLEMS_BLOCK "\n" PROBLEMS_NOTE;
const char kverify_warm_usage[] = "usage: kverify " WARM_BLOCK "\n" PROBLEMS_NOTE CUBIN_CACHE_NOTE;
const char kverify_dump_usage[] = "usage: kverify " DUMP_BLOCK "\n" PROBLEMS_NOTE;
const char kverify_import_usage[] = "usage: kverify " IMPORT_BLOCK "\n" PROBLEMS_NOTE;
const char kverify_run_usage[] = "usage: kverify " RUN_BLOCK "  " SHARD_NOTE "\n" CTRL_C_NOTE;
const char kverify_reverify_usage[] = "usage: kverify " REVERIFY_BLOCK "  " SHARD_NOTE "\n"
    CTRL_C_NOTE;
const char kverify_gpus_usage[] = "usage: kverify " GPUS_BLOCK;
