/* prompt: what the model reads on each turn. The system message
 * (prompt_system_text) states the kc-cuda v1 contract with one worked example;
 * the first user message is the problem's spec (problem_spec_text), both from
 * common/prompt_text.h; each later user message is the verifier's feedback on
 * the previous answer. The context policy decides whether earlier reasoning
 * goes back to the model. */
#ifndef KC_PROMPT_H
#define KC_PROMPT_H
#include "collect/config.h"
#include "collect/llm.h"
#include "common/prompt_text.h"
#include "common/strbuf.h"

/* One finished turn as the next request needs it. */
typedef struct turn_history {
    char *prompt;    /* the user message of the turn */
    char *answer;    /* the answer, reasoning removed */
    char *reasoning; /* may be NULL */
    char *feedback;  /* the verifier's feedback, sent as the next user message */
    char *source;    /* the extracted kernel (NULL when none): replaces an overlong answer */
    char *verdict;   /* the latest verdict of its candidate (NULL: a planning turn) */
    char *action;    /* mtmc: 'plan', 'revise' or the action line; NULL for the loop */
    char *plan_json; /* mtmc planning turns: the plan parsed from the answer (NULL: none) */
    int step;        /* mtmc step turns: 1-based step in the plan in force; 0 otherwise */
} turn_history;

/* Answers longer than this go back to the model as their code block only. */
#define PROMPT_MAX_ANSWER (64 * 1024)

/* The messages of turn n (n = number of finished turns): spec, then for each
 * finished turn its answer and feedback. Returned strings point into history
 * and into storage (free with prompt_messages_free). */
typedef struct prompt_messages {
    llm_message *messages;
    int n;
    strbuf *owned; /* assistant texts rebuilt with their reasoning (full policy) */
    int n_owned;
} prompt_messages;

void prompt_build(const char *spec, const turn_history *history, int n_turns,
                  enum context_policy policy, prompt_messages *out);
void prompt_messages_free(prompt_messages *m);

#endif
