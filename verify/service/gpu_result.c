/* gpu_result: what the parent accepts from a GPU worker (see gpu_result.h): the checks of a
 * worker's messages and the filling of a verification result from a checked one. */
#include "verify/service/gpu_result.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/verdicts.h"
#include "verify/service/deadline.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gpu_json_copy_str(char *dst, size_t n, json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    snprintf(dst, n, "%s", s ? s : "");
}

static void slugify(const char *name, strbuf *out)
{
    for (const char *c = name; *c; c++) {
        char ch = (char)tolower((unsigned char)*c);
        if (isalnum((unsigned char)ch))
            sb_addch(out, ch);
        else if (out->len && out->buf[out->len - 1] != '-')
            sb_addch(out, '-');
    }
    while (out->len && out->buf[out->len - 1] == '-')
        sb_setlen(out, out->len - 1);
}

void baselines_lookup(const problem *p, const char *gpu_name, double *eager_ms, double *compile_ms)
{
    *eager_ms = *compile_ms = 0;
    strbuf dir = STRBUF_INIT, path = STRBUF_INIT, slug = STRBUF_INIT;
    path_dirname(p->manifest_path, &dir);
    slugify(gpu_name, &slug);
    sb_addf(&path, "%s/baselines/%s.json", dir.buf, slug.buf);
    json_t *root = json_load_file(path.buf, 0, NULL);
    json_t *entry = json_object_get(json_object_get(root, "problems"), p->id);
    if (entry) {
        *eager_ms = json_number_value(json_object_get(entry, "eager_ms"));
        *compile_ms = json_number_value(json_object_get(entry, "compile_ms"));
    }
    json_decref(root);
    sb_free(&dir), sb_free(&path), sb_free(&slug);
}

static double num(json_t *obj, const char *key) { return json_number_value(json_object_get(obj, key)); }

static void fill_timing(const problem *p, json_t *t, kv_result *r)
{
    kv_timing *tm = &r->timing;
    r->timed = 1;
    tm->median_ms = num(t, "median_ms"), tm->mean_ms = num(t, "mean_ms");
    tm->stdev_ms = num(t, "stdev_ms"), tm->min_ms = num(t, "min_ms");
    tm->p10_ms = num(t, "p10_ms"), tm->p90_ms = num(t, "p90_ms");
    tm->n = (int)json_integer_value(json_object_get(t, "n"));
    tm->cupti_ms = num(t, "cupti_ms"), tm->gbps = num(t, "gbps"), tm->tflops = num(t, "tflops");
    tm->check_device_ms = num(t, "check_device_ms");
    tm->checked_reps = (int)json_integer_value(json_object_get(t, "checked_reps"));
    tm->sm_clock_mhz = num(t, "sm_clock_mhz");
    baselines_lookup(p, r->gpu_name, &tm->eager_ms, &tm->compile_ms);
    if (tm->median_ms > 0 && tm->eager_ms > 0)
        tm->speedup_eager = tm->eager_ms / tm->median_ms;
    if (tm->median_ms > 0 && tm->compile_ms > 0)
        tm->speedup_compile = tm->compile_ms / tm->median_ms;
    if (tm->speedup_eager > 10) {
        if (r->flags.len)
            sb_addch(&r->flags, ',');
        sb_adds(&r->flags, "suspicious_speedup");
    }
}

/* The evidence as recorded: the worker's, with the device printf output and the checked timed
 * reps beside it. */
