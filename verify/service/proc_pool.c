/* proc_pool: slots of child processes shared by threads (see proc_pool.h). */
#include "verify/service/proc_pool.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "verify/service/batch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct slot {
    ipc_child child;
    int busy;
    int greeted;     /* its process said hello (always, without a greet function) */
    double start_ms; /* how long the last taking waited for the process to start */
    char key[BATCH_KEY_HEX + 1]; /* the batch of the last job it took ("" none) */
};

/* A caller blocked in proc_pool_acquire_keyed: its batch, and how often it was passed over. */
struct waiter {
    const char *key;
    int passes;
    struct waiter *next;
};

struct proc_pool {
    pthread_mutex_t lock;
    pthread_cond_t freed;
    int n;
    int waiting; /* callers blocked in proc_pool_acquire */
    struct waiter *waiters;
    struct slot *slots;
    proc_spawn_fn spawn;
    proc_greet_fn greet; /* NULL: spawn reads the hello itself */
    void *ctx;
};

proc_pool *proc_pool_new(int slots, proc_spawn_fn spawn, void *ctx)
{
    proc_pool *p = xcalloc(1, sizeof(*p));
    p->n = slots < 1 ? 1 : slots;
    p->slots = xcalloc((size_t)p->n, sizeof(struct slot));
    p->spawn = spawn;
    p->ctx = ctx;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->freed, NULL);
    return p;
}

/* batch_pick_slot over the pool's slots and the other waiters' batches. Called with the lock
 * held. */
static int pick_free_slot(proc_pool *p, const struct waiter *me)
{
    int n_others = 0;
    for (const struct waiter *w = p->waiters; w; w = w->next)
        n_others += w != me && w->key;
    batch_slot *view = xcalloc((size_t)p->n, sizeof(*view));
    const char **others = xcalloc((size_t)n_others + 1, sizeof(*others));
    for (int i = 0; i < p->n; i++)
        view[i] = (batch_slot){p->slots[i].busy, p->slots[i].child.pid > 0, p->slots[i].key};
    n_others = 0;
    for (const struct waiter *w = p->waiters; w; w = w->next)
        if (w != me && w->key)
            others[n_others++] = w->key;
    int i = batch_pick_slot(view, p->n, me->key, me->passes, others, n_others);
    free(view);
    free(others);
    return i;
}

static int any_free(const proc_pool *p)
{
    for (int i = 0; i < p->n; i++)
        if (!p->slots[i].busy)
            return 1;
    return 0;
}

static void waiter_remove(proc_pool *p, struct waiter *me)
{
    for (struct waiter **w = &p->waiters; *w; w = &(*w)->next)
        if (*w == me) {
            *w = me->next;
            return;
        }
}

static int start_slot(proc_pool *p, int i, ipc_child **child, strbuf *err);

int proc_pool_acquire_keyed(proc_pool *p, const char *key, int *slot, ipc_child **child,
                            strbuf *err)
{
    struct waiter me = {.key = key && *key ? key : NULL};
    pthread_mutex_lock(&p->lock);
    me.next = p->waiters, p->waiters = &me;
    int i;
    while ((i = pick_free_slot(p, &me)) < 0) {
        me.passes += any_free(p); /* a free slot left to a job of its batch */
        p->waiting++;
        pthread_cond_wait(&p->freed, &p->lock);
        p->waiting--;
    }
    waiter_remove(p, &me);
    p->slots[i].busy = 1;
    if (me.key)
        snprintf(p->slots[i].key, sizeof(p->slots[i].key), "%s", me.key);
    pthread_cond_broadcast(&p->freed); /* the waiters' picture changed: one left */
    pthread_mutex_unlock(&p->lock);
    *slot = i;
    return start_slot(p, i, child, err);
}

int proc_pool_acquire(proc_pool *p, int *slot, ipc_child **child, strbuf *err)
{
    return proc_pool_acquire_keyed(p, NULL, slot, child, err);
}

void proc_pool_hold_slot(proc_pool *p, int slot)
{
    pthread_mutex_lock(&p->lock);
    while (p->slots[slot].busy)
        pthread_cond_wait(&p->freed, &p->lock);
    p->slots[slot].busy = 1;
    pthread_mutex_unlock(&p->lock);
}

