/* config: defaults, environment, JSON config file, flags; run identity and
 * cost (see config.h). */
#include "collect/config.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/hash.h"

#include <jansson.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
    c->strategy = STRATEGY_LOOP;
    c->plan_retries = 2;
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
    if ((v = getenv("OPENAI_BASE_URL")) && *v && c->n_endpoints == 0) {
        c->endpoint_urls[c->n_endpoints++] = xstrdup(v);
        c->endpoint_from_env = 1;
    }
}

static int parse_int(const char *what, const char *v, long lo, long hi, long *out, strbuf *err)
{
    long long x;
    if (kc_parse_int(what, v, lo, hi, &x, err))
        return -1;
    *out = (long)x;
    return 0;
}

static int parse_num(const char *what, const char *v, double lo, double hi, double *out, strbuf *err)
{
    return kc_parse_number(what, v, lo, hi, out, err);
}

static int parse_bool(const char *what, const char *v, int *out, strbuf *err)
{
    if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"))
        *out = 1;
    else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no"))
        *out = 0;
    else
        return kc_fail(err, "%s takes true or false, not '%s'", what, v);
    return 0;
}

static int is_bundled_name(const char *s) { return !strcmp(s, "bundled") || !strcmp(s, CC_BUNDLED); }

/* Endpoints given as "url1,url2" replace the list; "bundled" names the bundled test server. */
static int set_endpoints(collect_config *c, const char *what, const char *v, strbuf *err)
{
    for (int i = 0; i < c->n_endpoints; i++)
        free(c->endpoint_urls[i]);
    c->n_endpoints = 0;
    c->bundled_named = 0;
    c->endpoint_from_env = 0;
    char *copy = xstrdup(v), *save = NULL;
    for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        if (c->n_endpoints == CC_MAX_ENDPOINTS) {
            free(copy);
            return kc_fail(err, "%s: at most %d endpoints", what, CC_MAX_ENDPOINTS);
        }
        if (!is_bundled_name(t) && strncmp(t, "http://", 7) && strncmp(t, "https://", 8)) {
            kc_fail(err, "%s: '%s' is not an http:// or https:// URL (or 'bundled')", what, t);
            free(copy);
            return -1;
        }
        c->endpoint_urls[c->n_endpoints++] = xstrdup(t);
    }
    free(copy);
    for (int i = 0; i < c->n_endpoints; i++)
        if (is_bundled_name(c->endpoint_urls[i]) && c->n_endpoints > 1)
            return kc_fail(err, "%s: the bundled test server cannot be mixed with other endpoints", what);
    if (c->n_endpoints == 1 && is_bundled_name(c->endpoint_urls[0])) {
        free(c->endpoint_urls[0]);
        c->n_endpoints = 0;
        c->bundled_named = 1;
    }
    return 0;
}

static int set_strategy(collect_config *c, const char *what, const char *v, strbuf *err)
{
    if (!strcmp(v, "loop") || !strcmp(v, "default"))
        c->strategy = STRATEGY_LOOP;
    else if (!strcmp(v, "mtmc"))
        c->strategy = STRATEGY_MTMC;
    else
        return kc_fail(err, "%s takes loop or mtmc, not '%s'", what, v);
    return 0;
}

static int set_context(collect_config *c, const char *what, const char *v, strbuf *err)
{
    if (!strcmp(v, "full"))
        c->context = CONTEXT_FULL;
    else if (!strcmp(v, "drop-reasoning"))
        c->context = CONTEXT_DROP_REASONING;
    else
        return kc_fail(err, "%s takes full or drop-reasoning, not '%s'", what, v);
    return 0;
}

static int set_price(collect_config *c, const char *what, const char *v, strbuf *err)
{
    double in, out, reasoning = -1;
    int n = sscanf(v, "%lf,%lf,%lf", &in, &out, &reasoning);
    if (n < 2 || in < 0 || out < 0)
        return kc_fail(err, "%s takes INPUT,OUTPUT[,REASONING] dollars per million tokens, not '%s'",
                       what, v);
    c->cost.input = in;
    c->cost.output = out;
    c->cost.reasoning = n == 3 && reasoning >= 0 ? reasoning : out;
    c->cost.known = 1;
    return 0;
}

