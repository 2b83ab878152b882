/* reasoning: the reasoning an export carries, for its manifest and datasheet (see reasoning.h). */
#include "export/reasoning.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

int export_format_has_reasoning(enum export_format f)
{
    return f == EXPORT_SFT || f == EXPORT_MULTITURN || f == EXPORT_PREFERENCE || f == EXPORT_PLAN;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The median of the texts' lengths (the mean of the two middle ones for an even count). */
static json_t *median_chars(const export_reasoning_stats *s)
{
    if (!s->texts)
        return json_null();
    long *v = xcalloc((size_t)s->texts, sizeof *v);
    memcpy(v, s->chars, (size_t)s->texts * sizeof *v);
    qsort(v, (size_t)s->texts, sizeof *v, cmp_long);
    double m = (v[(s->texts - 1) / 2] + v[s->texts / 2]) / 2.0;
    free(v);
    return json_real(m);
}

/* The distinct context policies of the runs, in order of first appearance. */
static json_t *contexts(const json_t *prov)
{
    json_t *out = json_array(), *run, *seen;
    size_t i, k;
    json_array_foreach(json_object_get(prov, "runs"), i, run) {
        const char *c = json_string_value(json_object_get(run, "context"));
        int dup = 0;
        json_array_foreach(out, k, seen) dup |= c && !strcmp(json_string_value(seen), c);
        if (c && !dup)
            json_array_append_new(out, json_string(c));
    }
    return out;
}

json_t *export_reasoning_json(const export_ctx *x, const json_t *prov)
{
    if (!export_format_has_reasoning(x->cfg->format))
        return json_null();
    const export_reasoning_stats *s = &x->reasoning_stats;
    long n = x->counts.records;
    return json_pack("{s:s, s:I, s:f, s:I, s:o, s:I, s:o}", "mode",
                     export_reasoning_name(x->cfg->reasoning), "records", (json_int_t)s->records,
                     "share", n ? (double)s->records / (double)n : 0.0, "texts",
                     (json_int_t)s->texts, "median_chars", median_chars(s), "truncated",
                     (json_int_t)s->truncated, "context", contexts(prov));
}

static const char *where_it_is(enum export_reasoning mode)
{
    switch (mode) {
    case EXPORT_REASONING_FIELD: return "in `reasoning_content` beside the answer's content (null where the model gave none)";
    case EXPORT_REASONING_THINK: return "as `<think>\\n...\\n</think>\\n\\n` before the answer's content";
    case EXPORT_REASONING_DROP: return "not exported here (--reasoning drop)";
    }
    return "";
}

/* How the requests treated earlier reasoning: the context policies, joined. */
static void context_words(const json_t *reasoning, strbuf *out)
{
    json_t *c;
    size_t i;
    json_array_foreach(json_object_get(reasoning, "context"), i, c) {
        const char *name = json_string_value(c);
        sb_addf(out, "%s`%s` (%s)", i ? "; " : "", name,
                !strcmp(name, "full") ? "earlier answers were sent back with their reasoning"
                                      : "earlier answers were sent back without their reasoning");
    }
}

void export_reasoning_datasheet(const export_ctx *x, const json_t *reasoning, const char *writer,
                                strbuf *out)
{
    if (!json_is_object(reasoning))
        return;
    long n = x->counts.records, with = (long)json_integer_value(json_object_get(reasoning, "records"));
    const export_reasoning_stats *s = &x->reasoning_stats;
    if (!with) {
        sb_addf(out, "- Reasoning: none of the %ld records carries reasoning (%s gave none).\n", n,
                writer);
    } else {
        sb_addf(out, "- Reasoning: %ld of %ld records (%.1f%%) carry %s%s reasoning, %s; "
                     "median length %.1f characters over the %ld reasoning texts; %ld cut short "
                     "(`reasoning_state` 'truncated': the token limit or the answer cap ended it).\n",
                with, n, 100.0 * (double)with / (double)(n ? n : 1), writer,
                writer[strlen(writer) - 1] == 's' ? "'" : "'s",
                where_it_is(x->cfg->reasoning),
                json_real_value(json_object_get(reasoning, "median_chars")), s->texts, s->truncated);
    }
    if (json_array_size(json_object_get(reasoning, "context"))) {
        sb_adds(out, "- Context policy of the requests: ");
        context_words(reasoning, out);
        sb_addf(out, ". The answers and reasoning in the records are what %s produced.\n", writer);
    }
}
