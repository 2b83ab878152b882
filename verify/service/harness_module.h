/* harness_module: the harness module's cubin for a GPU architecture: the one built in by make
 * (gen/harness_cubins.c, from tools/harness_cubin.c) when there is one for that architecture,
 * else compiled now with NVRTC from the harness source. */
#ifndef KC_HARNESS_MODULE_H
#define KC_HARNESS_MODULE_H
#include "common/strbuf.h"

#include <stddef.h>

typedef struct harness_builtin {
    const char *arch; /* sm_90 */
    const unsigned char *bytes;
    size_t len;
} harness_builtin;

extern const harness_builtin kc_harness_cubins[]; /* ends with an entry whose arch is NULL */

/* cubin gets the harness for arch; *built_in (when given) says whether it came built in.
 * Returns 0, or -1 with err set when the compile failed. */
int harness_module_cubin(const char *arch, strbuf *cubin, int *built_in, strbuf *err);

#endif
