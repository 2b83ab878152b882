/* minhash: MinHash signatures (a multiply-add-xorshift hash per position over 32-bit shingle
 * hashes) and LSH banding with union-find clustering. */
#include "curate/minhash.h"
#include "common/error.h"
#include "common/hash.h"

#include <stdlib.h>
#include <string.h>

void curate_minhash_defaults(curate_minhash_params *p)
{
    *p = (curate_minhash_params){.shingle = 5, .num_hashes = 128, .bands = 16, .threshold = 0.75};
}

int curate_minhash_check(const curate_minhash_params *p, strbuf *err)
{
    if (p->shingle < 1 || p->shingle > 32)
        return kc_fail(err, "shingle size must be 1..32 tokens");
    if (p->num_hashes < 1 || p->num_hashes > CURATE_MAX_HASHES)
        return kc_fail(err, "number of hashes must be 1..%d", CURATE_MAX_HASHES);
    if (p->bands < 1 || p->num_hashes % p->bands != 0)
        return kc_fail(err, "bands (%d) must divide the number of hashes (%d)", p->bands,
                       p->num_hashes);
    if (!(p->threshold > 0 && p->threshold <= 1))
        return kc_fail(err, "the near-duplicate threshold must be in (0, 1]");
    return 0;
}

/* Each position i hashes a shingle x as ((a_i * x + b_i) ^ shift) with a_i odd: one multiply per
 * position; positions are processed 32 at a time so that the compiler vectorizes it (AVX2 or
 * AVX-512 where the CPU has it). */
#define LANES 8

static void position_constants(int k, uint32_t *a, uint32_t *b)
{
    for (int i = 0; i < k; i++) {
        uint64_t r = mix64(0x6b63636f72707573ULL + (uint64_t)i);
        a[i] = (uint32_t)r | 1u;
        b[i] = (uint32_t)(r >> 32);
    }
}

/* Hashes of the space-separated tokens of a normalized text; returns the count. */
static size_t token_hashes(const char *text, size_t len, uint64_t **out)
{
    size_t cap = len / 2 + 1, n = 0;
    uint64_t *h = xmalloc(cap * sizeof(*h));
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *q = memchr(p, ' ', (size_t)(end - p));
        if (!q)
            q = end;
        if (q > p)
            h[n++] = hash64(p, (size_t)(q - p), 0x746f6b656eULL);
        p = q + 1;
    }
    *out = h;
    return n;
}

/* Minima over all shingles, 32 positions at a time: the 32 running minima stay in registers
 * (four AVX2 or two AVX-512 vectors) while the shingles stream past, instead of being loaded and
 * stored once per shingle. blocks is a multiple of 4 (LANES * 4 = 32 positions). */
#define GROUP (4 * LANES)

__attribute__((target_clones("avx512f", "avx2", "default")))
static void update_minima(const uint32_t *xs, size_t nx, const uint32_t *a, const uint32_t *b,
                          int blocks, uint32_t *mins)
{
    for (int g = 0; g < blocks * LANES; g += GROUP) {
        uint32_t m[GROUP], ag[GROUP], bg[GROUP];
        memcpy(m, mins + g, sizeof m);
        memcpy(ag, a + g, sizeof ag);
        memcpy(bg, b + g, sizeof bg);
        for (size_t s = 0; s < nx; s++) {
            uint32_t x = xs[s];
            for (int j = 0; j < GROUP; j++) {
                uint32_t v = ag[j] * x + bg[j];
                v ^= v >> 15;
                m[j] = v < m[j] ? v : m[j];
            }
        }
        memcpy(mins + g, m, sizeof m);
    }
}

/* 32-bit hashes of the shingles (w consecutive tokens); returns the count. */
static size_t shingle_hashes(const uint64_t *tok, size_t n, size_t w, uint32_t *out)
{
    size_t shingles = n == 0 ? 0 : n < w ? 1 : n - w + 1;
    for (size_t s = 0; s < shingles; s++) {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (size_t j = s; j < s + w && j < n; j++)
            h = (h ^ tok[j]) * 0x100000001b3ULL;
        out[s] = (uint32_t)(mix64(h) >> 32);
    }
    return shingles;
}

