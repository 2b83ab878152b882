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

static void set_string(char **field, const char *v)
{
    free(*field);
    *field = xstrdup(v);
}

static int flag_option(export_config *c, const char *a)
{
    if (!strcmp(a, "--every-turn")) c->sft_every_turn = 1;
    else if (!strcmp(a, "--no-gzip")) c->gzip = 0;
    else if (!strcmp(a, "--tar")) c->tar = 1;
    else if (!strcmp(a, "--curate")) c->curate_first = 1;
    else if (!strcmp(a, "--allow-stale")) c->allow_stale = 1;
    else if (!strcmp(a, "--no-racecheck")) c->no_racecheck = 1;
    else if (!strcmp(a, "--skip-bad-text")) c->skip_bad_text = 1;
    else if (!strcmp(a, "--include-degenerate")) c->include_degenerate = 1;
    else return 0;
    return 1;
}

/* Dies with the message of a failed check. */
#define checked(call) do { if ((call) < 0) die("%s", err.buf); } while (0)

static int is_value_option(const char *a)
{
    static const char *const names[] = {
        "--db", "--out", "-o", "--format", "--dedup", "--verdict", "--split", "--level", "--run",
        "--model", "--system-prompt", "--min-speedup", "--max-pairs", "--shard-mb", "--gzip-level",
        "--reasoning", NULL};
    for (int i = 0; names[i]; i++)
        if (!strcmp(a, names[i]))
            return 1;
    return 0;
}

static void value_option(export_config *c, const char *a, const char *v)
{
    strbuf err = STRBUF_INIT;
    double d;
    if (!strcmp(a, "--db")) c->db_path = v;
    else if (!strcmp(a, "--out") || !strcmp(a, "-o")) c->out_dir = v;
    else if (!strcmp(a, "--format")) {
        if (export_format_parse(v, &c->format))
            die("unknown format '%s' (sft, multiturn, rl, preference, kernelbench, plan)", v);
    } else if (!strcmp(a, "--dedup")) {
        if (export_dedup_parse(v, &c->dedup))
            die("unknown dedup mode '%s' (none, exact, near)", v);
    } else if (!strcmp(a, "--reasoning")) {
        if (export_reasoning_parse(v, &c->reasoning))
            die("--reasoning: unknown mode '%s' (field, think, drop)", v);
    } else if (!strcmp(a, "--verdict")) {
        checked(export_check_list(a, v, export_verdict_names(), 1, &err));
        set_string(&c->verdicts, v);
    } else if (!strcmp(a, "--split")) {
        checked(export_check_list(a, v, export_split_values, 0, &err));
        set_string(&c->splits, v);
    } else if (!strcmp(a, "--level")) {
        checked(export_check_levels(v, &err));
        set_string(&c->levels, v);
    }
    else if (!strcmp(a, "--run")) {
        if (!*v || strspn(v, "0123456789,") != strlen(v))
            die("--run wants run ids separated by commas, not '%s'", v);
        set_string(&c->runs, v);
    } else if (!strcmp(a, "--model")) set_string(&c->models, v);
    else if (!strcmp(a, "--system-prompt")) set_string(&c->system_prompt, v);
    else if (!strcmp(a, "--min-speedup")) checked(export_parse_number(a, v, 0, 1e9, &c->min_speedup, &err));
    else if (!strcmp(a, "--max-pairs")) {
        checked(export_parse_number(a, v, 0, 1e9, &d, &err));
        c->max_pairs = (int)d;
    } else if (!strcmp(a, "--shard-mb")) {
        checked(export_parse_number(a, v, 0.001, 1e7, &d, &err));
        c->shard_bytes = (long long)(d * 1048576.0);
    } else if (!strcmp(a, "--gzip-level")) {
        checked(export_parse_number(a, v, 1, 9, &d, &err));
        c->gzip_level = (int)d;
    } else kc_usage_error("unknown option '%s'", a);
    sb_free(&err);
}

int main(int argc, char **argv)
{
    kc_set_progname("kexport");
    kc_cli_standard(argc, argv, usage_text);
    /* Each connection is used by one thread only (the shard writer thread never touches SQLite):
     * no per-call connection mutex. */
    sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
    export_config c;
    export_config_defaults(&c);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--strict"))
            continue; /* the default now */
        if (flag_option(&c, argv[i]))
            continue;
        if (!is_value_option(argv[i]))
            kc_usage_error("unknown option '%s'", argv[i]);
        if (i + 1 >= argc)
            kc_usage_error("%s needs a value", argv[i]);
        value_option(&c, argv[i], argv[i + 1]);
        i++;
    }
    if (!c.db_path || !c.out_dir)
        kc_usage_error("kexport needs --db FILE and --out DIR");
    if (c.shard_bytes < 1024 || c.gzip_level < 1 || c.gzip_level > 9 || c.max_pairs < 0)
        die("--shard-mb must allow at least 1 KiB, --gzip-level 1..9, --max-pairs >= 0");
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
