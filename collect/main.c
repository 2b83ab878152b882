/* kcollect: the closed loop in bulk. Asks an LLM for a kernel for every
 * selected problem and sample, verifies each answer with kverify's service,
 * feeds the verdict back, and records everything in SQLite. Argument parsing
 * and help only; the work is in loop.c, llm_*.c, record.c and friends. */
#include "collect/bundled.h"
#include "collect/config.h"
#include "collect/loop.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/interrupt.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: kcollect --problems SUITE|ID|GLOB[,...] [options]\n"
    "\n"
    "  --problems SEL        level1, level1/019_relu, 'level1/0*', or several, comma separated\n"
    "  --endpoint URL[,URL]  OpenAI-compatible base URL (http://host:8000/v1) or Anthropic;\n"
    "                        several URLs fail over in order. Default: $OPENAI_BASE_URL;\n"
    "                        with --api anthropic: $ANTHROPIC_BASE_URL, else https://api.anthropic.com.\n"
    "                        'bundled': the bundled test server (fake_llm, reference-echo\n"
    "                        mode, model fake-echo): synthetic answers, marked synthetic in\n"
    "                        the database and every export; also used when neither an\n"
    "                        endpoint nor a model is given\n"
    "  --spread-endpoints    the requests go round the endpoints in turn (the same model served\n"
    "                        several times; a shard starts at its own); a failing one is still\n"
    "                        failed over. Default: all to the first, the others as failover\n"
    "  --model NAME          model name sent to the endpoint (refused without an endpoint)\n"
    "  --api openai|anthropic  wire protocol (default openai)\n"
    "  --db PATH             database (default kc.db)\n"
    "  --samples N           trajectories per problem (default 1)\n"
    "  --turns N             turns per trajectory (default 4)\n"
    "  --budget MINUTES      wall-clock budget per trajectory (default 15; 0 = none)\n"
    "  --budget-tokens N     token budget per trajectory (default none)\n"
    "  --problem-budget MINUTES  wall-clock budget per problem, shared by its samples and turns\n"
    "                        (the problem's clock runs from its first turn; default none)\n"
    "  --problem-budget-tokens N  token budget per problem, shared likewise (default none)\n"
    "  --concurrency N       trajectories in parallel, and LLM requests in flight (default 4)\n"
    "  --compile-only        no GPU: verify up to compilation (labels stop at 'compiled')\n"
    "  --dry-run             print the first prompt and exit\n"
    "  -v, --verbose         on a terminal, a line per turn too (always when not a terminal;\n"
    "                        KC_PLAIN_LOG=1: plain lines, no status line, on a terminal too)\n"
    "  --config FILE         JSON settings (the long option names with '_' for '-');\n"
    "                        \"prices\": {\"MODEL\": [in, out, reasoning]} in $ per Mtok\n"
    "  --context full|drop-reasoning  earlier reasoning sent back or not (default drop-reasoning)\n"
    "  --target-speedup X    go on after the first correct turn until X times PyTorch eager\n"
    "  --strategy loop|mtmc  loop (default): kernel, feedback, fix; mtmc: turn 0 asks for a plan\n"
    "                        of actions, each later turn implements one on the last good kernel\n"
    "  --plan-retries K      mtmc: failed attempts at one action before the plan is revised (2)\n"
    "  --max-tokens N        per answer (default 16384)   --temperature T   --seed N\n"
    "  --max-answer-bytes N  cap on an answer's text (default 1048576; 0 = none): a longer\n"
    "                        answer is cut there (a stream stops), recorded as truncated\n"
    "  --no-stream           ask for whole replies instead of SSE streams\n"
    "  --rpm N  --tpm N      requests and tokens per minute (default unlimited)\n"
    "  --retries N  --backoff-ms MS  --deadline S  --idle-timeout S  --attempt-timeout S\n"
    "  --price IN,OUT[,REASONING]  dollars per million tokens\n"
    "  --fake-args ARGS      arguments for the bundled test server (\"--bug compile\")\n"
    "  --shard I/N           collect only shard I (from 0) of N: a fixed split of the (problem,\n"
    "                        sample) trajectories (by problem with --problem-budget), so N\n"
    "                        shards are one run; one database per shard, which records I/N and\n"
    "                        refuses another (Slurm job arrays: tools/slurm/kc_slurm.sh)\n"
    "\n"
    "Keys come from OPENAI_API_KEY or ANTHROPIC_API_KEY only and are never recorded.\n"
    "The same command resumes an interrupted run: finished turns and paid answers are reused.\n"
    "Ctrl-C (or SIGTERM) starts no new turn, lets the verifications in flight finish (work cut\n"
    "short stays pending, never labelled), prints the summary and the command that resumes, and\n"
    "exits 130; a second Ctrl-C quits at once (exit 130, the run's lock file removed).\n"
    "A run is its model, endpoints (normalised: localhost = 127.0.0.1 = [::1]), sampling\n"
    "settings (temperature, max tokens, seed, context) and prompt format: with those the same,\n"
    "more problems or samples add trajectories to it and more turns or budget extend its\n"
    "ended ones; anything else starts a new run, said on screen with what it will add.\n";

