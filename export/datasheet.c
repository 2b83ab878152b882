/* datasheet: an export's own DATASHEET.md, every sentence true of what was exported (see
 * datasheet.h). */
#include "export/datasheet.h"
#include "export/provenance.h"
#include "export/reasoning.h"
#include "export/records_internal.h"

#include <string.h>

/* Who wrote the answers of the records: the test server, the model(s), or both. */
static const char *writer_words(const export_counts *n, const json_t *prov)
{
    int models = (int)json_array_size(json_object_get(prov, "models"));
    if (n->synthetic && n->synthetic == n->records)
        return "the test server";
    if (n->synthetic)
        return "the models or the test server";
    return models > 1 ? "the models" : "the model";
}

/* Where a record of the format names its run (and marks it synthetic). */
static const char *run_field(enum export_format f)
{
    switch (f) {
    case EXPORT_RL: return "extra_info.synthetic";
    case EXPORT_PREFERENCE: return "provenance.chosen.run` and `provenance.rejected.run";
    default: return "provenance.run";
    }
}

static void join_strings(const json_t *a, strbuf *out)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) sb_addf(out, "%s%s", i ? ", " : "", json_string_value(v));
}

static const char *format_description(const export_config *c)
{
    switch (c->format) {
    case EXPORT_SFT:
        return c->sft_every_turn
                   ? "chat messages (system, user spec, assistant kernel), one per turn whose kernel "
                     "the verdict filter keeps"
                   : "chat messages (system, user spec, assistant kernel), one per trajectory: its "
                     "last turn whose kernel the verdict filter keeps";
    case EXPORT_MULTITURN: return "whole trajectories: spec, then the answers and the verifier's feedback alternating";
    case EXPORT_RL: return "one prompt per problem with what a reward function needs (verl fields)";
    case EXPORT_PREFERENCE: return "chosen (correct, fastest first) and rejected kernels of the same problem";
    case EXPORT_KERNELBENCH: return "KernelBench-style Python modules (ModelNew through load_inline) of the kernels, in kernelbench/";
    case EXPORT_PLAN: return "(spec, hardware facts, plan) -> outcome pairs of kcollect --strategy mtmc plans, for training a planner";
    }
    return "";
}

/* What the verdict class counts of a format are of (NULL: the format has none: rl). */
static const char *classes_title(enum export_format f)
{
    switch (f) {
    case EXPORT_SFT: case EXPORT_KERNELBENCH: return "Verdict classes of the kernels";
    case EXPORT_PREFERENCE: return "Verdict classes of the chosen kernels";
    case EXPORT_MULTITURN: return "Best verdict class of each trajectory's turns";
    case EXPORT_PLAN: return "Best verdict class of each plan's steps";
    case EXPORT_RL: return NULL;
    }
    return NULL;
}

static int compiled_class(void) { return export_class_index("compiled"); }

/* "The labels come from ...": what verification the records' kernels had. */
static void labels_origin(const export_ctx *x, strbuf *out)
{
    const export_counts *n = &x->counts;
    int rl = x->cfg->format == EXPORT_RL;
    if (!n->with_kernels)
        return;
    if (n->on_gpu == n->with_kernels)
        sb_adds(out, rl ? " The counts in each record's extra_info come from kernels compiled with "
                          "NVRTC and, where they compiled, run on a GPU against a trusted reference."
                        : " The labels of this export come from compiling each kernel with NVRTC and, where it "
                          "compiled, running it on a GPU against a trusted reference (correct "
                          "kernels are also timed).");
    else if (!n->on_gpu)
        sb_adds(out, rl ? " No candidate counted in extra_info was run on a GPU: verification "
                          "stopped at compilation (compile-only), so `correct` is 0 and "
                          "`best_speedup_eager` null for want of a GPU, not of a correct kernel."
                        : " No kernel of this export was run on a GPU: verification stopped at "
                          "compilation (compile-only), so a label says whether a kernel compiled, "
                          "not whether it is correct or how fast it is.");
    else
        sb_addf(out, " %ld of the %ld records have a kernel run on a GPU against a trusted "
                     "reference; for the other %ld, verification stopped at compilation "
                     "(compile-only): their labels say whether a kernel compiled, not whether it is "
                     "correct.", n->on_gpu, n->with_kernels, n->with_kernels - n->on_gpu);
}

