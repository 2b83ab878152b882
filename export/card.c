/* card: the dataset card README.md of an export (see card.h). */
#include "export/card.h"
#include "export/reasoning.h"

#include <string.h>

/* Hugging Face's size_categories bucket of a record count. */
static const char *size_category(long n)
{
    static const struct { long below; const char *name; } buckets[] = {
        {1000, "n<1K"}, {10000, "1K<n<10K"}, {100000, "10K<n<100K"}, {1000000, "100K<n<1M"},
        {10000000, "1M<n<10M"}, {100000000, "10M<n<100M"}, {1000000000, "100M<n<1B"}};
    for (size_t i = 0; i < sizeof buckets / sizeof buckets[0]; i++)
        if (n < buckets[i].below)
            return buckets[i].name;
    return "1B<n<10B";
}

/* The splits that have shards, in the order they were written. */
static int has_split(const export_shards *w, int upto, const char *split)
{
    for (int i = 0; i < upto; i++)
        if (!strcmp(w->shards[i].split, split))
            return 1;
    return 0;
}

static void front_matter(const export_config *c, const export_shards *w, long records,
                         strbuf *out)
{
    const char *name = export_format_name(c->format);
    sb_addf(out, "---\npretty_name: kcorpus %s export\n", name);
    sb_adds(out, "license: other\nlicense_name: model-provider-terms\n"
                 "task_categories:\n- text-generation\n");
    sb_addf(out, "size_categories:\n- %s\n", size_category(records));
    sb_addf(out, "tags:\n- code\n- cuda\n- gpu-kernels\n- kcorpus\n- %s\n", name);
    if (w->n) {
        sb_adds(out, "configs:\n- config_name: default\n  data_files:\n");
        for (int i = 0; i < w->n; i++) {
            const char *split = w->shards[i].split;
            if (has_split(w, i, split))
                continue;
            sb_addf(out, "  - split: %s\n    path: \"%s-*.jsonl%s\"\n", split, split,
                    c->gzip ? ".gz" : "");
        }
    }
    sb_adds(out, "---\n\n");
}

/* Where the answers' reasoning is, under the export's --reasoning mode. */
static const char *reasoning_note(const export_config *c)
{
    switch (c->reasoning) {
    case EXPORT_REASONING_FIELD:
        return "Each assistant message carries the reasoning written before its answer in "
               "`reasoning_content` (the field the chat templates of DeepSeek-R1 and Qwen3 render), "
               "null where there was none; the other messages have it null. "
               "`reasoning_state` says none, complete or truncated.";
    case EXPORT_REASONING_THINK:
        return "The reasoning written before an answer opens the assistant's content as "
               "`<think>\\n...\\n</think>\\n\\n`; answers without reasoning have none. "
               "`reasoning_state` says none, complete or truncated.";
    case EXPORT_REASONING_DROP:
        return "The answers' reasoning is left out of this export (`kexport --reasoning drop`).";
    }
    return "";
}

static void loading_notes(const export_config *c, const export_shards *w, strbuf *out)
{
    const char *ext = c->gzip ? ".jsonl.gz" : ".jsonl";
    const char *split = w->n ? w->shards[0].split : "train";
    sb_addf(out, "# kcorpus %s export\n\n", export_format_name(c->format));
    sb_adds(out, "Records are JSON lines, one schema per format (`schemas/record.schema.json` in "
                 "kcorpus): every field has one JSON type in every record; `null` is unknown; a "
                 "real that is not finite is `null` and named in its object's `nonfinite` field; "
                 "JSON whose keys vary (verifier evidence, sampling settings, rl ground truth) is "
                 "carried as JSON text.\n\n## Loading\n\n```python\n");
    sb_adds(out, "import datasets\nds = datasets.load_dataset(\"DIR\")   # this directory: the "
                 "splits from the configs above\n\n");
    sb_addf(out, "import pandas as pd\ndf = pd.read_json(\"DIR/%s-00000-of-NNNNN%s\", lines=True)\n\n",
            split, ext);
    sb_addf(out, "import pyarrow.json as pj\ntable = pj.read_json(\"DIR/%s-00000-of-NNNNN%s\")\n```\n\n",
            split, ext);
    sb_adds(out, "No maintained C library writes Parquet from Debian 12's packages (no Apache "
                 "Arrow/Parquet C or GLib package there), so kexport writes JSONL only. verl reads "
                 "Parquet; convert a split in one line:\n\n```sh\n");
    sb_addf(out, "python3 -c \"import glob, pandas as pd; pd.concat(pd.read_json(f, lines=True) "
                 "for f in sorted(glob.glob('DIR/train-*%s'))).to_parquet('train.parquet')\"\n"
                 "```\n\n",
            ext);
    if (export_format_has_reasoning(c->format))
        sb_addf(out, "%s\n\n", reasoning_note(c));
    if (c->format == EXPORT_RL)
        sb_adds(out, "The rl records carry verl's fields (`data_source`, `prompt`, `ability`, "
                     "`reward_model` {`style`, `ground_truth`}, `extra_info`): point verl's "
                     "`data.train_files` at the Parquet file; `ground_truth` is JSON text for the "
                     "reward function (problem, tolerance, dims, reference kernel).\n\n");
}

void export_card(const export_config *c, const export_shards *w, long records,
                 const char *datasheet, strbuf *out)
{
    sb_reset(out);
    front_matter(c, w, records, out);
    loading_notes(c, w, out);
    sb_adds(out, datasheet);
}
