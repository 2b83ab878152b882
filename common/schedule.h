/* schedule: one execution of a parsed launch unit (candidate.h) with its "// @for" loops
 * expanded lazily: how many launches it issues under a dims set (at most KC_MAX_UNIT_LAUNCHES,
 * decided before anything runs), and an iterator that yields its launches in order with the
 * loop variables bound beside the dims. The CPU checks of candidate_parse and the GPU worker
 * walk the same iterator, so what is checked is what runs. */
#ifndef KC_SCHEDULE_H
#define KC_SCHEDULE_H
#include "common/candidate.h"

typedef struct launch_iter {
    const launch_unit *u;
    dimset env;  /* the dims, then the variables of the open loops, outermost first */
    int n_dims;  /* env.n without loop variables */
    int next;    /* the next step of u */
    int64_t first[KC_MAX_LOOPS], end[KC_MAX_LOOPS]; /* each loop's bounds under the dims */
    int64_t trips[KC_MAX_LOOPS];    /* end - first, 0 when negative, saturated at INT64_MAX */
    int64_t per_trip[KC_MAX_LOOPS]; /* launches of one trip through its body */
    int64_t total;                  /* launches of the whole execution */
    int64_t layers;                 /* its layer points ("// @layer" steps reached) */
} launch_iter;

/* Starts an execution of u under dims: evaluates the loops' bounds and counts the launches.
 * label names the dims set in errors ("default" gives "dims default (B=4, ...)"; NULL gives
 * "these dims (...)"). Fails, naming the line, when a bound does not evaluate, when a loop
 * variable is also a dim or the dims and loop variables pass KC_MAX_DIMS names, and when the
 * execution would issue more than KC_MAX_UNIT_LAUNCHES launches or reach more than
 * KC_MAX_UNIT_LAYERS layer points; it then holds nothing. */
int launch_iter_start(launch_iter *it, const launch_unit *u, const dimset *dims, const char *label,
                      strbuf *err);
/* The next launch of the execution: its index in u->launches, with it->env holding the dims and
 * the loop variables its expressions see; -1 after the last. */
int launch_iter_next(launch_iter *it);
/* As launch_iter_next, but layer points too: the next launch (*is_layer 0) or layer point
 * (*is_layer 1, the index into u->layers) in schedule order; -1 after the last. Only the
 * worker's diagnosis run and the parser's region checks ask for layer points. */
int launch_iter_step(launch_iter *it, int *is_layer);
void launch_iter_free(launch_iter *it);

/* "dims default (B=4096, D=393216)", or "these dims (...)" for a NULL label, then " with l=3,
 * t=0" for the names of env past n_dims (the loop variables). */
void launch_describe_dims(const char *label, const dimset *env, int n_dims, strbuf *out);

#endif
