/* hash: sha256 (OpenSSL's libcrypto, already pulled in by libcurl) for content
 * addressing, and a fast 64-bit mixing hash for MinHash and seeds. */
#ifndef KC_HASH_H
#define KC_HASH_H
#include <stddef.h>
#include <stdint.h>

#define SHA256_HEX_LEN 64

/* out must hold SHA256_HEX_LEN + 1 bytes. */
void sha256_hex(const void *data, size_t len, char *out);

typedef struct sha256_stream sha256_stream;
sha256_stream *sha256_begin(void);
void sha256_update(sha256_stream *s, const void *data, size_t len);
void sha256_finish(sha256_stream *s, char *out_hex);

uint64_t mix64(uint64_t x);                 /* splitmix64 finalizer */
uint64_t hash64(const void *data, size_t len, uint64_t seed);
uint64_t hash64_str(const char *s);

#endif
