/* batch: batched verification (issue 37). The candidates of one problem verified together in one
 * `kverify run` or one `kverify serve` request form a batch: every job of it carries the same
 * secret seeds and the same drawn, stratified and boundary dims sets, and a fresh random batch
 * key, so a GPU worker that runs several of them keeps the trusted reference's outputs of each run
 * (masked, in walled device memory: verify/worker/worker_batch.c) and compares later candidates
 * with them instead of running the reference again. Here is what both sides share, as plain
 * functions with no GPU: the client's batch (its key, seeds and dims sets), which worker a job
 * goes to (the one that last ran its batch, where possible), the batch keys a worker may hold and
 * which of them ended, and which runs' reference outputs a worker keeps within its byte budget
 * (the largest dropped first). Tests: tests/unit/test_verify_batch.c. */
#ifndef KC_BATCH_H
#define KC_BATCH_H
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>

#define BATCH_KEY_HEX 32                 /* a batch key: 128 random bits as lowercase hex */
#define BATCH_DEFAULT_MAX 1 /* candidates of one problem in one batch (--batch): none until the
                              * sharing has been measured on a GPU (docs/VERIFIER.md "Batches") */
#define BATCH_DEFAULT_BYTES (4ull << 30) /* a worker's reference outputs kept (--batch-memory) */
#define BATCH_ALIGN 256                  /* each kept output starts at this alignment */
#define BATCH_MAX_PASSES 8               /* a waiting job is passed over at most this often */
#define BATCH_HELD 64                    /* batch keys remembered per worker */
#define BATCH_MAX_SEEDS 16               /* = KV_MAX_SEEDS */

/* A fresh batch key from the kernel's random source (never reused: 128 bits). */
void batch_new_key(char key[BATCH_KEY_HEX + 1]);
/* Whether key is one: BATCH_KEY_HEX lowercase hex digits. */
int batch_key_valid(const char *key);

/* The client's batch: what every job of it shares. Created by kv_batch_new (service.c), which
 * draws the seeds; the dims sets are built by the first job that needs them (gpu_client.c) and
 * reused by the others, under lock. */
struct kv_batch {
    char key[BATCH_KEY_HEX + 1];
    char *problem_id;       /* the one problem of the batch */
    uint64_t seeds[BATCH_MAX_SEEDS];
    int n_seeds;
    uint64_t hidden_seed;   /* the drawn and stratified sets derive from it */
    pthread_mutex_t lock;   /* sets and next_index */
    json_t *sets;           /* {"hidden", "stratified", "boundary"} as the jobs carry them */
    int next_index;         /* jobs of the batch sent so far (evidence batch.index) */
};

/* Which runs of a job keep their reference outputs in a budget of budget bytes: n runs whose
 * outputs take bytes[i] (each rounded up to BATCH_ALIGN); the smallest first, in run order
 * among equals, while the total fits: the largest are the first left out (their reference runs
 * again for every candidate). Sets keep[i] to 1 or 0; returns the bytes kept (rounded). A run
 * of 0 bytes (nothing to keep) is never kept. */
uint64_t batch_keep_plan(const uint64_t *bytes, int n, uint64_t budget, unsigned char *keep);
/* bytes rounded up to BATCH_ALIGN (0 stays 0; a size past what rounds is UINT64_MAX). */
uint64_t batch_round(uint64_t bytes);

/* A worker slot as the scheduler sees it: busy, its process started, the key of the last batch
 * it ran ("" or NULL: none). */
typedef struct batch_slot {
    int busy, started;
    const char *key;
} batch_slot;

/* The slot a job of batch key (NULL or "": none) should take now, or -1 to wait. others: the
 * keys of the other jobs waiting for a slot. A free slot that last ran this batch is taken
 * first (its worker holds the batch's reference outputs); else a free slot whose batch no
 * other waiting job belongs to (a started one before an unstarted one, one without a batch
 * before one with); else, once the job has been passed over BATCH_MAX_PASSES times, any free
 * slot; else the job waits for the jobs that the free slots' batches want. Some waiting job
 * can always take a free slot, so nothing waits forever. */
int batch_pick_slot(const batch_slot *slots, int n, const char *key, int passes,
                    const char *const *others, int n_others);

/* The batch keys one worker may hold reference outputs of (jobs of them were sent to it), and
 * which of those batches have ended: the next job sent to that worker lists them
 * ("batch_ended") and the worker scrubs and frees their outputs then. When more than
 * BATCH_HELD are held the oldest is forgotten (the worker's budget and idle timeout still
 * bound what it keeps). */
typedef struct batch_held {
    char keys[BATCH_HELD][BATCH_KEY_HEX + 1];
    unsigned char ended[BATCH_HELD];
    int n;
} batch_held;
void batch_held_add(batch_held *h, const char *key);
/* Marks key's batch ended (nothing when the worker never got a job of it). */
void batch_held_end(batch_held *h, const char *key);
/* The ended keys as a JSON array (new reference), removed from h. */
json_t *batch_held_take_ended(batch_held *h);
/* The worker was replaced: its successor holds nothing. */
void batch_held_clear(batch_held *h);

#endif
