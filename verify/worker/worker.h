/* worker: the GPU side of kverify (kverify-gpu, the only binary that loads
 * libcuda and CUPTI). One process per GPU takes jobs over a pipe: it runs a
 * compiled candidate's launch unit on seeded inputs with poisoned outputs and
 * guard bands, compares with the trusted reference, then times it. Sticky CUDA
 * errors end the process (the host restarts it). */
#ifndef KC_WORKER_H
#define KC_WORKER_H
#include "common/candidate.h"
#include "common/problem.h"
#include "common/strbuf.h"
#include "verify/worker/worker_profile.h"

#include <cuda.h>
#include <jansson.h>
#include <stdint.h>

#define WK_GUARD_BYTES (64 * 1024)       /* at least this much mapped guard before a buffer */
#define WK_ALIGN 256                     /* buffer start alignment (cudaMalloc's guarantee) */
#define WK_WALL_BYTES (1ull << 30)       /* unmapped address space on each side of a mapping */
#define WK_VEC_ALIGN 16                  /* a buffer's start when it ends flush (a float4's size) */
/* The poison of outputs and scratch: NaN in every float dtype, as the guard bands' content is
 * (harness.cu guard_byte), so an over-read that reaches an output shows (docs/INTEGRITY.md,
 * "Walls") */
#define WK_POISON 0xFF
#define WK_SIMPLEX_PARTS 4096 /* row parts of a simplex fill (normalise_simplex) */
#define WK_MAX_HIDDEN 8                  /* random hidden dims sets run per job */
#define WK_MAX_COVER 160                 /* boundary + stratified sets run per job */
#define WK_REUSE_BYTES (32u << 20)       /* a mapping this small is reused for any smaller set */
#define WK_SUM_SLOTS 80                  /* >= 3 * KC_MAX_TENSORS + KC_MAX_SCRATCH + 1 (the watch slot, last) */
#define WK_MAX_SAMPLES 64                /* timing samples from the checking runs, per job */
#define WK_PRINTF_KEEP 8192              /* device printf bytes kept as evidence per job */
#define WK_PRINTF_FIFO (1 << 20)         /* the driver's device printf buffer */

typedef struct wk_gpu {
    int ordinal;
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUevent ev_start, ev_stop; /* around every execution of a candidate's launch unit */
    CUmodule harness;
    CUfunction k_simplex_part, k_simplex_apply; /* long rows of a simplex, in parts */
    CUfunction k_fill, k_fill_secrets, k_simplex, k_guard, k_checksum, k_compare, k_worst, k_spin, k_clock;
    CUfunction k_guard_fill, k_guard_ranges;
    CUfunction k_mask, k_scrub_shared, k_scrub_local; /* batched verification (worker_batch.c) */
    unsigned long long guard_key; /* the guard bands' content (harness.cu guard_byte), per run */
    unsigned long long sum_key;   /* the checksums' secret key (harness.cu word_term), per process */
    CUdeviceptr scratch_u64; /* small device buffer for the comparison's statistics */
    CUdeviceptr simplex_parts; /* WK_SIMPLEX_PARTS (max, sum) pairs of normalise_simplex */
    CUdeviceptr sums;        /* WK_SUM_SLOTS checksums and guard counts */
    CUdeviceptr clock_probe; /* kc_clock_probe's two counters */
    double peak_clock_mhz;   /* the highest SM clock a warm-up probe has read */
    int warm_probes;         /* warm-ups so far (the first one learns the peak) */
    CUdeviceptr flush;       /* 2x L2, written between timed runs */
    size_t flush_bytes;
    char name[128], arch[16];
    char driver[32]; /* the NVIDIA driver (580.159.04), else the driver API version */
    char cuda[16];   /* the CUDA version kverify-gpu was built with */
    int driver_version, sms, l2_bytes;
    int persisting_l2; /* the persisting-L2 limit could be set (to 0): reset lines before runs */
    int pageable_access; /* device code can reach pageable host memory (HMM or ATS): recorded */
    size_t map_granularity; /* of CUDA virtual memory mappings on this device */
    int smem_optin;         /* the largest dynamic shared memory a block may ask for */
    int threads_per_sm;     /* resident threads an SM holds at most */
    double open_init_ms, open_context_ms; /* wk_gpu_open's driver load and cuInit; its context,
                                             stream and events (issue 37's start-up split) */
} wk_gpu;

