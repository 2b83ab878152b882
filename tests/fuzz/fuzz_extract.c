/* fuzz_extract: libFuzzer target for pulling the ```cuda block out of a model's
 * answer (candidate_extract, common/candidate.c). The answer is bytes an LLM
 * wrote. Properties: no crash, UB, leak or blowup; on success the code is
 * no longer than the answer; on failure the error says why. */
#include "common/candidate.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *answer = fz_cstr(data, size);
    strbuf code = STRBUF_INIT, err = STRBUF_INIT;
    if (candidate_extract(answer, &code, &err) == 0)
        FZ_CHECK(code.len <= strlen(answer));
    else
        FZ_CHECK(err.len > 0);
    sb_free(&code);
    sb_free(&err);
    free(answer);
    return 0;
}
