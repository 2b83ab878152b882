/* test_verify_pool: the process pool behind the compile servers and GPU workers. A slot's
 * process starts on first use; proc_pool_acquire_slot takes one given slot (the GPU warm start
 * uses it to start every GPU's worker ahead of the first job) and leaves the others to
 * proc_pool_acquire; a released slot wakes every waiter, so a caller waiting for any slot is
 * not lost behind one waiting for a particular slot. The children are /bin/cat processes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/fsutil.h"
#include "verify/service/proc_pool.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 2

struct spawns {
    int count[SLOTS];
};

static int spawn_cat(void *ctx, int slot, ipc_child *child, strbuf *err)
{
    struct spawns *s = ctx;
    char *argv[] = {"/bin/cat", NULL};
    __atomic_add_fetch(&s->count[slot], 1, __ATOMIC_SEQ_CST);
    return ipc_spawn(argv, child, err);
}

static void test_acquire_slot_starts_that_slot_only(void **state)
{
    (void)state;
    struct spawns s = {0};
    proc_pool *p = proc_pool_new(SLOTS, spawn_cat, &s);
    ipc_child *c1, *c0;
    strbuf err = STRBUF_INIT;
    assert_int_equal(proc_pool_acquire_slot(p, 1, &c1, &err), 0);
    assert_int_equal(s.count[1], 1);
    assert_int_equal(s.count[0], 0);
    assert_true(c1->pid > 0);
    int slot = -1;
    assert_int_equal(proc_pool_acquire(p, &slot, &c0, &err), 0); /* slot 1 is held */
    assert_int_equal(slot, 0);
    assert_int_equal(s.count[0], 1);
    proc_pool_release(p, 0);
    proc_pool_release(p, 1);
    assert_int_equal(proc_pool_acquire_slot(p, 1, &c1, &err), 0); /* started: not again */
    assert_int_equal(s.count[1], 1);
    proc_pool_release(p, 1);
    proc_pool_free(p);
    sb_free(&err);
}

struct waiter {
    proc_pool *pool;
    int want_slot; /* -1: any slot */
    int got_slot, done;
};

static void *wait_for_slot(void *arg)
{
    struct waiter *w = arg;
    ipc_child *c;
    strbuf err = STRBUF_INIT;
    if (w->want_slot >= 0) {
        if (proc_pool_acquire_slot(w->pool, w->want_slot, &c, &err) == 0)
            w->got_slot = w->want_slot;
    } else {
        proc_pool_acquire(w->pool, &w->got_slot, &c, &err);
    }
    sb_free(&err);
    __atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static int wait_done(struct waiter *w, double ms)
{
    double end = now_ms() + ms;
    while (!__atomic_load_n(&w->done, __ATOMIC_SEQ_CST) && now_ms() < end)
        usleep(1000);
    return __atomic_load_n(&w->done, __ATOMIC_SEQ_CST);
}

/* Both slots held; one waiter wants slot 0, another any slot. Releasing slot 1 must reach the
 * second even though the first is woken too and keeps waiting; releasing slot 0 then ends the
 * first. */
static void test_release_wakes_every_waiter(void **state)
{
    (void)state;
    struct spawns s = {0};
    proc_pool *p = proc_pool_new(SLOTS, spawn_cat, &s);
    ipc_child *c;
    strbuf err = STRBUF_INIT;
    assert_int_equal(proc_pool_acquire_slot(p, 0, &c, &err), 0);
    assert_int_equal(proc_pool_acquire_slot(p, 1, &c, &err), 0);
    struct waiter on0 = {.pool = p, .want_slot = 0, .got_slot = -1};
    struct waiter any = {.pool = p, .want_slot = -1, .got_slot = -1};
    pthread_t t0, t1;
    pthread_create(&t0, NULL, wait_for_slot, &on0);
    pthread_create(&t1, NULL, wait_for_slot, &any);
    usleep(50000);
    assert_false(on0.done);
    assert_false(any.done);
    proc_pool_release(p, 1);
    assert_true(wait_done(&any, 5000));
    assert_int_equal(any.got_slot, 1);
    assert_false(on0.done); /* slot 0 is still held */
    proc_pool_release(p, 0);
    assert_true(wait_done(&on0, 5000));
    assert_int_equal(on0.got_slot, 0);
    pthread_join(t0, NULL);
    pthread_join(t1, NULL);
    proc_pool_release(p, 0);
    proc_pool_release(p, 1);
    assert_int_equal(s.count[0] + s.count[1], 2);
    proc_pool_free(p);
    sb_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acquire_slot_starts_that_slot_only),
        cmocka_unit_test(test_release_wakes_every_waiter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
