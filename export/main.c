/* kexport: writes a curated kcorpus database as JSONL shards (sft, multiturn, rl, preference)
 * with a manifest, a datasheet and optionally a tar bundle. */
#include "common/cli.h"
#include "common/error.h"
#include "export/bundle.h"
#include "export/config.h"
#include "export/filters.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: kexport --db FILE --out DIR [options]      (-o DIR is --out DIR)\n"
    "  --format F          sft | multiturn | rl | preference | kernelbench | plan [sft]\n"
    "                      (plan: each plan of a kcollect --strategy mtmc trajectory with its\n"
    "                      outcome, the verdict and speedup of the steps that implemented it)\n"
    "                      kernelbench: each kernel kept by --verdict [correct], --dedup and\n"
    "                      the other filters as a KernelBench-style Python module in\n"
    "                      DIR/kernelbench/<problem>/c<candidate>.py\n"
    "  --every-turn        sft: every correct turn (default: each trajectory's last correct)\n"
    "  --verdict LIST      verdicts kept (comma separated, or 'any') [sft: correct]: correct,\n"
    "                      compiled, mismatch, unsafe, runtime_error, launch_error, timeout,\n"
    "                      compile_error, policy_violation, extract_error\n"
    "                      multiturn: any list keeps solved trajectories only;\n"
    "                      preference: verdicts allowed on the rejected side [any];\n"
    "                      chosen is always correct\n"
    "  --min-speedup X     minimum eager speedup (preference: of the chosen side)\n"
    "  --split LIST        splits exported [train,valid,test]; 'heldout' only when named\n"
    "  --level LIST        problem levels, e.g. 1,2 (whole numbers from 1)\n"
    "  --include-degenerate  also problems whose manifest is marked \"degenerate\" (output\n"
    "                      trivial at its inits, e.g. level 2's 080 and 083); default: left out\n"
    "                      (a value outside these lists is an error that names the valid ones)\n"
    "  --dedup MODE        none | exact | near: representatives only [near]\n"
    "  --max-pairs N       preference pairs per problem [64]\n"
    "  --reasoning MODE    field | think | drop: each answer's reasoning as a reasoning_content\n"
    "                      field (null where none), as <think>...</think> before the content,\n"
    "                      or not at all (sft, multiturn, preference, plan) [field]\n"
    "  --shard-mb N        uncompressed MiB per shard [256]\n"
    "  --no-gzip           plain .jsonl shards\n"
    "  --gzip-level N      1..9 [1: fastest, ~27% larger than 6; 9 for the smallest files]\n"
    "  --tar               also bundle everything into DIR.tar\n"
    "  --run IDS           only candidates of these kcollect runs (comma separated ids)\n"
    "  --model LIST        only candidates of runs of these models\n"
    "                      (without either, the manifest says when runs or models mix)\n"
    "  --curate            when labels are stale (candidates collected or verified after\n"
    "                      the last kcurate run), run kcurate first with the same parameters\n"
    "                      (default: refuse and print the kcurate command to run)\n"
    "  --allow-stale       export stale labels anyway (counted in manifest.json)\n"
    "  --no-racecheck      export correct labels that need a race check (their kernel uses\n"
    "                      shared memory or cross-block communication) and have none\n"
    "                      (default: refuse, naming `kverify racecheck --db FILE`; the\n"
    "                      manifest counts them under provenance.race_checks)\n"
    "  --skip-bad-text     leave out (with a warning naming each) candidates whose kernel is\n"
    "                      not UTF-8 text; default: the export fails naming the first one\n"
    "  --strict            accepted for old scripts: an export of no record always exits 1,\n"
    "                      writes nothing (no manifest, card or bundle) and prints why\n"
    "  --system-prompt S   replaces the system message of every record (default: the one\n"
    "                      the model saw, from the recorded request; kcollect's system\n"
    "                      message for imported candidates and rl prompts)\n";

static const kc_command kexport_cmd = {"kexport", NULL, usage_text, 0};

/* An owned copy of the value into *(char **)opt->dest. */
static int string_option(const kc_option *opt, const char *v, strbuf *err)
{
    (void)err;
    char **field = opt->dest;
    free(*field);
    *field = xstrdup(v);
    return 0;
}

/* --format, --dedup and --reasoning: a name of their lists (opt->data: the names, for the
 * message). */
static int format_option(const kc_option *opt, const char *v, strbuf *err)
{
    if (export_format_parse(v, opt->dest))
        return kc_option_fail(opt, err, "takes %s, not '%s'", opt->data, v);
    return 0;
}

static int dedup_option(const kc_option *opt, const char *v, strbuf *err)
{
    if (export_dedup_parse(v, opt->dest))
        return kc_option_fail(opt, err, "takes %s, not '%s'", opt->data, v);
    return 0;
}

static int reasoning_option(const kc_option *opt, const char *v, strbuf *err)
{
    if (export_reasoning_parse(v, opt->dest))
        return kc_option_fail(opt, err, "takes %s, not '%s'", opt->data, v);
    return 0;
}