static void motivation(const export_ctx *x, strbuf *out)
{
    sb_adds(out, "## Motivation\nFine-tuning and evaluating models that write CUDA kernels.");
    labels_origin(x, out);
    if (x->counts.synthetic == x->counts.records)
        sb_adds(out, " Every record is synthetic: this export is for testing the pipeline, not for "
                     "training or evaluating a model.");
    sb_adds(out, "\n\n");
}

static void class_counts(const export_ctx *x, strbuf *out)
{
    const export_counts *n = &x->counts;
    const char *title = classes_title(x->cfg->format);
    if (!title)
        return;
    sb_addf(out, "- %s:", title);
    int first = 1;
    for (int i = 0; i < EXPORT_N_CLASSES; i++)
        if (n->by_class[i]) {
            sb_addf(out, "%s %s %ld", first ? "" : ";", export_class_name(i), n->by_class[i]);
            first = 0;
        }
    if (n->by_class[compiled_class()])
        sb_adds(out, " (`compiled`: it compiled and was never run: whether it is correct is unknown)");
    sb_adds(out, ".\n");
}

static void composition(const export_ctx *x, const json_t *reasoning, const char *writer,
                        const export_shards *w, strbuf *out)
{
    const export_counts *n = &x->counts;
    sb_addf(out, "## Composition\n- Format: %s: %s.\n- Records: %ld", export_format_name(x->cfg->format),
            format_description(x->cfg), n->records);
    for (int i = 0; i < 4; i++)
        if (n->by_split[i])
            sb_addf(out, "; %s %ld", export_split_names[i], n->by_split[i]);
    sb_adds(out, ".\n");
    class_counts(x, out);
    if (n->with_speedup)
        sb_addf(out, "- Mean eager speedup of timed records: %.3fx over %ld records.\n",
                n->sum_speedup / (double)n->with_speedup, n->with_speedup);
    export_reasoning_datasheet(x, reasoning, writer, out);
    sb_addf(out, "- Shards: %d, %llu bytes of JSONL%s.\n\n", w->n,
            (unsigned long long)w->total_jsonl, x->cfg->gzip ? " before gzip" : "");
}

/* Who wrote the kernels, and where a record says so. */
static void authors(const export_ctx *x, const json_t *prov, strbuf *out)
{
    const export_counts *n = &x->counts;
    int rl = x->cfg->format == EXPORT_RL;
    const char *what = rl ? "The kernels counted in extra_info" : "The answers";
    const char *field = run_field(x->cfg->format);
    strbuf servers = STRBUF_INIT;
    join_strings(json_object_get(prov, "synthetic_servers"), &servers);
    long from_runs = n->records - n->without_run;
    if (!from_runs)
        sb_adds(out, "The kernels were imported (kverify import): no kcollect run, no model or "
                     "prompt of their own is recorded");
    else if (n->synthetic == from_runs)
        sb_addf(out, "%s were written in the kcollect closed loop by a test server (%s), not by "
                     "a language model (`%s`; the runs' model field is the name they were "
                     "recorded under)", what, servers.buf, field);
    else if (n->synthetic)
        sb_addf(out, "%s were written in the kcollect closed loop by the model(s) of the runs "
                     "listed above, except in the %ld records marked synthetic (`%s`), whose "
                     "answers a test server (%s) wrote", what, n->synthetic, field, servers.buf);
    else
        sb_addf(out, "%s were written in the kcollect closed loop by the model(s) of the runs "
                     "listed above%s", what, rl ? "" : " (each record's provenance names its run, "
                                                       "model and sampling settings)");
    if (from_runs && n->without_run)
        sb_addf(out, "; the kernels of %ld records were imported (kverify import), with no run",
                n->without_run);
    sb_free(&servers);
}

/* Whether a record of the format carries its kernel's verification (provenance.verification). */
static int has_verification(enum export_format f)
{
    return f == EXPORT_SFT || f == EXPORT_MULTITURN || f == EXPORT_PREFERENCE || f == EXPORT_KERNELBENCH;
}