/* A device buffer between memory walls (CUDA virtual memory management): an address range of
 * WK_WALL_BYTES + map_bytes + WK_WALL_BYTES is reserved and only the middle is mapped. The
 * buffer ends at the end of the mapping, short of it only by its padding to WK_ALIGN, so an
 * access past its end (beyond that padding) or far past either end faults; the mapped bytes
 * before it (at least WK_GUARD_BYTES) and the padding after it hold the guard content, checked
 * after every execution. exact: a plain allocation of the buffer's bytes and nothing else
 * (the compute-sanitizer run, which checks bounds byte for byte). */
typedef struct wk_buffer {
    CUdeviceptr reserved, base, ptr; /* reservation, mapping, buffer */
    size_t reserved_bytes, map_bytes;
    CUmemGenericAllocationHandle handle;
    int exact;
    int front; /* placed flush against the wall before it (else: ending as close to the wall
                * after it as WK_VEC_ALIGN allows) */
    size_t bytes;
    int64_t numel;
    enum kc_dtype dtype;
} wk_buffer;

/* A compiled module and its parsed launch unit. */
typedef struct wk_unit {
    CUmodule module;
    const char *cubin; /* the job's module image, reloaded before each execution ... */
    int keeps_state;   /* ... when it has device globals (policy_module_keeps_state) */
    launch_unit lu;
    CUfunction funcs[KC_MAX_LAUNCHES];
} wk_unit;

/* Why a step failed: the verdict it leads to. */
typedef struct wk_failure {
    char verdict[24];
    strbuf message;
    int fatal; /* sticky error: the process must end after reporting */
} wk_failure;

/* worker_channel.c: results on a private descriptor; device printf captured apart */
int wk_channel_open(strbuf *err);
void wk_channel_set_job(json_int_t job);
int wk_channel_send(json_t *msg);
void wk_printf_drain(void);
void wk_printf_reset(void);
json_t *wk_printf_evidence(void); /* NULL when nothing was printed */

/* worker_phases.c: the job's wall time per phase (evidence stage_ms.phases) */
enum wk_phase {
    WK_PH_LOAD,      /* problem manifest and modules */
    WK_PH_BUFFERS,   /* buffer mappings, guard bands, scratch */
    WK_PH_INPUTS,    /* seeded inputs and their checksums */
    WK_PH_PREPARE,   /* poisoned outputs and scratch, module reload, L2 flush */
    WK_PH_CANDIDATE, /* the candidate's checking runs */
    WK_PH_CUPTI,     /* collecting CUPTI's kernel records */
    WK_PH_SAFETY,    /* guard bands and input checksums after a run */
    WK_PH_REFERENCE, /* the reference's runs */
    WK_PH_COMPARE,   /* output comparison, output checksums, scrubbing */
    WK_PH_TIMED,     /* the timed reps' windows */
    WK_PH_SCRUB,     /* waiting, before a timing sample, for the driver's clear of freed memory */
    WK_PH_N
};
void wk_phase_reset(void);
/* Adds the time since since_ms to ph; returns now (the start of the next step). */
double wk_phase_add(enum wk_phase ph, double since_ms);
json_t *wk_phase_json(void);
/* The runs that follow belong to run_name's family (its dims name without the index: "bound"
 * for "bound12"); the phases' time also adds up per family. */
void wk_phase_family(const char *run_name);
json_t *wk_phase_families_json(void);

/* worker_driver.c: libcuda, loaded at the first driver call (kverify-gpu is not linked with it).
 * 0 when every driver function the worker calls resolved; else -1 and, in err, why not ("the
 * NVIDIA driver (libcuda.so.1) cannot be loaded: ..."), and every driver call fails. */
int wk_driver_load(strbuf *err);

/* worker_gpu.c */
/* harness_cubin: the harness module compiled by the caller, or NULL to compile it here. The
 * driver is loaded first (wk_driver_load's message when it does not). */
int wk_gpu_open(wk_gpu *g, int ordinal, const strbuf *harness_cubin, strbuf *err);
int wk_fail_cuda(wk_failure *f, const char *verdict, CUresult rc, const char *what);
int wk_is_sticky(CUresult rc);
/* A CUDA error while the candidate's launch unit ran: an illegal address (an access into the
 * unmapped walls around its buffers, or anywhere else no buffer is) is unsafe, the rest
 * runtime_error. */
