/* deadline: how long each stage of a GPU verification job may take before kverify kills the
 * worker (issue 37). The worker takes the trusted reference's time from the first run (its
 * execution after the candidate's, between device events; the first candidate execution gets an estimate,
 * deadline_estimate_reference_ms); every stage that runs candidate code gets
 *     floor + multiple x reference_ms x work_ratio + per_launch x launches
 * where work_ratio is the run's work over the measured run's (the manifest's bytes and flops
 * expressions, else the tensors' bytes; at least 1) and launches the candidate's launches in one
 * execution at the run's dims. Stages of trusted code (the reference, the harness's checks,
 * set-up) keep a generous fixed deadline. The worker sends each deadline with its progress
 * message and states them in the evidence ("deadlines", runs[].deadline_ms); when a deadline
 * passes, kverify kills the worker and records what it had been told ("timeout"). The worker
 * and kverify share this module: one formula, one set of field names. */
#ifndef KC_DEADLINE_H
#define KC_DEADLINE_H
#include "common/candidate.h"
#include "common/problem.h"

#include <jansson.h>
#include <stdint.h>

/* The numbers (docs/VERIFIER.md says why these): an honest kernel 30 times slower than the
 * fp64 reference still passes, with 400 ms for what every candidate stage does besides its
 * kernels (poisoning, a module reload, L2 flush, CUPTI) and for host jitter, and 50 us for each
 * launch (about ten times a launch's host cost; a unit may expand to 65,536 launches). */
#define DEADLINE_MULTIPLE 30.0
#define DEADLINE_FLOOR_MS 400.0
#define DEADLINE_PER_LAUNCH_MS 0.05
#define DEADLINE_TRUSTED_MS 600000.0 /* the reference and the checks: trusted code */
#define DEADLINE_SETUP_MS 120000.0   /* a job's set-up, until its first progress message */

/* A candidate stage's deadline and what it was derived from. */
typedef struct stage_deadline {
    const char *run;     /* the run's dims name ("default", "alt0", "strat3", ...) */
    double ms;           /* the deadline */
    double reference_ms; /* the reference's measured time on the measured run's dims */
    double work_ratio;   /* the run's work over the measured run's, at least 1 */
    int64_t launches;    /* the candidate's launches in one execution at the run's dims */
} stage_deadline;

/* Before the reference has run on the GPU (the first run's candidate runs before it), its time
 * is estimated from the manifest's bytes and flops at the GPU's peaks (kc_gpu_peaks, f32; the
 * fallback peaks for a GPU it does not know): DEADLINE_ESTIMATE_FACTOR times the roofline time
 * plus 1 ms, of the order of what the fp64 references take, without a run of the reference of
 * its own (an honest kernel 450 times slower than the roofline passes the first run: on the
 * H200, a hang in the first run of the largest level-1 problems held the GPU 2.9 s with 30). */
#define DEADLINE_ESTIMATE_FACTOR 15.0
#define DEADLINE_FALLBACK_GBPS 1000.0
#define DEADLINE_FALLBACK_TFLOPS 20.0
double deadline_estimate_reference_ms(const problem *p, const dimset *dims, const char *gpu);
/* The deadline of a stage that runs candidate code. */
double deadline_candidate_ms(double reference_ms, double work_ratio, int64_t launches);
/* The work of one execution at dims over that at base: the largest ratio of the manifest's
 * bytes, its flops and the inputs' and outputs' bytes that evaluates on both sides; at least 1
 * (a smaller set keeps the deadline of the measured one). */
double deadline_work_ratio(const problem *p, const dimset *dims, const dimset *base);
/* Launches of one execution of u at dims (1 when the schedule does not evaluate). */
int64_t deadline_unit_launches(const launch_unit *u, const dimset *dims);
/* Fills d for a run of u at dims, the reference measured at base. */
void deadline_for_run(const problem *p, const launch_unit *u, const char *run, const dimset *dims,
                      const dimset *base, double reference_ms, stage_deadline *d);

/* The progress message of a candidate stage: {"progress": stage, "deadline_ms", "run",
 * "reference_ms", "work_ratio", "launches"} (the worker's channel adds "job"). */
json_t *deadline_progress(const char *stage, const stage_deadline *d);
/* Whether a progress message's optional basis fields (above) are well formed. */
int deadline_progress_basis_valid(json_t *msg);
/* The evidence's "deadlines": the reference's measured time, the formula's numbers, the
 * candidate stage's deadline on the measured dims (calib), the timed reps' (timed) and the
 * trusted stages'. */
json_t *deadline_evidence(const stage_deadline *calib, const stage_deadline *timed);
/* The evidence kverify records when a deadline passed: the stage, its deadline, how long it
 * waited, and the basis the worker sent with the stage's progress message (last_progress). */
json_t *deadline_timeout_evidence(json_t *last_progress, double waited_ms);

#endif
