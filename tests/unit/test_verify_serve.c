/* test_verify_serve: the parts of `kverify serve` below HTTP (issue 25): the queue's all-or-
 * nothing admission, round-robin order across clients and close; the reward, which must be
 * kcurate's for the same facts (speedup cap, suspicious speedups, timing_inconsistent, failures);
 * and the request parser's statuses for malformed, missing, too big and too many. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "curate/labels.h"
#include "verify/cli/serve_queue.h"
#include "verify/cli/serve_request.h"

#include <stdio.h>
#include <string.h>

static void queue_admits_all_or_nothing(void **state)
{
    (void)state;
    serve_queue *q = serve_queue_new(3);
    int jobs[4];
    void *p[4] = {&jobs[0], &jobs[1], &jobs[2], &jobs[3]};
    assert_int_equal(serve_queue_push(q, "a", p, 2), 0);
    assert_int_equal(serve_queue_push(q, "b", p + 2, 2), -1); /* 1 place left, 2 asked */
    assert_int_equal(serve_queue_length(q), 2);
    assert_int_equal(serve_queue_push(q, "b", p + 2, 1), 0);
    assert_int_equal(serve_queue_push(q, "c", p + 3, 1), -1);
    assert_ptr_equal(serve_queue_pop(q), p[0]);
    assert_int_equal(serve_queue_push(q, "c", p + 3, 1), 0);
    serve_queue_close(q, NULL, NULL);
    assert_int_equal(serve_queue_length(q), 0);
    serve_queue_free(q);
}

static void collect(void *job, void *arg)
{
    strbuf *order = arg;
    sb_addch(order, *(char *)job);
}

static void queue_round_robin_across_clients(void **state)
{
    (void)state;
    serve_queue *q = serve_queue_new(16);
    char a[] = "123", b[] = "x", c[] = "pq";
    void *ja[] = {&a[0], &a[1], &a[2]}, *jb[] = {&b[0]}, *jc[] = {&c[0], &c[1]};
    assert_int_equal(serve_queue_push(q, "A", ja, 3), 0);
    assert_int_equal(serve_queue_push(q, "B", jb, 1), 0);
    assert_int_equal(serve_queue_push(q, "C", jc, 2), 0);
    strbuf order = STRBUF_INIT;
    for (int i = 0; i < 4; i++)
        sb_addch(&order, *(char *)serve_queue_pop(q));
    assert_string_equal(order.buf, "1xp2"); /* one of each client's, in turn */
    char more[] = "y";
    void *jm[] = {&more[0]};
    assert_int_equal(serve_queue_push(q, "B", jm, 1), 0); /* B comes back after C */
    serve_queue_close(q, collect, &order);                 /* the rest, in queue order */
    assert_string_equal(order.buf, "1xp2qy3"); /* B joins the ring before A's next turn */
    assert_null(serve_queue_pop(q));
    assert_int_equal(serve_queue_push(q, "A", ja, 1), -1);
    sb_free(&order);
    serve_queue_free(q);
}

/* serve_reward against curate_label_item with kcurate's defaults, for one set of facts. */
static double kcurate_reward(const char *verdict, const char *flags, double speedup, int *susp)
{
    curate_params p;
    curate_params_defaults(&p);
    curate_item it = {.turn_index = -1};
    snprintf(it.verdict, sizeof it.verdict, "%s", verdict);
    snprintf(it.flags, sizeof it.flags, "%s", flags);
    it.speedup_eager = speedup;
    curate_label_item(&p, &it);
    curate_params_free(&p);
    *susp = it.suspicious;
    return it.reward;
}

