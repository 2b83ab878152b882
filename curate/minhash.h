/* minhash: MinHash signatures over token shingles of a normalized kernel, and LSH banding that
 * groups near duplicates (estimated Jaccard similarity at or above a threshold) into clusters. */
#ifndef KC_CURATE_MINHASH_H
#define KC_CURATE_MINHASH_H
#include "common/strbuf.h"
#include <stddef.h>
#include <stdint.h>

#define CURATE_MAX_HASHES 1024

typedef struct curate_minhash_params {
    int shingle;      /* tokens per shingle (default 5) */
    int num_hashes;   /* signature length (default 128) */
    int bands;        /* LSH bands; rows per band = num_hashes / bands (default 16 x 8) */
    double threshold; /* estimated Jaccard needed to link two candidates (default 0.75) */
} curate_minhash_params;

void curate_minhash_defaults(curate_minhash_params *p);
/* Checks the parameters; returns -1 with a message in err. */
int curate_minhash_check(const curate_minhash_params *p, strbuf *err);
/* Signature of a normalized text (tokens separated by single spaces): num_hashes values. */
void curate_minhash_signature(const curate_minhash_params *p, const char *normalized, size_t len,
                              uint32_t *sig);
/* Fraction of equal signature positions: the estimate of Jaccard similarity. */
double curate_minhash_similarity(const uint32_t *a, const uint32_t *b, int num_hashes);
/* Clusters n signatures (n * num_hashes values): pairs that share an LSH band and whose estimated
 * similarity reaches the threshold are linked; cluster[i] receives the smallest index of i's
 * cluster. Deterministic for the same input. */
void curate_minhash_cluster(const curate_minhash_params *p, const uint32_t *sigs, size_t n,
                            size_t *cluster);

#endif
