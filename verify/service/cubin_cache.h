/* cubin_cache: the cubins of trusted code (the problems' references) kept on disk across runs,
 * so that no candidate waits for a reference compile that ran before, and a fresh clone can warm
 * them all at once (`kverify warm`). An entry is named by the sha256 of what made it: the source
 * as compiled (shared kernel files expanded), the arch, the NVRTC version and the trusted compile
 * options (nvrtc_trusted_options); it opens with a header giving the cubin's length and sha256,
 * so a damaged or cut entry is compiled again, never loaded. Candidates are never kept: only
 * what nvrtc_compile_trusted compiles in this process goes in.
 *
 * Where: $KC_CUBIN_CACHE ("off": no cache), else $XDG_CACHE_HOME/kcorpus/cubins, else
 * $HOME/.cache/kcorpus/cubins. The directory is made at the first store; one that cannot be
 * made or written is one warning, then the cache keeps nothing more (references compile as
 * before). It holds trusted code: keep it where only you can write. Thread-safe. */
#ifndef KC_CUBIN_CACHE_H
#define KC_CUBIN_CACHE_H
#include "common/hash.h"
#include "common/strbuf.h"

typedef struct cubin_cache cubin_cache;

/* Where a cubin came from. */
enum cubin_origin {
    CUBIN_CACHED,     /* a sound entry of the cache */
    CUBIN_COMPILED,   /* compiled: there was no entry (or no cache) */
    CUBIN_RECOMPILED  /* compiled: the entry was damaged (cut, altered, not an entry) */
};

/* The cache the environment names (see above). Never NULL; one that is off keeps nothing. */
cubin_cache *cubin_cache_open(void);
void cubin_cache_close(cubin_cache *c);
/* The cache's directory; NULL when off. */
const char *cubin_cache_dir(const cubin_cache *c);
/* Whether entries can still be stored (the cache is on and no store has failed). */
int cubin_cache_writable(cubin_cache *c);

/* The cubin of trusted source for arch: a sound entry's, else compiled by nvrtc_compile_trusted
 * and stored. Returns 0 (origin, when not NULL, says which), or -1 with the compile log in err. */
int cubin_cache_trusted(cubin_cache *c, const char *source, const char *arch, strbuf *cubin,
                        enum cubin_origin *origin, strbuf *err);

/* Exposed for tests: an entry's name, out[SHA256_HEX_LEN + 1]. */
void cubin_cache_key(const char *source, const char *arch, const char *nvrtc_version,
                     const char *options, char *out);
/* Exposed for tests: the path of the entry for (source, arch) in this process's NVRTC; 0, or -1
 * when the cache is off. */
int cubin_cache_entry_path(const cubin_cache *c, const char *source, const char *arch,
                           strbuf *out);

#endif
