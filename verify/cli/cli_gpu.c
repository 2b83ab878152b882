/* cli_gpu: what the GPU subcommands (gpus, dump, racecheck) share before any GPU work: whether
 * the NVIDIA driver loads at all (the one message of a machine without one), and the visible
 * GPUs' names, asked of kverify-gpu so that kverify itself never loads libcuda; and `kverify
 * gpus` and `kverify dump`, whose options are checked here before kverify-gpu runs them. */
#include "common/error.h"
#include "common/problem.h"
#include "verify/cli/verify_cli.h"
#include "verify/service/gpu_probe.h"
#include "verify/service/programs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int cli_gpu_driver_check(void)
{
    if (kv_driver_present())
        return 0;
    fprintf(stderr, "kverify: " KV_NO_DRIVER_MESSAGE "; verification without a GPU: "
                    "--compile-only\n");
    return CLI_EXIT_NO_GPU;
}

/* "0: NVIDIA H100 80GB HBM3, 79.2 GiB, ..." (kverify-gpu gpus): the name. */
static int parse_gpu_line(const char *line, char *name, size_t n)
{
    const char *colon = strstr(line, ": ");
    if (!colon || colon == line)
        return -1;
    const char *start = colon + 2, *comma = strchr(start, ',');
    size_t len = comma ? (size_t)(comma - start) : strcspn(start, "\n");
    snprintf(name, n, "%.*s", (int)len, start);
    return 0;
}

int cli_gpu_names(char names[][128], int max)
{
    strbuf exe = STRBUF_INIT, cmd = STRBUF_INIT;
    kverify_gpu_exe_path(&exe);
    sb_addf(&cmd, "'%s' gpus 2>/dev/null", exe.buf);
    FILE *f = popen(cmd.buf, "r");
    int n = 0;
    char line[512];
    while (f && n < max && fgets(line, sizeof line, f))
        n += parse_gpu_line(line, names[n], 128) == 0;
    if (f)
        pclose(f);
    sb_free(&exe), sb_free(&cmd);
    return n;
}

/* Runs kverify-gpu with args (NULL-terminated, args[0] its subcommand); returns only on failure. */
static int exec_gpu_tool(char **args)
{
    strbuf exe = STRBUF_INIT;
    kverify_gpu_exe_path(&exe);
    int n = 0;
    while (args[n])
        n++;
    char **argv = xcalloc((size_t)n + 2, sizeof *argv);
    argv[0] = exe.buf;
    memcpy(argv + 1, args, (size_t)n * sizeof *argv);
    fflush(stdout);
    execv(exe.buf, argv);
    error("cannot run %s: %s", exe.buf, strerror(errno));
    free(argv);
    sb_free(&exe);
    return KC_EXIT_KVERIFY_USAGE;
}

static const kc_command gpus_cmd = {"kverify", "gpus", kverify_gpus_usage, 0};

int cli_gpus(int argc, char **argv)
{
    int count = 0;
    const kc_option opts[] = {KC_OPT_FLAG("count", 0, &count), KC_OPT_END_OF_TABLE};
    kc_parse_options(&gpus_cmd, opts, argc, argv);
    if (cli_gpu_driver_check())
        return CLI_EXIT_NO_GPU;
    char *args[] = {"gpus", count ? "--count" : NULL, NULL};
    return exec_gpu_tool(args);
}

/* The length of "PREFIXdigits" at p (n characters up to the next comma), 0 when it is not. */
static size_t indexed_name(const char *p, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    if (n <= k || strncmp(p, prefix, k))
        return 0;
    return strspn(p + k, "0123456789") + k == n ? n : 0;
}

/* dump's --dims: default, small, alt, altN, hiddenK, boundK or stratK, comma separated. */
static int dims_option(const kc_option *opt, const char *v, strbuf *err)
{
    static const char *const indexed[] = {"alt", "hidden", "bound", "strat"};
    for (const char *p = v;;) {
        size_t n = strcspn(p, ",");
        int ok = (n == 7 && !strncmp(p, "default", 7)) || (n == 5 && !strncmp(p, "small", 5)) ||
                 (n == 3 && !strncmp(p, "alt", 3));
        for (size_t i = 0; i < sizeof indexed / sizeof *indexed && !ok; i++)
            ok = indexed_name(p, n, indexed[i]) > 0;
        if (!ok)
            return kc_option_fail(opt, err, "takes default, small, alt, altN, hiddenK, boundK or "
                                  "stratK (comma separated), not '%s'", v);
        if (!p[n])
            break;
        p += n + 1;
    }
    *(const char **)opt->dest = v;
    return 0;
}

/* dump's --seed S[,S..]: whole numbers. */
static int seeds_option(const kc_option *opt, const char *v, strbuf *err)
{
    kv_options o;
    if (cli_parse_seeds(v, &o))
        return kc_option_fail(opt, err, "takes whole numbers separated by commas (at most %d), "
                              "not '%s'", KV_MAX_SEEDS, v);
    *(const char **)opt->dest = v;
    return 0;
}

static const kc_command dump_cmd = {"kverify", "dump", kverify_dump_usage, 0};

/* kverify dump: the options and the problem checked, the driver found, then kverify-gpu dump. A
 * machine without a GPU is a system error here (exit 4), not a verdict. */
int cli_dump(int argc, char **argv)
{
    const char *problem_id = NULL, *seeds = "0", *dims = "default", *out = NULL;
    int device = 0, profile_runs = 0;
    const kc_option opts[] = {
        KC_OPT_STR("problem", 'p', &problem_id),
        KC_OPT_INTEGER("profile", 0, &profile_runs, 1, 100),
        KC_OPT_FN("seed", 's', seeds_option, &seeds, NULL),
        KC_OPT_FN("seeds", 0, seeds_option, &seeds, NULL),
        KC_OPT_FN("dims", 'd', dims_option, &dims, NULL),
        KC_OPT_STR("out", 'o', &out),
        KC_OPT_INTEGER("device", 'g', &device, 0, 1023),
        KC_OPT_END_OF_TABLE};
    kc_parse_options(&dump_cmd, opts, argc, argv);
    if (!problem_id || !out)
        kc_usage_error("dump needs --problem ID and --out DIR");
    problem p;
    strbuf err = STRBUF_INIT;
    if (problem_load_by_id(problem_id, &p, &err)) {
        error("%s", err.buf);
        sb_free(&err);
        return KC_EXIT_KVERIFY_USAGE;
    }
    problem_free(&p);
    sb_free(&err);
    if (cli_gpu_driver_check())
        return KC_EXIT_KVERIFY_USAGE;
    char dev[16], runs[16];
    snprintf(dev, sizeof dev, "%d", device);
    snprintf(runs, sizeof runs, "%d", profile_runs);
    char *args[] = {"dump", "--problem", (char *)problem_id, "--seeds", (char *)seeds, "--dims",
                    (char *)dims, "--out", (char *)out, "--device", dev,
                    profile_runs ? "--profile" : NULL, runs, NULL};
    return exec_gpu_tool(args);
}
