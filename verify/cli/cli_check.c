/* cli_check: `kverify check` and `kverify compile` for one candidate file. */
#include "common/cli.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/problem.h"
#include "verify/cli/verify_cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_seeds(const char *list, kv_options *o)
{
    o->n_seeds = 0;
    o->fixed_seeds = 1;
    const char *p = list;
    while (*p) {
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || o->n_seeds >= KV_MAX_SEEDS)
            return -1;
        o->seeds[o->n_seeds++] = v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return o->n_seeds ? 0 : -1;
}

static void print_timing(const kv_timing *t)
{
    printf("  time      median %.4f ms  mean %.4f  stdev %.4f  min %.4f  p10 %.4f  p90 %.4f  (n=%d)\n",
           t->median_ms, t->mean_ms, t->stdev_ms, t->min_ms, t->p10_ms, t->p90_ms, t->n);
    if (t->cupti_ms > 0)
        printf("  device    %.4f ms of kernel time per launch unit (CUPTI)\n", t->cupti_ms);
    printf("  achieved  %.1f GB/s, %.3f TFLOP/s\n", t->gbps, t->tflops);
    if (t->sm_clock_mhz > 0)
        printf("  clock     SM clock %.0f MHz, measured in-kernel before the timed runs\n",
               t->sm_clock_mhz);
    if (t->eager_ms > 0)
        printf("  speedup   %.2fx vs PyTorch eager (%.4f ms)\n", t->speedup_eager, t->eager_ms);
    if (t->compile_ms > 0)
        printf("  speedup   %.2fx vs torch.compile (%.4f ms)\n", t->speedup_compile, t->compile_ms);
}

void cli_print_report(const problem *p, const kv_result *r)
{
    printf("%s: %s\n", p->id, r->verdict);
    printf("  %s\n", sb_str(&r->message));
    if (r->flags.len)
        printf("  flags     %s\n", r->flags.buf);
    if (r->compile_ms > 0)
        printf("  compile   %.1f ms (NVRTC %s, %s)\n", r->compile_ms, r->nvrtc_version, r->arch);
    if (r->compile_log.len && strcmp(r->verdict, "compile_error") == 0)
        printf("  compile log:\n%s\n", r->compile_log.buf);
    if (r->kernels_json.len > 2)
        printf("  kernels   %s\n", r->kernels_json.buf);
    if (r->has_errors)
        printf("  errors    max abs %.3g, max rel %.3g, rel L2 %.3g\n", r->max_abs_err,
               r->max_rel_err, r->rel_l2_err);
    if (r->evidence_json.len && strcmp(r->verdict, "correct") != 0)
        printf("  evidence  %s\n", r->evidence_json.buf);
    if (r->timed)
        print_timing(&r->timing);
    if (r->gpu_name[0])
        printf("  gpu       %s (driver %s, CUDA %s), seeds %s\n", r->gpu_name, r->driver_version,
               r->cuda_version, sb_str(&r->seeds));
}

/* --timing-noise PCT: the timed median's target relative standard error, in percent. */
static int parse_timing_noise(const char *value, kv_options *o)
{
    char *end;
    errno = 0;
    double pct = strtod(value, &end);
    if (errno || end == value || *end || !(pct >= 100 * KV_TIMING_NOISE_MIN) || pct > 100)
        return error("--timing-noise takes a percentage from %g to 100 (default %g)",
                     100 * KV_TIMING_NOISE_MIN, 100 * KV_TIMING_NOISE);
    o->timing_noise = pct / 100;
    return 0;
}

/* The verification options check, run and serve share: --sanitizer none|memcheck|all,
 * --timing-noise PCT, --hidden N (dims sets drawn per verification, 0..8) and --hidden-seed S
 * (the draws' seed, to reproduce a label: its evidence's hidden.seed). */
int cli_parse_verify_option(const char *option, const char *value, kv_options *o)
{
    if (strcmp(option, "--sanitizer") == 0)
        return sanitizer_mode_parse(value, &o->sanitize) ? error("--sanitizer takes none, memcheck or all") : 0;
    if (strcmp(option, "--timing-noise") == 0)
        return parse_timing_noise(value, o);
    char *end;
    errno = 0;
    unsigned long long v = strtoull(value, &end, 10);
    if (errno || end == value || *end)
        return error("%s takes a non-negative integer", option);
    if (strcmp(option, "--hidden") == 0) {
        if (v > KV_MAX_HIDDEN)
            return error("--hidden takes 0 to %d", KV_MAX_HIDDEN);
        o->n_hidden = (int)v;
    } else {
        o->hidden_seed = v;
        o->fixed_hidden_seed = 1;
    }
    return 0;
}