/* Flags and the config key they set; "" for a boolean flag's value. */
static const struct flag {
    const char *name, *key, *value;
} flags[] = {
    {"--problems", "problems", NULL}, {"--endpoint", "endpoint", NULL},
    {"--model", "model", NULL},       {"--api", "api", NULL},
    {"--db", "db", NULL},             {"--samples", "samples", NULL},
    {"--turns", "turns", NULL},       {"--budget", "budget", NULL},
    {"--budget-tokens", "budget_tokens", NULL},
    {"--problem-budget", "problem_budget", NULL},
    {"--problem-budget-tokens", "problem_budget_tokens", NULL}, {"--concurrency", "concurrency", NULL},
    {"--compile-only", "compile_only", "true"}, {"--no-stream", "stream", "false"},
    {"--spread-endpoints", "spread_endpoints", "true"},
    {"--stream", "stream", "true"},   {"--max-tokens", "max_tokens", NULL},
    {"--temperature", "temperature", NULL}, {"--seed", "seed", NULL},
    {"--context", "context", NULL},   {"--target-speedup", "target_speedup", NULL},
    {"--rpm", "rpm", NULL},           {"--tpm", "tpm", NULL},
    {"--retries", "retries", NULL},   {"--backoff-ms", "backoff_ms", NULL},
    {"--deadline", "deadline_s", NULL}, {"--idle-timeout", "idle_timeout_s", NULL},
    {"--attempt-timeout", "attempt_timeout_s", NULL}, {"--price", "price", NULL},
    {"--fake-args", "bundled_args", NULL}, {"--max-answer-bytes", "max_answer_bytes", NULL},
    {"--strategy", "strategy", NULL}, {"--plan-retries", "plan_retries", NULL},
};

static const kc_command kcollect_cmd = {"kcollect", NULL, usage_text, 0};

/* What the command line says, applied after the config file (a flag wins over the file): the
 * config files and the settings in their order. */
struct cmdline {
    const char **configs;
    int n_configs;
    struct setting {
        const struct flag *flag;
        const char *value;
    } *settings;
    int n_settings;
    kc_shard shard;
    int dry_run, verbose;
};

static const struct flag *flag_named(const char *name)
{
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
        if (!strcmp(name, flags[k].name + 2))
            return &flags[k];
    return NULL;
}

/* A setting flag (--samples N, --compile-only): kept for after the config file. */
static int setting_option(const kc_option *opt, const char *value, strbuf *err)
{
    (void)err;
    struct cmdline *cl = opt->dest;
    const struct flag *f = flag_named(opt->name);
    cl->settings[cl->n_settings++] = (struct setting){f, value ? value : f->value};
    return 0;
}

static int config_option(const kc_option *opt, const char *value, strbuf *err)
{
    (void)err;
    struct cmdline *cl = opt->dest;
    cl->configs[cl->n_configs++] = value;
    return 0;
}

static int shard_option(const kc_option *opt, const char *value, strbuf *err)
{
    struct cmdline *cl = opt->dest;
    strbuf why = STRBUF_INIT;
    int rc = kc_shard_parse(value, &cl->shard, &why);
    if (rc)
        kc_fail(err, "--shard: %s", why.buf);
    sb_free(&why);
    return rc;
}

static void parse_command_line(int argc, char **argv, struct cmdline *cl)
{
    enum { N_FLAGS = sizeof flags / sizeof flags[0] };
    kc_option opts[N_FLAGS + 6];
    for (size_t k = 0; k < N_FLAGS; k++)
        opts[k] = (kc_option)KC_OPT_FN(flags[k].name + 2, 0, setting_option, cl, NULL);
    for (size_t k = 0; k < N_FLAGS; k++)
        if (flags[k].value)
            opts[k].type = KC_OPT_CALL_FLAG;
    opts[N_FLAGS] = (kc_option)KC_OPT_FN("config", 0, config_option, cl, NULL);
    opts[N_FLAGS + 1] = (kc_option)KC_OPT_FN("shard", 0, shard_option, cl, NULL);
    opts[N_FLAGS + 2] = (kc_option)KC_OPT_FLAG("dry-run", 0, &cl->dry_run);
    opts[N_FLAGS + 3] = (kc_option)KC_OPT_FLAG("verbose", 'v', &cl->verbose);
    opts[N_FLAGS + 4] = (kc_option)KC_OPT_END_OF_TABLE;
    cl->configs = xcalloc((size_t)argc + 1, sizeof *cl->configs);
    cl->settings = xcalloc((size_t)argc + 1, sizeof *cl->settings);
    kc_parse_options(&kcollect_cmd, opts, argc, argv);
}

