/* report: what a verification result says to people and models: the feedback
 * text for the next turn, the JSON of `kverify --json`, and the database rows. */
#include "common/error.h"
#include "verify/service/verify.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define FEEDBACK_LOG_LIMIT 4000
#define FEEDBACK_PRINTF_LIMIT 2000

static void add_log_excerpt(strbuf *out, const strbuf *log)
{
    if (!log->len)
        return;
    sb_adds(out, "Compiler output:\n```\n");
    if (log->len > FEEDBACK_LOG_LIMIT) {
        sb_add(out, log->buf, FEEDBACK_LOG_LIMIT);
        sb_adds(out, "\n... (truncated)");
    } else {
        sb_add(out, log->buf, log->len);
    }
    sb_adds(out, "\n```\n");
}

static void add_resources(strbuf *out, const kv_result *r)
{
    json_t *arr = json_loads(sb_str(&r->kernels_json), 0, NULL);
    size_t i;
    json_t *k;
    json_array_foreach(arr, i, k)
    {
        long long spills = json_integer_value(json_object_get(k, "spill_stores")) +
                           json_integer_value(json_object_get(k, "spill_loads"));
        sb_addf(out, "- kernel %s: %lld registers, %lld bytes static shared memory, %lld bytes spilled\n",
                json_string_value(json_object_get(k, "name")),
                (long long)json_integer_value(json_object_get(k, "registers")),
                (long long)json_integer_value(json_object_get(k, "shared_bytes")), spills);
    }
    json_decref(arr);
}

static void add_mismatch_evidence(strbuf *out, const kv_result *r)
{
    json_t *ev = json_loads(sb_str(&r->evidence_json), 0, NULL);
    json_t *first = json_object_get(ev, "first_failure");
    if (first) {
        char *s = json_dumps(first, JSON_COMPACT);
        sb_addf(out, "First failing check: %s\n", s);
        free(s);
    }
    json_decref(ev);
    if (r->has_errors)
        sb_addf(out, "Max abs error %.3g, max rel error %.3g, relative L2 error %.3g.\n",
                r->max_abs_err, r->max_rel_err, r->rel_l2_err);
}

/* o[key] when it is a string, else "?". */
static const char *str_or(json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "?";
}

/* The seed of evidence.layers: the worker writes it as text (a uint64), as runs[].seed. */
static void add_seed(strbuf *out, json_t *layers)
{
    json_t *seed = json_object_get(layers, "seed");
    if (json_is_string(seed))
        sb_adds(out, json_string_value(seed));
    else
        sb_addf(out, "%lld", (long long)json_integer_value(seed));
}

/* The names of compared[from .. to] for "The layers before it match (a ... b)". */
static void add_layer_range(strbuf *out, json_t *compared, size_t from, size_t to)
{
    const char *a = str_or(json_array_get(compared, from), "name");
    if (from == to)
        sb_adds(out, a);
    else
        sb_addf(out, "%s ... %s", a, str_or(json_array_get(compared, to), "name"));
}

/* The first compared layer with bad elements, as evidence.layers.first_bad names it. */
static void add_first_bad_layer(strbuf *out, json_t *layers, json_t *bad, size_t at)
{
    json_t *compared = json_object_get(layers, "compared");
    sb_addf(out, "First layer that differs (dims %s, seed ", str_or(layers, "dims"));
    add_seed(out, layers);
    sb_addf(out, "): %s (your @layer line %lld):\n", str_or(bad, "name"),
            (long long)json_integer_value(json_object_get(bad, "line")));
    sb_addf(out, "%lld of %lld elements off, max abs %.3g at element %lld (got %.6g, expected "
                 "%.6g), relative L2 %.3g.",
            (long long)json_integer_value(json_object_get(bad, "bad")),
            (long long)json_integer_value(json_object_get(bad, "numel")),
            json_number_value(json_object_get(bad, "max_abs")),
            (long long)json_integer_value(json_object_get(bad, "index")),
            json_number_value(json_object_get(bad, "got")),
            json_number_value(json_object_get(bad, "expected")),
            json_number_value(json_object_get(bad, "rel_l2")));
    if (at > 0) {
        sb_adds(out, " The layers before it match (");
        add_layer_range(out, compared, 0, at - 1);
        sb_adds(out, ").");
    } else {
        sb_adds(out, " It is the first layer compared.");
    }
}

