/* fuzz_common: helpers shared by the libFuzzer targets in tests/fuzz/ (one
 * fuzz_<target>.c per parser of untrusted bytes; see tests/fuzz/README.md). */
#ifndef KC_FUZZ_COMMON_H
#define KC_FUZZ_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (an embedded NUL ends it early, as it
 * would for the C string the parser receives in production). Caller frees. */
static inline char *fz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* A property the parser must keep failed: report it and abort, so libFuzzer
 * saves the input as a crash. */
#define FZ_CHECK(cond)                                                                     \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "fuzz property failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

#endif