int wk_fail_candidate(wk_failure *f, CUresult rc, const char *what);
const char *wk_cuda_error(CUresult rc);
int wk_buffer_alloc(wk_gpu *g, wk_buffer *b, enum kc_dtype dtype, int64_t numel, strbuf *err);
/* A plain allocation of exactly the buffer's bytes (no guards, no walls): for compute-sanitizer. */
int wk_buffer_alloc_exact(wk_buffer *b, enum kc_dtype dtype, int64_t numel, strbuf *err);
void wk_buffer_free(wk_buffer *b);
int wk_buffer_reset_guards(wk_gpu *g, wk_buffer *b);
int wk_buffer_poison(wk_gpu *g, wk_buffer *b);
/* Reductions into 64-bit sum slots on the device (WK_SUM_SLOTS of them), launched without
 * waiting; wk_sums_read waits once for all of them. */
CUdeviceptr wk_sum_slot(const wk_gpu *g, int slot);
CUresult wk_sums_clear(wk_gpu *g, int n);
CUresult wk_sums_read(wk_gpu *g, uint64_t *out, int n);
/* Adds the count of guard bytes changed before and after the buffer to slot. */
int wk_buffer_guard_damage_into(wk_gpu *g, const wk_buffer *b, CUdeviceptr slot);
/* A new guard key: the guard bands written after it (wk_buffer_reset_guards) hold content that
 * no kernel can know in advance; every run of a job takes one before its buffers are set up. */
void wk_guard_rekey(wk_gpu *g);
/* Every guard band of a run's buffers as two tables (harness.cu guard_table, same layout), the
 * zones near the buffers and the far rest, each checked in one launch after each execution;
 * when active (a checking run that is not a timing sample) the near zones also between the
 * candidate's launches, so a write beside a buffer that a later launch puts back is still seen;
 * those changed bytes add up in slot WK_WATCH_SLOT, which the caller clears before the
 * launches. */
#define WK_WATCH_RANGES 128
#define WK_WATCH_SLOT (WK_SUM_SLOTS - 1)
#define WK_WATCH_EVERY 256
_Static_assert(WK_WATCH_SLOT >= 3 * KC_MAX_TENSORS + KC_MAX_SCRATCH, "the watch slot is free");
_Static_assert(WK_WATCH_RANGES >= 2 * (2 * KC_MAX_TENSORS + KC_MAX_SCRATCH), "every buffer watched");
#define WK_NEAR_BYTES (64 * 1024) /* the guard zone on each side of a buffer that holds the key's
                                   * content and is watched between launches */
typedef struct wk_guard_table {
    struct {
        struct {
            unsigned long long p;
            long long n;
        } r[WK_WATCH_RANGES];
    } r; /* a kernel parameter: 2 KiB, within the 4 KiB every GPU takes */
    int n_ranges;
    long long blocks;
} wk_guard_table;
typedef struct wk_watch {
    wk_guard_table near, far; /* the zones beside the buffers (key content), the rest (0xFF) */
    int active;
    long long checks;
} wk_watch;
/* The tables of the guard bands of bufs[0..n) (inactive). */
void wk_watch_set(const wk_buffer *bufs, int n, wk_watch *w);
/* Adds the count of changed guard bytes of every range of both tables to slot. */
int wk_watch_count_into(wk_gpu *g, const wk_watch *w, CUdeviceptr slot);
/* Before launch launch_index of the unit (w may be NULL or inactive): checks the table before
 * every launch but the first, up to WK_WATCH_EVERY, then before every WK_WATCH_EVERY-th. */
int wk_watch_check(wk_gpu *g, wk_watch *w, long long launch_index);
int wk_buffer_checksum_into(wk_gpu *g, const wk_buffer *b, CUdeviceptr slot);
/* The value classes of one checked run (harness.cu's fill_mode, same layout): structured
 * inputs, secret spikes, a large magnitude, special values (problem.h problem_values). */
enum { WK_FILL_STRUCTURE = 1, WK_FILL_SPIKES = 2, WK_FILL_LARGE = 4, WK_FILL_SPECIAL = 8 };
typedef struct wk_fill_mode {
    int mode, specials; /* specials: count in bits 0-3, then a kc_special code per 4 bits */
    double large, spike;
    long long row_stride, cols; /* set by wk_fill_input from the tensor's shape */
} wk_fill_mode;
/* sum: a slot that gets the checksum of the generated input (0: none); mode: NULL or the
 * run's value classes. */