/* evidence.layers (the worker's diagnosis run after a mismatch, docs/LEVEL3.md): the first layer
 * whose output differs from the reference's, or that every layer compared matches. Nothing when
 * the run did not happen (no @layer lines, no name in common). */
static void add_layer_evidence(strbuf *out, const kv_result *r)
{
    json_t *ev = json_loads(sb_str(&r->evidence_json), 0, NULL);
    json_t *layers = json_object_get(ev, "layers");
    json_t *compared = json_object_get(layers, "compared");
    if (!json_is_object(layers) || !json_is_array(compared) || !json_array_size(compared)) {
        json_decref(ev);
        return;
    }
    const char *first_bad = json_string_value(json_object_get(layers, "first_bad"));
    size_t i, at = json_array_size(compared);
    json_t *c;
    json_array_foreach(compared, i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (first_bad && name && !strcmp(name, first_bad) && at == json_array_size(compared))
            at = i;
    }
    if (at < json_array_size(compared)) {
        add_first_bad_layer(out, layers, json_array_get(compared, at), at);
    } else {
        sb_addf(out, "Every layer compared matches the reference (dims %s, seed ",
                str_or(layers, "dims"));
        add_seed(out, layers);
        sb_adds(out, ": ");
        add_layer_range(out, compared, 0, json_array_size(compared) - 1);
        sb_adds(out, "): the error comes after the last of them.");
    }
    long long unmatched = json_integer_value(json_object_get(layers, "unmatched_candidate"));
    if (unmatched)
        sb_addf(out, " %lld of your layers have no counterpart in the reference: not compared.",
                unmatched);
    const char *cut = json_string_value(json_object_get(layers, "cut_at"));
    if (cut)
        sb_addf(out, " The reference's layers from %s on were not kept (memory cap): not compared.",
                cut);
    sb_adds(out, "\n");
    json_decref(ev);
}

static void add_timing(strbuf *out, const kv_result *r)
{
    const kv_timing *t = &r->timing;
    sb_addf(out, "Time: median %.4f ms over %d runs (cold L2)", t->median_ms, t->n);
    if (t->gbps > 0)
        sb_addf(out, "; %.0f GB/s achieved (H100 HBM3 peak ~3350 GB/s)", t->gbps);
    if (t->tflops > 0.001)
        sb_addf(out, "; %.2f TFLOP/s", t->tflops);
    sb_adds(out, ".\n");
    if (t->eager_ms > 0)
        sb_addf(out, "PyTorch eager takes %.4f ms: speedup %.2fx.\n", t->eager_ms, t->speedup_eager);
    if (t->compile_ms > 0)
        sb_addf(out, "torch.compile takes %.4f ms: speedup %.2fx.\n", t->compile_ms,
                t->speedup_compile);
}

/* Device printf output is text for the model to read, never part of the verdict. */
static void add_device_printf(strbuf *out, const kv_result *r)
{
    json_t *ev = json_loads(sb_str(&r->evidence_json), 0, NULL);
    json_t *pr = json_object_get(ev, "device_printf");
    const char *text = json_string_value(json_object_get(pr, "text"));
    if (text) {
        size_t len = strlen(text);
        sb_addf(out, "Your kernel printed %lld bytes with printf (shown as text only; the verdict "
                     "never reads it)%s:\n```\n",
                (long long)json_integer_value(json_object_get(pr, "bytes")),
                len > FEEDBACK_PRINTF_LIMIT || json_is_true(json_object_get(pr, "truncated"))
                    ? ", the beginning"
                    : "");
        sb_add(out, text, len > FEEDBACK_PRINTF_LIMIT ? FEEDBACK_PRINTF_LIMIT : len);
        sb_adds(out, "\n```\n");
    }
    json_decref(ev);
}