int config_set_as(collect_config *c, const char *key, const char *what, const char *v,
                  strbuf *err)
{
    long n;
    if (!strcmp(key, "problems"))
        replace(&c->problems, v);
    else if (!strcmp(key, "model"))
        replace(&c->model, v);
    else if (!strcmp(key, "db"))
        replace(&c->db_path, v);
    else if (!strcmp(key, "endpoint"))
        return set_endpoints(c, what, v, err);
    else if (!strcmp(key, "bundled_args"))
        replace(&c->bundled_args, v);
    else if (!strcmp(key, "api")) {
        if (llm_api_parse(v, &c->api) < 0)
            return kc_fail(err, "%s takes openai or anthropic, not '%s'", what, v);
        c->api_set = 1;
    } else if (!strcmp(key, "samples")) {
        if (parse_int(what, v, 1, 100000, &n, err))
            return -1;
        c->samples = (int)n;
    } else if (!strcmp(key, "turns")) {
        if (parse_int(what, v, 1, 1000, &n, err))
            return -1;
        c->turns = (int)n;
    } else if (!strcmp(key, "budget")) {
        return parse_num(what, v, 0, 1e7, &c->budget_minutes, err);
    } else if (!strcmp(key, "problem_budget")) {
        return parse_num(what, v, 0, 1e7, &c->problem_budget_minutes, err);
    } else if (!strcmp(key, "problem_budget_tokens")) {
        if (parse_int(what, v, 0, 1L << 40, &n, err))
            return -1;
        c->problem_budget_tokens = n;
    } else if (!strcmp(key, "budget_tokens")) {
        if (parse_int(what, v, 0, 1L << 40, &n, err))
            return -1;
        c->budget_tokens = n;
    } else if (!strcmp(key, "concurrency")) {
        if (parse_int(what, v, 1, 4096, &n, err))
            return -1;
        c->concurrency = (int)n;
    } else if (!strcmp(key, "compile_only")) {
        return parse_bool(what, v, &c->compile_only, err);
    } else if (!strcmp(key, "spread_endpoints")) {
        return parse_bool(what, v, &c->client.spread, err);
    } else if (!strcmp(key, "stream")) {
        return parse_bool(what, v, &c->stream, err);
    } else if (!strcmp(key, "max_tokens")) {
        if (parse_int(what, v, 1, 10000000, &n, err))
            return -1;
        c->max_tokens = (int)n;
    } else if (!strcmp(key, "max_answer_bytes")) {
        if (parse_int(what, v, 0, 1L << 30, &n, err))
            return -1;
        c->client.max_answer_bytes = (size_t)n;
    } else if (!strcmp(key, "temperature")) {
        return parse_num(what, v, -1, 10, &c->temperature, err);
    } else if (!strcmp(key, "seed")) {
        if (parse_int(what, v, 0, 1L << 40, &n, err))
            return -1;
        c->seed = n;
    } else if (!strcmp(key, "context")) {
        return set_context(c, what, v, err);
    } else if (!strcmp(key, "strategy")) {
        return set_strategy(c, what, v, err);
    } else if (!strcmp(key, "plan_retries")) {
        if (parse_int(what, v, 1, 100, &n, err))
            return -1;
        c->plan_retries = (int)n;
    } else if (!strcmp(key, "target_speedup")) {
        return parse_num(what, v, 0, 1e6, &c->target_speedup, err);
    } else if (!strcmp(key, "rpm") || !strcmp(key, "tpm")) {
        if (parse_int(what, v, 0, 1L << 30, &n, err))
            return -1;
        *(key[0] == 'r' ? &c->rpm : &c->tpm) = (int)n;
    } else if (!strcmp(key, "retries")) {
        if (parse_int(what, v, 0, 100, &n, err))
            return -1;
        c->client.max_attempts = (int)n + 1;
    } else if (!strcmp(key, "backoff_ms")) {
        return parse_num(what, v, 0, 3.6e6, &c->client.backoff_base_ms, err);
    } else if (!strcmp(key, "backoff_max_ms")) {
        return parse_num(what, v, 0, 3.6e6, &c->client.backoff_max_ms, err);
    } else if (!strcmp(key, "deadline_s")) {
        return parse_num(what, v, 0.001, 1e6, &c->client.deadline_s, err);
    } else if (!strcmp(key, "idle_timeout_s")) {
        return parse_num(what, v, 0.001, 1e6, &c->client.idle_timeout_s, err);
    } else if (!strcmp(key, "attempt_timeout_s")) {
        return parse_num(what, v, 0.001, 1e6, &c->client.attempt_timeout_s, err);
    } else if (!strcmp(key, "price")) {
        return set_price(c, what, v, err);
    } else {
        return kc_fail(err, "unknown setting '%s'", what);
    }
    return 0;
}

