/* test_verify_batch: the rules of batched verification (issue 37, verify/service/batch.h) that
 * need no GPU. Batch keys are 128 fresh random bits; the byte budget keeps the smallest runs'
 * reference outputs first and leaves the largest to run again; the scheduler gives a job the
 * free worker that last ran its batch, never takes a free worker another waiting job's batch
 * wants (unless passed over BATCH_MAX_PASSES times), and always lets some waiting job take a free
 * worker; a worker's held batches and their ends; and the process pool's keyed acquire with real
 * child processes (/bin/cat): affinity, and a freed worker going to the waiting job of its batch
 * rather than to one that came first; and what the client accepts of a worker's batch evidence
 * (its own key, sound counts, a budget kept, known reference kinds; none for a job of no batch). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/fsutil.h"
#include "verify/service/batch.h"
#include "verify/service/gpu_result.h"
#include "verify/service/proc_pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_keys_fresh_and_valid(void **state)
{
    (void)state;
    enum { N = 2000 };
    static char keys[N][BATCH_KEY_HEX + 1];
    for (int i = 0; i < N; i++) {
        batch_new_key(keys[i]);
        assert_true(batch_key_valid(keys[i]));
        for (int j = 0; j < i; j++)
            assert_string_not_equal(keys[i], keys[j]);
    }
    assert_false(batch_key_valid(NULL));
    assert_false(batch_key_valid(""));
    assert_false(batch_key_valid("0123456789abcdef0123456789abcde"));   /* 31 */
    assert_false(batch_key_valid("0123456789abcdef0123456789abcdef0")); /* 33 */
    assert_false(batch_key_valid("0123456789ABCDEF0123456789abcdef"));  /* upper case */
    assert_false(batch_key_valid("0123456789abcdeg0123456789abcdef"));
    assert_true(batch_key_valid("0123456789abcdef0123456789abcdef"));
}

static void test_round(void **state)
{
    (void)state;
    assert_int_equal(batch_round(0), 0);
    assert_int_equal(batch_round(1), BATCH_ALIGN);
    assert_int_equal(batch_round(BATCH_ALIGN), BATCH_ALIGN);
    assert_int_equal(batch_round(BATCH_ALIGN + 1), 2 * BATCH_ALIGN);
    assert_true(batch_round(UINT64_MAX - 3) == UINT64_MAX);
}

static void test_plan_keeps_everything_that_fits(void **state)
{
    (void)state;
    uint64_t bytes[] = {1000, 256, 4096, 1};
    unsigned char keep[4];
    uint64_t total = batch_keep_plan(bytes, 4, 1 << 20, keep);
    assert_int_equal(total, 1024 + 256 + 4096 + 256);
    for (int i = 0; i < 4; i++)
        assert_int_equal(keep[i], 1);
}

static void test_plan_drops_the_largest_first(void **state)
{
    (void)state;
    /* 5 default seeds of 1 MiB, coverage sets of a few KiB, a capacity set of 8 GiB */
    uint64_t bytes[] = {1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20, 4096, 8192,
                        8ull << 30, 300, 2 << 20};
    int n = (int)(sizeof(bytes) / sizeof(bytes[0]));
    unsigned char keep[16];
    uint64_t total = batch_keep_plan(bytes, n, 4 << 20, keep);
    /* smallest first: 300->512, 4096, 8192, then the 1 MiB ones while they fit (3 of 5: 12800 +
     * 3 MiB <= 4 MiB, a 4th would not), the 2 MiB and 8 GiB ones never */
    assert_int_equal(keep[8], 1);
    assert_int_equal(keep[5], 1);
    assert_int_equal(keep[6], 1);
    assert_int_equal(keep[0] + keep[1] + keep[2] + keep[3] + keep[4], 3);
    assert_int_equal(keep[0], 1); /* equal sizes: the earlier runs first */
    assert_int_equal(keep[1], 1);
    assert_int_equal(keep[2], 1);
    assert_int_equal(keep[9], 0);
    assert_int_equal(keep[7], 0);
    assert_int_equal(total, 512 + 4096 + 8192 + 3 * (1 << 20));
    assert_true(total <= 4 << 20);
    /* whatever is left out is at least as large as everything kept */
    uint64_t largest_kept = 0, smallest_left = UINT64_MAX;
    for (int i = 0; i < n; i++) {
        uint64_t r = batch_round(bytes[i]);
        if (keep[i] && r > largest_kept)
            largest_kept = r;
        if (!keep[i] && r < smallest_left)
            smallest_left = r;
    }
    assert_true(largest_kept <= smallest_left);
}

