/* ratelimit: the client-side limits on LLM traffic, shared by all worker
 * threads: requests in flight, requests per minute, tokens per minute
 * (sliding 60 s windows). */
#ifndef KC_RATELIMIT_H
#define KC_RATELIMIT_H
#include <pthread.h>
#include <signal.h>

#define RL_WINDOW 4096

typedef struct ratelimit {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int max_inflight;   /* 0: unlimited */
    int rpm, tpm;       /* 0: unlimited */
    int inflight;
    /* recent events: start time (ms, monotonic) and tokens */
    double t[RL_WINDOW];
    long tokens[RL_WINDOW];
    long long first, next; /* absolute ids of the window's oldest and next events */
} ratelimit;

void rl_init(ratelimit *rl, int max_inflight, int rpm, int tpm);
void rl_destroy(ratelimit *rl);
/* Waits for a slot for a request expected to use est_tokens; returns -1 when
 * deadline_ms (monotonic) passes or *cancel becomes non-zero first. The
 * returned slot index is given back to rl_release. */
int rl_acquire(ratelimit *rl, long est_tokens, double deadline_ms, volatile sig_atomic_t *cancel);
/* Ends the request in slot; its token count is corrected to actual_tokens. */
void rl_release(ratelimit *rl, int slot, long actual_tokens);
/* How long (ms) a request of est_tokens would wait now (0 = can go). */
double rl_wait_ms(ratelimit *rl, long est_tokens, double now);

#endif
