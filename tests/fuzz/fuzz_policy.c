/* fuzz_policy: libFuzzer target for the include policy (policy_check,
 * verify/service/policy.c), the lexer that reads a candidate's CUDA source before it
 * reaches the compiler. Properties: no crash, UB, leak or blowup; a refusal
 * says why. */
#include "verify/service/policy.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *source = fz_cstr(data, size);
    strbuf err = STRBUF_INIT;
    if (policy_check(source, &err))
        FZ_CHECK(err.len > 0);
    sb_free(&err);
    free(source);
    return 0;
}