int wk_fill_input(wk_gpu *g, wk_buffer *b, const tensor_spec *t, const dimset *dims, uint64_t seed,
                  unsigned tensor_index, CUdeviceptr sum, const wk_fill_mode *mode, strbuf *err);
/* What kc_compare and kc_worst_index write (harness.cu's cmp_stats, field for field): counts,
 * maxima as the bits of non-negative doubles (atomicMax on the bits), sums of squares. */
typedef struct wk_cmp_stats {
    unsigned long long n_bad, nan_mismatch, max_abs_bits, max_rel_bits, worst_bits, worst_index;
    double sum_sq_diff, sum_sq_ref;
} wk_cmp_stats;

static inline double wk_bits_to_double(unsigned long long b)
{
    union {
        unsigned long long u;
        double d;
    } v = {.u = b};
    return v.d;
}

/* Unmaps every mapping the pool keeps (KC_MAP_POOL; see worker_gpu.c). */
void wk_buffer_pool_drain(void);
/* Makes b hold numel elements of dtype, reusing its mapping when it is big enough and not far
 * bigger (WK_REUSE_BYTES), else mapping anew; placed as front says (wk_buffer_place). */
int wk_buffer_resize(wk_gpu *g, wk_buffer *b, enum kc_dtype dtype, int64_t numel, strbuf *err);
/* Places b's start flush against the unmapped wall before it (front: reading x[-1] faults), or
 * its end as close to the wall after it as a 16-byte start allows; guards must be reset after. */
void wk_buffer_place(wk_buffer *b, int front);
int wk_launch_harness(wk_gpu *g, CUfunction f, long long n, void **args);
/* Leftovers on the chip between the jobs of a batch (worker_batch.c): every word of every SM's
 * shared memory, and the first WK_SCRUB_LOCAL_BYTES of every thread slot's local memory,
 * overwritten; the stream is left with the work queued. */
#define WK_SCRUB_LOCAL_BYTES 4096 /* harness.cu SCRUB_LOCAL_WORDS * 4 */
int wk_scrub_on_chip(wk_gpu *g);
/* The local memory one thread of the unit's kernels may use: the largest frame of its kernels
 * plus the context's stack limit (recursion grows past a frame into the stack). */
size_t wk_unit_local_bytes(const wk_unit *u);
#define WK_IDLE_MS 500.0
#define WK_WARMUP_MS 50.0
#define WK_WARM_CLOSE 0.97 /* a warm clock: this share of the highest one seen */
/* Brings an idle GPU (idle_ms since its last job) back to working clocks; the ms it spent. */
double wk_gpu_warm_up(wk_gpu *g, double idle_ms);
/* Device memory of `bytes` went back to the driver (cuMemRelease, cuMemFree), which clears it
 * in the background, slowing bandwidth-bound kernels meanwhile. */
void wk_note_release(size_t bytes);
/* Gives back the memory of the mappings freed since the last call (they are unmapped at once;
 * their memory is released here, after a job's timing samples). */
void wk_release_deferred(void);
/* Before a timing sample: waits until the clears of the memory released so far should be
 * over (at most WK_SCRUB_WAIT_MAX_MS); the wait goes to WK_PH_SCRUB. */
void wk_scrub_wait(void);
int wk_flush_l2(wk_gpu *g);
/* The SM clock probe: launched on the stream (about 0.1 ms), read after the stream has
 * synchronised; the clock in MHz, 0 when the probe failed. */
int wk_clock_probe_launch(wk_gpu *g);
double wk_clock_probe_mhz(wk_gpu *g);

typedef struct wk_layers wk_layers; /* worker_layers.c */

/* worker_unit.c: loading a module and running a launch unit */
int wk_unit_load(wk_unit *u, const char *cubin, const char *source, const problem *p,
                 wk_failure *f);
int wk_unit_reload(wk_unit *u, wk_failure *f);
void wk_unit_free(wk_unit *u);
/* buffers: inputs, outputs, then scratch, as candidate.h indexes tensors. */
int wk_unit_launch(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims, wk_buffer *buffers,
                   wk_watch *watch, wk_failure *f);
/* As wk_unit_launch (no watch), with each layer point of the unit passed to wk_layers_point. */
int wk_unit_launch_layers(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims,
                          wk_buffer *buffers, wk_layers *layers, wk_failure *f);