static void test_plan_edges(void **state)
{
    (void)state;
    uint64_t bytes[] = {0, 100, UINT64_MAX, 1ull << 40};
    unsigned char keep[4] = {9, 9, 9, 9};
    assert_int_equal(batch_keep_plan(bytes, 4, 0, keep), 0); /* no budget: nothing kept */
    for (int i = 0; i < 4; i++)
        assert_int_equal(keep[i], 0);
    assert_int_equal(batch_keep_plan(bytes, 4, 256, keep), 256);
    assert_int_equal(keep[0], 0); /* nothing to keep */
    assert_int_equal(keep[1], 1);
    assert_int_equal(keep[2], 0);
    assert_int_equal(keep[3], 0);
    assert_int_equal(batch_keep_plan(bytes, 4, UINT64_MAX, keep), 256 + (1ull << 40));
    assert_int_equal(keep[2], 0); /* would not round: never kept */
    assert_int_equal(batch_keep_plan(bytes, 0, 100, keep), 0);
}

#define KA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define KB "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define KC "cccccccccccccccccccccccccccccccc"

static void test_pick_prefers_the_batch_worker(void **state)
{
    (void)state;
    batch_slot s[3] = {{0, 1, ""}, {0, 1, KB}, {0, 1, KA}};
    assert_int_equal(batch_pick_slot(s, 3, KA, 0, NULL, 0), 2);
    assert_int_equal(batch_pick_slot(s, 3, KB, 0, NULL, 0), 1);
    /* another batch: a worker without a batch first */
    assert_int_equal(batch_pick_slot(s, 3, KC, 0, NULL, 0), 0);
    /* no batch: the same */
    assert_int_equal(batch_pick_slot(s, 3, NULL, 0, NULL, 0), 0);
    assert_int_equal(batch_pick_slot(s, 3, "", 0, NULL, 0), 0);
    /* the batch's worker busy: another free one (each worker keeps its own copy) */
    s[2].busy = 1;
    assert_int_equal(batch_pick_slot(s, 3, KA, 0, NULL, 0), 0);
    /* every worker busy: wait */
    s[0].busy = s[1].busy = 1;
    assert_int_equal(batch_pick_slot(s, 3, KA, 0, NULL, 0), -1);
    assert_int_equal(batch_pick_slot(s, 3, NULL, BATCH_MAX_PASSES, NULL, 0), -1);
}

static void test_pick_leaves_a_worker_to_its_batch(void **state)
{
    (void)state;
    batch_slot s[2] = {{1, 1, KC}, {0, 1, KA}};
    const char *others[] = {KA};
    /* slot 1 holds batch A and a job of A waits: B's job waits for it to take it */
    assert_int_equal(batch_pick_slot(s, 2, KB, 0, others, 1), -1);
    assert_int_equal(batch_pick_slot(s, 2, NULL, 0, others, 1), -1);
    /* ... until it has been passed over often enough */
    assert_int_equal(batch_pick_slot(s, 2, KB, BATCH_MAX_PASSES - 1, others, 1), -1);
    assert_int_equal(batch_pick_slot(s, 2, KB, BATCH_MAX_PASSES, others, 1), 1);
    /* the waiting job of A takes it */
    const char *none[] = {KB};
    assert_int_equal(batch_pick_slot(s, 2, KA, 0, none, 1), 1);
    /* nobody wants A any more: any job takes it */
    assert_int_equal(batch_pick_slot(s, 2, KB, 0, none, 0), 1);
    /* an unstarted worker comes after a started one, whatever its batch */
    batch_slot t[2] = {{0, 0, ""}, {0, 1, KC}};
    assert_int_equal(batch_pick_slot(t, 2, KB, 0, NULL, 0), 1);
}

/* Whatever the state, when a worker is free some waiting job can take it. */
static void test_pick_always_progresses(void **state)
{
    (void)state;
    const char *keys[] = {"", KA, KB, KC};
    unsigned seed = 12345;
    for (int trial = 0; trial < 20000; trial++) {
        batch_slot s[4];
        int n = 1 + (int)(rand_r(&seed) % 4), free_slots = 0;
        for (int i = 0; i < n; i++) {
            s[i] = (batch_slot){(int)(rand_r(&seed) % 2), (int)(rand_r(&seed) % 2),
                                keys[rand_r(&seed) % 4]};
            free_slots += !s[i].busy;
        }
        int m = 1 + (int)(rand_r(&seed) % 5);
        const char *waiting[5];
        for (int w = 0; w < m; w++)
            waiting[w] = keys[rand_r(&seed) % 4];
        int someone = 0;
        for (int w = 0; w < m; w++) {
            const char *others[5];
            int k = 0;
            for (int o = 0; o < m; o++)
                if (o != w)
                    others[k++] = waiting[o];
            int got = batch_pick_slot(s, n, waiting[w], 0, others, k);
            if (got >= 0) {
                assert_false(s[got].busy);
                someone = 1;
            }
        }
        assert_int_equal(someone, free_slots > 0);
    }
}