static void fill_evidence(json_t *res, kv_result *r)
{
    json_t *ev = json_object_get(res, "evidence");
    json_t *merged = json_is_object(ev) ? json_copy(ev) : json_object();
    json_t *printed = json_object_get(res, "device_printf");
    if (json_is_object(printed))
        json_object_set(merged, "device_printf", printed);
    json_t *timed = json_object_get(res, "timed_checks");
    if (json_is_array(timed))
        json_object_set(merged, "timed_checks", timed);
    json_t *hmm = json_object_get(res, "pageable_memory_access");
    if (json_is_boolean(hmm)) /* whether the kernel could reach host memory (docs/INTEGRITY.md) */
        json_object_set_new(merged, "gpu", json_pack("{s:O}", "pageable_memory_access", hmm));
    json_t *t = json_object_get(res, "timing");
    if (json_is_object(t)) { /* how the timed runs were checked */
        static const char *const keys[] = {"checked_runs", "seed_base", "check_device_ms",
                                           "timed_vs_check", "inconsistent", "timed_window_ms",
                                           "from_checks", "extra_reps", "dropped_varied", "noise",
                                           "noise_target", "sm_clock_mhz", "sm_clock_min_mhz",
                                           "sm_clock_max_mhz",
                                           NULL};
        json_t *tc = json_object();
        for (const char *const *k = keys; *k; k++)
            if (json_object_get(t, *k))
                json_object_set(tc, *k, json_object_get(t, *k));
        json_object_set_new(merged, "timing_checks", tc);
    }
    if (json_object_size(merged)) {
        char *s = json_dumps(merged, JSON_COMPACT);
        sb_adds(&r->evidence_json, s);
        free(s);
    }
    json_decref(merged);
}

void gpu_result_fill(const problem *p, json_t *res, kv_result *r)
{
    gpu_json_copy_str(r->verdict, sizeof(r->verdict), res, "verdict");
    gpu_json_copy_str(r->gpu_name, sizeof(r->gpu_name), res, "gpu_name");
    gpu_json_copy_str(r->driver_version, sizeof(r->driver_version), res, "driver");
    gpu_json_copy_str(r->cuda_version, sizeof(r->cuda_version), res, "cuda");
    sb_reset(&r->message), sb_reset(&r->flags), sb_reset(&r->evidence_json);
    const char *msg = json_string_value(json_object_get(res, "message"));
    sb_adds(&r->message, msg ? msg : "");
    const char *flags = json_string_value(json_object_get(res, "flags"));
    sb_adds(&r->flags, flags ? flags : "");
    fill_evidence(res, r);
    json_t *errs = json_object_get(res, "errors");
    if (errs) {
        r->has_errors = 1;
        r->max_abs_err = num(errs, "max_abs"), r->max_rel_err = num(errs, "max_rel");
        r->rel_l2_err = num(errs, "rel_l2");
    }
    json_t *t = json_object_get(res, "timing");
    if (json_is_object(t))
        fill_timing(p, t, r);
}

/* ---- what a worker may say: anything else is a protocol error, never a verdict ---- */

static int is_one_of(const char *s, const char *const *set)
{
    for (; s && *set; set++)
        if (strcmp(s, *set) == 0)
            return 1;
    return 0;
}

/* The verdicts a worker may report: those of common/verdicts.c marked from_worker. */
static int worker_verdict(const char *v)
{
    const kc_verdict_info *info = kc_verdict_find(v);
    return info && info->from_worker;
}
static const char *const worker_flags[] = {"alt_shape_fail", "hidden_shape_fail",
                                           "boundary_shape_fail", "value_class_fail",
                                           "nondeterministic",
                                           "timing_inconsistent", NULL};

static int flags_valid(const char *flags)
{
    if (!flags)
        return 0;
    char *copy = xstrdup(flags), *save = NULL;
    int ok = 1;
    for (char *tok = strtok_r(copy, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save))
        ok = is_one_of(tok, worker_flags);
    free(copy);
    return ok;
}

static int number_in(json_t *obj, const char *key, double lo, double hi, int required)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return !required;
    return json_is_number(v) && json_number_value(v) >= lo && json_number_value(v) <= hi;
}

static int timing_valid(json_t *t)
{
    static const char *const times[] = {"median_ms", "mean_ms", "stdev_ms", "min_ms", "p10_ms",
                                        "p90_ms", NULL};
    for (const char *const *k = times; *k; k++)
        if (!number_in(t, *k, 0, 3.6e6, 1))
            return 0;
    json_t *n = json_object_get(t, "n");
    return json_is_integer(n) && json_integer_value(n) >= 1 && json_integer_value(n) <= 1000000 &&
           number_in(t, "cupti_ms", 0, 3.6e6, 0) && number_in(t, "gbps", 0, 1e9, 0) &&
           number_in(t, "tflops", 0, 1e9, 0) && number_in(t, "check_device_ms", 0, 3.6e6, 0) &&
           number_in(t, "timed_window_ms", 0, 3.6e9, 0);
}