static void reward_is_kcurates(void **state)
{
    (void)state;
    kc_reward_params rp;
    kc_reward_defaults(&rp);
    static const struct { const char *verdict, *flags; double speedup, want; int suspicious; } cases[] = {
        {"correct", "", 2.0, 2.3, 0},
        {"correct", "", 50.0, 10.3, 1},                     /* capped at 10, flagged */
        {"correct", "timing_inconsistent", 3.0, 0.3, 1},    /* speed not trusted */
        {"mismatch", "", 0, 0, 0},
        {"compiled", "", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kv_result r;
        kv_result_init(&r);
        snprintf(r.verdict, sizeof r.verdict, "%s", cases[i].verdict);
        sb_adds(&r.flags, cases[i].flags);
        r.timed = cases[i].speedup > 0;
        r.timing.speedup_eager = cases[i].speedup;
        int susp = -1, ksusp = -1;
        double got = serve_reward(&rp, &r, &susp);
        assert_float_equal(got, cases[i].want, 1e-12);
        assert_float_equal(got, kcurate_reward(cases[i].verdict, cases[i].flags, cases[i].speedup, &ksusp), 0);
        assert_int_equal(susp, cases[i].suspicious);
        assert_int_equal(susp, ksusp);
        kv_result_free(&r);
    }
    rp.incorrect = -1;
    rp.speedup_weight = 0.5;
    kv_result r;
    kv_result_init(&r);
    snprintf(r.verdict, sizeof r.verdict, "correct");
    r.timed = 1, r.timing.speedup_eager = 4;
    assert_float_equal(serve_reward(&rp, &r, NULL), 0.3 + 0.5 * 4, 1e-12);
    snprintf(r.verdict, sizeof r.verdict, "timeout");
    assert_float_equal(serve_reward(&rp, &r, NULL), -1, 0);
    kv_result_free(&r);
}

static int parse_status(const char *body, const char *want_error)
{
    serve_limits lim = {.max_body = 4096, .max_items = 2, .max_completion = 64};
    kc_reward_params d;
    kc_reward_defaults(&d);
    serve_parsed in;
    strbuf err = STRBUF_INIT;
    int status = serve_parse_request(body, strlen(body), &lim, &d, &in, &err);
    if (want_error)
        if (!strstr(err.buf, want_error))
        fail_msg("error \"%s\" lacks \"%s\"", err.buf, want_error);
    if (!status)
        serve_parsed_free(&in);
    sb_free(&err);
    return status;
}

static void parser_statuses(void **state)
{
    (void)state;
    assert_int_equal(parse_status("{\"problem_id\":\"level1/019_relu\",\"completion\":\"x\"}", NULL), 0);
    assert_int_equal(parse_status("{\"items\":[{\"problem_id\":\"a/b\",\"completion\":\"x\"}],"
                                  "\"reward\":{\"correct\":1}}", NULL), 0);
    assert_int_equal(parse_status("{", "malformed JSON"), 400);
    assert_int_equal(parse_status("\"x\"", "malformed JSON"), 400);
    assert_int_equal(parse_status("[1]", "must be a JSON object"), 400);
    assert_int_equal(parse_status("{\"completion\":\"x\"}", "\"problem_id\""), 400);
    assert_int_equal(parse_status("{\"problem_id\":\"a/b\"}", "\"completion\""), 400);
    assert_int_equal(parse_status("{\"problem_id\":\"a/../b\",\"completion\":\"x\"}", "problem id"), 400);
    assert_int_equal(parse_status("{\"problem_id\":\"ab\",\"completion\":\"x\"}", "problem id"), 400);
    assert_int_equal(parse_status("{\"problem_id\":\"a/b\",\"completion\":\"x\",\"problem_id\":\"c/d\"}",
                                  "duplicate"), 400);
    assert_int_equal(parse_status("{\"items\":[{},{},{}]}", "limit of 2"), 413);
    assert_int_equal(parse_status("{\"problem_id\":\"a/b\",\"completion\":\""
                                  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
                                  "limit of 64"), 413);
    assert_int_equal(parse_status("{\"items\":{}}", "non-empty array"), 400);
    assert_int_equal(parse_status("{\"problem_id\":\"a/b\",\"completion\":\"x\",\"reward\":"
                                  "{\"speedup_weight\":-1}}", "speedup_weight"), 400);
    assert_int_equal(parse_status("{\"problem_id\":\"a/b\",\"completion\":\"x\",\"reward\":"
                                  "{\"gamma\":1}}", "unknown reward parameter"), 400);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queue_admits_all_or_nothing),
        cmocka_unit_test(queue_round_robin_across_clients),
        cmocka_unit_test(reward_is_kcurates),
        cmocka_unit_test(parser_statuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