void curate_minhash_signature(const curate_minhash_params *p, const char *normalized, size_t len,
                              uint32_t *sig)
{
    uint32_t a[CURATE_MAX_HASHES + GROUP], b[CURATE_MAX_HASHES + GROUP],
        mins[CURATE_MAX_HASHES + GROUP];
    int k = p->num_hashes, blocks = (k + GROUP - 1) / GROUP * (GROUP / LANES);
    position_constants(blocks * LANES, a, b);
    for (int i = 0; i < blocks * LANES; i++)
        mins[i] = UINT32_MAX;
    uint64_t *tok;
    size_t n = token_hashes(normalized, len, &tok);
    uint32_t *xs = xmalloc((n ? n : 1) * sizeof(*xs));
    size_t nx = shingle_hashes(tok, n, (size_t)p->shingle, xs);
    update_minima(xs, nx, a, b, blocks, mins);
    memcpy(sig, mins, (size_t)k * sizeof(*sig));
    free(xs);
    free(tok);
}

double curate_minhash_similarity(const uint32_t *a, const uint32_t *b, int num_hashes)
{
    int same = 0;
    for (int i = 0; i < num_hashes; i++)
        same += a[i] == b[i];
    return (double)same / num_hashes;
}

static size_t find_root(size_t *parent, size_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

/* Joins two sets; the smaller index becomes the root. */
static void join(size_t *parent, size_t a, size_t b)
{
    size_t ra = find_root(parent, a), rb = find_root(parent, b);
    if (ra < rb)
        parent[rb] = ra;
    else if (rb < ra)
        parent[ra] = rb;
}

typedef struct band_entry {
    uint64_t key;
    size_t index;
} band_entry;

static int compare_entries(const void *a, const void *b)
{
    const band_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Links members of one bucket: each to the bucket's first member, else to its predecessor. */
static void link_bucket(const curate_minhash_params *p, const uint32_t *sigs, const band_entry *e,
                        size_t count, size_t *parent)
{
    int k = p->num_hashes;
    for (size_t j = 1; j < count; j++) {
        const uint32_t *sj = sigs + e[j].index * (size_t)k;
        if (find_root(parent, e[j].index) == find_root(parent, e[0].index))
            continue;
        if (curate_minhash_similarity(sigs + e[0].index * (size_t)k, sj, k) >= p->threshold)
            join(parent, e[0].index, e[j].index);
        else if (curate_minhash_similarity(sigs + e[j - 1].index * (size_t)k, sj, k) >= p->threshold)
            join(parent, e[j - 1].index, e[j].index);
    }
}

void curate_minhash_cluster(const curate_minhash_params *p, const uint32_t *sigs, size_t n,
                            size_t *cluster)
{
    size_t *parent = xmalloc((n ? n : 1) * sizeof(*parent));
    band_entry *entries = xmalloc((n ? n : 1) * sizeof(*entries));
    int rows = p->num_hashes / p->bands;
    for (size_t i = 0; i < n; i++)
        parent[i] = i;
    for (int b = 0; b < p->bands; b++) {
        for (size_t i = 0; i < n; i++) {
            const uint32_t *band = sigs + i * (size_t)p->num_hashes + (size_t)b * (size_t)rows;
            entries[i] = (band_entry){hash64(band, (size_t)rows * sizeof(*band), (uint64_t)b), i};
        }
        qsort(entries, n, sizeof(*entries), compare_entries);
        for (size_t start = 0, end; start < n; start = end) {
            for (end = start + 1; end < n && entries[end].key == entries[start].key; end++)
                ;
            if (end - start > 1)
                link_bucket(p, sigs, entries + start, end - start, parent);
        }
    }
    for (size_t i = 0; i < n; i++)
        cluster[i] = find_root(parent, i);
    free(entries);
    free(parent);
}
