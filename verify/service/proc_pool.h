/* proc_pool: a thread-safe pool of N child processes (compile servers, GPU
 * workers). A slot's process is started on first use and again after it was
 * killed, or ahead of need when it is replaced; callers take a slot, talk to its child over
 * ipc, and give it back. */
#ifndef KC_PROC_POOL_H
#define KC_PROC_POOL_H
#include "common/strbuf.h"
#include "verify/service/ipc.h"

/* Starts the child for a slot (and reads its hello, unless the pool has a greet function);
 * returns -1 with err. */
typedef int (*proc_spawn_fn)(void *ctx, int slot, ipc_child *child, strbuf *err);
/* Reads the hello of a child spawn started; returns -1 with err (the pool then kills it). */
typedef int (*proc_greet_fn)(void *ctx, int slot, ipc_child *child, strbuf *err);

typedef struct proc_pool proc_pool;

proc_pool *proc_pool_new(int slots, proc_spawn_fn spawn, void *ctx);
/* With a greet function, spawn only starts a process and greet reads its hello, so a process
 * can be started ahead of need (proc_pool_replace) and greeted when its slot is next taken. */
void proc_pool_set_greet(proc_pool *pool, proc_greet_fn greet);
/* The caller holds slot and its process must go (a hang, a sticky error): the replacement is
 * started first, so that its start-up overlaps the old process's end; then the old one is
 * killed and reaped. The new one is greeted when the slot is next taken; if it cannot greet
 * (it may have started while the old one still held the device's memory), that caller starts
 * another. Without a greet function the old one is only killed. Returns how long the old
 * one took to end once killed (a GPU worker: its context's teardown). */
double proc_pool_replace(proc_pool *pool, int slot);
/* How long the last taking of slot waited for its process to start and greet (0: it was up). */
double proc_pool_start_ms(proc_pool *pool, int slot);
/* Blocks until a slot is free; starts its process when needed. */
int proc_pool_acquire(proc_pool *pool, int *slot, ipc_child **child, strbuf *err);
/* The same for a job of batch key (NULL: none; batch.h): a free slot that last ran a job of the
 * batch first, else one no other waiting job's batch wants (batch_pick_slot); the slot then
 * remembers key. A replaced slot forgets its batch (its new process holds no outputs). */
int proc_pool_acquire_keyed(proc_pool *pool, const char *key, int *slot, ipc_child **child,
                            strbuf *err);
/* Takes slot `slot` itself (waiting while it is busy) and starts its process if needed. */
int proc_pool_acquire_slot(proc_pool *pool, int slot, ipc_child **child, strbuf *err);
/* Takes slot `slot` (waiting while it is busy) without starting or greeting its process: the
 * slot's GPU for work of the caller's own; a process started ahead of need stays unawaited, so
 * the next job that waits for it says so. Released with proc_pool_release. */
void proc_pool_hold_slot(proc_pool *pool, int slot);
void proc_pool_release(proc_pool *pool, int slot);
/* Number of slots currently busy, and callers waiting for one (for progress displays). */
int proc_pool_busy(proc_pool *pool, int *waiting);
/* Closes every child (waiting for a normal exit; one never greeted is killed) and frees the
 * pool. */
void proc_pool_free(proc_pool *pool);

#endif
