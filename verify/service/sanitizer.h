/* sanitizer: the second memory wall. A candidate the GPU worker labels correct runs once
 * more, at small dims with exact-size buffers, under NVIDIA compute-sanitizer: memcheck
 * (every access inside an allocation, byte for byte: one element past the end included) and
 * racecheck (shared-memory hazards; inline with --sanitizer all, or deferred: `kverify
 * racecheck`, sanitizer_racecheck). A finding makes the verdict unsafe; what the tool said
 * goes into the evidence ("sanitizer"). */
#ifndef KC_SANITIZER_H
#define KC_SANITIZER_H
#include "common/problem.h"
#include "verify/service/verify.h"

/* Runs the tools opt->sanitize asks for on GPU `device` and amends r (verdict, message,
 * evidence). Returns -1 (r untouched, err set) only when the run was cut short by a signal
 * kverify did not send: an interrupted verification stays pending. */
/* drawn: a dims set drawn for this verification ({name: value}, may be NULL): memcheck runs on
 * it as well as on the small dims, so it sees irregular sizes. */
int sanitizer_check(const kv_options *opt, int device, const problem *p, uint64_t seed, json_t *drawn,
                    kv_result *r, strbuf *err);
/* What the deferred race check (`kverify racecheck`) found: no hazard (the job ran and the tool
 * exited 0), a hazard (r's verdict is now unsafe), the candidate failed under the tool (r's
 * verdict is now timeout or runtime_error), or no check (the tool could not run, or ended
 * otherwise; r's verdict unchanged). */
enum sanitizer_race { SANITIZER_RACE_CLEAN, SANITIZER_RACE_HAZARD, SANITIZER_RACE_FAILED,
                      SANITIZER_RACE_NOT_RUN };
/* racecheck alone, one execution at the small dims with seed, on GPU device, in a process of its
 * own (as sanitizer_check runs it): r needs the source, cubin and arch; its verdict and message
 * change as sanitizer_check would change them, and the tool's run goes into its evidence as
 * "racecheck". Returns -1 (err set, *outcome not set) like sanitizer_check. */
int sanitizer_racecheck(int device, const problem *p, uint64_t seed, kv_result *r,
                        enum sanitizer_race *outcome, strbuf *err);
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
