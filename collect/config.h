/* config: kcollect's configuration from defaults, the environment
 * (OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY), a JSON config file and
 * flags, in that order of precedence (flags win); the price table and cost;
 * the run's identity (a hash of the settings that change what is collected,
 * secrets excluded) by which the same command resumes the same run. */
#ifndef KC_COLLECT_CONFIG_H
#define KC_COLLECT_CONFIG_H
#include "collect/llm.h"
#include "common/strbuf.h"

#define CC_MAX_ENDPOINTS 8
#define CC_BUNDLED "bundled-fake-llm"

enum context_policy { CONTEXT_DROP_REASONING, CONTEXT_FULL };

typedef struct price {
    double input, output, reasoning; /* dollars per million tokens */
    int known;
} price;

typedef struct collect_config {
    char *problems;      /* selector: suite, id, glob, comma separated */
    char *model;
    enum llm_api api;
    int api_set;
    char *endpoint_urls[CC_MAX_ENDPOINTS];
    int n_endpoints;     /* 0: the bundled fake server */
    char *bundled_args;  /* extra fake_llm arguments when bundled ("--bug compile") */
    char *db_path;
    int samples, turns;
    double budget_minutes; /* per trajectory, 0 = none */
    long budget_tokens;    /* per trajectory, 0 = none */
    double problem_budget_minutes; /* per problem, shared by its samples and turns; 0 = none */
    long problem_budget_tokens;    /* per problem, 0 = none */
    int concurrency;
    int compile_only, dry_run, stream;
    int max_tokens;
    double temperature;    /* < 0: the server's default */
    long long seed;        /* sample k sends seed + k */
    enum context_policy context;
    double target_speedup; /* 0: stop at the first correct turn */
    int rpm, tpm;
    llm_client_options client;
    price cost;          /* --price, else the config file's prices[model] */
    struct json_t *price_table;
    char *config_file;
    /* secrets: never serialised */
    char *openai_key, *anthropic_key;
} collect_config;

void config_defaults(collect_config *c);
void config_free(collect_config *c);
/* Reads the environment (keys, OPENAI_BASE_URL). */
void config_from_env(collect_config *c);
/* Applies a JSON config file; unknown keys are errors. */
int config_load_file(collect_config *c, const char *path, strbuf *err);
/* Applies one "key" = value setting (the config file's names; flags map to them). */
int config_set(collect_config *c, const char *key, const char *value, strbuf *err);
/* Checks and completes (default model for the bundled server, api from URL). */
int config_finish(collect_config *c, strbuf *err);
int config_is_bundled(const collect_config *c);
/* The configuration as JSON, secrets removed (runs.config_json). */
void config_json(const collect_config *c, strbuf *out);
/* The run identity: sha256 of the settings that change what is collected. */
void config_run_key(const collect_config *c, char *out);
/* Dollars for a reply's tokens (0 when the model has no price). */
double config_cost(const collect_config *c, long prompt_tokens, long completion_tokens,
                   long reasoning_tokens);
/* The key for an endpoint's API (may be NULL). */
const char *config_key_for(const collect_config *c, enum llm_api api);

#endif
