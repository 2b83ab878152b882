/* dedup: exact and near duplicates among the candidates of one problem. Exact: equal sha256 of
 * the normalized kernel. Near: MinHash/LSH clusters of the distinct normalized kernels. Every
 * duplicate points to its cluster's representative: its best member by verdict class
 * (curate_class_rank), then by eager speedup, the earliest (by insertion order, which is
 * candidate id order) among equals. Nothing is removed. */
#ifndef KC_CURATE_DEDUP_H
#define KC_CURATE_DEDUP_H
#include "common/hash.h"
#include "common/strbuf.h"
#include "curate/minhash.h"
#include <stddef.h>
#include <stdint.h>

typedef struct curate_dedup {
    const curate_minhash_params *params;
    size_t n, cap;
    char (*normalized_sha)[SHA256_HEX_LEN + 1]; /* "" for a candidate without source */
    int *rank;            /* curate_class_rank of the candidate's verdict class */
    double *speed;        /* eager speedup, 0 when unknown */
    size_t *exact_root;   /* earliest member with the same normalized sha */
    size_t *exact_rep, *near_rep; /* outputs of curate_dedup_resolve; SIZE_MAX without source */
    uint32_t *sigs;       /* one signature per distinct normalized kernel */
    size_t *distinct;     /* item index of each distinct kernel */
    size_t n_distinct;
    size_t *table;        /* open addressing: item index + 1, 0 empty */
    size_t table_cap;
    strbuf scratch;
} curate_dedup;

void curate_dedup_init(curate_dedup *d, const curate_minhash_params *p);
void curate_dedup_reset(curate_dedup *d);
void curate_dedup_free(curate_dedup *d);
/* Adds the next candidate (src NULL when it has no kernel), with its class rank and speedup. */
void curate_dedup_add(curate_dedup *d, const char *src, size_t len, int rank, double speed);
/* Computes exact_rep and near_rep for every item added since the last reset. */
void curate_dedup_resolve(curate_dedup *d);

#endif
