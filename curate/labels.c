/* labels: verdict classes, KernelBench speedup tiers, Kevin-style rewards (common/reward.c) and
 * returns. */
#include "curate/labels.h"
#include "common/reward.h"
#include "common/verdicts.h"

#include <string.h>

const char *curate_verdict_class(const char *v)
{
    return kc_verdict_class_of(v); /* common/verdicts.c */
}

const char *curate_speedup_tier(int correct, double s)
{
    if (!correct)
        return NULL;
    return s > 2 ? "fast_2" : s > 1.5 ? "fast_1.5" : s > 1 ? "fast_1" : "fast_0";
}

int curate_class_rank(const char *cls)
{
    const kc_class_info *c = kc_class_find(cls); /* common/verdicts.c; unknown: as unverified */
    return c ? c->progress : 0;
}

void curate_label_item(const curate_params *p, curate_item *it)
{
    int correct = !strcmp(it->verdict, "correct");
    it->verdict_class = curate_verdict_class(it->verdict);
    it->tier_eager = curate_speedup_tier(correct, it->speedup_eager);
    it->tier_compile = curate_speedup_tier(correct, it->speedup_compile);
    if (kc_has_flag(it->flags, "alt_shape_fail") || kc_has_flag(it->flags, "hidden_shape_fail") ||
        kc_has_flag(it->flags, "boundary_shape_fail"))
        it->correct_alt = 0;
    else
        it->correct_alt = correct ? 1 : -1;
    kc_reward r = kc_reward_of(&p->reward, it->verdict, it->flags, it->speedup_eager);
    it->suspicious = r.suspicious;
    it->reward = r.reward;
    it->discounted_return = it->reward;
    it->improved = -1;
}

static int better_than(const curate_item *a, const curate_item *b)
{
    int ra = curate_class_rank(a->verdict_class), rb = curate_class_rank(b->verdict_class);
    if (ra != rb)
        return ra > rb;
    return !strcmp(a->verdict_class, "correct") && a->speedup_eager > b->speedup_eager;
}

void curate_label_trajectory(const curate_params *p, curate_item **t, int n,
                             curate_trajectory_labels *out)
{
    *out = (curate_trajectory_labels){.first_correct_turn = -1, .n_turns = n};
    double later = 0;
    for (int i = n - 1; i >= 0; i--) {
        t[i]->discounted_return = t[i]->reward + p->gamma * later;
        later = t[i]->discounted_return;
    }
    for (int i = 0; i < n; i++) {
        curate_item *it = t[i];
        it->improved = i == 0 ? -1 : better_than(it, t[i - 1]);
        out->total_reward += it->reward;
        out->truncated_turns += it->truncated;
        out->suspicious_turns += it->suspicious;
        if (strcmp(it->verdict, "correct"))
            continue;
        if (!out->solved)
            out->first_correct_turn = it->turn_index;
        out->solved = 1;
        if (it->speedup_eager > out->best_speedup_eager)
            out->best_speedup_eager = it->speedup_eager;
        if (it->speedup_compile > out->best_speedup_compile)
            out->best_speedup_compile = it->speedup_compile;
    }
}
