/* serve_request: the body of POST /v1/verify and the answer for each item (serve_request.h).
 * The reward is kcurate's: the verification's facts go to the one reward rule both use
 * (common/reward.c), so it lives in one place. */
#include "verify/cli/serve_request.h"
#include "common/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int in_range(double v, double lo, double hi)
{
    return isfinite(v) && v >= lo && v <= hi;
}

int serve_reward_check(const kc_reward_params *r, strbuf *err)
{
    if (!in_range(r->correct, -100, 100) || !in_range(r->incorrect, -100, 100))
        return kc_fail(err, "reward correct and incorrect must be in [-100, 100]");
    if (!in_range(r->speedup_weight, 0, 100))
        return kc_fail(err, "reward speedup_weight must be in [0, 100]");
    if (!in_range(r->speedup_cap, 1e-9, 1000))
        return kc_fail(err, "reward speedup_cap must be in (0, 1000]");
    if (!in_range(r->suspicious_speedup, 1e-9, 1e6))
        return kc_fail(err, "reward suspicious_speedup must be in (0, 1e6]");
    return 0;
}

double serve_reward(const kc_reward_params *rp, const kv_result *r, int *suspicious)
{
    double speedup = r->timed ? r->timing.speedup_eager : 0;
    kc_reward k = kc_reward_of(rp, r->verdict, sb_str(&r->flags), speedup);
    if (suspicious)
        *suspicious = k.suspicious;
    return k.reward;
}

json_t *serve_reward_json(const kc_reward_params *r)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f}", "correct", r->correct, "incorrect", r->incorrect,
                     "speedup_weight", r->speedup_weight, "speedup_cap", r->speedup_cap,
                     "suspicious_speedup", r->suspicious_speedup);
}

/* {"correct": F, ...} over the defaults already in r; unknown keys are refused (a typo must not
 * change rewards silently). */
static int parse_reward(json_t *obj, kc_reward_params *r, strbuf *err)
{
    if (!json_is_object(obj))
        return kc_fail(err, "\"reward\" must be an object");
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        double *field = !strcmp(key, "correct")              ? &r->correct
                        : !strcmp(key, "incorrect")          ? &r->incorrect
                        : !strcmp(key, "speedup_weight")     ? &r->speedup_weight
                        : !strcmp(key, "speedup_cap")        ? &r->speedup_cap
                        : !strcmp(key, "suspicious_speedup") ? &r->suspicious_speedup
                                                             : NULL;
        if (!field)
            return kc_fail(err, "unknown reward parameter \"%.64s\" (correct, incorrect, "
                                "speedup_weight, speedup_cap, suspicious_speedup)", key);
        if (!json_is_number(v))
            return kc_fail(err, "reward parameter \"%s\" must be a number", key);
        *field = json_number_value(v);
    }
    return serve_reward_check(r, err);
}

int serve_problem_id_ok(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > 128 || !strchr(id, '/') || strstr(id, "..") || id[0] == '/')
        return 0;
    for (const char *s = id; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("_.-/", *s)))
            return 0;
    return 1;
}

/* One item {"problem_id", "completion", "id"?}; where names the item in errors. */
static int parse_item(json_t *obj, const serve_limits *lim, const char *where, serve_item_in *it,
                      strbuf *err)
{
    if (!json_is_object(obj))
        return kc_fail(err, "%s must be an object with \"problem_id\" and \"completion\"", where), 400;
    json_t *pid = json_object_get(obj, "problem_id"), *text = json_object_get(obj, "completion");
    if (!pid)
        return kc_fail(err, "%s: missing field \"problem_id\"", where), 400;
    if (!text)
        return kc_fail(err, "%s: missing field \"completion\"", where), 400;
    if (!json_is_string(pid) || !serve_problem_id_ok(json_string_value(pid)))
        return kc_fail(err, "%s: \"problem_id\" must be a problem id such as level1/019_relu", where),
               400;
    if (!json_is_string(text))
        return kc_fail(err, "%s: \"completion\" must be a string", where), 400;
    if (json_string_length(text) > lim->max_completion)
        return kc_fail(err, "%s: completion of %zu bytes is over the limit of %zu", where,
                       json_string_length(text), lim->max_completion), 413;
    it->problem_id = xstrdup(json_string_value(pid));
    it->completion = xstrdup(json_string_value(text));
    json_t *id = json_object_get(obj, "id");
    it->id = id ? json_incref(id) : NULL;
    return 0;
}

static int parse_items(json_t *root, const serve_limits *lim, serve_parsed *out, strbuf *err)
{
    json_t *items = json_object_get(root, "items");
    if (!items) {
        out->items = xcalloc(1, sizeof *out->items);
        out->n = 1;
        return parse_item(root, lim, "the request", &out->items[0], err);
    }
    out->batch = 1;
    if (!json_is_array(items) || json_array_size(items) == 0)
        return kc_fail(err, "\"items\" must be a non-empty array"), 400;
    if (json_array_size(items) > (size_t)lim->max_items)
        return kc_fail(err, "%zu items is over the limit of %d per request",
                       json_array_size(items), lim->max_items), 413;
    out->items = xcalloc(json_array_size(items), sizeof *out->items);
    size_t i;
    json_t *v;
    json_array_foreach(items, i, v)
    {
        char where[48];
        snprintf(where, sizeof where, "items[%zu]", i);
        int status = parse_item(v, lim, where, &out->items[i], err);
        if (status)
            return status;
        out->n++;
    }
    return 0;
}

int serve_parse_request(const char *body, size_t len, const serve_limits *lim,
                        const kc_reward_params *defaults, serve_parsed *out, strbuf *err)
{
    *out = (serve_parsed){.reward = *defaults};
    if (len > lim->max_body)
        return kc_fail(err, "request body of %zu bytes is over the limit of %zu", len,
                       lim->max_body), 413;
    json_error_t jerr;
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return kc_fail(err, "malformed JSON: %s (line %d, column %d)", jerr.text, jerr.line,
                       jerr.column), 400;
    int status = 0;
    if (!json_is_object(root))
        status = 400, kc_fail(err, "the body must be a JSON object");
    else if (json_object_get(root, "reward") &&
             parse_reward(json_object_get(root, "reward"), &out->reward, err))
        status = 400;
    else
        status = parse_items(root, lim, out, err);
    json_decref(root);
    if (status)
        serve_parsed_free(out);
    return status;
}

void serve_parsed_free(serve_parsed *in)
{
    for (int i = 0; i < in->n; i++) {
        free(in->items[i].problem_id);
        free(in->items[i].completion);
        json_decref(in->items[i].id);
    }
    free(in->items);
    in->items = NULL;
    in->n = 0;
}

json_t *serve_result_json(const problem *p, const kv_result *r, const kc_reward_params *rp,
                          json_t *item_id)
{
    strbuf text = STRBUF_INIT;
    kv_result_json(p, r, &text);
    json_t *o = json_loadb(text.buf, text.len, 0, NULL);
    sb_free(&text);
    if (!o) /* kv_result_json writes valid JSON; never leave an answer without its verdict */
        o = json_pack("{s:s, s:s}", "problem", p->id, "verdict", r->verdict);
    int suspicious = 0;
    double reward = serve_reward(rp, r, &suspicious);
    json_object_set_new(o, "reward", json_real(reward));
    json_object_set_new(o, "reward_suspicious", json_boolean(suspicious));
    if (item_id)
        json_object_set(o, "id", item_id);
    return o;
}