/* worker_layers.c: the diagnosis run after a mismatch (docs/LEVEL3.md, "Which layer went wrong
 * first"). wk_layers_plan matches the reference's and the candidate's layer points by name
 * under dims and maps two arenas for the earliest pairs (both together at most 1 GiB or a
 * quarter of free memory); NULL when no name is in common or nothing fits. Each unit then runs
 * through wk_unit_launch_layers with its side set (0 the reference, 1 the candidate): at each
 * layer point, wk_layers_point copies the region into the side's arena in stream order.
 * wk_layers_evidence compares the pairs both sides reached (kc_compare, kc_worst_index) and
 * returns evidence.layers. */
wk_layers *wk_layers_plan(const launch_unit *ref, const launch_unit *cand, const dimset *dims);
void wk_layers_side(wk_layers *L, int side);
int wk_layers_point(wk_gpu *g, wk_layers *L, const layer_spec *l, const dimset *env,
                    const wk_buffer *buf);
json_t *wk_layers_evidence(wk_gpu *g, wk_layers *L, const char *dims_name, const char *seed,
                           double atol, double rtol);
void wk_layers_free(wk_layers *L);

/* worker_batch.c: the reference outputs kept for the jobs of a batch (issue 37;
 * verify/service/batch.h has the rules both sides share) */
#define WK_MAX_RUNS 512          /* runs of one job a batch's plan lists */
#define WK_BATCH_SCOPES 8        /* batches whose outputs one worker keeps at once */
#define WK_BATCH_IDLE_MS 2000.0  /* a worker idle this long frees every batch's outputs */
struct wk_scope;
/* One job's part in its batch (zeroed: not a job of a batch). */
typedef struct wk_batch_job {
    char key[33];            /* the batch key (BATCH_KEY_HEX), "" when the job has none */
    int index;               /* the job's place in its batch, as the client counted */
    uint64_t budget;         /* device bytes the worker may keep outputs of batches in */
    char from[17];           /* the candidate's source sha256, first 16 digits */
    struct wk_scope *scope;  /* the batch's kept outputs (NULL: none can be kept) */
    int shared, kept, ran;   /* runs whose reference outputs were shared, kept, only run */
    int stale;               /* kept runs found not to match the run (recomputed; never expected) */
    int scrubbed;            /* the leftovers on the chip were overwritten before the job */
    size_t local_bytes;      /* local memory a thread of its candidate or reference may use */
    int restart;             /* more than the scrub covers: the worker ends after the job */
} wk_batch_job;
/* Frees the outputs of the batches in ended (the job's "batch_ended": keys whose batch ended). */
void wk_batch_forget(wk_gpu *g, json_t *ended);
/* Frees every batch's outputs (idle, or a changed store). */
void wk_batch_drop_all(wk_gpu *g);
/* Whether outputs of some batch are kept. */
int wk_batch_holding(void);
/* Opens the job's batch scope (id: the hash of its key and of everything the reference's
 * outputs depend on); its first job plans which of the job's n runs (run_bytes: their outputs'
 * bytes) are kept within bj->budget and maps the store. Without memory for it nothing is kept.
 * Until wk_batch_close, a scope dropped meanwhile (a changed store, memory the job's buffers
 * need) leaves bj->scope NULL: the job's later runs run the reference. */
void wk_batch_open(wk_gpu *g, wk_batch_job *bj, const char *id, const uint64_t *run_bytes, int n);
/* The job is over: its scope stays for the batch's next jobs. */
void wk_batch_close(wk_batch_job *bj);
/* The reference's outputs of run (the job's run_index-th run, run_key what it is, in_sums its
 * inputs' checksums) into outs[0..n_out) when an earlier job of the batch kept them: 1, with
 * *reference_ms the reference's measured time in that run (0: not measured there) and *from
 * the source prefix of the candidate whose job ran it; 0 when none is kept (the reference
 * runs); -1 when the store was changed (f: unsafe; every batch's outputs dropped) or a CUDA
 * call failed (f says which). */
int wk_batch_fetch(wk_gpu *g, wk_batch_job *bj, int run, const char *run_key, const uint64_t *in_sums,
                   int n_in, wk_buffer *outs, int n_out, double *reference_ms, const char **from,
                   wk_failure *f);