static void test_held_batches_and_their_ends(void **state)
{
    (void)state;
    batch_held h;
    memset(&h, 0, sizeof(h));
    batch_held_add(&h, KA);
    batch_held_add(&h, KA); /* once */
    batch_held_add(&h, "not a key");
    batch_held_add(&h, KB);
    assert_int_equal(h.n, 2);
    batch_held_end(&h, KC); /* never sent to this worker: nothing */
    batch_held_end(&h, NULL);
    json_t *ended = batch_held_take_ended(&h);
    assert_int_equal(json_array_size(ended), 0);
    json_decref(ended);
    batch_held_end(&h, KA);
    ended = batch_held_take_ended(&h);
    assert_int_equal(json_array_size(ended), 1);
    assert_string_equal(json_string_value(json_array_get(ended, 0)), KA);
    json_decref(ended);
    ended = batch_held_take_ended(&h); /* told once */
    assert_int_equal(json_array_size(ended), 0);
    json_decref(ended);
    assert_int_equal(h.n, 1);
    /* more than BATCH_HELD: the oldest is forgotten */
    char key[BATCH_KEY_HEX + 1];
    for (int i = 0; i < BATCH_HELD; i++) {
        batch_new_key(key);
        batch_held_add(&h, key);
    }
    assert_int_equal(h.n, BATCH_HELD);
    batch_held_end(&h, KB);
    ended = batch_held_take_ended(&h);
    assert_int_equal(json_array_size(ended), 0);
    json_decref(ended);
    batch_held_end(&h, key);
    ended = batch_held_take_ended(&h);
    assert_int_equal(json_array_size(ended), 1);
    json_decref(ended);
    batch_held_clear(&h);
    assert_int_equal(h.n, 0);
}

static int spawn_cat(void *ctx, int slot, ipc_child *child, strbuf *err)
{
    (void)ctx, (void)slot;
    char *argv[] = {"/bin/cat", NULL};
    return ipc_spawn(argv, child, err);
}

static void test_pool_affinity(void **state)
{
    (void)state;
    proc_pool *p = proc_pool_new(2, spawn_cat, NULL);
    ipc_child *c;
    strbuf err = STRBUF_INIT;
    int slot, first;
    /* both started, without a batch */
    assert_int_equal(proc_pool_acquire_slot(p, 0, &c, &err), 0);
    assert_int_equal(proc_pool_acquire_slot(p, 1, &c, &err), 0);
    proc_pool_release(p, 0);
    proc_pool_release(p, 1);
    assert_int_equal(proc_pool_acquire_keyed(p, KA, &first, &c, &err), 0);
    proc_pool_release(p, first);
    for (int i = 0; i < 5; i++) { /* A's jobs stay where A ran */
        assert_int_equal(proc_pool_acquire_keyed(p, KA, &slot, &c, &err), 0);
        assert_int_equal(slot, first);
        proc_pool_release(p, slot);
    }
    /* B's job goes to the worker without a batch */
    assert_int_equal(proc_pool_acquire_keyed(p, KB, &slot, &c, &err), 0);
    assert_int_equal(slot, 1 - first);
    proc_pool_release(p, slot);
    /* a replaced worker forgets its batch: A's next job may go anywhere; B keeps its worker */
    assert_int_equal(proc_pool_acquire_keyed(p, KA, &slot, &c, &err), 0);
    proc_pool_replace(p, slot);
    proc_pool_release(p, slot);
    assert_int_equal(proc_pool_acquire_keyed(p, KB, &slot, &c, &err), 0);
    assert_int_equal(slot, 1 - first);
    proc_pool_release(p, slot);
    proc_pool_free(p);
    sb_free(&err);
}

struct waiter_arg {
    proc_pool *p;
    const char *key;
    int slot;
};

static void *wait_keyed(void *arg)
{
    struct waiter_arg *a = arg;
    ipc_child *c;
    strbuf err = STRBUF_INIT;
    if (proc_pool_acquire_keyed(a->p, a->key, &a->slot, &c, &err) != 0)
        a->slot = -2;
    sb_free(&err);
    return NULL;
}

static void wait_for_waiters(proc_pool *p, int n)
{
    int waiting = 0;
    for (int i = 0; i < 2000 && waiting < n; i++) {
        proc_pool_busy(p, &waiting);
        if (waiting < n)
            usleep(1000);
    }
    assert_int_equal(waiting, n);
}

