/* dedup: per-problem exact and MinHash near-duplicate clustering (see dedup.h). */
#include "curate/dedup.h"
#include "common/error.h"
#include "curate/normalize.h"

#include <stdlib.h>
#include <string.h>

void curate_dedup_init(curate_dedup *d, const curate_minhash_params *p)
{
    memset(d, 0, sizeof(*d));
    d->params = p;
}

void curate_dedup_free(curate_dedup *d)
{
    free(d->normalized_sha), free(d->rank), free(d->speed), free(d->exact_root), free(d->exact_rep);
    free(d->near_rep), free(d->sigs), free(d->distinct), free(d->table);
    sb_free(&d->scratch);
    memset(d, 0, sizeof(*d));
}

void curate_dedup_reset(curate_dedup *d)
{
    d->n = 0;
    d->n_distinct = 0;
    if (d->table)
        memset(d->table, 0, d->table_cap * sizeof(*d->table));
}

static void grow_items(curate_dedup *d)
{
    if (d->n < d->cap)
        return;
    d->cap = d->cap ? 2 * d->cap : 1024;
    d->normalized_sha = xrealloc(d->normalized_sha, d->cap * sizeof(*d->normalized_sha));
    d->rank = xrealloc(d->rank, d->cap * sizeof(*d->rank));
    d->speed = xrealloc(d->speed, d->cap * sizeof(*d->speed));
    d->exact_root = xrealloc(d->exact_root, d->cap * sizeof(*d->exact_root));
    d->exact_rep = xrealloc(d->exact_rep, d->cap * sizeof(*d->exact_rep));
    d->near_rep = xrealloc(d->near_rep, d->cap * sizeof(*d->near_rep));
    d->distinct = xrealloc(d->distinct, d->cap * sizeof(*d->distinct));
    d->sigs = xrealloc(d->sigs, d->cap * (size_t)d->params->num_hashes * sizeof(*d->sigs));
}

static uint64_t sha_key(const char *hex) { return hash64(hex, SHA256_HEX_LEN, 0); }

static void rehash(curate_dedup *d)
{
    size_t cap = d->table_cap ? 2 * d->table_cap : 4096;
    size_t *t = xcalloc(cap, sizeof(*t));
    for (size_t i = 0; i < d->table_cap; i++) {
        if (!d->table[i])
            continue;
        size_t h = sha_key(d->normalized_sha[d->table[i] - 1]) & (cap - 1);
        while (t[h])
            h = (h + 1) & (cap - 1);
        t[h] = d->table[i];
    }
    free(d->table);
    d->table = t;
    d->table_cap = cap;
}

/* The earliest item with this normalized sha, or inserts item i and returns i. */
static size_t find_or_insert(curate_dedup *d, size_t i)
{
    if (2 * (d->n_distinct + 1) > d->table_cap)
        rehash(d);
    size_t h = sha_key(d->normalized_sha[i]) & (d->table_cap - 1);
    while (d->table[h]) {
        size_t j = d->table[h] - 1;
        if (!strcmp(d->normalized_sha[j], d->normalized_sha[i]))
            return j;
        h = (h + 1) & (d->table_cap - 1);
    }
    d->table[h] = i + 1;
    return i;
}

void curate_dedup_add(curate_dedup *d, const char *src, size_t len, int rank, double speed)
{
    grow_items(d);
    size_t i = d->n++;
    d->rank[i] = rank;
    d->speed[i] = speed;
    d->exact_root[i] = SIZE_MAX;
    d->normalized_sha[i][0] = '\0';
    if (!src)
        return;
    curate_normalize(src, len, &d->scratch);
    sha256_hex(d->scratch.buf, d->scratch.len, d->normalized_sha[i]);
    size_t root = find_or_insert(d, i);
    d->exact_root[i] = root;
    if (root != i)
        return;
    uint32_t *sig = d->sigs + d->n_distinct * (size_t)d->params->num_hashes;
    curate_minhash_signature(d->params, d->scratch.buf, d->scratch.len, sig);
    d->distinct[d->n_distinct++] = i;
}

/* Item i is a better representative than item r: a better verdict class, then faster. */
static int better_rep(const curate_dedup *d, size_t i, size_t r)
{
    if (d->rank[i] != d->rank[r])
        return d->rank[i] > d->rank[r];
    return d->speed[i] > d->speed[r];
}

/* rep[g] for each group id: its best member (better_rep), the earliest among equals. */
static void choose_reps(const curate_dedup *d, const size_t *group, size_t *rep_of_group,
                        size_t *rep)
{
    for (size_t i = 0; i < d->n; i++)
        if (group[i] != SIZE_MAX)
            rep_of_group[group[i]] = SIZE_MAX;
    for (size_t i = 0; i < d->n; i++) {
        size_t g = group[i];
        if (g == SIZE_MAX)
            continue;
        size_t r = rep_of_group[g];
        if (r == SIZE_MAX || better_rep(d, i, r))
            rep_of_group[g] = i;
    }
    for (size_t i = 0; i < d->n; i++)
        rep[i] = group[i] == SIZE_MAX ? SIZE_MAX : rep_of_group[group[i]];
}

void curate_dedup_resolve(curate_dedup *d)
{
    size_t n = d->n ? d->n : 1;
    size_t *cluster = xmalloc((d->n_distinct ? d->n_distinct : 1) * sizeof(*cluster));
    size_t *position = xmalloc(n * sizeof(*position)); /* item index -> distinct position */
    size_t *near_group = xmalloc(n * sizeof(*near_group));
    size_t *scratch = xmalloc(n * sizeof(*scratch));
    curate_minhash_cluster(d->params, d->sigs, d->n_distinct, cluster);
    for (size_t k = 0; k < d->n_distinct; k++)
        position[d->distinct[k]] = k;
    for (size_t i = 0; i < d->n; i++)
        near_group[i] = d->exact_root[i] == SIZE_MAX
                            ? SIZE_MAX
                            : d->distinct[cluster[position[d->exact_root[i]]]];
    choose_reps(d, d->exact_root, scratch, d->exact_rep);
    choose_reps(d, near_group, scratch, d->near_rep);
    free(cluster), free(position), free(near_group), free(scratch);
}
