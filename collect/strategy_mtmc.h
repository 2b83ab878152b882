/* strategy_mtmc: kcollect --strategy mtmc, macro-thinking / micro-coding. Turn 0 asks for a plan
 * (PLAN ... END, one action a line from a fixed vocabulary plus free text); each later turn asks
 * for the implementation of the next action on top of the last good kernel (correct, or compiled
 * in a compile-only run), with what the verifier and the hardware said about that kernel; a
 * failing step is asked again from the same kernel with the failure as feedback; after
 * --plan-retries failures of one step the plan is revised (a 'revise' turn answers a new plan
 * whose steps start from the last good kernel). The state is derived from the recorded turns
 * alone (turns.action, step, plan_json), so a resumed run goes on where it stopped.
 *
 * The requests are compact: the first user message (the spec and the plan instructions), the
 * answer that gave the plan in force, and the turn's request; failed attempts are not resent. */
#ifndef KC_STRATEGY_MTMC_H
#define KC_STRATEGY_MTMC_H
#include "collect/config.h"
#include "collect/prompt.h"
#include "collect/record.h"
#include "common/problem.h"
#include "verify/service/verify.h"

enum mtmc_kind { MTMC_PLAN, MTMC_REVISE, MTMC_STEP, MTMC_DONE };

/* The markers the bundled test server answers by (tests/helpers/fake_llm.c). */
#define MTMC_PLAN_MARKER "KC-MTMC PLAN REQUEST"
#define MTMC_REVISE_MARKER "KC-MTMC REVISE REQUEST"
#define MTMC_STEP_MARKER "KC-MTMC STEP"

/* The next turn of a trajectory. */
typedef struct mtmc_turn {
    enum mtmc_kind kind;
    int step, n_steps; /* MTMC_STEP: 1-based step of the plan in force, and its length */
    strbuf action;     /* 'plan', 'revise' or the step's action line */
} mtmc_turn;

/* Decides the next turn from the recorded ones and builds its messages (free with
 * prompt_messages_free). MTMC_DONE: every action of the plan is done (no messages). */
void mtmc_next(const collect_config *cfg, const char *spec, const trajectory_state *t,
               mtmc_turn *turn, prompt_messages *pm);
void mtmc_turn_free(mtmc_turn *turn);

/* The plan in an answer as JSON text ([{"action","arg","text"}], malloc'd), or NULL with why in
 * err. Lines between PLAN and END (or every numbered or bulleted line when there is no PLAN
 * line): "[N.|-] action [argument] [-- free text]", action from the vocabulary. */
char *mtmc_parse_plan(const char *answer, strbuf *err);
/* The action vocabulary, one "name  meaning" a line (the plan instructions show it). */
const char *mtmc_vocabulary(void);
/* Appends the hardware facts of a verification: per kernel registers, static shared memory,
 * spills and the occupancy its registers allow; when timed, achieved GB/s and TFLOP/s against
 * the GPU's peaks and the roofline. */
void mtmc_hardware_facts(const problem *p, const kv_result *r, strbuf *out);
/* Why the trajectory stops after a step turn that succeeded (target speedup reached, or the
 * plan's last step done), or NULL. */
const char *mtmc_stop(const collect_config *cfg, const mtmc_turn *turn, const kv_result *r,
                      int success);

#endif
