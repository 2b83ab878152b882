/* config: defaults, environment, JSON config file, flags; run identity and
 * cost (see config.h). */
#include "collect/config.h"
#include "common/error.h"
#include "common/hash.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void config_defaults(collect_config *c)
{
    memset(c, 0, sizeof *c);
    c->db_path = xstrdup("kc.db");
    c->samples = 1;
    c->turns = 4;
    c->budget_minutes = 15;
    c->concurrency = 4;
    c->stream = 1;
    c->max_tokens = 16384;
    c->temperature = -1;
    c->context = CONTEXT_DROP_REASONING;
    llm_client_options_default(&c->client);
}

static void wipe_free(char *s)
{
    if (s) {
        memset(s, 0, strlen(s));
        free(s);
    }
}

void config_free(collect_config *c)
{
    free(c->problems);
    free(c->model);
    for (int i = 0; i < c->n_endpoints; i++)
        free(c->endpoint_urls[i]);
    free(c->bundled_args);
    free(c->db_path);
    free(c->config_file);
    json_decref(c->price_table);
    wipe_free(c->openai_key);
    wipe_free(c->anthropic_key);
    memset(c, 0, sizeof *c);
}

static void replace(char **slot, const char *v)
{
    free(*slot);
    *slot = v ? xstrdup(v) : NULL;
}

void config_from_env(collect_config *c)
{
    const char *v;
    if ((v = getenv("OPENAI_API_KEY")) && *v)
        replace(&c->openai_key, v);
    if ((v = getenv("ANTHROPIC_API_KEY")) && *v)
        replace(&c->anthropic_key, v);
    if ((v = getenv("OPENAI_BASE_URL")) && *v && c->n_endpoints == 0)
        c->endpoint_urls[c->n_endpoints++] = xstrdup(v);
}

static int parse_int(const char *key, const char *v, long lo, long hi, long *out, strbuf *err)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < lo || x > hi)
        return kc_fail(err, "%s: expected an integer in [%ld, %ld], got '%s'", key, lo, hi, v);
    *out = x;
    return 0;
}

static int parse_num(const char *key, const char *v, double lo, double hi, double *out, strbuf *err)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x >= lo && x <= hi))
        return kc_fail(err, "%s: expected a number in [%g, %g], got '%s'", key, lo, hi, v);
    *out = x;
    return 0;
}

static int parse_bool(const char *key, const char *v, int *out, strbuf *err)
{
    if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"))
        *out = 1;
    else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no"))
        *out = 0;
    else
        return kc_fail(err, "%s: expected true or false, got '%s'", key, v);
    return 0;
}

/* Endpoints given as "url1,url2" replace the list. */
static int set_endpoints(collect_config *c, const char *v, strbuf *err)
{
    for (int i = 0; i < c->n_endpoints; i++)
        free(c->endpoint_urls[i]);
    c->n_endpoints = 0;
    char *copy = xstrdup(v), *save = NULL;
    for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        if (c->n_endpoints == CC_MAX_ENDPOINTS) {
            free(copy);
            return kc_fail(err, "endpoint: at most %d endpoints", CC_MAX_ENDPOINTS);
        }
        if (strcmp(t, CC_BUNDLED) != 0 && strncmp(t, "http://", 7) && strncmp(t, "https://", 8)) {
            kc_fail(err, "endpoint: '%s' is not an http:// or https:// URL", t);
            free(copy);
            return -1;
        }
        c->endpoint_urls[c->n_endpoints++] = xstrdup(t);
    }
    free(copy);
    if (c->n_endpoints == 1 && !strcmp(c->endpoint_urls[0], CC_BUNDLED)) {
        free(c->endpoint_urls[0]);
        c->n_endpoints = 0;
    }
    return 0;
}

static int set_context(collect_config *c, const char *v, strbuf *err)
{
    if (!strcmp(v, "full"))
        c->context = CONTEXT_FULL;
    else if (!strcmp(v, "drop-reasoning"))
        c->context = CONTEXT_DROP_REASONING;
    else
        return kc_fail(err, "context: expected full or drop-reasoning, got '%s'", v);
    return 0;
}

