/* sanitizer: the second memory wall. A candidate the GPU worker labels correct runs once
 * more, at small dims with exact-size buffers, under NVIDIA compute-sanitizer: memcheck
 * (every access inside an allocation, byte for byte: one element past the end included) and
 * racecheck (shared-memory hazards). A finding makes the verdict unsafe; what the tool said
 * goes into the evidence ("sanitizer"). */
#ifndef KC_SANITIZER_H
#define KC_SANITIZER_H
#include "common/problem.h"
#include "verify/service/verify.h"

/* Runs the tools opt->sanitize asks for on GPU `device` and amends r (verdict, message,
 * evidence). Returns -1 (r untouched, err set) only when the run was cut short by a signal
 * kverify did not send: an interrupted verification stays pending. */
int sanitizer_check(const kv_options *opt, int device, const problem *p, uint64_t seed,
                    kv_result *r, strbuf *err);
/* Where compute-sanitizer is: $KC_COMPUTE_SANITIZER, $CUDA_HOME/bin, /usr/local/cuda/bin.
 * Returns 0 when found. */
int sanitizer_path(strbuf *out);
/* Starts GPU device's memcheck process ahead of its first candidate (and compiles the harness
 * it needs), so no verification waits for the tool's start-up; does nothing when the options
 * run no sanitizer or it is not installed. Call it holding the device, as sanitizer_check. */
void sanitizer_warm(const kv_options *opt, int device);
/* The harness compile sanitizer_warm needs, done beforehand without holding any device. */
void sanitizer_prepare(const kv_options *opt);
/* Ends the tool processes kept running between candidates (memcheck's, one per GPU). */
void sanitizer_shutdown(void);

#endif
