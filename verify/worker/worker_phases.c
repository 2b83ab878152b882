/* worker_phases: where a verification job's GPU-side wall time goes, per phase (inputs,
 * preparation, candidate, safety checks, reference, compare, timed windows, ...). The worker
 * adds the time of each step to its phase; the job's evidence carries the sums
 * (stage_ms.phases), and make bench prints them per suite (tests/bench/phases.py). Time is
 * wall time up to each step's synchronisation, so asynchronous work lands in the phase that
 * waits for it. */
#include "common/fsutil.h"
#include "verify/worker/worker.h"

static const char *const phase_names[WK_PH_N] = {
    [WK_PH_LOAD] = "load",           [WK_PH_BUFFERS] = "buffers",
    [WK_PH_INPUTS] = "inputs",       [WK_PH_PREPARE] = "prepare",
    [WK_PH_CANDIDATE] = "candidate", [WK_PH_CUPTI] = "cupti",
    [WK_PH_SAFETY] = "safety",       [WK_PH_REFERENCE] = "reference",
    [WK_PH_COMPARE] = "compare",     [WK_PH_TIMED] = "timed_window",
};

static double phase_ms[WK_PH_N];

void wk_phase_reset(void)
{
    for (int i = 0; i < WK_PH_N; i++)
        phase_ms[i] = 0;
}

double wk_phase_add(enum wk_phase ph, double since_ms)
{
    double now = now_ms();
    phase_ms[ph] += now - since_ms;
    return now;
}

json_t *wk_phase_json(void)
{
    json_t *o = json_object();
    for (int i = 0; i < WK_PH_N; i++)
        json_object_set_new(o, phase_names[i], json_real(phase_ms[i]));
    return o;
}
