/* reward: the reward rule shared by kcurate and kverify serve (see reward.h). */
#include "common/reward.h"

#include <string.h>

void kc_reward_defaults(kc_reward_params *p)
{
    *p = (kc_reward_params){.correct = 0.3, .incorrect = 0, .speedup_weight = 1,
                            .speedup_cap = 10, .suspicious_speedup = 10};
}

int kc_has_flag(const char *flags, const char *flag)
{
    size_t n = strlen(flag);
    for (const char *p = flags; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && !memcmp(p, flag, n))
            return 1;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

kc_reward kc_reward_of(const kc_reward_params *p, const char *verdict, const char *flags,
                       double speedup_eager)
{
    int correct = verdict && !strcmp(verdict, "correct");
    /* timing_inconsistent: correct when checked, but its timed runs did less work than its
     * checking runs: correctness stands, its speed earns nothing and is flagged for audit. */
    int speed_trusted = !kc_has_flag(flags, "timing_inconsistent");
    kc_reward r;
    r.suspicious = kc_has_flag(flags, "suspicious_speedup") || !speed_trusted ||
                   (correct && speedup_eager > p->suspicious_speedup);
    double s = speedup_eager < p->speedup_cap ? speedup_eager : p->speedup_cap;
    if (!speed_trusted)
        s = 0;
    r.reward = correct ? p->correct + p->speedup_weight * s : p->incorrect;
    return r;
}
