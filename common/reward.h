/* reward: the reward rule, the one vocabulary kcurate's labels (curate/labels.c) and kverify
 * serve's answers (verify/cli/serve_request.c) share: what a verified turn earns from its
 * verdict, its verifier flags and its speedup over PyTorch eager, and whether that speedup is
 * flagged for audit. */
#ifndef KC_REWARD_H
#define KC_REWARD_H

typedef struct kc_reward_params {
    double correct;            /* reward of a correct turn before its speedup (default 0.3) */
    double incorrect;          /* reward of any other turn (default 0) */
    double speedup_weight;     /* weight of the eager speedup in a correct turn's reward (1) */
    double speedup_cap;        /* speedups above this count as the cap in rewards (10) */
    double suspicious_speedup; /* eager speedups above this are flagged for audit (10) */
} kc_reward_params;

/* What one turn earns. */
typedef struct kc_reward {
    double reward;
    int suspicious; /* flagged for audit: the verifier's suspicious_speedup, a speed that is not
                       trusted (timing_inconsistent), or a correct speedup above the threshold */
} kc_reward;

void kc_reward_defaults(kc_reward_params *p);
/* Whether a comma-separated flag list ("alt_shape_fail,nondeterministic"; NULL: none) holds
 * flag. */
int kc_has_flag(const char *flags, const char *flag);
/* A correct turn earns correct + speedup_weight * min(speedup_eager, cap), its speed counting 0
 * when flagged timing_inconsistent; any other verdict earns incorrect. */
kc_reward kc_reward_of(const kc_reward_params *p, const char *verdict, const char *flags,
                       double speedup_eager);

#endif