/* How the kernels were verified. */
static void verification(const export_ctx *x, strbuf *out)
{
    const export_counts *n = &x->counts;
    int own = has_verification(x->cfg->format);
    const char *where = own ? " (version, GPU, driver and seeds in provenance.verification)" : "";
    if (!n->with_kernels)
        return;
    if (n->on_gpu == n->with_kernels)
        sb_addf(out, ". kverify verified the kernels on a GPU%s", where);
    else if (!n->on_gpu)
        sb_addf(out, ". kverify checked the kernels without a GPU: NVRTC compiled (or refused) each in "
                     "its sandbox, and none was run%s", own ? " (version and NVRTC in "
                                                               "provenance.verification; no GPU, "
                                                               "seeds or timing)" : "");
    else
        sb_addf(out, ". kverify verified the kernels, on a GPU for %ld records and by compilation alone "
                     "for the other %ld%s", n->on_gpu, n->with_kernels - n->on_gpu, where);
}

static void collection(const export_ctx *x, const json_t *prov, strbuf *out)
{
    const export_config *c = x->cfg;
    sb_adds(out, "## Collection\n");
    authors(x, prov, out);
    verification(x, out);
    if (c->format == EXPORT_RL)
        sb_adds(out, ". The prompts are the ones kcollect builds (its system message and the "
                     "problem's spec)");
    else if (c->format == EXPORT_PLAN)
        sb_adds(out, ". Each record's system message and spec are the ones kcollect builds (its "
                     "system message and the problem's spec); the plan and the planner's answer "
                     "are as recorded");
    else if (c->format == EXPORT_KERNELBENCH)
        ; /* modules: no prompt */
    else if (x->counts.records > x->counts.without_run)
        sb_addf(out, ". The system and first user message of each record are the ones sent in its "
                     "trajectory's first request, as recorded%s",
                x->counts.without_run ? "; imported kernels carry the prompt kcollect builds (its "
                                        "system message and the problem's spec)"
                                      : "");
    else
        sb_adds(out, ". They carry the prompt kcollect builds (its system message and the "
                     "problem's spec)");
    sb_addf(out, "%s.\n\n", c->system_prompt ? "; the system message is replaced by the one in "
                                               "manifest.json" : "");
}

/* The verdicts a format's --verdict filter kept, in words. */
static void verdict_filter(const export_config *c, strbuf *out)
{
    int any = !c->verdicts || !strcmp(c->verdicts, "any");
    switch (c->format) {
    case EXPORT_RL: case EXPORT_PLAN: return;
    case EXPORT_MULTITURN:
        sb_addf(out, "trajectories %s, ", any ? "all" : "solved only");
        return;
    case EXPORT_PREFERENCE:
        sb_addf(out, "verdicts %s (of rejected kernels; chosen ones are correct), ",
                c->verdicts ? c->verdicts : "any");
        return;
    default:
        sb_addf(out, "verdicts %s, ", c->verdicts ? c->verdicts : c->format == EXPORT_SFT ? "correct" : "any");
    }
}

static void labelling(const export_ctx *x, strbuf *out)
{
    const export_config *c = x->cfg;
    if (c->format == EXPORT_RL)
        sb_adds(out, "## Labelling\nThe counts in extra_info come from kcurate's verdict classes of "
                     "the problem's candidates (parameters in manifest.json, "
                     "source.curate_params). ");
    else
        sb_addf(out, "## Labelling\nVerdicts and flags come from the verifier; kcurate adds "
                     "verdict classes, %srewards, returns, exact and near duplicates (parameters in "
                     "manifest.json, source.curate_params)%s. ",
                x->counts.with_speedup ? "KernelBench speedup tiers of timed kernels, " : "",
                c->format == EXPORT_SFT || c->format == EXPORT_PREFERENCE
                    ? "; duplicates are the same kernel source, whatever reasoning led to it: a "
                      "record keeps the reasoning of its representative (provenance.response_id, "
                      "provenance.reasoning_sha256)"
                    : "");
    sb_adds(out, "Filters of this export: ");
    verdict_filter(c, out);
    if (c->format != EXPORT_RL && c->format != EXPORT_PLAN)
        sb_addf(out, "minimum eager speedup %g, ", c->min_speedup);
    sb_addf(out, "splits %s, levels %s", c->splits ? c->splits : "all", c->levels ? c->levels : "all");
    if (c->runs)
        sb_addf(out, ", runs %s", c->runs);
    if (c->models)
        sb_addf(out, ", models %s", c->models);
    if (c->format != EXPORT_RL && c->format != EXPORT_PLAN && c->format != EXPORT_MULTITURN)
        sb_addf(out, ", duplicates removed: %s", export_dedup_name(c->dedup));
    sb_adds(out, ".\n\n");
}

