/* progress: what kcollect shows while it runs. On a terminal, one status
 * line redrawn twice a second (trajectories and problems done, solved so far, turns, tokens,
 * tokens/s, cost, ETA, best speedup, candidates being verified), and per-turn lines only with
 * -v; otherwise plain log lines, one per turn. Errors and notes are lines in both cases
 * (stderr). */
#ifndef KC_PROGRESS_H
#define KC_PROGRESS_H
#include "collect/loop.h"
#include "verify/service/verify.h"
#include <pthread.h>

typedef struct progress progress;

/* sum is read under lock. */
progress *progress_start(const collect_summary *sum, pthread_mutex_t *lock, int compile_only,
                         int verbose);
void progress_stop(progress *p);
void progress_note(progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void progress_error(progress *p, const char *label, const char *message);
void progress_turn(progress *p, const char *label, int turn, const char *verdict,
                   const char *message, int cached, int truncated, const char *stop);
void progress_verifying(progress *p, int delta);
/* Shows the GPU workers' load once *verifier (started lazily) is set. */
void progress_watch_verifier(progress *p, kv_service *const *verifier);
void progress_update(progress *p);

#endif
