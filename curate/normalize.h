/* normalize: the normalized form of a kernel used for deduplication: its tokens (identifiers,
 * numbers, string literals, operators) joined by single spaces, with comments and layout removed
 * and identifiers kept. The kc-cuda v1 directive lines ("// @launch", "// @scratch", "// @for",
 * "// @end") are part of the kernel's meaning, so they are kept as tokens rather than dropped as
 * comments. */
#ifndef KC_CURATE_NORMALIZE_H
#define KC_CURATE_NORMALIZE_H
#include "common/strbuf.h"
#include <stddef.h>

/* Appends the normalized form of src[0..len) to out (out is reset first). */
void curate_normalize(const char *src, size_t len, strbuf *out);

#endif
