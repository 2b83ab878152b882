/* config: kexport settings, their parsing helpers and canonical JSON. */
#include "export/config.h"
#include "common/error.h"
#include "common/verdicts.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void export_config_defaults(export_config *c)
{
    *c = (export_config){.format = EXPORT_SFT, .dedup = EXPORT_DEDUP_NEAR, .max_pairs = 64,
                         .shard_bytes = 256LL << 20, .gzip = 1, .gzip_level = 1};
    c->splits = xstrdup("train,valid,test");
}

void export_config_free(export_config *c)
{
    free(c->verdicts), free(c->splits), free(c->levels), free(c->system_prompt);
    free(c->runs), free(c->models);
    memset(c, 0, sizeof(*c));
}

static const char *const format_names[] = {"sft", "multiturn", "rl", "preference", "kernelbench",
                                           "plan"};
static const char *const dedup_names[] = {"none", "exact", "near"};
static const char *const reasoning_names[] = {"field", "think", "drop"};

int export_format_parse(const char *s, enum export_format *f)
{
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++)
        if (!strcmp(s, format_names[i]))
            return *f = (enum export_format)i, 0;
    return -1;
}

const char *export_format_name(enum export_format f) { return format_names[f]; }

int export_dedup_parse(const char *s, enum export_dedup *d)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, dedup_names[i]))
            return *d = (enum export_dedup)i, 0;
    return -1;
}

const char *export_dedup_name(enum export_dedup d) { return dedup_names[d]; }

int export_reasoning_parse(const char *s, enum export_reasoning *r)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, reasoning_names[i]))
            return *r = (enum export_reasoning)i, 0;
    return -1;
}

const char *export_reasoning_name(enum export_reasoning r) { return reasoning_names[r]; }

void export_config_json(const export_config *c, strbuf *out)
{
    json_t *o = json_pack("{s:s, s:b, s:s?, s:f, s:s, s:s?, s:s, s:i, s:I, s:b, s:i, s:s?}",
                          "format", export_format_name(c->format), "sft_every_turn",
                          c->sft_every_turn, "verdicts", c->verdicts, "min_speedup", c->min_speedup,
                          "splits", c->splits, "levels", c->levels, "dedup",
                          export_dedup_name(c->dedup), "max_pairs", c->max_pairs, "shard_bytes",
                          (json_int_t)c->shard_bytes, "gzip", c->gzip, "gzip_level", c->gzip_level,
                          "system_prompt", c->system_prompt);
    if (c->runs) /* only when given: an export without them keeps its bytes */
        json_object_set_new(o, "runs", json_string(c->runs));
    if (c->models)
        json_object_set_new(o, "models", json_string(c->models));
    if (c->skip_bad_text)
        json_object_set_new(o, "skip_bad_text", json_true());
    if (c->include_degenerate)
        json_object_set_new(o, "include_degenerate", json_true());
    json_object_set_new(o, "reasoning", json_string(export_reasoning_name(c->reasoning)));
    char *s = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(10));
    sb_reset(out);
    sb_adds(out, s);
    free(s);
    json_decref(o);
}

void export_degenerate_filter(const export_config *c, strbuf *where)
{
    if (!c->include_degenerate)
        sb_adds(where, " AND NOT " EXPORT_DEGENERATE_SQL);
}

/* ---- validation of the filter values (kexport's flags) ---- */

/* --verdict's values: the names of common/verdicts.c, NULL-terminated. */
const char *const *export_verdict_names(void)
{
    static const char *names[KC_N_VERDICTS + 1];
    for (int i = 0; i < KC_N_VERDICTS; i++)
        names[i] = kc_verdicts[i].name;
    return names;
}
const char *const export_split_values[] = {"train", "valid", "test", "heldout", NULL};

static int in_list(const char *const *names, const char *s, size_t n)
{
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == n && !strncmp(names[i], s, n))
            return 1;
    return 0;
}

int export_check_list(const char *opt, const char *list, const char *const *valid, int allow_any,
                      strbuf *err)
{
    if (allow_any && !strcmp(list, "any"))
        return 0;
    for (const char *p = list;;) {
        size_t n = strcspn(p, ",");
        if (!n || !in_list(valid, p, n)) {
            strbuf names = STRBUF_INIT;
            for (int i = 0; valid[i]; i++)
                sb_addf(&names, "%s%s", i ? ", " : "", valid[i]);
            kc_fail(err, "%s: %s'%.*s' is not one of %s%s (comma separated)", opt,
                    n ? "" : "an empty value ", (int)n, p, names.buf, allow_any ? ", or any" : "");
            sb_free(&names);
            return -1;
        }
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

int export_check_levels(const char *list, strbuf *err)
{
    for (const char *p = list;;) {
        size_t n = strspn(p, "0123456789");
        if (!n || n > 6 || (p[n] && p[n] != ',') || atoi(p) < 1)
            return kc_fail(err, "--level: expected problem levels (whole numbers from 1) separated "
                                "by commas, got '%s'", list);
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

int export_parse_number(const char *opt, const char *v, double lo, double hi, double *out,
                        strbuf *err)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !isfinite(x) || x < lo || x > hi)
        return kc_fail(err, "%s: expected a number from %g to %g, got '%s'", opt, lo, hi, v);
    *out = x;
    return 0;
}
