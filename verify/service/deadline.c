/* deadline: the deadlines of a GPU verification job's stages, their progress messages and
 * their evidence (see deadline.h). */
#include "verify/service/deadline.h"
#include "common/gpu_peaks.h"
#include "common/schedule.h"

#include <math.h>
#include <string.h>

double deadline_candidate_ms(double reference_ms, double work_ratio, int64_t launches)
{
    double ref = reference_ms > 0 ? reference_ms : 0;
    double ratio = work_ratio > 1 ? work_ratio : 1;
    double n = launches > 0 ? (double)launches : 1;
    return DEADLINE_FLOOR_MS + DEADLINE_MULTIPLE * ref * ratio + DEADLINE_PER_LAUNCH_MS * n;
}

/* An expression's value at dims when it evaluates and is positive, else 0. */
static double positive(const char *expr, const dimset *dims)
{
    int64_t v;
    return expr && expr_eval(expr, dims, &v, NULL) == 0 && v > 0 ? (double)v : 0;
}

/* The bytes of every input and output at dims; 0 when a shape does not evaluate. */
static double tensor_bytes(const problem *p, const dimset *dims)
{
    double sum = 0;
    for (int i = 0; i < p->n_inputs + p->n_outputs; i++) {
        const tensor_spec *t = i < p->n_inputs ? &p->inputs[i] : &p->outputs[i - p->n_inputs];
        int64_t n;
        if (tensor_numel(t, dims, &n, NULL))
            return 0;
        sum += (double)n * (double)dtype_size(t->dtype);
    }
    return sum;
}

double deadline_estimate_reference_ms(const problem *p, const dimset *dims, const char *gpu)
{
    double gbps = 0, tflops = 0;
    if (!kc_gpu_peaks(gpu, "f32", &gbps, &tflops) || gbps <= 0 || tflops <= 0)
        gbps = DEADLINE_FALLBACK_GBPS, tflops = DEADLINE_FALLBACK_TFLOPS;
    double bytes = positive(p->bytes_expr, dims), flops = positive(p->flops_expr, dims);
    if (bytes <= 0)
        bytes = tensor_bytes(p, dims);
    double roofline_ms = fmax(bytes / (gbps * 1e6), flops / (tflops * 1e9));
    return DEADLINE_ESTIMATE_FACTOR * roofline_ms + 1.0;
}

double deadline_work_ratio(const problem *p, const dimset *dims, const dimset *base)
{
    double at[3] = {positive(p->bytes_expr, dims), positive(p->flops_expr, dims),
                    tensor_bytes(p, dims)};
    double at_base[3] = {positive(p->bytes_expr, base), positive(p->flops_expr, base),
                         tensor_bytes(p, base)};
    double ratio = 1;
    for (int i = 0; i < 3; i++)
        if (at[i] > 0 && at_base[i] > 0)
            ratio = fmax(ratio, at[i] / at_base[i]);
    return ratio;
}

int64_t deadline_unit_launches(const launch_unit *u, const dimset *dims)
{
    launch_iter it;
    strbuf err = STRBUF_INIT;
    int64_t n = 1;
    if (launch_iter_start(&it, u, dims, NULL, &err) == 0) {
        n = it.total > 0 ? it.total : 1;
        launch_iter_free(&it);
    }
    sb_free(&err);
    return n;
}

void deadline_for_run(const problem *p, const launch_unit *u, const char *run, const dimset *dims,
                      const dimset *base, double reference_ms, stage_deadline *d)
{
    d->run = run;
    d->reference_ms = reference_ms;
    d->work_ratio = deadline_work_ratio(p, dims, base);
    d->launches = deadline_unit_launches(u, dims);
    d->ms = deadline_candidate_ms(reference_ms, d->work_ratio, d->launches);
}

json_t *deadline_progress(const char *stage, const stage_deadline *d)
{
    return json_pack("{s:s,s:f,s:s,s:f,s:f,s:I}", "progress", stage, "deadline_ms", d->ms, "run",
                     d->run ? d->run : "", "reference_ms", d->reference_ms, "work_ratio",
                     d->work_ratio, "launches", (json_int_t)d->launches);
}

/* Absent, or a number in [lo, hi]. */
static int optional_number(json_t *m, const char *key, double lo, double hi)
{
    json_t *v = json_object_get(m, key);
    return !v || (json_is_number(v) && json_number_value(v) >= lo && json_number_value(v) <= hi);
}

int deadline_progress_basis_valid(json_t *m)
{
    json_t *run = json_object_get(m, "run"), *launches = json_object_get(m, "launches");
    return (!run || (json_is_string(run) && strlen(json_string_value(run)) < 64)) &&
           optional_number(m, "reference_ms", 0, 86400000.0) &&
           optional_number(m, "work_ratio", 1, 1e12) &&
           (!launches || (json_is_integer(launches) && json_integer_value(launches) >= 0 &&
                          json_integer_value(launches) <= KC_MAX_UNIT_LAUNCHES));
}

json_t *deadline_evidence(const stage_deadline *calib, const stage_deadline *timed)
{
    return json_pack("{s:f,s:s,s:f,s:f,s:f,s:f,s:I,s:f,s:f}", "reference_ms", calib->reference_ms,
                     "measured_on", calib->run ? calib->run : "", "multiple", DEADLINE_MULTIPLE,
                     "floor_ms", DEADLINE_FLOOR_MS, "per_launch_ms", DEADLINE_PER_LAUNCH_MS,
                     "candidate_ms", calib->ms, "launches", (json_int_t)calib->launches,
                     "timed_rep_ms", timed->ms, "trusted_ms", DEADLINE_TRUSTED_MS);
}

json_t *deadline_timeout_evidence(json_t *last_progress, double waited_ms)
{
    json_t *t = json_pack("{s:s,s:f,s:f}", "stage", "setup", "deadline_ms", DEADLINE_SETUP_MS,
                          "waited_ms", waited_ms);
    if (!last_progress)
        return t;
    static const char *const keys[] = {"run", "reference_ms", "work_ratio", "launches", NULL};
    json_object_set(t, "stage", json_object_get(last_progress, "progress"));
    json_object_set(t, "deadline_ms", json_object_get(last_progress, "deadline_ms"));
    for (const char *const *k = keys; *k; k++)
        if (json_object_get(last_progress, *k))
            json_object_set(t, *k, json_object_get(last_progress, *k));
    return t;
}
