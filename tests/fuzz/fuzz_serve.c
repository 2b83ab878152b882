/* fuzz_serve: libFuzzer target for the body of `kverify serve`'s POST /v1/verify
 * (verify/cli/serve_request.c: serve_parse_request), which comes off the network from an RL
 * trainer's processes. Input: the body, parsed under small limits (2 KB body, 3 items, 64-byte
 * completions) so the size refusals are reached. Properties: no crash, UB or leak; a refusal is
 * 400 or 413 and says why, and 413 only for a limit; an accepted request has 1 to max_items
 * items, each with a problem id serve_problem_id_ok accepts, a completion within the limit and
 * the same text as the body's, reward parameters serve_reward_check accepts, and a single item
 * only when it is not a batch. */
#include "common/error.h"
#include "verify/cli/serve_request.h"
#include "fuzz_common.h"

static const serve_limits limits = {.max_body = 2048, .max_items = 3, .max_completion = 64};

/* The body's own item i (the whole body when it is not a batch). */
static json_t *body_item(json_t *root, int batch, int i)
{
    return batch ? json_array_get(json_object_get(root, "items"), (size_t)i) : root;
}

static void check_accepted(const serve_parsed *in, const char *body, size_t len)
{
    FZ_CHECK(in->n >= 1 && in->n <= limits.max_items);
    FZ_CHECK(in->batch || in->n == 1);
    strbuf err = STRBUF_INIT;
    FZ_CHECK(serve_reward_check(&in->reward, &err) == 0);
    sb_free(&err);
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
    FZ_CHECK(root);
    for (int i = 0; i < in->n; i++) {
        const serve_item_in *it = &in->items[i];
        FZ_CHECK(serve_problem_id_ok(it->problem_id));
        FZ_CHECK(strlen(it->completion) <= limits.max_completion);
        json_t *own = body_item(root, in->batch, i);
        FZ_CHECK(!strcmp(it->completion, json_string_value(json_object_get(own, "completion"))));
        FZ_CHECK(!strcmp(it->problem_id, json_string_value(json_object_get(own, "problem_id"))));
        json_t *id = json_object_get(own, "id");
        FZ_CHECK(it->id ? json_equal(it->id, id) : !id);
    }
    json_decref(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kc_reward_params defaults;
    kc_reward_defaults(&defaults);
    serve_parsed in;
    strbuf err = STRBUF_INIT;
    int status = serve_parse_request((const char *)data, size, &limits, &defaults, &in, &err);
    if (status) {
        FZ_CHECK(status == 400 || status == 413);
        FZ_CHECK(err.len > 0);
        if (status == 413)
            FZ_CHECK(strstr(err.buf, "over the limit"));
    } else {
        check_accepted(&in, (const char *)data, size);
        serve_parsed_free(&in);
    }
    sb_free(&err);
    return 0;
}
