/* ratelimit: in-flight, requests/min and tokens/min limits (see ratelimit.h).
 * Each admitted request is an event (start time, tokens) in a ring covering
 * the last 60 seconds; its tokens are corrected to the real count when it ends. */
#include "collect/ratelimit.h"
#include "common/fsutil.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#define WINDOW_MS 60000.0

void rl_init(ratelimit *rl, int max_inflight, int rpm, int tpm)
{
    memset(rl, 0, sizeof *rl);
    pthread_mutex_init(&rl->lock, NULL);
    pthread_cond_init(&rl->changed, NULL);
    rl->max_inflight = max_inflight > 0 ? max_inflight : 0;
    rl->rpm = rpm > 0 ? (rpm < RL_WINDOW ? rpm : RL_WINDOW) : 0;
    rl->tpm = tpm > 0 ? tpm : 0;
}

void rl_destroy(ratelimit *rl)
{
    pthread_mutex_destroy(&rl->lock);
    pthread_cond_destroy(&rl->changed);
}

static void expire(ratelimit *rl, double now)
{
    while (rl->first < rl->next && now - rl->t[rl->first % RL_WINDOW] >= WINDOW_MS)
        rl->first++;
    /* The ring is full: the oldest event is forgotten early (only when rpm is off). */
    while (rl->next - rl->first >= RL_WINDOW)
        rl->first++;
}

static double wait_locked(ratelimit *rl, long est_tokens, double now)
{
    expire(rl, now);
    if (rl->max_inflight && rl->inflight >= rl->max_inflight)
        return 50; /* woken by a release */
    double wait = 0;
    long long n = rl->next - rl->first;
    if (rl->rpm && n >= rl->rpm) {
        double t = rl->t[(rl->next - rl->rpm) % RL_WINDOW] + WINDOW_MS - now;
        wait = fmax(wait, t);
    }
    if (rl->tpm && n > 0) {
        long sum = 0;
        for (long long i = rl->first; i < rl->next; i++)
            sum += rl->tokens[i % RL_WINDOW];
        /* Drop the oldest events until the new request fits (alone it always may). */
        for (long long i = rl->first; i < rl->next && sum + est_tokens > rl->tpm; i++) {
            sum -= rl->tokens[i % RL_WINDOW];
            wait = fmax(wait, rl->t[i % RL_WINDOW] + WINDOW_MS - now);
        }
    }
    return wait > 0 ? wait : 0;
}

double rl_wait_ms(ratelimit *rl, long est_tokens, double now)
{
    pthread_mutex_lock(&rl->lock);
    double w = wait_locked(rl, est_tokens, now);
    pthread_mutex_unlock(&rl->lock);
    return w;
}

static void timed_wait(ratelimit *rl, double ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long ns = ts.tv_nsec + (long long)(ms * 1e6);
    ts.tv_sec += ns / 1000000000LL;
    ts.tv_nsec = ns % 1000000000LL;
    pthread_cond_timedwait(&rl->changed, &rl->lock, &ts);
}

int rl_acquire(ratelimit *rl, long est_tokens, double deadline_ms, volatile sig_atomic_t *cancel)
{
    pthread_mutex_lock(&rl->lock);
    for (;;) {
        double now = now_ms();
        if ((cancel && *cancel) || now >= deadline_ms) {
            pthread_mutex_unlock(&rl->lock);
            return -1;
        }
        double w = wait_locked(rl, est_tokens, now);
        if (w <= 0)
            break;
        timed_wait(rl, fmin(fmin(w, 100), deadline_ms - now));
    }
    long long id = rl->next++;
    rl->t[id % RL_WINDOW] = now_ms();
    rl->tokens[id % RL_WINDOW] = est_tokens;
    rl->inflight++;
    pthread_mutex_unlock(&rl->lock);
    return (int)(id % RL_WINDOW);
}

void rl_release(ratelimit *rl, int slot, long actual_tokens)
{
    pthread_mutex_lock(&rl->lock);
    if (slot >= 0 && slot < RL_WINDOW) {
        /* Still in the window? (ids older than first were forgotten.) */
        long long base = rl->next - 1 - ((rl->next - 1 - slot) % RL_WINDOW + RL_WINDOW) % RL_WINDOW;
        if (base >= rl->first)
            rl->tokens[slot] = actual_tokens;
    }
    if (rl->inflight > 0)
        rl->inflight--;
    pthread_cond_broadcast(&rl->changed);
    pthread_mutex_unlock(&rl->lock);
}
