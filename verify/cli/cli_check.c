/* cli_check: `kverify check` and `kverify compile` for one candidate file. */
#include "common/cli.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/problem.h"
#include "verify/cli/verify_cli.h"
#include "verify/service/batch.h"

#include <errno.h>
#include <stdint.h>
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

/* A whole number from 0 to 2^64-1 (seeds). */
static int parse_u64(const kc_option *opt, const char *v, uint64_t *out, strbuf *err)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v || *end || *v == '-' || *v == '+')
        return kc_option_fail(opt, err, "takes a whole number from 0 to 2^64-1, not '%s'", v);
    *out = n;
    return 0;
}

int cli_opt_seeds(const kc_option *opt, const char *v, strbuf *err)
{
    if (cli_parse_seeds(v, opt->dest))
        return kc_option_fail(opt, err, "takes a comma-separated list of up to %d whole numbers, "
                              "not '%s'", KV_MAX_SEEDS, v);
    return 0;
}

/* --timing-noise PCT: the timed median's target relative standard error, in percent. */
int cli_opt_timing_noise(const kc_option *opt, const char *v, strbuf *err)
{
    kv_options *o = opt->dest;
    double pct;
    if (kc_parse_number("--timing-noise", v, 100 * KV_TIMING_NOISE_MIN, 100, &pct, NULL))
        return kc_option_fail(opt, err, "takes a percentage from %g to 100 (default %g), not '%s'",
                              100 * KV_TIMING_NOISE_MIN, 100 * KV_TIMING_NOISE, v);
    o->timing_noise = pct / 100;
    return 0;
}

int cli_opt_sanitizer(const kc_option *opt, const char *v, strbuf *err)
{
    kv_options *o = opt->dest;
    if (sanitizer_mode_parse(v, &o->sanitize))
        return kc_option_fail(opt, err, "takes none, memcheck or all, not '%s'", v);
    return 0;
}

int cli_opt_batch_memory(const kc_option *opt, const char *v, strbuf *err)
{
    kv_options *o = opt->dest;
    long long mib;
    if (kc_parse_int("--batch-memory", v, 0, 1 << 20, &mib, NULL))
        return kc_option_fail(opt, err, "takes whole MiB from 0 to 1048576 (default %llu), not '%s'",
                              (unsigned long long)(BATCH_DEFAULT_BYTES >> 20), v);
    o->batch_bytes = (uint64_t)mib << 20;
    return 0;
}

/* --hidden-seed S: the draws' seed, to reproduce a label (its evidence's hidden.seed). */
int cli_opt_hidden_seed(const kc_option *opt, const char *v, strbuf *err)
{
    kv_options *o = opt->dest;
    if (parse_u64(opt, v, &o->hidden_seed, err))
        return -1;
    o->fixed_hidden_seed = 1;
    return 0;
}

static const kc_command check_cmd = {"kverify", "check", kverify_check_usage, 1};
static const kc_command compile_cmd = {"kverify", "compile", kverify_compile_usage, 1};

/* check's and compile's options (compile takes check's too: it only forces --compile-only);
 * returns the candidate file. */
static const char *parse_check_options(int argc, char **argv, int compile_command, kv_options *o,
                                       const char **problem_id, int *json)
{
    const kc_option check_opts[] = {
        KC_OPT_STR("problem", 'p', problem_id),
        KC_OPT_FLAG("json", 0, json),
        KC_OPT_FLAG("compile-only", 0, &o->compile_only),
        KC_OPT_FLAG("no-timing", 0, &o->no_timing),
        KC_OPT_FN("seeds", 0, cli_opt_seeds, o, NULL),
        KC_OPT_INTEGER("n-seeds", 0, &o->n_seeds, 1, KV_MAX_SEEDS),
        KC_OPT_NUM("timing-cap-ms", 0, &o->timing_cap_ms, 0.001, 3.6e6),
        CLI_VERIFY_OPTIONS(o),
        KC_OPT_END_OF_TABLE};
    int n = kc_parse_options(compile_command ? &compile_cmd : &check_cmd, check_opts, argc, argv);
    if (!*problem_id)
        kc_usage_error("--problem ID is required");
    if (n != 1)
        kc_usage_error("expected one candidate file");
    return argv[1];
}

int cli_check(int argc, char **argv, int compile_only_command)
{
    kv_options o;
    kv_options_default(&o);
    o.compile_procs = 1;
    const char *problem_id = NULL;
    int json = 0;
    const char *file = parse_check_options(argc, argv, compile_only_command, &o, &problem_id,
                                           &json);
    if (compile_only_command)
        o.compile_only = 1;
    problem p;
    strbuf err = STRBUF_INIT, text = STRBUF_INIT, out = STRBUF_INIT;
    int status = 4;
    if (problem_load_by_id(problem_id, &p, &err)) {
        error("%s", err.buf);
        goto done_noproblem;
    }
    if (read_file(file, &text, &err)) {
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
