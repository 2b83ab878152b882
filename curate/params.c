/* params: kcurate run parameters: defaults, checks, the held-out list and their JSON record. */
#include "curate/params.h"
#include "common/error.h"
#include "common/fsutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

void curate_params_defaults(curate_params *p)
{
    *p = (curate_params){.gamma = 0.4, .valid_fraction = 0.05, .test_fraction = 0.05};
    kc_reward_defaults(&p->reward);
    curate_minhash_defaults(&p->minhash);
    p->split_salt = xstrdup("kcorpus-v1");
}

void curate_params_free(curate_params *p)
{
    for (int i = 0; i < p->n_heldout; i++)
        free(p->heldout[i]);
    free(p->heldout);
    free(p->split_salt);
    memset(p, 0, sizeof(*p));
}

int curate_params_check(const curate_params *p, strbuf *err)
{
    if (curate_minhash_check(&p->minhash, err))
        return -1;
    if (!(p->gamma >= 0 && p->gamma <= 1))
        return kc_fail(err, "gamma must be in [0, 1]");
    if (!(p->valid_fraction >= 0 && p->test_fraction >= 0 &&
          p->valid_fraction + p->test_fraction < 1))
        return kc_fail(err, "valid and test fractions must be >= 0 and sum to less than 1");
    if (!(p->reward.speedup_cap > 0 && p->reward.suspicious_speedup > 0))
        return kc_fail(err, "the speedup cap and the suspicious speedup must be positive");
    return 0;
}

static void add_one_heldout(curate_params *p, const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    if (!n)
        return;
    p->heldout = xrealloc(p->heldout, (size_t)(p->n_heldout + 1) * sizeof(*p->heldout));
    p->heldout[p->n_heldout++] = xstrndup(s, n);
}

void curate_params_add_heldout(curate_params *p, const char *list)
{
    for (const char *s = list; *s;) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        add_one_heldout(p, s, n);
        s += n + (comma != NULL);
    }
}

int curate_params_load_heldout(curate_params *p, const char *path, strbuf *err)
{
    strbuf text = STRBUF_INIT;
    if (read_file(path, &text, err)) {
        sb_free(&text);
        return -1;
    }
    for (char *line = text.buf; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        char *hash = memchr(line, '#', n);
        add_one_heldout(p, line, hash ? (size_t)(hash - line) : n);
        line = nl ? nl + 1 : NULL;
    }
    sb_free(&text);
    return 0;
}

void curate_params_json(const curate_params *p, strbuf *out)
{
    json_t *held = json_array();
    for (int i = 0; i < p->n_heldout; i++)
        json_array_append_new(held, json_string(p->heldout[i]));
    json_t *o = json_pack("{s:i, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:s, s:o}",
                          "shingle", p->minhash.shingle, "num_hashes", p->minhash.num_hashes,
                          "bands", p->minhash.bands, "near_threshold", p->minhash.threshold,
                          "reward_correct", p->reward.correct, "reward_incorrect",
                          p->reward.incorrect, "speedup_weight", p->reward.speedup_weight,
                          "speedup_cap", p->reward.speedup_cap, "gamma", p->gamma,
                          "suspicious_speedup", p->reward.suspicious_speedup, "valid_fraction",
                          p->valid_fraction,
                          "test_fraction", p->test_fraction, "split_salt", p->split_salt,
                          "heldout", held);
    char *s = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(10));
    sb_reset(out);
    sb_adds(out, s);
    free(s);
    json_decref(o);
}
