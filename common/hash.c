/* hash: sha256 through libcrypto's EVP interface, plus a 64-bit hash. */
#include "common/hash.h"
#include "common/error.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

struct sha256_stream {
    EVP_MD_CTX *ctx;
};

static void to_hex(const unsigned char *digest, unsigned n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (unsigned i = 0; i < n; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[2 * n] = '\0';
}

sha256_stream *sha256_begin(void)
{
    sha256_stream *s = xmalloc(sizeof(*s));
    s->ctx = EVP_MD_CTX_new();
    if (!s->ctx || EVP_DigestInit_ex(s->ctx, EVP_sha256(), NULL) != 1)
        die("cannot initialise sha256");
    return s;
}

void sha256_update(sha256_stream *s, const void *data, size_t len)
{
    if (len && EVP_DigestUpdate(s->ctx, data, len) != 1)
        die("sha256 update failed");
}

void sha256_finish(sha256_stream *s, char *out_hex)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    if (EVP_DigestFinal_ex(s->ctx, digest, &n) != 1)
        die("sha256 final failed");
    to_hex(digest, n, out_hex);
    EVP_MD_CTX_free(s->ctx);
    free(s);
}

void sha256_hex(const void *data, size_t len, char *out)
{
    sha256_stream *s = sha256_begin();
    sha256_update(s, data, len);
    sha256_finish(s, out);
}

uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t hash64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = mix64(seed ^ (len * 0x9e3779b97f4a7c15ULL));
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix64(h ^ w);
        p += 8;
        len -= 8;
    }
    uint64_t tail = 0;
    memcpy(&tail, p, len);
    return mix64(h ^ tail ^ ((uint64_t)len << 56));
}

uint64_t hash64_str(const char *s) { return hash64(s, strlen(s), 0); }
