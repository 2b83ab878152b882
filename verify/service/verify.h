/* verify: the verification service used by kverify and kcollect.
 * Stages: extract -> policy -> compile (sandboxed NVRTC child process) ->
 * GPU worker (kverify-gpu, one process per GPU: correctness over seeds and alt
 * dims, then timing) -> a result with verdict, flags and evidence.
 * kv_verify() is thread-safe and blocking: callers may verify many candidates
 * at once from several threads; compiles run in parallel CPU processes while
 * the GPU workers take one candidate at a time. */
#ifndef KC_VERIFY_H
#define KC_VERIFY_H
#include "common/db.h"
#include "common/problem.h"
#include "common/strbuf.h"
#include <jansson.h>
#include <stdint.h>

#define KV_MAX_SEEDS 16
#define KV_MAX_HIDDEN 8 /* hidden dims sets drawn per verification */

typedef struct kv_options {
    int compile_only;     /* no GPU: stop after compile, verdict "compiled" */
    int n_seeds;          /* default 5 */
    uint64_t seeds[KV_MAX_SEEDS]; /* used when fixed_seeds; else fresh random seeds */
    int fixed_seeds;
    int no_timing;        /* correctness only */
    int compile_procs;    /* parallel compile processes (default: CPU count, at most 8) */
    int gpus;             /* GPU workers (default: all visible GPUs) */
    double timing_cap_ms; /* time cap of the timing stage (default 1000) */
    double timing_noise;  /* extra timed reps until the median's relative standard error is
                             below this (default 0.005; --timing-noise takes it in percent) */
    const char *arch;     /* NVRTC arch, default "sm_90" (from the device when present) */
    const char *baselines_dir; /* default <problems root>/<suite>/baselines */
    int n_hidden;         /* dims sets drawn per verification from the manifest's "hidden"
                             generator (default 2; 0 none) */
    uint64_t hidden_seed; /* the draws' seed when fixed_hidden_seed (reproducing a label); */
    int fixed_hidden_seed; /* else a fresh secret seed per verification, recorded */
    int sanitize;         /* compute-sanitizer on correct candidates: 0 none, 1 memcheck,
                             2 memcheck and racecheck (default 1; sanitizer.h) */
    int batch_max;        /* candidates of one problem that `kverify run` and serve verify as
                             one batch (default 1: none; batch.h) */
    uint64_t batch_bytes; /* device memory a GPU worker keeps batches' reference outputs in
                             (default 4 GiB) */
} kv_options;

#define KV_TIMING_NOISE 0.005 /* default timing_noise */
#define KV_TIMING_NOISE_MIN 0.0001 /* the smallest --timing-noise (0.01%) */

typedef struct kv_timing {
    double median_ms, mean_ms, stdev_ms, min_ms, p10_ms, p90_ms;
    int n;
    double cupti_ms;          /* sum of per-kernel device time of one launch unit (median) */
    double check_device_ms;   /* the same in the checking runs (median), 0 when unknown */
    int checked_reps;         /* timed reps whose output was compared with the reference */
    double gbps, tflops;      /* achieved, from the manifest's bytes and flops */
    double eager_ms, compile_ms;     /* baselines; 0 when unknown */
    double speedup_eager, speedup_compile; /* 0 when unknown */
    double sm_clock_mhz;      /* the SM clock measured before the timed runs (median), 0 unknown */
} kv_timing;