void kv_feedback(const problem *p, const kv_result *r, strbuf *out)
{
    (void)p;
    sb_addf(out, "Verdict: %s. %s\n", r->verdict, sb_str(&r->message));
    if (r->flags.len)
        sb_addf(out, "Flags: %s\n", r->flags.buf);
    if (strcmp(r->verdict, "compile_error") == 0)
        add_log_excerpt(out, &r->compile_log);
    if (strcmp(r->verdict, "mismatch") == 0 || strcmp(r->verdict, "unsafe") == 0)
        add_mismatch_evidence(out, r);
    if (strcmp(r->verdict, "mismatch") == 0)
        add_layer_evidence(out, r);
    if (r->compile_stage_ok)
        add_resources(out, r);
    if (r->timed)
        add_timing(out, r);
    add_device_printf(out, r);
    if (strcmp(r->verdict, "correct") == 0)
        sb_adds(out, "The kernel is correct. Make it faster if you can, keeping it correct; answer "
                     "with the complete code in one ```cuda block.\n");
    else if (strcmp(r->verdict, "compiled") == 0) /* compile-only: nothing to fix that we know of */
        sb_adds(out, "The kernel compiles (it was not run, so its correctness is unknown). Improve it "
                     "if you can; answer with the complete code in one ```cuda block.\n");
    else
        sb_adds(out, "Fix the problem and answer with the complete corrected code in one ```cuda "
                     "block.\n");
}

static void set_str(json_t *o, const char *k, const char *v) { json_object_set_new(o, k, json_string(v ? v : "")); }

void kv_result_set_evidence(kv_result *r, const char *key, json_t *value)
{
    json_t *ev = r->evidence_json.len ? json_loads(r->evidence_json.buf, 0, NULL) : NULL;
    if (!json_is_object(ev)) {
        json_decref(ev);
        ev = json_object();
    }
    json_object_set_new(ev, key, value);
    char *text = json_dumps(ev, JSON_COMPACT);
    sb_reset(&r->evidence_json);
    sb_adds(&r->evidence_json, text);
    free(text);
    json_decref(ev);
}

void kv_result_json(const problem *p, const kv_result *r, strbuf *out)
{
    json_t *o = json_object();
    set_str(o, "problem", p->id);
    set_str(o, "verdict", r->verdict);
    set_str(o, "flags", sb_str(&r->flags));
    set_str(o, "message", sb_str(&r->message));
    set_str(o, "compile_log", sb_str(&r->compile_log));
    json_object_set_new(o, "compile_ms", json_real(r->compile_ms));
    json_t *kernels = json_loads(sb_str(&r->kernels_json), 0, NULL);
    json_object_set_new(o, "kernels", kernels ? kernels : json_array());
    json_t *ev = json_loads(sb_str(&r->evidence_json), 0, NULL);
    json_object_set_new(o, "evidence", ev ? ev : json_null());
    if (r->has_errors) {
        json_object_set_new(o, "max_abs_err", json_real(r->max_abs_err));
        json_object_set_new(o, "max_rel_err", json_real(r->max_rel_err));
        json_object_set_new(o, "rel_l2_err", json_real(r->rel_l2_err));
    }
    if (r->timed) {
        const kv_timing *t = &r->timing;
        json_t *tj = json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:f}",
                               "median_ms", t->median_ms, "mean_ms", t->mean_ms, "stdev_ms",
                               t->stdev_ms, "min_ms", t->min_ms, "p10_ms", t->p10_ms, "p90_ms",
                               t->p90_ms, "n", t->n, "cupti_ms", t->cupti_ms, "gbps", t->gbps,
                               "tflops", t->tflops, "eager_ms", t->eager_ms, "compile_ms",
                               t->compile_ms, "speedup_eager", t->speedup_eager, "speedup_compile",
                               t->speedup_compile);
        json_object_set_new(tj, "check_device_ms", json_real(t->check_device_ms));
        json_object_set_new(tj, "checked_reps", json_integer(t->checked_reps));
        if (t->sm_clock_mhz > 0)
            json_object_set_new(tj, "sm_clock_mhz", json_real(t->sm_clock_mhz));
        json_object_set_new(o, "timing", tj);
    }
    set_str(o, "seeds", sb_str(&r->seeds));
    set_str(o, "verifier_version", KC_VERSION);
    set_str(o, "gpu", r->gpu_name);
    set_str(o, "driver", r->driver_version);
    set_str(o, "cuda", r->cuda_version);
    set_str(o, "nvrtc", r->nvrtc_version);
    set_str(o, "arch", r->arch);
    char *s = json_dumps(o, JSON_INDENT(2));
    sb_adds(out, s);
    sb_addch(out, '\n');
    free(s);
    json_decref(o);
}

/* ---- database rows ---- */

