/* proc_pool: a thread-safe pool of N child processes (compile servers, GPU
 * workers). A slot's process is started on first use and again after it was
 * killed; callers take a slot, talk to its child over ipc, and give it back. */
#ifndef KC_PROC_POOL_H
#define KC_PROC_POOL_H
#include "common/strbuf.h"
#include "verify/service/ipc.h"

/* Starts the child for a slot (and reads its hello); returns -1 with err. */
typedef int (*proc_spawn_fn)(void *ctx, int slot, ipc_child *child, strbuf *err);

typedef struct proc_pool proc_pool;

proc_pool *proc_pool_new(int slots, proc_spawn_fn spawn, void *ctx);
/* Blocks until a slot is free; starts its process when needed. */
int proc_pool_acquire(proc_pool *pool, int *slot, ipc_child **child, strbuf *err);
/* Takes slot `slot` itself (waiting while it is busy) and starts its process if needed. */
int proc_pool_acquire_slot(proc_pool *pool, int slot, ipc_child **child, strbuf *err);
void proc_pool_release(proc_pool *pool, int slot);
/* Number of slots currently busy, and callers waiting for one (for progress displays). */
int proc_pool_busy(proc_pool *pool, int *waiting);
/* Closes every child (waiting for a normal exit) and frees the pool. */
void proc_pool_free(proc_pool *pool);

#endif