typedef struct kv_result {
    char verdict[24];   /* extract_error policy_violation compile_error launch_error
                           runtime_error timeout mismatch unsafe correct | compiled */
    strbuf flags;       /* comma separated: alt_shape_fail, nondeterministic, ... */
    strbuf message;     /* one line: what happened */
    strbuf source;      /* the extracted kernel source */
    strbuf compile_log; /* sanitized NVRTC log */
    int compile_stage_ok;
    int keeps_state;     /* the module has device globals: reloaded before each execution */
    double compile_ms;
    strbuf kernels_json; /* [{"name", "registers", "shared_bytes", "local_bytes", ...}] */
    strbuf evidence_json; /* per run: dims, seed, errors, worst index, checksums */
    double max_abs_err, max_rel_err, rel_l2_err;
    int has_errors;
    int timed;
    kv_timing timing;
    strbuf seeds;        /* comma separated */
    char gpu_name[128], driver_version[32], cuda_version[32], nvrtc_version[32];
    char arch[16];
    double gpu_ms;       /* time the GPU worker spent on this candidate */
    double sanitizer_ms; /* of which the client's sanitizer check (whole, start to answer) */
    double ipc_at[3];    /* monotonic ms: job sent, result read, result filled in (make bench) */
    double compiled_at;  /* monotonic ms: the candidate and its reference compiled (start-up split) */
    strbuf cubin;        /* internal: the compiled module between stages */
} kv_result;

typedef struct kv_service kv_service;

void kv_options_default(kv_options *o);
int kv_service_start(const kv_options *o, kv_service **out, strbuf *err);
void kv_service_stop(kv_service *s);
/* GPU worker processes of the service (0 in compile-only mode). */
int kv_service_gpu_workers(kv_service *s);
/* GPU workers busy right now, and candidates waiting for one (progress displays). */
int kv_service_gpu_busy(kv_service *s, int *waiting);
/* The response may be a whole LLM answer (the code block is extracted) or bare source. */
int kv_verify(kv_service *s, const problem *p, const char *response, kv_result *r, strbuf *err);

/* Batched verification (issue 37; verify/service/batch.h): the candidates of one problem verified
 * as one batch share its secret seeds and dims sets (fresh for every batch, never reused), and a
 * GPU worker that runs several of them compares later ones with the reference outputs it kept
 * from the first, instead of running the reference again; every candidate still gets fresh
 * poison, guard content, walls and every check. Use it only for candidates that were all written
 * before any of them is verified (a `kverify run`, one serve request): never where one's
 * feedback could reach the writer of another (kcollect's turns). kv_batch_new draws the seeds
 * (the fixed ones of --seeds and --hidden-seed when given) and a fresh key; kv_verify_in verifies
 * one candidate of the batch (thread-safe; b NULL: kv_verify); kv_batch_end, once none of its
 * verifications is in flight, frees it and lets the GPU workers free its reference outputs. */
typedef struct kv_batch kv_batch;
kv_batch *kv_batch_new(kv_service *s, const problem *p);
int kv_verify_in(kv_service *s, kv_batch *b, const problem *p, const char *response, kv_result *r,
                 strbuf *err);
void kv_batch_end(kv_service *s, kv_batch *b);
void kv_result_init(kv_result *r);
void kv_result_free(kv_result *r);
/* Exit status of kverify check for a verdict: 0 correct/compiled, 1 incorrect, 2 error... */
int kv_verdict_exit_code(const char *verdict);
/* Records the result for a candidate (compiles, verifications, timings rows; status). The caller
 * owns the transaction. */
int kv_record(sqlite3 *db, int64_t candidate_id, const kv_result *r, strbuf *err);
/* The feedback the model sees next turn: verdict plus the useful evidence. */
void kv_feedback(const problem *p, const kv_result *r, strbuf *out);
/* The result as JSON (kverify --json). */
void kv_result_json(const problem *p, const kv_result *r, strbuf *out);
/* Sets key in the result's evidence (an object; created when there is none) to value, which it
 * takes. report.c */
void kv_result_set_evidence(kv_result *r, const char *key, json_t *value);
/* Parses a --sanitizer value into kv_options.sanitize: "none", "memcheck" or "all" (memcheck
 * and racecheck). sanitizer.c */
int sanitizer_mode_parse(const char *s, int *mode);

/* The processes the service starts are this tool (`kverify compile-server`) and kverify-gpu
 * (programs.h says where they are). */
/* The compile server's side: `kverify compile-server [--no-sandbox]`. Returns the exit code. */
int compile_server_main(int no_sandbox);

#endif
