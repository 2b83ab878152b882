/* gpu_result: the messages a GPU worker (`kverify-gpu worker`, which runs candidate code) sends
 * its parent, read as untrusted input: a message for the job is a progress report (a stage and a
 * deadline) or a result (a known verdict and flags, a message, well-formed evidence, errors and
 * timing); anything else is a protocol error, never a verdict. Callable without a GPU (the
 * gpu_result fuzz target drives it). */
#ifndef KC_GPU_RESULT_H
#define KC_GPU_RESULT_H
#include "common/problem.h"
#include "verify/service/verify.h"

#include <jansson.h>

enum gpu_message_kind { GPU_MSG_BAD, GPU_MSG_PROGRESS, GPU_MSG_RESULT };

/* What msg (the JSON of one message) is for job job_id; for GPU_MSG_BAD *why says what is wrong.
 * A progress report has "progress" (a stage name under 64 bytes) and "deadline_ms" in (0, 1 day],
 * and may have what the deadline derives from (deadline_progress_basis_valid). */
enum gpu_message_kind gpu_message_check(json_t *msg, json_int_t job_id, const char **why);
/* Whether the evidence of res (a result gpu_message_check accepted) says of batching what the
 * job allows: no "batch" for a job of no batch (key NULL); for a job of batch key, a "batch" with
 * that key (or none, when the job ended before its checks), non-negative run counts and kept
 * bytes within the budget, and every run's "reference" one of shared, kept, ran. *why says
 * what is wrong. */
int gpu_result_batch_valid(json_t *res, const char *key, const char **why);
/* Fills r from res, the "result" of a message gpu_message_check accepted. */
void gpu_result_fill(const problem *p, json_t *res, kv_result *r);
/* Baseline medians for a problem on a GPU model (0 when unknown). */
void baselines_lookup(const problem *p, const char *gpu_name, double *eager_ms, double *compile_ms);
/* The string obj[key] into dst (n bytes), "" when absent or not a string. */
void gpu_json_copy_str(char *dst, size_t n, json_t *obj, const char *key);

#endif