/* --verdict and --split: comma lists of known names (export_check_list names the valid ones). */
static int verdict_option(const kc_option *opt, const char *v, strbuf *err)
{
    if (export_check_list("--verdict", v, export_verdict_names(), 1, err))
        return -1;
    return string_option(opt, v, err);
}

static int split_option(const kc_option *opt, const char *v, strbuf *err)
{
    if (export_check_list("--split", v, export_split_values, 0, err))
        return -1;
    return string_option(opt, v, err);
}

static int level_option(const kc_option *opt, const char *v, strbuf *err)
{
    if (export_check_levels(v, err))
        return -1;
    return string_option(opt, v, err);
}

static int run_option(const kc_option *opt, const char *v, strbuf *err)
{
    if (!*v || strspn(v, "0123456789,") != strlen(v))
        return kc_option_fail(opt, err, "takes run ids separated by commas, not '%s'", v);
    return string_option(opt, v, err);
}

/* --shard-mb N: uncompressed MiB per shard, into bytes (opt->dest: the export_config). */
static int shard_mb_option(const kc_option *opt, const char *v, strbuf *err)
{
    double mb;
    if (kc_parse_number("--shard-mb", v, 0.001, 1e7, &mb, err))
        return -1;
    ((export_config *)opt->dest)->shard_bytes = (long long)(mb * 1048576.0);
    return 0;
}

static void parse_command_line(int argc, char **argv, export_config *c)
{
    int strict = 0; /* --strict: accepted for old scripts, the default now */
    const kc_option opts[] = {
        KC_OPT_STR("db", 0, &c->db_path),
        KC_OPT_STR("out", 'o', &c->out_dir),
        KC_OPT_FN("format", 0, format_option, &c->format,
                  "sft, multiturn, rl, preference, kernelbench or plan"),
        KC_OPT_FN("dedup", 0, dedup_option, &c->dedup, "none, exact or near"),
        KC_OPT_FN("reasoning", 0, reasoning_option, &c->reasoning, "field, think or drop"),
        KC_OPT_FN("verdict", 0, verdict_option, &c->verdicts, NULL),
        KC_OPT_FN("split", 0, split_option, &c->splits, NULL),
        KC_OPT_FN("level", 0, level_option, &c->levels, NULL),
        KC_OPT_FN("run", 0, run_option, &c->runs, NULL),
        KC_OPT_FN("model", 0, string_option, &c->models, NULL),
        KC_OPT_FN("system-prompt", 0, string_option, &c->system_prompt, NULL),
        KC_OPT_NUM("min-speedup", 0, &c->min_speedup, 0, 1e9),
        KC_OPT_INTEGER("max-pairs", 0, &c->max_pairs, 0, 1000000000),
        KC_OPT_FN("shard-mb", 0, shard_mb_option, c, NULL),
        KC_OPT_INTEGER("gzip-level", 0, &c->gzip_level, 1, 9),
        KC_OPT_FLAG("every-turn", 0, &c->sft_every_turn),
        KC_OPT_UNSET("no-gzip", 0, &c->gzip),
        KC_OPT_FLAG("tar", 0, &c->tar),
        KC_OPT_FLAG("curate", 0, &c->curate_first),
        KC_OPT_FLAG("allow-stale", 0, &c->allow_stale),
        KC_OPT_FLAG("no-racecheck", 0, &c->no_racecheck),
        KC_OPT_FLAG("skip-bad-text", 0, &c->skip_bad_text),
        KC_OPT_FLAG("include-degenerate", 0, &c->include_degenerate),
        KC_OPT_FLAG("strict", 0, &strict),
        KC_OPT_END_OF_TABLE};
    kc_parse_options(&kexport_cmd, opts, argc, argv);
    if (!c->db_path || !c->out_dir)
        kc_usage_error("kexport needs --db FILE and --out DIR");
}

int main(int argc, char **argv)
{
    kc_set_progname("kexport");
    /* Each connection is used by one thread only (the shard writer thread never touches SQLite):
     * no per-call connection mutex. */
    sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
    export_config c;
    export_config_defaults(&c);
    parse_command_line(argc, argv, &c);
    export_summary s;
    strbuf err = STRBUF_INIT;
    if (export_check_filters(&c, &err))
        die("%s", err.buf);
    if (export_run(&c, &s, &err))
        die("%s", err.buf);
    double mb = (double)s.bytes_jsonl / 1e6;
    if (!s.records) { /* an error: nothing written, and why */
        fprintf(stderr, "kexport: error: 0 %s records exported; nothing written to %s\n%s",
                export_format_name(c.format), c.out_dir, s.why_empty ? s.why_empty : "");
        free(s.why_empty);
        export_config_free(&c);
        sb_free(&err);
        return 1;
    }
    printf("exported %ld %s records into %d shard(s) in %s: %.1f MB of JSONL in %.2f s (%.1f MB/s)\n"
           "manifest: %s\n",
           s.records, export_format_name(c.format), s.shards, c.out_dir, mb, s.seconds,
           s.seconds > 0 ? mb / s.seconds : 0.0, s.manifest_path);
    if (c.tar)
        printf("bundle: %s\n", s.tar_path);
    export_config_free(&c);
    sb_free(&err);
    return 0;
}
