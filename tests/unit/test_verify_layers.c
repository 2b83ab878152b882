/* test_verify_layers: kv_feedback's rendering of evidence.layers (issue 38, docs/LEVEL3.md "Which
 * layer went wrong first"), from fabricated results: the first layer that differs with its
 * statistics and the layers before it that match, every layer matching, layers the reference
 * does not have, a cut arena; and a result without evidence.layers (a candidate without @layer
 * lines) gets the feedback it got before, byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "verify/service/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char first_failure[] =
    "\"first_failure\":{\"dims\":\"small\",\"seed\":12,\"outputs\":[{\"name\":\"y\",\"bad\":10}]}";

/* A mismatch of level3/009_resnet18's y with the evidence given (the JSON object's members). */
static void mismatch(kv_result *r, const char *evidence_members)
{
    kv_result_init(r);
    snprintf(r->verdict, sizeof(r->verdict), "mismatch");
    sb_adds(&r->message, "output y differs from the reference at dims small (seed 12)");
    sb_addf(&r->evidence_json, "{%s}", evidence_members);
    r->has_errors = 1;
    r->max_abs_err = 0.5, r->max_rel_err = 2, r->rel_l2_err = 0.25;
}

static const char layers_json[] =
    ",\"layers\":{\"dims\":\"small\",\"seed\":12,\"compared\":["
    "{\"name\":\"conv1\",\"line\":40,\"numel\":8192,\"bad\":0,\"max_abs\":0,\"rel_l2\":0,\"index\":0,"
    "\"got\":0.5,\"expected\":0.5},"
    "{\"name\":\"layer1.0.bn1\",\"line\":44,\"numel\":8192,\"bad\":0,\"max_abs\":1e-7,\"rel_l2\":1e-8,"
    "\"index\":3,\"got\":0.25,\"expected\":0.25},"
    "{\"name\":\"layer1.0.conv2\",\"line\":57,\"numel\":16384,\"bad\":1532,\"max_abs\":0.41,"
    "\"rel_l2\":0.37,\"index\":1234,\"got\":0.12,\"expected\":0.53},"
    "{\"name\":\"fc\",\"line\":90,\"numel\":20,\"bad\":20,\"max_abs\":3,\"rel_l2\":1,\"index\":0,"
    "\"got\":1,\"expected\":4}],"
    "\"first_bad\":\"layer1.0.conv2\",\"last_good\":\"layer1.0.bn1\",\"unmatched_reference\":7,"
    "\"unmatched_candidate\":6,\"cut_at\":null}";

/* Today's feedback of the mismatch (the text kv_feedback wrote before evidence.layers). */
static const char today[] =
    "Verdict: mismatch. output y differs from the reference at dims small (seed 12)\n"
    "First failing check: {\"dims\":\"small\",\"seed\":12,\"outputs\":[{\"name\":\"y\","
    "\"bad\":10}]}\n"
    "Max abs error 0.5, max rel error 2, relative L2 error 0.25.\n"
    "Fix the problem and answer with the complete corrected code in one ```cuda block.\n";

static void feedback_of(const char *members, strbuf *out)
{
    kv_result r;
    mismatch(&r, members);
    kv_feedback(NULL, &r, out);
    kv_result_free(&r);
}

static void test_without_layers_unchanged(void **state)
{
    (void)state;
    strbuf fb = STRBUF_INIT;
    feedback_of(first_failure, &fb);
    assert_string_equal(fb.buf, today);
    sb_free(&fb);
}

static void test_first_bad_layer(void **state)
{
    (void)state;
    strbuf members = STRBUF_INIT, fb = STRBUF_INIT, want = STRBUF_INIT;
    sb_addf(&members, "%s%s", first_failure, layers_json);
    feedback_of(members.buf, &fb);
    const char *fix = strstr(today, "Fix the problem");
    sb_add(&want, today, (size_t)(fix - today));
    sb_adds(&want, "First layer that differs (dims small, seed 12): layer1.0.conv2 (your @layer "
                   "line 57):\n1532 of 16384 elements off, max abs 0.41 at element 1234 (got 0.12, "
                   "expected 0.53), relative L2 0.37. The layers before it match (conv1 ... "
                   "layer1.0.bn1). 6 of your layers have no counterpart in the reference: not "
                   "compared.\n");
    sb_adds(&want, fix);
    assert_string_equal(fb.buf, want.buf);
    sb_free(&members), sb_free(&fb), sb_free(&want);
}

static void test_other_outcomes(void **state)
{
    (void)state;
    strbuf fb = STRBUF_INIT;
    /* the first layer compared differs; the arena was cut */
    feedback_of("\"layers\":{\"dims\":\"default\",\"seed\":\"3\",\"compared\":[{\"name\":\"network.0\","
                "\"line\":20,\"numel\":6,\"bad\":6,\"max_abs\":2,\"rel_l2\":1,\"index\":5,\"got\":-1,"
                "\"expected\":1}],\"first_bad\":\"network.0\",\"last_good\":null,"
                "\"unmatched_candidate\":0,\"cut_at\":\"network.4\"}", &fb);
    assert_non_null(strstr(fb.buf, "First layer that differs (dims default, seed 3): network.0 "
                                   "(your @layer line 20):\n6 of 6 elements off, max abs 2 at "
                                   "element 5 (got -1, expected 1), relative L2 1. It is the first "
                                   "layer compared. The reference's layers from network.4 on were "
                                   "not kept (memory cap): not compared.\n"));
    sb_reset(&fb);
    /* every layer matches */
    feedback_of("\"layers\":{\"dims\":\"small\",\"seed\":1,\"compared\":[{\"name\":\"a\",\"bad\":0},"
                "{\"name\":\"b\",\"bad\":0}],\"first_bad\":null,\"last_good\":\"b\"}", &fb);
    assert_non_null(strstr(fb.buf, "Every layer compared matches the reference (dims small, seed "
                                   "1: a ... b): the error comes after the last of them.\n"));
    sb_reset(&fb);
    /* nothing compared, or not an object: nothing said */
    feedback_of("\"layers\":{\"compared\":[]}", &fb);
    assert_null(strstr(fb.buf, "layer"));
    sb_reset(&fb);
    feedback_of("\"layers\":7", &fb);
    assert_null(strstr(fb.buf, "layer"));
    sb_free(&fb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_without_layers_unchanged),
        cmocka_unit_test(test_first_bad_layer),
        cmocka_unit_test(test_other_outcomes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
