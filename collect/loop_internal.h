/* loop_internal: what loop.c (a trajectory's turns) and run.c (the collection around them)
 * share: the collector, its jobs and problem clocks, and the calls between the two files. */
#ifndef KC_LOOP_INTERNAL_H
#define KC_LOOP_INTERNAL_H
#include "collect/llm.h"
#include "collect/loop.h"
#include "collect/progress.h"
#include "collect/ratelimit.h"
#include "common/problem.h"
#include "verify/service/verify.h"

#include <pthread.h>
#include <signal.h>

typedef struct job {
    int problem;
    int sample;
} job;

/* A problem's budget clock: the wall time of all its samples together, counted from its first
 * turn (in this process: start_ms; before a resume: base_ms), and its tokens. */
typedef struct problem_clock {
    double base_ms, start_ms;
    long tokens;
} problem_clock;

typedef struct collector {
    const collect_config *cfg;
    const char *endpoint_label;
    sqlite3 *db;
    pthread_mutex_t db_lock;
    kv_service *verifier; /* started at the first answer to verify */
    pthread_mutex_t verifier_lock;
    int verifier_failed;
    llm_endpoint endpoints[CC_MAX_ENDPOINTS];
    int n_endpoints;
    llm_client client;
    ratelimit limits;
    problem *problems;
    char **specs;
    int n_problems;
    int *problem_solved;
    problem_clock *clocks; /* --problem-budget: per problem, under lock */
    job *jobs;
    int n_jobs, next_job;
    int n_job_problems; /* problems with a job (a shard holds some of the selection's) */
    int64_t run_id;
    int run_is_new; /* open_run started it (not a continuation) */
    int unreachable; /* stopped because no endpoint could be reached */
    volatile sig_atomic_t *cancel;
    pthread_mutex_t lock; /* jobs, summary, fatal */
    collect_summary sum;
    progress *progress;
    strbuf fatal;
    strbuf refused; /* the first request an endpoint refused (HTTP 400, 413, 422) */
    int lock_fd;
    char *lock_path;
} collector;

/* --problem-budget: after a resume each problem's clock goes on from its latest recorded turn. */
int loop_load_problem_clocks(collector *c, strbuf *err);
/* A worker thread: takes trajectories from the queue and runs them. */
void *loop_worker(void *arg);

#endif