static int set_price(collect_config *c, const char *v, strbuf *err)
{
    double in, out, reasoning = -1;
    int n = sscanf(v, "%lf,%lf,%lf", &in, &out, &reasoning);
    if (n < 2 || in < 0 || out < 0)
        return kc_fail(err, "price: expected INPUT,OUTPUT[,REASONING] dollars per million tokens, got '%s'", v);
    c->cost.input = in;
    c->cost.output = out;
    c->cost.reasoning = n == 3 && reasoning >= 0 ? reasoning : out;
    c->cost.known = 1;
    return 0;
}

int config_set(collect_config *c, const char *key, const char *v, strbuf *err)
{
    long n;
    if (!strcmp(key, "problems"))
        replace(&c->problems, v);
    else if (!strcmp(key, "model"))
        replace(&c->model, v);
    else if (!strcmp(key, "db"))
        replace(&c->db_path, v);
    else if (!strcmp(key, "endpoint"))
        return set_endpoints(c, v, err);
    else if (!strcmp(key, "bundled_args"))
        replace(&c->bundled_args, v);
    else if (!strcmp(key, "api")) {
        if (llm_api_parse(v, &c->api) < 0)
            return kc_fail(err, "api: expected openai or anthropic, got '%s'", v);
        c->api_set = 1;
    } else if (!strcmp(key, "samples")) {
        if (parse_int(key, v, 1, 100000, &n, err))
            return -1;
        c->samples = (int)n;
    } else if (!strcmp(key, "turns")) {
        if (parse_int(key, v, 1, 1000, &n, err))
            return -1;
        c->turns = (int)n;
    } else if (!strcmp(key, "budget")) {
        return parse_num(key, v, 0, 1e7, &c->budget_minutes, err);
    } else if (!strcmp(key, "problem_budget")) {
        return parse_num(key, v, 0, 1e7, &c->problem_budget_minutes, err);
    } else if (!strcmp(key, "problem_budget_tokens")) {
        if (parse_int(key, v, 0, 1L << 40, &n, err))
            return -1;
        c->problem_budget_tokens = n;
    } else if (!strcmp(key, "budget_tokens")) {
        if (parse_int(key, v, 0, 1L << 40, &n, err))
            return -1;
        c->budget_tokens = n;
    } else if (!strcmp(key, "concurrency")) {
        if (parse_int(key, v, 1, 4096, &n, err))
            return -1;
        c->concurrency = (int)n;
    } else if (!strcmp(key, "compile_only")) {
        return parse_bool(key, v, &c->compile_only, err);
    } else if (!strcmp(key, "stream")) {
        return parse_bool(key, v, &c->stream, err);
    } else if (!strcmp(key, "max_tokens")) {
        if (parse_int(key, v, 1, 10000000, &n, err))
            return -1;
        c->max_tokens = (int)n;
    } else if (!strcmp(key, "temperature")) {
        return parse_num(key, v, -1, 10, &c->temperature, err);
    } else if (!strcmp(key, "seed")) {
        if (parse_int(key, v, 0, 1L << 40, &n, err))
            return -1;
        c->seed = n;
    } else if (!strcmp(key, "context")) {
        return set_context(c, v, err);
    } else if (!strcmp(key, "target_speedup")) {
        return parse_num(key, v, 0, 1e6, &c->target_speedup, err);
    } else if (!strcmp(key, "rpm") || !strcmp(key, "tpm")) {
        if (parse_int(key, v, 0, 1L << 30, &n, err))
            return -1;
        *(key[0] == 'r' ? &c->rpm : &c->tpm) = (int)n;
    } else if (!strcmp(key, "retries")) {
        if (parse_int(key, v, 0, 100, &n, err))
            return -1;
        c->client.max_attempts = (int)n + 1;
    } else if (!strcmp(key, "backoff_ms")) {
        return parse_num(key, v, 0, 3.6e6, &c->client.backoff_base_ms, err);
    } else if (!strcmp(key, "backoff_max_ms")) {
        return parse_num(key, v, 0, 3.6e6, &c->client.backoff_max_ms, err);
    } else if (!strcmp(key, "deadline_s")) {
        return parse_num(key, v, 0.001, 1e6, &c->client.deadline_s, err);
    } else if (!strcmp(key, "idle_timeout_s")) {
        return parse_num(key, v, 0.001, 1e6, &c->client.idle_timeout_s, err);
    } else if (!strcmp(key, "attempt_timeout_s")) {
        return parse_num(key, v, 0.001, 1e6, &c->client.attempt_timeout_s, err);
    } else if (!strcmp(key, "price")) {
        return set_price(c, v, err);
    } else {
        return kc_fail(err, "unknown setting '%s'", key);
    }
    return 0;
}

