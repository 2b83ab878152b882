/* prompt: the message list of a turn under a context policy (see prompt.h). The
 * system message and the spec come from common/prompt_text.c, shared with kexport. */
#include "collect/prompt.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

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
