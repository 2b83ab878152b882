/* params: the parameters of a kcurate run (dedup, rewards, splits), their defaults and their
 * JSON form, which is recorded in curate_runs.params_json. */
#ifndef KC_CURATE_PARAMS_H
#define KC_CURATE_PARAMS_H
#include "common/reward.h"
#include "common/strbuf.h"
#include "curate/minhash.h"

typedef struct curate_params {
    curate_minhash_params minhash;
    kc_reward_params reward;  /* the reward rule's parameters (common/reward.h) */
    double gamma;             /* discount of later turns in returns (0.4) */
    double valid_fraction, test_fraction; /* of problems, by hash of the id (0.05, 0.05) */
    char *split_salt;         /* mixed into the split hash ("kcorpus-v1") */
    char **heldout;           /* decontamination list: ids or globs (level1/0*) */
    int n_heldout;
} curate_params;

void curate_params_defaults(curate_params *p);
void curate_params_free(curate_params *p);
int curate_params_check(const curate_params *p, strbuf *err);
/* Adds held-out ids from a comma separated list. */
void curate_params_add_heldout(curate_params *p, const char *list);
/* Adds held-out ids from a file: one id or glob a line, '#' starts a comment. */
int curate_params_load_heldout(curate_params *p, const char *path, strbuf *err);
/* Canonical JSON (sorted keys, compact). */
void curate_params_json(const curate_params *p, strbuf *out);

#endif