/* A JSON value as the text config_set takes. */
static int json_setting(collect_config *c, const char *key, json_t *v, strbuf *err)
{
    char buf[64];
    if (json_is_string(v))
        return config_set(c, key, json_string_value(v), err);
    if (json_is_boolean(v))
        return config_set(c, key, json_is_true(v) ? "true" : "false", err);
    if (json_is_integer(v)) {
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        return config_set(c, key, buf, err);
    }
    if (json_is_real(v)) {
        snprintf(buf, sizeof buf, "%.17g", json_real_value(v));
        return config_set(c, key, buf, err);
    }
    if (json_is_array(v) && !strcmp(key, "endpoint")) {
        strbuf list = STRBUF_INIT;
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            if (!json_is_string(e)) {
                sb_free(&list);
                return kc_fail(err, "endpoint: expected a list of URLs");
            }
            sb_addf(&list, "%s%s", i ? "," : "", json_string_value(e));
        }
        int rc = config_set(c, key, list.buf ? list.buf : "", err);
        sb_free(&list);
        return rc;
    }
    return kc_fail(err, "%s: unsupported value type", key);
}

int config_load_file(collect_config *c, const char *path, strbuf *err)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        return kc_fail(err, "%s: %s (line %d)", path, je.text, je.line);
    if (!json_is_object(root)) {
        json_decref(root);
        return kc_fail(err, "%s: expected a JSON object", path);
    }
    const char *key;
    json_t *v;
    int rc = 0;
    json_object_foreach(root, key, v) {
        if (!strcmp(key, "prices")) { /* {"model": [input, output, reasoning?], ...} */
            if (!json_is_object(v)) {
                rc = kc_fail(err, "%s: prices: expected an object of model -> [input, output, reasoning]", path);
                break;
            }
            json_decref(c->price_table);
            c->price_table = json_incref(v);
            continue;
        }
        if (!strcmp(key, "api_key") || !strcmp(key, "openai_api_key") ||
            !strcmp(key, "anthropic_api_key")) {
            rc = kc_fail(err, "%s: keys do not belong in a config file; use OPENAI_API_KEY or ANTHROPIC_API_KEY", path);
            break;
        }
        strbuf e = STRBUF_INIT;
        if (json_setting(c, key, v, &e) < 0) {
            rc = kc_fail(err, "%s: %s", path, e.buf);
            sb_free(&e);
            break;
        }
        sb_free(&e);
    }
    json_decref(root);
    if (rc == 0)
        replace(&c->config_file, path);
    return rc;
}

int config_is_bundled(const collect_config *c) { return c->n_endpoints == 0; }

int config_finish(collect_config *c, strbuf *err)
{
    if (!c->problems || !*c->problems)
        return kc_fail(err, "no problems selected: use --problems SUITE|ID|GLOB[,...]");
    if (config_is_bundled(c)) {
        if (!c->model)
            c->model = xstrdup("fake-echo");
    } else if (!c->model) {
        return kc_fail(err, "no model: use --model NAME");
    }
    json_t *row = c->model && c->price_table ? json_object_get(c->price_table, c->model) : NULL;
    if (row && !c->cost.known) {
        if (!json_is_array(row) || json_array_size(row) < 2)
            return kc_fail(err, "prices: %s: expected [input, output, reasoning?] dollars per million tokens", c->model);
        c->cost.input = json_number_value(json_array_get(row, 0));
        c->cost.output = json_number_value(json_array_get(row, 1));
        c->cost.reasoning = json_array_size(row) > 2 ? json_number_value(json_array_get(row, 2))
                                                     : c->cost.output;
        c->cost.known = 1;
    }
    if (!c->api_set && c->n_endpoints && strstr(c->endpoint_urls[0], "anthropic.com"))
        c->api = LLM_ANTHROPIC;
    return 0;
}

