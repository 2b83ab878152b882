/* policy: what a candidate's source may contain before it reaches the compiler.
 * Includes only from the allow-list of toolkit headers (common/allowed_headers.h), written
 * literally as #include <name>; no __has_include probes, #include_next, #embed, #import,
 * digraph or trigraph directive forms, no token pasting beside #if; a size limit. The
 * lexer follows the C++ translation phases as NVRTC does (splices, every blank, comments,
 * raw strings, digit separators: see policy.c). The sandbox (sandbox.c), whose header tree
 * holds only the allowed headers, stops whatever slips past this check. */
#ifndef KC_POLICY_H
#define KC_POLICY_H
#include "common/candidate.h" /* KC_MAX_SOURCE_BYTES */
#include "common/strbuf.h"

/* Returns 0 when allowed; otherwise -1 with "line N: ..." in err. */
int policy_check(const char *source, strbuf *err);
/* After compilation: the module may not use the device malloc heap (malloc, free, new, delete
 * and __nv_aligned_device_malloc, seen as undefined symbols of the cubin the driver resolves).
 * The heap belongs to the worker's CUDA context and outlives a verification, so what one
 * candidate left there could change another's verdict (issue 34). 0 when allowed; -1 with
 * the reason in err (also for a module that is not a well-formed ELF64 cubin). */
int policy_check_module(const void *cubin, size_t len, strbuf *err);
/* Whether a compiled module keeps state from one execution to the next: writable device
 * globals (a .nv.global or .nv.global.init section: __device__ variables, the only memory a
 * module owns that its kernels can write). 1 too when the image cannot be read. */
int policy_module_keeps_state(const void *cubin, size_t len);
/* The allow-list, NULL-terminated. */
extern const char *const policy_allowed_includes[];

#endif