int config_set(collect_config *c, const char *key, const char *v, strbuf *err)
{
    return config_set_as(c, key, key, v, err);
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
    struct stat st;
    FILE *f = stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? (errno = EISDIR, NULL)
                                                         : fopen(path, "r");
    if (!f)
        return kc_fail(err, "cannot read the config file %s: %s", path, strerror(errno));
    json_t *root = json_loadf(f, 0, &je);
    fclose(f);
    if (!root)
        return kc_fail(err, "%s: not a JSON config file: %s (line %d, column %d)", path, je.text,
                       je.line, je.column);
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

/* Anthropic's endpoint when none was given: $ANTHROPIC_BASE_URL, else Anthropic's own API. With
 * --api anthropic it replaces $OPENAI_BASE_URL (that is an OpenAI-compatible server's); without
 * --api, $ANTHROPIC_BASE_URL alone (no OpenAI one) with a model means the Anthropic API. */
static void default_anthropic_endpoint(collect_config *c)
{
    const char *env = getenv("ANTHROPIC_BASE_URL");
    int anthropic = c->api_set && c->api == LLM_ANTHROPIC;
    int implied = !c->api_set && env && *env && c->n_endpoints == 0 && c->model;
    if (c->bundled_named || !(anthropic || implied) || (c->n_endpoints && !c->endpoint_from_env))
        return;
    for (int i = 0; i < c->n_endpoints; i++)
        free(c->endpoint_urls[i]);
    c->endpoint_urls[0] = xstrdup(env && *env ? env : CC_ANTHROPIC_URL);
    c->n_endpoints = 1;
    c->endpoint_from_env = 0;
    c->api = LLM_ANTHROPIC;
}

int config_finish(collect_config *c, strbuf *err)
{
    default_anthropic_endpoint(c);
    if (!c->problems || !*c->problems)
        return kc_fail(err, "no problems selected: use --problems SUITE|ID|GLOB[,...]");
    if (config_is_bundled(c)) {
        /* Synthetic answers are never recorded under a real model's name. */
        if (c->model && !c->bundled_named)
            return kc_fail(err, "--model %s names a model but no endpoint is configured "
                                "(--endpoint URL, OPENAI_BASE_URL, or --api anthropic): refusing to record the "
                                "bundled test server's synthetic answers as %s. For synthetic "
                                "test data, use --endpoint bundled without --model",
                           c->model, c->model);
        if (c->model && strcmp(c->model, "fake-echo"))
            return kc_fail(err, "--endpoint bundled is the synthetic test server; it answers as "
                                "fake-echo, not as '%s': drop --model", c->model);
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

/* Everything recorded about what a run collects (runs.config_json, less the transport settings
 * config_json adds); the identity is derived from it (config_identity_from_json). */
static json_t *settings_json(const collect_config *c)
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
    json_object_set_new(o, "synthetic", json_boolean(config_is_bundled(c)));
    if (config_is_bundled(c))
        json_object_set_new(o, "server", json_string(CC_BUNDLED));
    json_object_set_new(o, "samples", json_integer(c->samples));
    json_object_set_new(o, "turns", json_integer(c->turns));
    json_object_set_new(o, "budget_minutes", json_real(c->budget_minutes));
    json_object_set_new(o, "budget_tokens", json_integer(c->budget_tokens));
    if (c->problem_budget_minutes > 0) /* only when set: older runs keep their identity */
        json_object_set_new(o, "problem_budget_minutes", json_real(c->problem_budget_minutes));
    if (c->problem_budget_tokens > 0)
        json_object_set_new(o, "problem_budget_tokens", json_integer(c->problem_budget_tokens));
    json_object_set_new(o, "compile_only", json_boolean(c->compile_only));
    json_object_set_new(o, "sampling",
                        /* unset (the server's default): null, never the -1 that stands for it */
                        json_pack("{s:o, s:i, s:I, s:s}", "temperature",
                                  c->temperature < 0 ? json_null() : json_real(c->temperature),
                                  "max_tokens", c->max_tokens, "seed", (json_int_t)c->seed,
                                  "context", c->context == CONTEXT_FULL ? "full" : "drop-reasoning"));
    json_object_set_new(o, "prompt_format", json_integer(CC_PROMPT_FORMAT));
    json_object_set_new(o, "target_speedup", json_real(c->target_speedup));
    if (c->strategy == STRATEGY_MTMC) { /* only when set: default runs keep their identity */
        json_object_set_new(o, "strategy", json_string("mtmc"));
        json_object_set_new(o, "plan_retries", json_integer(c->plan_retries));
    }
    return o;
}

void config_json(const collect_config *c, strbuf *out)
{
    json_t *o = settings_json(c);
    json_object_set_new(o, "concurrency", json_integer(c->concurrency));
    json_object_set_new(o, "stream", json_boolean(c->stream));
    json_object_set_new(o, "spread_endpoints", json_boolean(c->client.spread));
    json_object_set_new(o, "rpm", json_integer(c->rpm));
    json_object_set_new(o, "tpm", json_integer(c->tpm));
    json_object_set_new(o, "retries", json_integer(c->client.max_attempts - 1));
    json_object_set_new(o, "backoff_ms", json_real(c->client.backoff_base_ms));
    json_object_set_new(o, "deadline_s", json_real(c->client.deadline_s));
    json_object_set_new(o, "idle_timeout_s", json_real(c->client.idle_timeout_s));
    json_object_set_new(o, "attempt_timeout_s", json_real(c->client.attempt_timeout_s));
    json_object_set_new(o, "max_answer_bytes", json_integer((json_int_t)c->client.max_answer_bytes));
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

/* ---- run identity ---- */

static int is_loopback(const char *host)
{
    return !strcmp(host, "localhost") || !strcmp(host, "localhost.") || !strcmp(host, "::1") ||
           !strcmp(host, "0:0:0:0:0:0:0:1") || !strncmp(host, "127.", 4);
}

void config_endpoint_identity(const char *url, strbuf *out)
{
    sb_reset(out);
    const char *p = strstr(url, "://");
    if (!p) {
        sb_adds(out, url);
        return;
    }
    strbuf scheme = STRBUF_INIT, host = STRBUF_INIT;
    for (const char *q = url; q < p; q++)
        sb_addch(&scheme, (char)tolower((unsigned char)*q));
    const char *auth = p + 3, *end = auth + strcspn(auth, "/?#");
    const char *at = memchr(auth, '@', (size_t)(end - auth));
    if (at) /* user:password@ never counts (and never gets recorded here) */
        auth = at + 1;
    const char *port = NULL;
    if (*auth == '[') { /* [v6]:port */
        const char *close = memchr(auth, ']', (size_t)(end - auth));
        const char *h0 = auth + 1, *h1 = close ? close : end;
        for (const char *q = h0; q < h1; q++)
            sb_addch(&host, (char)tolower((unsigned char)*q));
        if (close && close + 1 < end && close[1] == ':')
            port = close + 2;
    } else {
        const char *colon = memchr(auth, ':', (size_t)(end - auth));
        for (const char *q = auth; q < (colon ? colon : end); q++)
            sb_addch(&host, (char)tolower((unsigned char)*q));
        if (colon)
            port = colon + 1;
    }
    long portno = port && port < end ? strtol(port, NULL, 10) : 0;
    if ((portno == 80 && !strcmp(scheme.buf, "http")) || (portno == 443 && !strcmp(scheme.buf, "https")))
        portno = 0;
    sb_addf(out, "%s://", scheme.buf);
    if (is_loopback(sb_str(&host)))
        sb_adds(out, "localhost");
    else if (strchr(sb_str(&host), ':'))
        sb_addf(out, "[%s]", host.buf);
    else
        sb_adds(out, sb_str(&host));
    if (portno > 0)
        sb_addf(out, ":%ld", portno);
    size_t path_len = strcspn(end, "?#");
    while (path_len > 0 && end[path_len - 1] == '/')
        path_len--;
    sb_add(out, end, path_len);
    const char *query = end + strcspn(end, "?#");
    if (*query == '?')
        sb_add(out, query, strcspn(query, "#"));
    sb_free(&scheme);
    sb_free(&host);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The endpoints of a recorded config, normalised, sorted, without repeats. */
static json_t *endpoints_identity(json_t *eps)
{
    size_t n = json_array_size(eps), k = 0;
    char **v = xcalloc(n + 1, sizeof *v);
    strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        const char *u = json_string_value(json_array_get(eps, i));
        config_endpoint_identity(u ? u : "", &sb);
        v[k++] = sb_detach(&sb);
    }
    qsort(v, k, sizeof *v, str_cmp);
    json_t *a = json_array();
    for (size_t i = 0; i < k; i++)
        if (!i || strcmp(v[i], v[i - 1]))
            json_array_append_new(a, json_string(v[i]));
    for (size_t i = 0; i < k; i++)
        free(v[i]);
    free(v);
    sb_free(&sb);
    return a;
}

void config_cache_scope(const collect_config *c, strbuf *out)
{
    json_t *eps = json_array();
    for (int i = 0; i < c->n_endpoints; i++)
        json_array_append_new(eps, json_string(c->endpoint_urls[i]));
    if (config_is_bundled(c))
        json_array_append_new(eps, json_string(CC_BUNDLED));
    json_t *o = json_object();
    json_object_set_new(o, "endpoints", endpoints_identity(eps));
    json_object_set_new(o, "api", json_string(llm_api_name(c->api)));
    if (config_is_bundled(c)) /* its arguments change its answers ("--bug compile") */
        json_object_set_new(o, "bundled_args", json_string(c->bundled_args ? c->bundled_args : ""));
    char *d = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    sb_reset(out);
    sb_adds(out, d);
    free(d);
    json_decref(o);
    json_decref(eps);
}

/* v (a new reference), else the fallback (which the caller hands over). */
static json_t *or_default(json_t *v, json_t *fallback)
{
    if (!v)
        return fallback;
    json_decref(fallback);
    return json_incref(v);
}

/* A sampling setting: from the "sampling" object, or the top level in configs recorded before it. */
static json_t *sampling_value(json_t *cfg, const char *key, json_t *fallback)
{
    json_t *v = json_object_get(json_object_get(cfg, "sampling"), key);
    if (!v)
        v = json_object_get(cfg, key);
    return or_default(v, fallback);
}

int config_identity_from_json(const char *config_json, strbuf *out)
{
    json_t *cfg = json_loads(config_json, 0, NULL);
    if (!json_is_object(cfg)) {
        json_decref(cfg);
        return -1;
    }
    json_t *eps = json_object_get(cfg, "endpoints");
    int bundled = json_array_size(eps) == 1 &&
                  !strcmp(json_string_value(json_array_get(eps, 0)) ?: "", CC_BUNDLED);
    json_t *sampling = json_object();
    json_t *temp = sampling_value(cfg, "temperature", json_real(-1));
    if (!json_is_number(temp) || json_number_value(temp) < 0) { /* unset: null now, -1 before */
        json_decref(temp);
        temp = json_real(-1); /* the identity (and so the run key) stays what it was */
    }
    json_object_set_new(sampling, "temperature", temp);
    json_object_set_new(sampling, "max_tokens", sampling_value(cfg, "max_tokens", json_null()));
    json_object_set_new(sampling, "seed", sampling_value(cfg, "seed", json_integer(0)));
    json_object_set_new(sampling, "context", sampling_value(cfg, "context", json_string("drop-reasoning")));
    json_t *fmt = json_object_get(cfg, "prompt_format");
    json_t *id = json_object();
    json_object_set_new(id, "model", or_default(json_object_get(cfg, "model"), json_null()));
    json_object_set_new(id, "api", or_default(json_object_get(cfg, "api"), json_string("openai")));
    json_object_set_new(id, "endpoints", endpoints_identity(eps));
    if (bundled)
        json_object_set_new(id, "bundled_args",
                            or_default(json_object_get(cfg, "bundled_args"), json_string("")));
    json_object_set_new(id, "sampling", sampling);
    json_object_set_new(id, "prompt_format", fmt ? json_incref(fmt) : json_integer(1));
    json_object_set_new(id, "compile_only",
                        json_boolean(json_is_true(json_object_get(cfg, "compile_only"))));
    json_t *strategy = json_object_get(cfg, "strategy"); /* absent: the default loop */
    if (json_is_string(strategy) && strcmp(json_string_value(strategy), "loop"))
        json_object_set_new(id, "strategy", json_incref(strategy));
    char *s = json_dumps(id, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
    sb_reset(out);
    sb_adds(out, s);
    free(s);
    json_decref(id);
    json_decref(cfg);
    return 0;
}

void config_identity(const collect_config *c, strbuf *out)
{
    strbuf cfg = STRBUF_INIT;
    config_json(c, &cfg);
    config_identity_from_json(cfg.buf, out);
    sb_free(&cfg);
}

void config_run_key(const collect_config *c, char *out)
{
    strbuf id = STRBUF_INIT;
    config_identity(c, &id);
    sha256_hex(id.buf, id.len, out);
    sb_free(&id);
}

/* A value of the identity as said on screen: an unset temperature (-1 inside) is "unset". */
static char *identity_value_text(const char *name, json_t *v)
{
    size_t n = strlen(name);
    if (n >= 11 && !strcmp(name + n - 11, "temperature") && json_is_number(v) &&
        json_number_value(v) < 0)
        return xstrdup("unset");
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static void diff_values(const char *prefix, json_t *a, json_t *b, strbuf *out)
{
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        json_t *v;
        strbuf name = STRBUF_INIT;
        json_object_foreach(b, k, v) {
            sb_reset(&name);
            sb_addf(&name, "%s%s%s", prefix, *prefix ? "." : "", k);
            diff_values(name.buf, json_object_get(a, k), v, out);
        }
        sb_free(&name);
        return;
    }
    if (a && b && json_equal(a, b))
        return;
    char *sa = a ? identity_value_text(prefix, a) : NULL;
    char *sbv = b ? identity_value_text(prefix, b) : NULL;
    sb_addf(out, "%s%s %s -> %s", out->len ? ", " : "", prefix, sa ? sa : "(none)", sbv ? sbv : "(none)");
    free(sa);
    free(sbv);
}

void config_identity_diff(const char *old_identity, const char *new_identity, strbuf *out)
{
    json_t *a = json_loads(old_identity, 0, NULL), *b = json_loads(new_identity, 0, NULL);
    sb_reset(out);
    diff_values("", a, b, out);
    json_decref(a);
    json_decref(b);
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