enum { OPT_JSON = 1000, OPT_COMPILE_ONLY, OPT_NO_TIMING, OPT_SEEDS, OPT_N_SEEDS, OPT_CAP,
       OPT_SANITIZER, OPT_HIDDEN, OPT_HIDDEN_SEED, OPT_NOISE };

static int parse_check_options(int argc, char **argv, kv_options *o, const char **problem_id,
                               int *json)
{
    static const struct option opts[] = {
        {"problem", required_argument, NULL, 'p'},
        {"json", no_argument, NULL, OPT_JSON},
        {"compile-only", no_argument, NULL, OPT_COMPILE_ONLY},
        {"no-timing", no_argument, NULL, OPT_NO_TIMING},
        {"seeds", required_argument, NULL, OPT_SEEDS},
        {"n-seeds", required_argument, NULL, OPT_N_SEEDS},
        {"timing-cap-ms", required_argument, NULL, OPT_CAP},
        {"sanitizer", required_argument, NULL, OPT_SANITIZER},
        {"hidden", required_argument, NULL, OPT_HIDDEN},
        {"hidden-seed", required_argument, NULL, OPT_HIDDEN_SEED},
        {"timing-noise", required_argument, NULL, OPT_NOISE},
        {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = kc_getopt(argc, argv, "p:", opts)) != -1) {
        switch (c) {
        case 'p': *problem_id = optarg; break;
        case OPT_JSON: *json = 1; break;
        case OPT_COMPILE_ONLY: o->compile_only = 1; break;
        case OPT_NO_TIMING: o->no_timing = 1; break;
        case OPT_SEEDS:
            if (cli_parse_seeds(optarg, o))
                return error("--seeds takes a comma-separated list of up to %d integers", KV_MAX_SEEDS);
            break;
        case OPT_N_SEEDS: o->n_seeds = atoi(optarg); break;
        case OPT_CAP: o->timing_cap_ms = atof(optarg); break;
        case OPT_HIDDEN:
        case OPT_HIDDEN_SEED:
        case OPT_SANITIZER:
        case OPT_NOISE:
            if (cli_parse_verify_option(c == OPT_HIDDEN ? "--hidden" : c == OPT_HIDDEN_SEED ?
                                        "--hidden-seed" : c == OPT_NOISE ? "--timing-noise" :
                                        "--sanitizer", optarg, o))
                return -1;
            break;
        default: return -1;
        }
    }
    if (!*problem_id)
        return error("--problem ID is required");
    if (optind != argc - 1)
        return error("expected exactly one candidate file");
    return 0;
}

int cli_check(int argc, char **argv, int compile_only_command)
{
    kv_options o;
    kv_options_default(&o);
    o.compile_procs = 1;
    const char *problem_id = NULL;
    int json = 0;
    if (parse_check_options(argc, argv, &o, &problem_id, &json))
        return 4;
    if (compile_only_command)
        o.compile_only = 1;
    problem p;
    strbuf err = STRBUF_INIT, text = STRBUF_INIT, out = STRBUF_INIT;
    int status = 4;
    if (problem_load_by_id(problem_id, &p, &err)) {
        error("%s", err.buf);
        goto done_noproblem;
    }
    if (read_file(argv[optind], &text, &err)) {
        error("%s", err.buf);
        goto done;
    }
    kv_service *svc = NULL;
    if (kv_service_start(&o, &svc, &err)) {
        error("%s", err.buf);
        goto done;
    }
    kv_result r;
    kv_result_init(&r);
    if (kv_verify(svc, &p, text.buf, &r, &err) == 0) {
        if (json)
            kv_result_json(&p, &r, &out), fputs(out.buf, stdout);
        else
            cli_print_report(&p, &r);
        status = kv_verdict_exit_code(r.verdict);
    } else {
        error("%s", err.buf);
    }
    kv_result_free(&r);
    kv_service_stop(svc);
done:
    problem_free(&p);
done_noproblem:
    sb_free(&err), sb_free(&text), sb_free(&out);
    return status;
}