static int insert_compile(sqlite3 *db, int64_t cid, const kv_result *r, strbuf *err)
{
    char log_sha[SHA256_HEX_LEN + 1];
    if (kc_blob_put(db, sb_str(&r->compile_log), r->compile_log.len, log_sha, err))
        return -1;
    sqlite3_stmt *st = kc_db_prepare(db,
        "INSERT INTO compiles(candidate_id, ok, stage, log_sha, duration_ms, arch, nvrtc_version, "
        "kernels_json) VALUES (?,?,?,?,?,?,?,?)", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, cid);
    sqlite3_bind_int(st, 2, r->compile_stage_ok);
    sqlite3_bind_text(st, 3, "compile", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, log_sha, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 5, r->compile_ms);
    kc_bind_text_or_null(st, 6, r->arch);
    kc_bind_text_or_null(st, 7, r->nvrtc_version);
    kc_bind_text_or_null(st, 8, sb_str(&r->kernels_json));
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

static int insert_verification(sqlite3 *db, int64_t cid, const kv_result *r, int64_t *vid,
                               strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db,
        "INSERT INTO verifications(candidate_id, verdict, flags, message, evidence_json, seeds, "
        "max_abs_err, max_rel_err, rel_l2_err, verifier_version, gpu_name, driver_version, "
        "cuda_version, nvrtc_version) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, cid);
    sqlite3_bind_text(st, 2, r->verdict, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, sb_str(&r->flags), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, sb_str(&r->message), -1, SQLITE_STATIC);
    kc_bind_text_or_null(st, 5, sb_str(&r->evidence_json));
    kc_bind_text_or_null(st, 6, sb_str(&r->seeds));
    if (r->has_errors) {
        sqlite3_bind_double(st, 7, r->max_abs_err);
        sqlite3_bind_double(st, 8, r->max_rel_err);
        sqlite3_bind_double(st, 9, r->rel_l2_err);
    }
    sqlite3_bind_text(st, 10, KC_VERSION, -1, SQLITE_STATIC);
    kc_bind_text_or_null(st, 11, r->gpu_name);
    kc_bind_text_or_null(st, 12, r->driver_version);
    kc_bind_text_or_null(st, 13, r->cuda_version);
    kc_bind_text_or_null(st, 14, r->nvrtc_version);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    *vid = sqlite3_last_insert_rowid(db);
    return rc;
}

static int insert_timing(sqlite3 *db, int64_t vid, const kv_timing *t, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db,
        "INSERT INTO timings(verification_id, median_ms, mean_ms, stdev_ms, min_ms, p10_ms, p90_ms, "
        "n, cupti_ms, gbps, tflops, eager_ms, compile_ms, speedup_eager, speedup_compile, "
        "check_device_ms, checked_reps) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
    if (!st)
        return -1;
    double v[] = {t->median_ms, t->mean_ms, t->stdev_ms, t->min_ms, t->p10_ms, t->p90_ms};
    sqlite3_bind_int64(st, 1, vid);
    for (int i = 0; i < 6; i++)
        sqlite3_bind_double(st, 2 + i, v[i]);
    sqlite3_bind_int(st, 8, t->n);
    double w[] = {t->cupti_ms, t->gbps, t->tflops, t->eager_ms, t->compile_ms, t->speedup_eager,
                  t->speedup_compile, t->check_device_ms};
    for (int i = 0; i < 8; i++)
        if (w[i] > 0)
            sqlite3_bind_double(st, 9 + i, w[i]);
    sqlite3_bind_int(st, 17, t->checked_reps);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

static int set_candidate_status(sqlite3 *db, int64_t cid, const kv_result *r, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, "UPDATE candidates SET status = ? WHERE id = ?", err);
    if (!st)
        return -1;
    const char *status = strcmp(r->verdict, "compiled") == 0 ? "compiled" : "verified";
    sqlite3_bind_text(st, 1, status, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, cid);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

int kv_record(sqlite3 *db, int64_t candidate_id, const kv_result *r, strbuf *err)
{
    int64_t vid = 0;
    int reached_compile = r->compile_log.len || r->compile_stage_ok ||
                          strcmp(r->verdict, "compile_error") == 0;
    if (reached_compile && insert_compile(db, candidate_id, r, err))
        return -1;
    if (insert_verification(db, candidate_id, r, &vid, err))
        return -1;
    if (r->timed && insert_timing(db, vid, &r->timing, err))
        return -1;
    return set_candidate_status(db, candidate_id, r, err);
}