/* Keeps the reference's outputs the run just wrote into outs, when the plan keeps the run and no
 * job kept it yet: 1 kept, 0 not, -1 a CUDA call failed. */
int wk_batch_keep(wk_gpu *g, wk_batch_job *bj, int run, const char *run_key, const uint64_t *in_sums,
                  int n_in, const wk_buffer *outs, int n_out, double reference_ms);
/* After a job that ran candidate code: every kept output checksummed again. 0 intact; -1 when
 * one changed (f: unsafe, the job's candidate wrote into the store; every batch's outputs
 * dropped) or the check failed (f: runtime_error). */
int wk_batch_check(wk_gpu *g, wk_failure *f);
/* The evidence's "batch" of the job. */
json_t *wk_batch_evidence(const wk_batch_job *bj);

/* worker_check.c: a whole verification job */
/* cubin: the candidate's; ref_cubin: the reference's, compiled by the (trusted) client (NULL:
 * none was sent). */
json_t *wk_verify_job(wk_gpu *g, json_t *job, const char *source, const strbuf *cubin,
                      const strbuf *ref_cubin);
/* Progress to the host: the stage about to run and its deadline. */
void wk_progress(const char *stage, double deadline_ms);

/* worker_timing.c */
/* What the timing loop asks of the job around every rep (worker_check.c): the same
 * preparation as a checked run (fresh inputs and their checksums, poisoned outputs and scratch,
 * a freshly loaded module, cold L2), and after the rep the check of its inputs, guard bands
 * and outputs against the reference on the same inputs. */
typedef struct wk_rep_hooks {
    int (*prepare)(void *ctx, int rep, wk_failure *f);
    int (*check)(void *ctx, int rep, wk_failure *f); /* 0 pass, 1 mismatch, -1 failure */
    void *ctx;
} wk_rep_hooks;
/* The timing of a correct candidate: samples are the event times of its checking runs on the
 * default dims (one per seed, each prepared as a timed rep is and checked); extra reps on fresh
 * inputs (h, bufs) follow only while the noise criterion is unmet (bufs may be NULL when
 * kc_timing_enough holds already). Returns 0, 1 when an extra rep's output is wrong, -1 on
 * failure. check_device_ms: the unit's CUPTI device time in the checking rerun (0 unknown),
 * compared with the timed median. */
typedef struct wk_samples {
    double ms[WK_MAX_SAMPLES];        /* event time of each checking run on the default dims */
    double clock_mhz[WK_MAX_SAMPLES]; /* the SM clock measured just before it (0 unknown) */
    int plain[WK_MAX_SAMPLES];        /* the manifest's constants and unstructured inputs */
    int n;
} wk_samples;
int wk_time_unit(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims, wk_buffer *bufs,
                 double cap_ms, double noise_target, const wk_rep_hooks *h,
                 const wk_samples *samples, double check_device_ms, json_t *out, wk_failure *f);

#define WK_TIMING_NOISE 0.005 /* for a job without timing_noise: kv_options' default */
/* The launch unit between device events (phase: WK_PH_CANDIDATE or WK_PH_TIMED). A timing
 * sample passes clock_mhz: the SM clock probe runs just before the window and *clock_mhz
 * gets its reading (NULL: no probe). watch: see wk_unit_launch. */
int wk_timed_launch(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims, wk_buffer *bufs,
                    wk_watch *watch, enum wk_phase phase, int with_cupti, float *ms,
                    double *device_ms, double *clock_mhz, wk_failure *f);
/* CUPTI device time of the kernels launched between begin and end (the caller synchronises
 * before end); end returns milliseconds, or 0 when CUPTI is unavailable. */
int wk_cupti_begin(void);
double wk_cupti_end(int begun);
/* While set, wk_cupti_end's records are also added to profile by kernel name (kverify dump
 * --profile; worker_profile.h). */
void wk_cupti_profile_into(wk_kernel_profile *profile); /* NULL: totals only again */

/* worker_sanitize.c: one execution under compute-sanitizer (exact-size buffers) */
int wk_sanitize_serve(int device);

/* worker_dump.c */
/* profile_runs > 0: the reference runs that many more times under CUPTI, and meta.json's
 * "profile" lists its device time by kernel (also printed, the costliest first). */
int wk_dump(wk_gpu *g, const char *problem_id, uint64_t seed, const char *dims_name,
            const char *out_dir, int profile_runs, strbuf *err);

#endif