/* What each split present is for. */
static void split_uses(const export_counts *n, strbuf *out)
{
    static const char *const use[4] = {"training (train)", "model selection (valid)",
                                       "evaluation (test)", "held-out evaluation (heldout)"};
    int k = 0, total = 0;
    for (int i = 0; i < 4; i++)
        total += n->by_split[i] > 0;
    for (int i = 0; i < 4; i++)
        if (n->by_split[i])
            sb_addf(out, "%s%s", k++ ? (k == total ? " and " : ", ") : "", use[i]);
}

static void uses(const export_ctx *x, strbuf *out)
{
    const export_counts *n = &x->counts;
    sb_adds(out, "## Uses\n");
    if (n->synthetic == n->records) {
        sb_adds(out, "Testing the pipeline only: every record is synthetic (written by a test "
                     "server), so it teaches no model to write kernels and measures none.");
    } else {
        sb_adds(out, "By split: ");
        split_uses(n, out);
        sb_adds(out, ".");
        if (n->synthetic)
            sb_addf(out, " The %ld synthetic records are for testing the pipeline only.", n->synthetic);
    }
    sb_adds(out, " Problems on the held-out list are never in train.");
    if (n->suspicious)
        sb_addf(out, " %ld record%s a kernel flagged suspicious (speedup above the audit "
                     "threshold): look at %s before training on %s.",
                n->suspicious, n->suspicious == 1 ? " has" : "s have",
                n->suspicious == 1 ? "it" : "them", n->suspicious == 1 ? "it" : "them");
    sb_adds(out, "\n\n");
}

static void caveats(const export_ctx *x, const json_t *prov, strbuf *out)
{
    const export_counts *n = &x->counts;
    sb_adds(out, "## Caveats\n");
    size_t header = out->len;
    if (n->synthetic) {
        sb_addf(out, "- The answers of %ld record%s were written by a test server (", n->synthetic,
                n->synthetic == 1 ? "" : "s");
        join_strings(json_object_get(prov, "synthetic_servers"), out);
        sb_adds(out, ", provenance.run.server), not by a language model: synthetic, for testing "
                     "the pipeline, not for training.\n");
    }
    if (n->by_class[compiled_class()])
        sb_adds(out, "- `compiled` (a compile-only run, no GPU) is not known to be correct: it "
                     "compiled, nothing more.\n");
    if (n->with_speedup)
        sb_adds(out, "- Speedups hold for the GPU and the baselines recorded in each record.\n");
    if (x->stale_candidates)
        sb_addf(out, "- Exported with --allow-stale: %ld candidates were collected or verified "
                     "after their labels were made.\n", x->stale_candidates);
    if (x->cfg->no_racecheck && x->race_unchecked)
        sb_addf(out, "- Exported with --no-racecheck: %ld correct labels lack the race check "
                     "they need.\n", x->race_unchecked);
    if (out->len == header)
        sb_adds(out, "- None particular to this export; the general limits are in kcorpus's "
                     "DATASHEET.md.\n");
    sb_adds(out, "\n");
}

void export_datasheet(const export_ctx *x, const json_t *source, const json_t *reasoning,
                      const json_t *prov, const export_shards *w, strbuf *out)
{
    const char *writer = writer_words(&x->counts, prov);
    strbuf said = STRBUF_INIT;
    sb_reset(out);
    sb_addf(out, "# Datasheet: kcorpus %s export\n\n", export_format_name(x->cfg->format));
    sb_addf(out, "Generated by kexport %s from database %s (curate run %lld). The general datasheet "
                 "of kcorpus datasets is DATASHEET.md in the kcorpus repository; this one gives the "
                 "numbers of this export.\n\n",
            KC_VERSION, x->db_uuid,
            (long long)json_integer_value(json_object_get(source, "curate_run_id")));
    provenance_datasheet(prov, run_field(x->cfg->format), &said); /* synthetic answers and runs: said up front */
    sb_adds(out, sb_str(&said));
    sb_free(&said);
    motivation(x, out);
    composition(x, reasoning, writer, w, out);
    collection(x, prov, out);
    labelling(x, out);
    uses(x, out);
    caveats(x, prov, out);
    sb_adds(out, "## Distribution\nJSONL shards (see manifest.json for names, record counts and "
                 "sha256), described by schemas/record.schema.json.\n\n"
                 "## Maintenance\nRe-export from the same database and config to reproduce these "
                 "files byte for byte; report problems to the kcorpus maintainers.\n");
}
