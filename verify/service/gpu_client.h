/* gpu_client: the host side of the GPU workers (`kverify-gpu worker`), one
 * process per GPU. Sends a compiled candidate, follows the worker's progress
 * messages with their deadlines (a hang is killed and reported as timeout),
 * restarts a worker after a sticky error or a crash, and fills the result. */
#ifndef KC_GPU_CLIENT_H
#define KC_GPU_CLIENT_H
#include "common/problem.h"
#include "verify/service/gpu_result.h"
#include "verify/service/verify.h"

typedef struct gpu_client gpu_client;

int gpu_client_start(const kv_options *o, gpu_client **out, strbuf *err);
void gpu_client_stop(gpu_client *g);
/* b (NULL: none): the candidate's batch (batch.h): the job carries the batch's dims sets and
 * key, and goes to the worker that last ran a job of the batch where possible. */
int gpu_client_verify(gpu_client *g, kv_batch *b, const problem *p, const strbuf *ref_cubin,
                      const uint64_t *seeds, int n_seeds, kv_result *r, strbuf *err);
/* The batch of key ended: the next job each worker that ran some of it gets tells it to scrub
 * and free the batch's reference outputs. */
void gpu_client_batch_end(gpu_client *g, const char *key);
/* The secret seed of a verification's drawn dims sets: --hidden-seed's, else a fresh one. */
uint64_t gpu_client_hidden_seed(const kv_options *o);
/* Workers busy now (for progress displays). */
int gpu_client_busy(gpu_client *g, int *waiting);
int gpu_client_workers(gpu_client *g);

#endif
