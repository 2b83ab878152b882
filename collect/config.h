/* config: kcollect's configuration from defaults, the environment
 * (OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY), a JSON config file and
 * flags, in that order of precedence (flags win); the price table and cost;
 * the run's identity, by which the same command resumes the same run.
 *
 * Run identity (what makes two commands the same run): the model, the API, the
 * endpoints normalised (scheme and host in lower case, localhost = 127.0.0.1 =
 * [::1], default ports and trailing slashes dropped, user:password@ dropped; the
 * bundled server with its arguments), the sampling settings (temperature,
 * max_tokens, seed, context policy), the prompt format version and compile-only
 * mode. What may change while continuing a run: the problems and the number of
 * samples (add trajectories), turns, budgets and target speedup (extend ended
 * trajectories), and transport settings (concurrency, rates, retries, timeouts).
 *
 * The bundled test server (synthetic answers) is used only when named
 * (--endpoint bundled) or when neither an endpoint nor a model is configured
 * (its model is then fake-echo); --model with no endpoint is refused, so that
 * synthetic answers are never recorded under a real model's name. */
#ifndef KC_COLLECT_CONFIG_H
#define KC_COLLECT_CONFIG_H
#include "collect/llm.h"
#include "common/shard.h"
#include "common/strbuf.h"

#define CC_MAX_ENDPOINTS 8
#define CC_BUNDLED "bundled-fake-llm"
#define CC_ANTHROPIC_URL "https://api.anthropic.com" /* --api anthropic without an endpoint */
/* Bump when what the model is sent changes (common/prompt_text.c, collect/prompt.c): a run
 * continues only with the prompt format it started with. */
#define CC_PROMPT_FORMAT 1

enum context_policy { CONTEXT_DROP_REASONING, CONTEXT_FULL };
/* loop: today's closed loop; mtmc: plan first, then one action per turn (strategy_mtmc.h) */
enum collect_strategy { STRATEGY_LOOP, STRATEGY_MTMC };

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
    int bundled_named;   /* --endpoint bundled given */
    int endpoint_from_env; /* endpoint_urls[0] came from $OPENAI_BASE_URL */
    char *bundled_args;  /* extra fake_llm arguments when bundled ("--bug compile") */
    char *db_path;
    int samples, turns;
    double budget_minutes; /* per trajectory, 0 = none */
    long budget_tokens;    /* per trajectory, 0 = none */
    double problem_budget_minutes; /* per problem, shared by its samples and turns; 0 = none */
    long problem_budget_tokens;    /* per problem, 0 = none */
    int concurrency;
    int compile_only, dry_run, stream;
    int verbose;           /* -v: per-turn lines on a terminal too (not part of the run) */
    int max_tokens;
    double temperature;    /* < 0: the server's default */
    long long seed;        /* sample k sends seed + k */
    enum context_policy context;
    double target_speedup; /* 0: stop at the first correct turn */
    enum collect_strategy strategy;
    int plan_retries;      /* mtmc: failed attempts at one action before the plan is revised */
    int rpm, tpm;
    llm_client_options client;
    price cost;          /* --price, else the config file's prices[model] */
    struct json_t *price_table;
    char *config_file;
    kc_shard shard;      /* --shard I/N: this process collects only shard I's trajectories */
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
/* The same, naming the setting what in messages ("--samples" for a flag; config_set: the key). */
int config_set_as(collect_config *c, const char *key, const char *what, const char *value,
                  strbuf *err);
/* Checks and completes (default model for the bundled server, api from URL). */
int config_finish(collect_config *c, strbuf *err);
int config_is_bundled(const collect_config *c);
/* The configuration as JSON, secrets removed (runs.config_json). */
void config_json(const collect_config *c, strbuf *out);
/* The run identity as canonical JSON (runs.identity_json) and its sha256 (runs.run_key). */
void config_identity(const collect_config *c, strbuf *out);
void config_run_key(const collect_config *c, char *out);
/* The identity of a run from its recorded config_json (any kcollect version); -1 when it does
 * not parse. */
int config_identity_from_json(const char *config_json, strbuf *out);
/* What differs between two identities, as "sampling.temperature 0.2 -> 0.7, ..." (empty when
 * none). */
void config_identity_diff(const char *old_identity, const char *new_identity, strbuf *out);
/* An endpoint URL as it counts for the run identity (see above). */
void config_endpoint_identity(const char *url, strbuf *out);
/* Whose answers the response cache may reuse: the endpoints normalised as for the run identity
 * (sorted, without repeats; the bundled server with its arguments) and the API. */
void config_cache_scope(const collect_config *c, strbuf *out);
/* Dollars for a reply's tokens (0 when the model has no price). */
double config_cost(const collect_config *c, long prompt_tokens, long completion_tokens,
                   long reasoning_tokens);
/* The key for an endpoint's API (may be NULL). */
const char *config_key_for(const collect_config *c, enum llm_api api);

#endif
