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
int gpu_client_verify(gpu_client *g, const problem *p, const strbuf *ref_cubin,
                      const uint64_t *seeds, int n_seeds,
                      kv_result *r, strbuf *err);
/* Workers busy now (for progress displays). */
int gpu_client_busy(gpu_client *g, int *waiting);
int gpu_client_workers(gpu_client *g);

#endif
