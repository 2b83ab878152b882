/* split: problem-level splits by sha256(salt ":" problem id) and the held-out list. */
#include "curate/split.h"
#include "common/hash.h"
#include "common/strbuf.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

int curate_is_heldout(const curate_params *p, const char *id)
{
    for (int i = 0; i < p->n_heldout; i++)
        if (!strcmp(p->heldout[i], id) || fnmatch(p->heldout[i], id, 0) == 0)
            return 1;
    return 0;
}

/* A uniform number in [0, 1) from the first 52 bits of the salted hash. */
static double problem_unit(const char *salt, const char *id)
{
    strbuf key = STRBUF_INIT;
    char hex[SHA256_HEX_LEN + 1];
    sb_addf(&key, "%s:%s", salt, id);
    sha256_hex(key.buf, key.len, hex);
    sb_free(&key);
    hex[13] = '\0';
    return (double)strtoull(hex, NULL, 16) / 4503599627370496.0; /* 2^52 */
}

const char *curate_split_of(const curate_params *p, const char *id)
{
    if (curate_is_heldout(p, id))
        return "heldout";
    double u = problem_unit(p->split_salt, id);
    if (u < p->valid_fraction)
        return "valid";
    if (u < p->valid_fraction + p->test_fraction)
        return "test";
    return "train";
}