/* Checks a result message's shape; *why says what is wrong. */
static int result_valid(json_t *res, const char **why)
{
    json_t *t = json_object_get(res, "timing");
    json_t *errs = json_object_get(res, "errors");
    *why = "not an object";
    if (!json_is_object(res))
        return 0;
    *why = "unknown verdict";
    if (!worker_verdict(json_string_value(json_object_get(res, "verdict"))))
        return 0;
    *why = "unknown flags";
    if (!flags_valid(json_string_value(json_object_get(res, "flags"))) &&
        json_object_get(res, "flags"))
        return 0;
    *why = "malformed message, evidence or errors";
    json_t *hmm = json_object_get(res, "pageable_memory_access");
    if (!json_is_string(json_object_get(res, "message")) || (hmm && !json_is_boolean(hmm)) ||
        (json_object_get(res, "evidence") && !json_is_object(json_object_get(res, "evidence"))) ||
        (errs && (!json_is_object(errs) || !number_in(errs, "max_abs", 0, INFINITY, 1) ||
                  !number_in(errs, "max_rel", 0, INFINITY, 1) ||
                  !number_in(errs, "rel_l2", 0, INFINITY, 1))))
        return 0;
    *why = "malformed timing";
    if (t && (!json_is_object(t) || !timing_valid(t)))
        return 0;
    *why = "a timed result whose verdict is not correct";
    if (t && strcmp(json_string_value(json_object_get(res, "verdict")), "correct") != 0)
        return 0;
    return 1;
}

/* A progress message: a stage name and a deadline in (0 ms, 1 day], and for a candidate stage
 * what the deadline derives from (deadline.h). */
static int progress_valid(json_t *m)
{
    const char *stage = json_string_value(json_object_get(m, "progress"));
    return stage && strlen(stage) < 64 && number_in(m, "deadline_ms", 0, 86400000.0, 1) &&
           deadline_progress_basis_valid(m);
}

enum gpu_message_kind gpu_message_check(json_t *msg, json_int_t job_id, const char **why)
{
    json_t *job = json_object_get(msg, "job");
    *why = "a message for another job";
    if (!json_is_integer(job) || json_integer_value(job) != job_id)
        return GPU_MSG_BAD;
    json_t *res = json_object_get(msg, "result");
    if (res)
        return result_valid(res, why) ? GPU_MSG_RESULT : GPU_MSG_BAD;
    *why = "neither a result nor a progress report";
    return progress_valid(msg) ? GPU_MSG_PROGRESS : GPU_MSG_BAD;
}

static int count_ok(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) && json_integer_value(v) >= 0;
}

static int runs_reference_ok(json_t *runs)
{
    static const char *const kinds[] = {"shared", "kept", "ran", NULL};
    for (size_t i = 0; i < json_array_size(runs); i++) {
        json_t *r = json_object_get(json_array_get(runs, i), "reference");
        if (r && !is_one_of(json_string_value(r), kinds))
            return 0;
    }
    return 1;
}

int gpu_result_batch_valid(json_t *res, const char *key, const char **why)
{
    json_t *ev = json_object_get(res, "evidence");
    json_t *b = json_object_get(ev, "batch");
    *why = "batch evidence for a job of no batch";
    if (!key)
        return b == NULL;
    *why = "malformed batch evidence";
    if (!b)
        return runs_reference_ok(json_object_get(ev, "runs"));
    json_t *ref = json_object_get(b, "reference");
    if (!json_is_object(b) || !json_is_string(json_object_get(b, "key")) || !count_ok(b, "index") ||
        !json_is_object(ref) || !count_ok(ref, "shared") || !count_ok(ref, "kept") ||
        !count_ok(ref, "ran") || !count_ok(b, "kept_bytes") || !count_ok(b, "budget_bytes") ||
        json_integer_value(json_object_get(b, "kept_bytes")) >
            json_integer_value(json_object_get(b, "budget_bytes")) ||
        !runs_reference_ok(json_object_get(ev, "runs")))
        return 0;
    *why = "batch evidence with another batch's key";
    return strcmp(json_string_value(json_object_get(b, "key")), key) == 0;
}