static void test_pool_freed_worker_goes_to_its_batch(void **state)
{
    (void)state;
    proc_pool *p = proc_pool_new(2, spawn_cat, NULL);
    ipc_child *c;
    strbuf err = STRBUF_INIT;
    int a_slot, c_slot;
    assert_int_equal(proc_pool_acquire_keyed(p, KA, &a_slot, &c, &err), 0);
    assert_int_equal(proc_pool_acquire_keyed(p, KC, &c_slot, &c, &err), 0);
    assert_int_not_equal(a_slot, c_slot);
    /* both busy; a job of B waits first, then one of A */
    struct waiter_arg wb = {p, KB, -1}, wa = {p, KA, -1};
    pthread_t tb, ta;
    pthread_create(&tb, NULL, wait_keyed, &wb);
    wait_for_waiters(p, 1);
    pthread_create(&ta, NULL, wait_keyed, &wa);
    wait_for_waiters(p, 2);
    /* A's worker is freed: A's job takes it, B's keeps waiting */
    proc_pool_release(p, a_slot);
    pthread_join(ta, NULL);
    assert_int_equal(wa.slot, a_slot);
    wait_for_waiters(p, 1);
    assert_int_equal(wb.slot, -1);
    /* C's worker is freed and no waiting job wants C: B takes it */
    proc_pool_release(p, c_slot);
    pthread_join(tb, NULL);
    assert_int_equal(wb.slot, c_slot);
    proc_pool_release(p, a_slot);
    proc_pool_release(p, c_slot);
    proc_pool_free(p);
    sb_free(&err);
}

static int batch_ok(const char *text, const char *key)
{
    json_t *res = json_loads(text, 0, NULL);
    assert_non_null(res);
    const char *why = NULL;
    int ok = gpu_result_batch_valid(res, key, &why);
    assert_non_null(why);
    json_decref(res);
    return ok;
}

static void test_batch_evidence_checked(void **state)
{
    (void)state;
#define GOOD_BATCH "\"batch\":{\"key\":\"" KA "\",\"index\":2,\"reference\":{\"shared\":40," \
                   "\"kept\":0,\"ran\":3},\"kept_bytes\":1024,\"budget_bytes\":4096}"
    const char *good = "{\"evidence\":{\"runs\":[{\"reference\":\"shared\"},{\"reference\":"
                       "\"ran\"}]," GOOD_BATCH "}}";
    assert_true(batch_ok(good, KA));
    assert_false(batch_ok(good, KB));   /* another batch's key */
    assert_false(batch_ok(good, NULL)); /* a job of no batch */
    assert_true(batch_ok("{\"evidence\":{\"runs\":[]}}", NULL));
    assert_true(batch_ok("{\"verdict\":\"launch_error\"}", KA)); /* ended before its checks */
    assert_false(batch_ok("{\"evidence\":{\"runs\":[{\"reference\":\"borrowed\"}]}}", KA));
    assert_false(batch_ok("{\"evidence\":{\"batch\":{\"key\":\"" KA "\",\"index\":0,"
                          "\"reference\":{\"shared\":-1,\"kept\":0,\"ran\":0},\"kept_bytes\":0,"
                          "\"budget_bytes\":0}}}", KA));
    assert_false(batch_ok("{\"evidence\":{\"batch\":{\"key\":\"" KA "\",\"index\":0,"
                          "\"reference\":{\"shared\":0,\"kept\":1,\"ran\":1},\"kept_bytes\":5000,"
                          "\"budget_bytes\":4096}}}", KA)); /* kept past its budget */
    assert_false(batch_ok("{\"evidence\":{\"batch\":\"" KA "\"}}", KA));
    assert_false(batch_ok("{\"evidence\":{\"batch\":{\"key\":\"" KA "\"}}}", KA));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_fresh_and_valid),
        cmocka_unit_test(test_round),
        cmocka_unit_test(test_plan_keeps_everything_that_fits),
        cmocka_unit_test(test_plan_drops_the_largest_first),
        cmocka_unit_test(test_plan_edges),
        cmocka_unit_test(test_pick_prefers_the_batch_worker),
        cmocka_unit_test(test_pick_leaves_a_worker_to_its_batch),
        cmocka_unit_test(test_pick_always_progresses),
        cmocka_unit_test(test_held_batches_and_their_ends),
        cmocka_unit_test(test_pool_affinity),
        cmocka_unit_test(test_pool_freed_worker_goes_to_its_batch),
        cmocka_unit_test(test_batch_evidence_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
