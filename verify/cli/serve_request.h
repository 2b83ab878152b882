/* serve_request: what `kverify serve` reads and writes on POST /v1/verify, apart from HTTP:
 * the request body (one item or a batch, with optional reward parameters) checked against the
 * service's limits, and each answer: the verifier's result JSON plus the reward, computed by
 * the rule kcurate labels with (common/reward.h), kcurate's defaults unless the request or the
 * service's options say otherwise. */
#ifndef KC_SERVE_REQUEST_H
#define KC_SERVE_REQUEST_H
#include "common/problem.h"
#include "common/reward.h"
#include "common/strbuf.h"
#include "verify/service/verify.h"

#include <jansson.h>
#include <stddef.h>

typedef struct serve_limits {
    size_t max_body;       /* bytes of a request body */
    int max_items;         /* items of one request */
    size_t max_completion; /* bytes of one completion */
} serve_limits;

typedef struct serve_item_in {
    char *problem_id, *completion;
    json_t *id; /* the client's own tag for the item, echoed back (NULL when absent) */
} serve_item_in;

typedef struct serve_parsed {
    serve_item_in *items;
    int n;
    int batch; /* {"items": [...]}: answered as {"results": [...]} */
    kc_reward_params reward;
} serve_parsed;

/* The reward parameters (kc_reward_defaults, kcurate's) are settable per request within the
 * limits serve_reward_check enforces: 0, or -1 with the reason when a parameter is outside what
 * the service accepts. */
int serve_reward_check(const kc_reward_params *r, strbuf *err);
/* The reward of one verification by kcurate's rule; *suspicious as kcurate would flag it (may be
 * NULL). */
double serve_reward(const kc_reward_params *rp, const kv_result *r, int *suspicious);
json_t *serve_reward_json(const kc_reward_params *r);

/* Parses a POST /v1/verify body. Returns 0, or the HTTP status to answer (400 malformed or a
 * missing or bad field, 413 too big or too many items) with the reason in err. */
int serve_parse_request(const char *body, size_t len, const serve_limits *lim,
                        const kc_reward_params *defaults, serve_parsed *out, strbuf *err);
void serve_parsed_free(serve_parsed *in);
/* Whether id looks like a problem id (suite/name: letters, digits, _ . - and one or more /,
 * no ".."); says nothing about whether the problem exists. */
int serve_problem_id_ok(const char *id);
/* The answer for one verified item: kv_result_json's object plus reward, reward_suspicious and
 * the item's id when it had one. */
json_t *serve_result_json(const problem *p, const kv_result *r, const kc_reward_params *rp,
                          json_t *item_id);

#endif
