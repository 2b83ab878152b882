/* labels: the per-candidate and per-trajectory labels of kcurate, as pure functions over the
 * facts of each turn (verdict, flags, speedups, finish reason): verdict class, tiers, improvement,
 * rewards (by the shared rule, common/reward.h) and discounted returns. */
#ifndef KC_CURATE_LABELS_H
#define KC_CURATE_LABELS_H
#include "curate/params.h"
#include <stdint.h>

/* What kcurate knows about one candidate, and the labels it computes. */
typedef struct curate_item {
    int64_t candidate_id;
    int64_t trajectory_id; /* 0 when the candidate is not part of a turn */
    int turn_index;        /* -1 when not part of a turn */
    char verdict[24];      /* "" when never verified */
    char flags[96];
    double speedup_eager, speedup_compile; /* 0 when unknown */
    int truncated;         /* the response ended with finish_reason 'length' */
    int64_t reasoning_chars;
    /* labels */
    const char *verdict_class, *tier_eager, *tier_compile;
    int correct_alt; /* 1, 0 or -1 (unknown) */
    int improved;    /* 1, 0 or -1 (first turn) */
    int suspicious;
    double reward, discounted_return;
} curate_item;

typedef struct curate_trajectory_labels {
    int solved, first_correct_turn; /* -1 when never correct */
    double best_speedup_eager, best_speedup_compile;
    int n_turns, truncated_turns, suspicious_turns;
    double total_reward;
} curate_trajectory_labels;

/* correct | incorrect (mismatch) | runtime_fail (launch/runtime error, timeout, unsafe) |
 * compile_fail | format_fail (extract error, policy violation) | compiled | unverified */
const char *curate_verdict_class(const char *verdict);
/* Rank of a verdict class, higher is better: unverified < format_fail < compile_fail < compiled <
 * runtime_fail < incorrect < correct ("better than the previous turn", dedup representatives). */
int curate_class_rank(const char *verdict_class);
/* fast_0 (correct), fast_1 (> 1x), fast_1.5, fast_2; NULL when not correct. */
const char *curate_speedup_tier(int correct, double speedup);
/* Labels one candidate on its own (everything but improved and discounted_return). */
void curate_label_item(const curate_params *p, curate_item *it);
/* Labels the turns of one trajectory, sorted by turn_index: improved, discounted returns. */
void curate_label_trajectory(const curate_params *p, curate_item **turns, int n,
                             curate_trajectory_labels *out);

#endif