int proc_pool_acquire_slot(proc_pool *p, int slot, ipc_child **child, strbuf *err)
{
    proc_pool_hold_slot(p, slot);
    return start_slot(p, slot, child, err);
}

void proc_pool_set_greet(proc_pool *p, proc_greet_fn greet) { p->greet = greet; }

/* Reads the hello of the slot's started process; kills it when there is none. */
static int greet_slot(proc_pool *p, int i, strbuf *err)
{
    struct slot *s = &p->slots[i];
    s->greeted = !p->greet || p->greet(p->ctx, i, &s->child, err) == 0;
    if (!s->greeted)
        ipc_kill(&s->child);
    return s->greeted ? 0 : -1;
}

/* The slot is held: starts its process if it has none, greets one started ahead of need (or,
 * when that one cannot, starts another). */
static int start_slot(proc_pool *p, int i, ipc_child **child, strbuf *err)
{
    struct slot *s = &p->slots[i];
    double t0 = now_ms();
    int was_up = s->child.pid > 0 && s->greeted;
    if (s->child.pid > 0 && !s->greeted && greet_slot(p, i, err))
        sb_reset(err); /* its error is the next start's, if that fails too */
    if (s->child.pid <= 0 &&
        (p->spawn(p->ctx, i, &s->child, err) != 0 || (s->child.pid > 0 && greet_slot(p, i, err)))) {
        s->child.pid = 0;
        proc_pool_release(p, i);
        return -1;
    }
    s->start_ms = was_up ? 0 : now_ms() - t0;
    *child = &s->child;
    return 0;
}

double proc_pool_replace(proc_pool *p, int slot)
{
    struct slot *s = &p->slots[slot];
    ipc_child old = s->child;
    s->child = (ipc_child){.pid = 0, .to_child = -1, .from_child = -1};
    s->greeted = 0;
    pthread_mutex_lock(&p->lock);
    s->key[0] = 0; /* the new process holds no batch's outputs */
    pthread_mutex_unlock(&p->lock);
    strbuf err = STRBUF_INIT; /* a failed start is the next taker's to meet and report */
    if (!p->greet || p->spawn(p->ctx, slot, &s->child, &err) != 0)
        s->child = (ipc_child){.pid = 0, .to_child = -1, .from_child = -1};
    sb_free(&err);
    double t0 = now_ms();
    ipc_kill(&old);
    return now_ms() - t0;
}

double proc_pool_start_ms(proc_pool *p, int slot) { return p->slots[slot].start_ms; }

void proc_pool_release(proc_pool *p, int slot)
{
    pthread_mutex_lock(&p->lock);
    p->slots[slot].busy = 0;
    pthread_cond_broadcast(&p->freed); /* a waiter may want this very slot */
    pthread_mutex_unlock(&p->lock);
}

int proc_pool_busy(proc_pool *p, int *waiting)
{
    pthread_mutex_lock(&p->lock);
    int n = 0;
    for (int i = 0; i < p->n; i++)
        n += p->slots[i].busy;
    if (waiting)
        *waiting = p->waiting;
    pthread_mutex_unlock(&p->lock);
    return n;
}

void proc_pool_free(proc_pool *p)
{
    if (!p)
        return;
    /* every process hears the end of its input at once, then each gets what is left of one
     * grace to end by itself: a worker that ignores its input's end (or hangs on the way out)
     * is killed, it does not hold the tool's exit (the CI's test_deadlines waited 60 s) */
    for (int i = 0; i < p->n; i++) {
        if (p->slots[i].child.pid > 0 && p->slots[i].greeted)
            ipc_hang_up(&p->slots[i].child);
        else if (p->slots[i].child.pid > 0) /* still starting: nobody will need it */
            ipc_kill(&p->slots[i].child);
    }
    double deadline = now_ms() + IPC_EXIT_GRACE_MS;
    for (int i = 0; i < p->n; i++)
        if (p->slots[i].child.pid > 0) {
            double left = deadline - now_ms();
            ipc_reap_lost(&p->slots[i].child, left > 0 ? left : 0);
        }
    free(p->slots);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->freed);
    free(p);
}
