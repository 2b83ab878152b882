/* prompt: the system message (kc-cuda v1 contract and a worked example) and
 * the message list of a turn under a context policy (see prompt.h). */
#include "collect/prompt.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

static const char system_text[] =
    "You write CUDA kernels for a verifier that compiles your code with NVRTC, runs it on an "
    "NVIDIA H100 (sm_90) against a trusted reference, and times it. Make the kernel correct "
    "first, then fast.\n"
    "\n"
    "Answer format (kc-cuda v1): exactly one fenced ```cuda block. Inside it:\n"
    "- Device code only: `extern \"C\" __global__` entry points, `__device__` helpers, "
    "`__constant__` data, templates. No host code, no main(), no cudaMalloc or cudaMemcpy: "
    "the verifier owns the host side.\n"
    "- Includes only from the toolkit allow-list (cuda_fp16.h, cuda_bf16.h, mma.h, "
    "cuda/std headers and the like); float32 code needs none. NVRTC has no INFINITY macro: "
    "use __int_as_float(0x7f800000).\n"
    "- Launch lines say how your kernels run; they execute in order on one stream and together "
    "they are the unit that is checked and timed:\n"
    "  // @launch NAME<<<GRID, BLOCK[, SHARED_BYTES]>>>(ARG, ...);\n"
    "  GRID and BLOCK are integer expressions or dim3(x, y, z). Arguments are tensor names "
    "(inputs, outputs, scratch: passed as device pointers), integer expressions over the "
    "problem's dims (passed as int or long long to match your parameter), scalar params of the "
    "problem by name, or literals.\n"
    "  Expressions use integer literals, dim names, + - * / %, cdiv(a, b), min(a, b), "
    "max(a, b) and parentheses, in 64-bit integer arithmetic.\n"
    "- Scratch buffers you need: // @scratch NAME DTYPE[COUNT]   (for example "
    "// @scratch partial f32[B*64]). Scratch and outputs are filled with garbage before your "
    "kernels run: initialise what you read and write every output element.\n"
    "- Your kernels also run on other sizes than the default dims (odd ones, such as 4097 or "
    "1): guard every index, never hard-code a dim, use 64-bit indices when a count can exceed "
    "2^31, and keep grid.y and grid.z at most 65535.\n"
    "\n"
    "Worked example. Problem: y = alpha * x over a float32 vector x of N elements, scalar "
    "param alpha; dims N = 1048576. A good answer:\n"
    "\n"
    "```cuda\n"
    "extern \"C\" __global__ void scale(const float *__restrict__ x, float *__restrict__ y,\n"
    "                                  float alpha, long long n)\n"
    "{\n"
    "    long long stride = (long long)gridDim.x * blockDim.x;\n"
    "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)\n"
    "        y[i] = alpha * x[i];\n"
    "}\n"
    "// @launch scale<<<min(cdiv(N, 256), 65536), 256>>>(x, y, alpha, N);\n"
    "```\n"
    "\n"
    "After each answer you get the verifier's report (compile errors, mismatches with their "
    "location and values, timing against PyTorch, achieved bandwidth, registers and spills). "
    "Reply to it with a complete new version of the code block, never a diff.\n";

const char *prompt_system(void) { return system_text; }

void prompt_build(const char *spec, const turn_history *history, int n_turns,
                  enum context_policy policy, prompt_messages *out)
{
    memset(out, 0, sizeof *out);
    out->messages = xcalloc((size_t)(2 * n_turns + 1), sizeof *out->messages);
    out->owned = xcalloc((size_t)(n_turns ? n_turns : 1), sizeof *out->owned);
    out->messages[out->n++] = (llm_message){"user", spec};
    for (int i = 0; i < n_turns; i++) {
        const turn_history *t = &history[i];
        const char *answer = t->answer ? t->answer : "";
        size_t len = strlen(answer);
        int full = policy == CONTEXT_FULL && t->reasoning && *t->reasoning;
        if (full || len > PROMPT_MAX_ANSWER) {
            strbuf *sb = &out->owned[out->n_owned++];
            if (full)
                sb_addf(sb, "<think>\n%s\n</think>\n\n", t->reasoning);
            if (len <= PROMPT_MAX_ANSWER)
                sb_adds(sb, answer);
            else if (t->source && *t->source)
                sb_addf(sb, "[%zu bytes of answer shortened to its code block]\n\n```cuda\n%s\n```\n",
                        len, t->source);
            else
                sb_addf(sb, "[%zu bytes of answer without a code block, omitted]\n", len);
            answer = sb->buf;
        }
        out->messages[out->n++] = (llm_message){"assistant", answer};
        out->messages[out->n++] = (llm_message){"user", t->feedback ? t->feedback : ""};
    }
}

void prompt_messages_free(prompt_messages *m)
{
    for (int i = 0; i < m->n_owned; i++)
        sb_free(&m->owned[i]);
    free(m->owned);
    free(m->messages);
    memset(m, 0, sizeof *m);
}
