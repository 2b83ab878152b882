/* fuzz_gpu_result: libFuzzer target for the GPU worker's messages as the parent reads them
 * (verify/service/gpu_result.c: gpu_message_check, then gpu_result_fill for a result): the worker runs
 * candidate code, so what it says is untrusted. Input: the JSON of one message (as ipc_recv
 * parses it) for job 7 of problem level1/019_relu. Properties: no crash, UB or leak; a refusal
 * says why; an accepted result has a verdict a worker may give, a message that is the one sent,
 * evidence that is a JSON object, finite non-negative errors, and a timing only on a correct
 * verdict with n >= 1 and finite times. */
#include "common/error.h"
#include "common/verdicts.h"
#include "verify/service/gpu_result.h"
#include "fuzz_common.h"

#include <math.h>

static problem relu;

static void load_problem(void)
{
    static int loaded;
    if (loaded)
        return;
    strbuf err = STRBUF_INIT, path = STRBUF_INIT;
    const char *root = getenv("KC_PROBLEMS");
    sb_addf(&path, "%s/level1/019_relu.json", root ? root : "problems");
    if (problem_load(path.buf, &relu, &err)) {
        fprintf(stderr, "fuzz_gpu_result: %s (set KC_PROBLEMS)\n", err.buf);
        abort();
    }
    sb_free(&err), sb_free(&path);
    loaded = 1;
}

static void check_result(json_t *res, const kv_result *r)
{
    const kc_verdict_info *known = kc_verdict_find(r->verdict); /* common/verdicts.c */
    FZ_CHECK(known && known->from_worker);
    FZ_CHECK(!strcmp(sb_str(&r->message), json_string_value(json_object_get(res, "message"))));
    if (r->evidence_json.len) {
        json_t *ev = json_loads(r->evidence_json.buf, 0, NULL);
        FZ_CHECK(json_is_object(ev));
        json_decref(ev);
    }
    if (r->has_errors)
        FZ_CHECK(r->max_abs_err >= 0 && r->max_rel_err >= 0 && r->rel_l2_err >= 0);
    if (r->timed) {
        FZ_CHECK(!strcmp(r->verdict, "correct"));
        FZ_CHECK(r->timing.n >= 1);
        FZ_CHECK(isfinite(r->timing.median_ms) && r->timing.median_ms >= 0);
        FZ_CHECK(isfinite(r->timing.speedup_eager) && isfinite(r->timing.speedup_compile));
    }
}

static void free_result(kv_result *r)
{
    strbuf *bufs[] = {&r->flags, &r->message, &r->source, &r->compile_log, &r->kernels_json,
                      &r->evidence_json, &r->seeds, &r->cubin};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        sb_free(bufs[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_problem();
    json_t *msg = json_loadb((const char *)data, size, 0, NULL);
    if (!msg)
        return 0;
    const char *why = NULL;
    enum gpu_message_kind kind = gpu_message_check(msg, 7, &why);
    FZ_CHECK(kind == GPU_MSG_BAD || kind == GPU_MSG_PROGRESS || kind == GPU_MSG_RESULT);
    if (kind == GPU_MSG_BAD)
        FZ_CHECK(why && *why);
    if (kind == GPU_MSG_PROGRESS) {
        const char *stage = json_string_value(json_object_get(msg, "progress"));
        FZ_CHECK(stage && strlen(stage) < 64);
    }
    if (kind == GPU_MSG_RESULT) {
        kv_result r = {0}; /* kv_result_init lives in verify/service/service.c, with the whole service */
        snprintf(r.gpu_name, sizeof r.gpu_name, "NVIDIA H100 80GB HBM3");
        json_t *res = json_object_get(msg, "result");
        gpu_result_fill(&relu, res, &r);
        check_result(res, &r);
        free_result(&r);
    }
    json_decref(msg);
    return 0;
}