/* The config files (a file error: exit 1, naming the file), then the flags in their order (a
 * bad value: a usage error naming the flag). */
static void apply_command_line(struct cmdline *cl, collect_config *cfg)
{
    strbuf err = STRBUF_INIT;
    for (int i = 0; i < cl->n_configs; i++)
        if (config_load_file(cfg, cl->configs[i], &err) < 0)
            die("%s", err.buf);
    for (int i = 0; i < cl->n_settings; i++) {
        const struct setting *st = &cl->settings[i];
        if (config_set_as(cfg, st->flag->key, st->flag->name, st->value, &err) < 0) {
            char line[1024];
            snprintf(line, sizeof line, "%s", err.buf);
            sb_free(&err);
            kc_usage_error("%s", line);
        }
    }
    cfg->shard = cl->shard;
    cfg->verbose |= cl->verbose;
    free(cl->configs), free(cl->settings);
    sb_free(&err);
}

static int dry_run(const collect_config *cfg)
{
    strbuf out = STRBUF_INIT, err = STRBUF_INIT;
    if (collect_dry_run(cfg, &out, &err) < 0)
        die("%s", err.buf);
    fputs(out.buf, stdout);
    printf("endpoint: %s\n", config_is_bundled(cfg) ? CC_BUNDLED " (the bundled test server)"
                                                   : cfg->endpoint_urls[0]);
    sb_free(&out);
    sb_free(&err);
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_progname("kcollect");
    struct cmdline cl = {0};
    parse_command_line(argc, argv, &cl);
    collect_config cfg;
    config_defaults(&cfg);
    config_from_env(&cfg);
    apply_command_line(&cl, &cfg);
    int dry = cl.dry_run;
    strbuf err = STRBUF_INIT;
    /* a per-problem budget is one clock per problem: its samples stay in one shard */
    cfg.shard.by_problem = cfg.problem_budget_minutes > 0 || cfg.problem_budget_tokens > 0;
    if (config_finish(&cfg, &err) < 0) {
        config_free(&cfg);
        kc_usage_error("%s", err.buf);
    }
    if (dry) {
        int drc = dry_run(&cfg);
        config_free(&cfg);
        sb_free(&err);
        return drc;
    }

    /* Ctrl-C: no new turns, the ones in flight finish, exit 130; again: at once (interrupt.h) */
    kc_interrupt_install(argc, argv);
    signal(SIGPIPE, SIG_IGN);

    bundled_server server = {0};
    char *bundled_url[1];
    char **urls = cfg.endpoint_urls;
    int n_urls = cfg.n_endpoints;
    const char *label = n_urls ? cfg.endpoint_urls[0] : CC_BUNDLED;
    if (collect_preflight(&cfg, &err) < 0) { /* before the bundled server starts */
        error("%s", err.buf);
        config_free(&cfg);
        sb_free(&err);
        return 1;
    }
    if (config_is_bundled(&cfg)) {
        if (bundled_start(cfg.bundled_args, &server, &err) < 0)
            die("%s", err.buf);
        fprintf(stderr, "kcollect: %s: using the bundled test LLM server (fake_llm, "
                        "reference-echo mode) at %s: its answers are synthetic and recorded as "
                        "such (model fake-echo, server " CC_BUNDLED ")\n",
                cfg.bundled_named ? "--endpoint bundled" : "no endpoint and no model configured",
                server.url);
        bundled_url[0] = server.url;
        urls = bundled_url;
        n_urls = 1;
    }
    collect_summary sum;
    int rc = collect_run(&cfg, label, urls, n_urls, kc_interrupt_flag(), &sum, &err);
    bundled_stop(&server);
    if (sum.trajectories > 0)
        collect_summary_print(&sum, stdout);
    else if (kc_interrupted() && !sum.fatal)
        kc_interrupt_print_resume(stdout);
    if (rc < 0)
        error("%s", err.buf);
    config_free(&cfg);
    sb_free(&err);
    if (sum.fatal) /* a run-fatal LLM error also raises the stop flag: it is not an interrupt */
        return 1;
    if (kc_interrupted())
        return KC_EXIT_INTERRUPTED;
    return rc < 0 ? 1 : 0;
}
