/* prompt_text: what the model reads first, in one place for every tool. The system message
 * states the kc-cuda v1 answer format with a worked example; the spec of a problem is its first
 * user message (description, PyTorch reference, signature, dims, tolerance). kcollect sends both;
 * kexport writes both for candidates without a recorded request and for rl prompts. Changing
 * either text changes what the model sees: it is part of the kc-cuda v1 contract. */
#ifndef KC_PROMPT_TEXT_H
#define KC_PROMPT_TEXT_H
#include "common/problem.h"
#include "common/strbuf.h"

/* The system message of every request. */
const char *prompt_system_text(void);
/* Appends the spec of a problem as shown to a model. */
void problem_spec_text(const problem *p, strbuf *out);

#endif
