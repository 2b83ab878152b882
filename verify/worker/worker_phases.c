/* worker_phases: where a verification job's GPU-side wall time goes, per phase (inputs,
 * preparation, candidate, safety checks, reference, compare, timed windows, ...) and per family
 * of runs (the default seeds, alt, hidden draws, stratified and boundary sets, value classes,
 * timing). The worker adds the time of each step to its phase and to the current family; the
 * job's evidence carries the sums (stage_ms.phases, stage_ms.families), and make bench prints
 * them per suite (tests/bench/phases.py). Time is wall time up to each step's synchronisation,
 * so asynchronous work lands in the phase that waits for it. */
#include "common/fsutil.h"
#include "verify/worker/worker.h"

#include <stdio.h>
#include <string.h>

static const char *const phase_names[WK_PH_N] = {
    [WK_PH_LOAD] = "load",           [WK_PH_BUFFERS] = "buffers",
    [WK_PH_INPUTS] = "inputs",       [WK_PH_PREPARE] = "prepare",
    [WK_PH_CANDIDATE] = "candidate", [WK_PH_CUPTI] = "cupti",
    [WK_PH_SAFETY] = "safety",       [WK_PH_REFERENCE] = "reference",
    [WK_PH_COMPARE] = "compare",     [WK_PH_TIMED] = "timed_window",
    [WK_PH_SCRUB] = "scrub_wait",
};

/* A run's family is its dims name without the index: "strat12" is "strat". */
#define FAMILIES 12
static char family_names[FAMILIES][16];
static int n_families, family = -1;
static double phase_ms[WK_PH_N], family_ms[FAMILIES][WK_PH_N];

void wk_phase_reset(void)
{
    memset(phase_ms, 0, sizeof(phase_ms));
    memset(family_ms, 0, sizeof(family_ms));
    n_families = 0;
    family = -1;
}

void wk_phase_family(const char *run_name)
{
    char name[16];
    size_t n = strcspn(run_name, "0123456789");
    snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), run_name);
    for (family = 0; family < n_families; family++)
        if (strcmp(family_names[family], name) == 0)
            return;
    if (n_families == FAMILIES) { /* not reached: the run plan has fewer families */
        family = -1;
        return;
    }
    snprintf(family_names[n_families], sizeof(family_names[0]), "%s", name);
    family = n_families++;
}

double wk_phase_add(enum wk_phase ph, double since_ms)
{
    double now = now_ms();
    phase_ms[ph] += now - since_ms;
    if (family >= 0)
        family_ms[family][ph] += now - since_ms;
    return now;
}

static json_t *phases_of(const double *ms)
{
    json_t *o = json_object();
    for (int i = 0; i < WK_PH_N; i++)
        json_object_set_new(o, phase_names[i], json_real(ms[i]));
    return o;
}

json_t *wk_phase_json(void) { return phases_of(phase_ms); }

json_t *wk_phase_families_json(void)
{
    json_t *o = json_object();
    for (int f = 0; f < n_families; f++)
        json_object_set_new(o, family_names[f], phases_of(family_ms[f]));
    return o;
}
