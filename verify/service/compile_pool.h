/* compile_pool: sandboxed NVRTC compile servers (`kverify compile-server`)
 * run as separate processes, warmed once and confined (sandbox.h), fed one
 * source at a time over pipes. The pool is thread-safe; a server that hangs
 * past the time limit or crashes is killed and replaced. */
#ifndef KC_COMPILE_POOL_H
#define KC_COMPILE_POOL_H
#include "common/strbuf.h"
#include "verify/service/verify.h"
#include "verify/service/nvrtc_compile.h"

typedef struct compile_pool compile_pool;

typedef struct compile_pool_options {
    int servers;          /* parallel compile processes */
    int no_sandbox;       /* unsafe: for debugging only */
    double timeout_ms;    /* per compile (default 20000) */
} compile_pool_options;

int compile_pool_start(const compile_pool_options *o, compile_pool **out, strbuf *err);
/* Compiles; a compiler failure is not an error (out->ok = 0, log says why).
 * Returns -1 only when no server can run at all (err says why). */
int compile_pool_compile(compile_pool *pool, const char *source, const char *arch,
                         compile_output *out, strbuf *err);
const char *compile_pool_nvrtc_version(compile_pool *pool);
/* The most servers that were starting at once (spawned, no hello yet): at most 8, or
 * KC_COMPILE_SPAWN_AT_ONCE, however many compiles ask for servers together. */
int compile_pool_peak_starting(compile_pool *pool);
void compile_pool_stop(compile_pool *pool);

#endif
