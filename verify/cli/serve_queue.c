/* serve_queue: a bounded job queue with one FIFO per client and round-robin between clients
 * (see serve_queue.h). The clients with waiting jobs are kept in arrival order in an array;
 * a client leaves it when its FIFO empties, so the array never outgrows the capacity. */
#include "verify/cli/serve_queue.h"
#include "common/error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct job_node {
    void *job;
    struct job_node *next;
};

struct client_fifo {
    char *key;
    struct job_node *head, *tail;
};

struct serve_queue {
    pthread_mutex_t lock;
    pthread_cond_t nonempty;
    int capacity, length, closed;
    struct client_fifo *clients; /* those with jobs waiting, in order of arrival */
    int n_clients, cap_clients;
    int turn;                    /* index of the client whose job is taken next */
};

serve_queue *serve_queue_new(int capacity)
{
    serve_queue *q = xcalloc(1, sizeof *q);
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->nonempty, NULL);
    q->capacity = capacity > 0 ? capacity : 1;
    return q;
}

static void drop_client(serve_queue *q, int i)
{
    free(q->clients[i].key);
    memmove(&q->clients[i], &q->clients[i + 1], (size_t)(q->n_clients - i - 1) * sizeof *q->clients);
    q->n_clients--;
    if (q->turn > i)
        q->turn--;
    if (q->turn >= q->n_clients)
        q->turn = 0;
}

void serve_queue_free(serve_queue *q)
{
    if (!q)
        return;
    while (q->n_clients) {
        for (struct job_node *n = q->clients[0].head, *next; n; n = next)
            next = n->next, free(n);
        drop_client(q, 0);
    }
    free(q->clients);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->nonempty);
    free(q);
}

static struct client_fifo *client_of(serve_queue *q, const char *key)
{
    for (int i = 0; i < q->n_clients; i++)
        if (!strcmp(q->clients[i].key, key))
            return &q->clients[i];
    if (q->n_clients == q->cap_clients) {
        q->cap_clients = q->cap_clients ? 2 * q->cap_clients : 8;
        q->clients = xrealloc(q->clients, (size_t)q->cap_clients * sizeof *q->clients);
    }
    struct client_fifo *c = &q->clients[q->n_clients++];
    *c = (struct client_fifo){.key = xstrdup(key)};
    return c;
}

int serve_queue_push(serve_queue *q, const char *client, void *const *jobs, int n)
{
    pthread_mutex_lock(&q->lock);
    int ok = !q->closed && n >= 0 && n <= q->capacity - q->length;
    if (ok && n > 0) {
        struct client_fifo *c = client_of(q, client);
        for (int i = 0; i < n; i++) {
            struct job_node *node = xcalloc(1, sizeof *node);
            node->job = jobs[i];
            if (c->tail)
                c->tail->next = node;
            else
                c->head = node;
            c->tail = node;
        }
        q->length += n;
        pthread_cond_broadcast(&q->nonempty);
    }
    pthread_mutex_unlock(&q->lock);
    return ok ? 0 : -1;
}

/* Takes the next job in round-robin order; the queue is locked and not empty. */
static void *take_next(serve_queue *q)
{
    struct client_fifo *c = &q->clients[q->turn];
    struct job_node *node = c->head;
    void *job = node->job;
    c->head = node->next;
    if (!c->head)
        c->tail = NULL;
    free(node);
    q->length--;
    if (!c->head)
        drop_client(q, q->turn); /* the next client moves into this index */
    else
        q->turn = (q->turn + 1) % q->n_clients;
    return job;
}

void *serve_queue_pop(serve_queue *q)
{
    pthread_mutex_lock(&q->lock);
    while (!q->closed && q->length == 0)
        pthread_cond_wait(&q->nonempty, &q->lock);
    void *job = q->closed ? NULL : take_next(q);
    pthread_mutex_unlock(&q->lock);
    return job;
}

void serve_queue_close(serve_queue *q, void (*abandon)(void *job, void *arg), void *arg)
{
    pthread_mutex_lock(&q->lock);
    q->closed = 1;
    pthread_cond_broadcast(&q->nonempty);
    while (q->length > 0) {
        void *job = take_next(q);
        if (abandon)
            abandon(job, arg);
    }
    pthread_mutex_unlock(&q->lock);
}

int serve_queue_length(serve_queue *q)
{
    pthread_mutex_lock(&q->lock);
    int n = q->length;
    pthread_mutex_unlock(&q->lock);
    return n;
}

int serve_queue_capacity(serve_queue *q)
{
    return q->capacity;
}
