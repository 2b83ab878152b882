/* harness_module: the harness module's cubin, built in for the architectures make compiled it for
 * (HARNESS_ARCHS in the Makefile), compiled with NVRTC for any other (harness_module.h). */
#include "verify/service/harness_module.h"
#include "verify/service/nvrtc_compile.h"

#include <string.h>

extern const char kc_harness_source[]; /* generated from verify/worker/harness.cu */

int harness_module_cubin(const char *arch, strbuf *cubin, int *built_in, strbuf *err)
{
    for (const harness_builtin *h = kc_harness_cubins; h->arch; h++)
        if (strcmp(h->arch, arch) == 0) {
            sb_reset(cubin);
            sb_add(cubin, (const char *)h->bytes, h->len);
            if (built_in)
                *built_in = 1;
            return 0;
        }
    if (built_in)
        *built_in = 0;
    return nvrtc_compile_trusted(kc_harness_source, arch, cubin, err);
}