const char *config_key_for(const collect_config *c, enum llm_api api)
{
    return api == LLM_ANTHROPIC ? c->anthropic_key : c->openai_key;
}

static json_t *identity_json(const collect_config *c)
{
    json_t *eps = json_array();
    if (config_is_bundled(c))
        json_array_append_new(eps, json_string(CC_BUNDLED));
    for (int i = 0; i < c->n_endpoints; i++)
        json_array_append_new(eps, json_string(c->endpoint_urls[i]));
    json_t *o = json_object();
    json_object_set_new(o, "tool", json_string("kcollect"));
    json_object_set_new(o, "problems", json_string(c->problems));
    json_object_set_new(o, "model", json_string(c->model ? c->model : ""));
    json_object_set_new(o, "api", json_string(llm_api_name(c->api)));
    json_object_set_new(o, "endpoints", eps);
    if (config_is_bundled(c))
        json_object_set_new(o, "bundled_args", json_string(c->bundled_args ? c->bundled_args : ""));
    json_object_set_new(o, "samples", json_integer(c->samples));
    json_object_set_new(o, "turns", json_integer(c->turns));
    json_object_set_new(o, "budget_minutes", json_real(c->budget_minutes));
    json_object_set_new(o, "budget_tokens", json_integer(c->budget_tokens));
    if (c->problem_budget_minutes > 0) /* only when set: older runs keep their identity */
        json_object_set_new(o, "problem_budget_minutes", json_real(c->problem_budget_minutes));
    if (c->problem_budget_tokens > 0)
        json_object_set_new(o, "problem_budget_tokens", json_integer(c->problem_budget_tokens));
    json_object_set_new(o, "compile_only", json_boolean(c->compile_only));
    json_object_set_new(o, "max_tokens", json_integer(c->max_tokens));
    json_object_set_new(o, "temperature", json_real(c->temperature));
    json_object_set_new(o, "seed", json_integer(c->seed));
    json_object_set_new(o, "context", json_string(c->context == CONTEXT_FULL ? "full" : "drop-reasoning"));
    json_object_set_new(o, "target_speedup", json_real(c->target_speedup));
    return o;
}

void config_json(const collect_config *c, strbuf *out)
{
    json_t *o = identity_json(c);
    json_object_set_new(o, "concurrency", json_integer(c->concurrency));
    json_object_set_new(o, "stream", json_boolean(c->stream));
    json_object_set_new(o, "rpm", json_integer(c->rpm));
    json_object_set_new(o, "tpm", json_integer(c->tpm));
    json_object_set_new(o, "retries", json_integer(c->client.max_attempts - 1));
    json_object_set_new(o, "backoff_ms", json_real(c->client.backoff_base_ms));
    json_object_set_new(o, "deadline_s", json_real(c->client.deadline_s));
    json_object_set_new(o, "idle_timeout_s", json_real(c->client.idle_timeout_s));
    json_object_set_new(o, "attempt_timeout_s", json_real(c->client.attempt_timeout_s));
    if (c->cost.known)
        json_object_set_new(o, "price", json_pack("{s:f, s:f, s:f}", "input", c->cost.input,
                                                  "output", c->cost.output, "reasoning",
                                                  c->cost.reasoning));
    json_object_set_new(o, "db", json_string(c->db_path));
    if (c->config_file)
        json_object_set_new(o, "config_file", json_string(c->config_file));
    char *s = json_dumps(o, JSON_COMPACT);
    sb_reset(out);
    sb_adds(out, s);
    free(s);
    json_decref(o);
}

void config_run_key(const collect_config *c, char *out)
{
    json_t *o = identity_json(c);
    char *s = json_dumps(o, JSON_COMPACT);
    sha256_hex(s, strlen(s), out);
    free(s);
    json_decref(o);
}

double config_cost(const collect_config *c, long prompt_tokens, long completion_tokens,
                   long reasoning_tokens)
{
    if (!c->cost.known)
        return 0;
    /* OpenAI counts reasoning inside completion tokens. */
    long visible = completion_tokens - reasoning_tokens;
    if (visible < 0)
        visible = 0;
    return (prompt_tokens * c->cost.input + visible * c->cost.output +
            reasoning_tokens * c->cost.reasoning) / 1e6;
}
