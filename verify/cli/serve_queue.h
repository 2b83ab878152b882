/* serve_queue: the bounded, fair job queue of `kverify serve`. Jobs are opaque pointers tagged
 * with a client key (the client's address, and its X-Client-Id header when it sends one); a
 * request's jobs enter together or not at all, and workers take them round-robin across the
 * clients that have jobs waiting, first in first out within a client, so that one client's big
 * batch does not starve another's single request. Thread-safe. */
#ifndef KC_SERVE_QUEUE_H
#define KC_SERVE_QUEUE_H

typedef struct serve_queue serve_queue;

serve_queue *serve_queue_new(int capacity);
/* Frees the queue; jobs still in it are not freed (take them with serve_queue_close first). */
void serve_queue_free(serve_queue *q);
/* Adds the n jobs of one client at once: 0, or -1 (nothing added) when fewer than n places are
 * free or the queue is closed. */
int serve_queue_push(serve_queue *q, const char *client, void *const *jobs, int n);
/* The next job in round-robin order over clients; blocks while the queue is empty and open;
 * NULL once it is closed. */
void *serve_queue_pop(serve_queue *q);
/* Closes the queue (pushes fail, pops return NULL) and hands each job still waiting to
 * abandon(job, arg), in queue order. */
void serve_queue_close(serve_queue *q, void (*abandon)(void *job, void *arg), void *arg);
/* Jobs waiting now, and the capacity. */
int serve_queue_length(serve_queue *q);
int serve_queue_capacity(serve_queue *q);

#endif
