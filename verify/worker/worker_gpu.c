/* worker_gpu: device set-up, the harness module, guarded buffers, seeded
 * inputs, guard checks and checksums for the GPU worker (see worker.h). */
#include "common/error.h"
#include "common/fsutil.h"
#include "verify/service/driver_version.h"
#include "verify/service/harness_module.h"
#include "verify/service/sandbox.h"
#include "verify/worker/worker.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>


const char *wk_cuda_error(CUresult rc)
{
    const char *name = NULL, *desc = NULL;
    cuGetErrorName(rc, &name);
    cuGetErrorString(rc, &desc);
    static __thread char buf[256];
    snprintf(buf, sizeof(buf), "%s (%d): %s", name ? name : "CUDA error", (int)rc,
             desc ? desc : "");
    return buf;
}

int wk_is_sticky(CUresult rc)
{
    switch (rc) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_UNKNOWN:
        return 1;
    default:
        return 0;
    }
}

int wk_fail_cuda(wk_failure *f, const char *verdict, CUresult rc, const char *what)
{
    snprintf(f->verdict, sizeof(f->verdict), "%s", verdict);
    sb_reset(&f->message);
    sb_addf(&f->message, "%s: %s", what, wk_cuda_error(rc));
    f->fatal = wk_is_sticky(rc);
    return -1;
}

int wk_fail_candidate(wk_failure *f, CUresult rc, const char *what)
{
    if (rc != CUDA_ERROR_ILLEGAL_ADDRESS)
        return wk_fail_cuda(f, "runtime_error", rc, what);
    wk_fail_cuda(f, "unsafe", rc, what);
    sb_adds(&f->message, " (the kernel accessed memory outside its buffers: every buffer sits "
                         "between unmapped address ranges)");
    return -1;
}

static int load_harness(wk_gpu *g, const strbuf *given, strbuf *err)
{
    strbuf cubin = STRBUF_INIT;
    if (!given && harness_module_cubin(g->arch, &cubin, NULL, err))
        return -1;
    CUresult rc = cuModuleLoadData(&g->harness, given ? given->buf : cubin.buf);
    sb_free(&cubin);
    if (rc != CUDA_SUCCESS)
        return kc_fail(err, "loading the harness module: %s", wk_cuda_error(rc));
    struct {
        CUfunction *f;
        const char *name;
    } fns[] = {{&g->k_fill, "kc_fill"},           {&g->k_fill_secrets, "kc_fill_secrets"},
               {&g->k_simplex, "kc_simplex"},
               {&g->k_simplex_part, "kc_simplex_part"}, {&g->k_simplex_apply, "kc_simplex_apply"},
               {&g->k_guard, "kc_guard_check"},   {&g->k_checksum, "kc_checksum"},
               {&g->k_guard_fill, "kc_guard_fill"}, {&g->k_guard_ranges, "kc_guard_check_ranges"},
               {&g->k_compare, "kc_compare"},     {&g->k_worst, "kc_worst_index"},
               {&g->k_spin, "kc_spin"},           {&g->k_clock, "kc_clock_probe"},
               {&g->k_mask, "kc_mask"},           {&g->k_scrub_shared, "kc_scrub_shared"},
               {&g->k_scrub_local, "kc_scrub_local"}};
    for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
        if (cuModuleGetFunction(fns[i].f, g->harness, fns[i].name) != CUDA_SUCCESS)
            return kc_fail(err, "harness kernel %s missing", fns[i].name);
    return 0;
}

/* The kernel module's version (580.159.04), else the driver API version. */
static void read_driver_version(wk_gpu *g)
{
    snprintf(g->driver, sizeof(g->driver), "api %d.%d", g->driver_version / 1000,
             (g->driver_version % 1000) / 10);
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f)
        return;
    char line[512];
    char version[32];
    if (fgets(line, sizeof(line), f) &&
        driver_version_from_proc_line(line, version, sizeof(version)) == 0)
        snprintf(g->driver, sizeof(g->driver), "%s", version);
    fclose(f);
}

static int read_device_facts(wk_gpu *g, strbuf *err)
{
    int major = 0, minor = 0;
    cuDeviceGetName(g->name, sizeof(g->name), g->dev);
    cuDriverGetVersion(&g->driver_version);
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, g->dev);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, g->dev);
    cuDeviceGetAttribute(&g->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, g->dev);
    cuDeviceGetAttribute(&g->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, g->dev);
    cuDeviceGetAttribute(&g->smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                         g->dev);
    cuDeviceGetAttribute(&g->threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                         g->dev);
    /* With HMM (open kernel modules) or ATS a kernel can dereference the worker's own host
     * memory: a residual channel (docs/INTEGRITY.md), so every result says whether it was open. */
    cuDeviceGetAttribute(&g->pageable_access, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, g->dev);
    snprintf(g->arch, sizeof(g->arch), "sm_%d%d", major, minor);
    snprintf(g->cuda, sizeof(g->cuda), "%d.%d", CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10);
    read_driver_version(g);
    if (major < 7)
        return kc_fail(err, "GPU %s (%s) is too old", g->name, g->arch);
    return 0;
}

/* A bounded device printf buffer (the worker drains it after each synchronisation), and no
 * L2 set-aside for persisting accesses, so an access-policy hint cannot keep lines in L2
 * across the flush that precedes every checked and timed run. */
static int set_context_limits(wk_gpu *g, strbuf *err)
{
    CUresult rc = cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, WK_PRINTF_FIFO);
    if (rc != CUDA_SUCCESS)
        return kc_fail(err, "setting the printf buffer size: %s", wk_cuda_error(rc));
    g->persisting_l2 = cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0) == CUDA_SUCCESS;
    return 0;
}

static int read_map_granularity(wk_gpu *g, strbuf *err);

int wk_gpu_open(wk_gpu *g, int ordinal, const strbuf *harness_cubin, strbuf *err)
{
    memset(g, 0, sizeof(*g));
    g->ordinal = ordinal;
    if (getrandom(&g->sum_key, sizeof(g->sum_key), 0) != sizeof(g->sum_key))
        g->sum_key = (unsigned long long)(now_ms() * 1e3) * 0x9E3779B97F4A7C15ull ^ (unsigned long long)getpid();
    /* Modules load whole when loaded: no lazy loading inside a timed region, and a module
     * loaded for each execution of a launch unit costs the same in checks and timing. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    double t0 = now_ms();
    if (wk_driver_load(err))
        return -1;
    CUresult rc = cuInit(0);
    double t1 = now_ms();
    g->open_init_ms = t1 - t0;
    if (rc == CUDA_SUCCESS)
        rc = cuDeviceGet(&g->dev, ordinal);
    if (rc == CUDA_SUCCESS)
        rc = cuDevicePrimaryCtxRetain(&g->ctx, g->dev);
    if (rc == CUDA_SUCCESS)
        rc = cuCtxSetCurrent(g->ctx);
    if (rc == CUDA_SUCCESS)
        rc = cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING);
    if (rc == CUDA_SUCCESS)
        rc = cuEventCreate(&g->ev_start, CU_EVENT_DEFAULT);
    if (rc == CUDA_SUCCESS)
        rc = cuEventCreate(&g->ev_stop, CU_EVENT_DEFAULT);
    g->open_context_ms = now_ms() - t1;
    if (rc != CUDA_SUCCESS)
        return kc_fail(err, "GPU %d: %s", ordinal, wk_cuda_error(rc));
    if (read_device_facts(g, err) || read_map_granularity(g, err) ||
        load_harness(g, harness_cubin, err) ||
        set_context_limits(g, err))
        return -1;
    g->flush_bytes = (size_t)(g->l2_bytes > 0 ? g->l2_bytes : 50 << 20) * 2;
    if (cuMemAlloc(&g->flush, g->flush_bytes) != CUDA_SUCCESS ||
        cuMemAlloc(&g->scratch_u64, 256) != CUDA_SUCCESS ||
        cuMemAlloc(&g->simplex_parts, 16 * WK_SIMPLEX_PARTS) != CUDA_SUCCESS ||
        cuMemAlloc(&g->sums, 8 * WK_SUM_SLOTS) != CUDA_SUCCESS ||
        cuMemAlloc(&g->clock_probe, 16) != CUDA_SUCCESS)
        return kc_fail(err, "cannot allocate the harness buffers");
    return 0;
}

/* The properties of the device memory behind every buffer's mapping. */
static CUmemAllocationProp device_memory(const wk_gpu *g)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = g->dev;
    return prop;
}

static int read_map_granularity(wk_gpu *g, strbuf *err)
{
    CUmemAllocationProp prop = device_memory(g);
    CUresult rc = cuMemGetAllocationGranularity(&g->map_granularity, &prop,
                                                CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    if (rc != CUDA_SUCCESS || g->map_granularity == 0)
        return kc_fail(err, "virtual memory management is not available: %s", wk_cuda_error(rc));
    return 0;
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* Reserves the walls and the mapping's range, backs the middle with device memory, and makes
 * it readable and writable by this device only. */
static CUresult map_between_walls(wk_gpu *g, wk_buffer *b)
{
    CUmemAllocationProp prop = device_memory(g);
    CUmemAccessDesc access = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    b->reserved_bytes = b->map_bytes + 2 * WK_WALL_BYTES;
    CUresult rc = cuMemAddressReserve(&b->reserved, b->reserved_bytes, g->map_granularity, 0, 0);
    if (rc != CUDA_SUCCESS) {
        b->reserved = 0;
        return rc;
    }
    b->base = b->reserved + WK_WALL_BYTES;
    rc = cuMemCreate(&b->handle, b->map_bytes, &prop, 0);
    if (rc != CUDA_SUCCESS) {
        b->handle = 0;
        return rc;
    }
    rc = cuMemMap(b->base, b->map_bytes, 0, b->handle, 0);
    if (rc != CUDA_SUCCESS) {
        b->base = 0;
        return rc;
    }
    return cuMemSetAccess(b->base, b->map_bytes, &access, 1);
}

/* The guard content is written on the worker's stream, like everything else that touches the
 * buffer afterwards: a memset on the legacy default stream is not ordered with a non-blocking
 * stream, and when the GPU is shared it landed after the first kernels had written the buffer
 * (measured on the H100 beside a busy neighbour: a scratch buffer overwritten under a running
 * reference). */
/* ---- mappings kept for reuse (on by default; KC_MAP_POOL=0 turns it off) ----
 * The coverage runs give a job some 50 dims sets of every size, and a mapping that cannot hold
 * the next set, or is more than 4x too big for it, used to be unmapped and a new one mapped:
 * eight driver calls and a context synchronisation each time, which slow down sharply when
 * other processes map memory on the host's other GPUs, and the freshly created memory of the
 * next job's default buffers made its first timing samples slower. With the pool a freed
 * mapping (with its walls) is kept, up to WK_POOL_ENTRY_MAX each (a capacity set's tensor of
 * more than 2^31 elements fits) and WK_POOL_TOTAL_MAX in all, and the smallest kept one that
 * holds a new buffer with at most a 16th of it (or WK_REUSE_BYTES) to spare is taken instead
 * of mapping anew; when a mapping cannot be made, every kept one is given back first.
 * A kept mapping is poisoned whole when it is kept (it stays mapped: a wild pointer could
 * reach it), and every byte of it is written again before a candidate runs, as for a mapping
 * reused by wk_buffer_resize: the guard zones here, the buffer by its fill or poison before
 * every execution. */
#define WK_POOL_SLOTS 64
#define WK_POOL_ENTRY_MAX (16ull << 30)
#define WK_POOL_TOTAL_MAX (24ull << 30)
static wk_buffer pool[WK_POOL_SLOTS];
static int pool_n;
static size_t pool_total;

static int pool_enabled(void)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("KC_MAP_POOL");
        on = !(e && strcmp(e, "0") == 0);
    }
    return on;
}

/* ---- the driver's clear of released memory ----
 * Device memory given back to the driver (cuMemRelease of a mapping's last handle, cuMemFree)
 * is cleared in the background, and while it is, a bandwidth-bound kernel runs about 18%
 * slower: measured on the H100, 16 GiB released slowed a 4 GiB read from 1.43 to 1.70 ms for
 * 38 ms, 4 GiB for about 10 ms (about 420 GB/s; creating and mapping memory slows nothing). A
 * job's first timing samples often fell in the clear of the last job's buffers (level1/100:
 * 1.70, 1.70, 1.70, 1.44, 1.44 ms), and the noise criterion then asked for up to 18 extra
 * checked reps. So a mapping given back is unmapped at once (nothing can reach it) but its
 * memory is released only at wk_release_deferred, which the job calls after its timing samples
 * (its default runs), so that the clear overlaps the untimed coverage runs; a mapping that
 * cannot be made releases everything kept first. Every release is noted, and a timing sample
 * waits until the clears noted so far should be over, at a rate below the measured one (it
 * waits only after such a forced release). */
#define WK_SCRUB_BYTES_PER_MS 350e6 /* bytes cleared per ms: 420e6 measured, with a margin */
#define WK_SCRUB_WAIT_MAX_MS 500.0 /* a bound, not a budget: the whole of a 141 GB H200 is
                                    * 403 ms at the rate above, and a candidate's scratch (its
                                    * own sizes) released past the deferral cap must not reach
                                    * the next candidate's first samples */
#define WK_DEFERRED_MAX 256
#define WK_DEFERRED_MAX_BYTES (32ull << 30) /* beyond it the oldest goes back at once: other
                                              * processes on the GPU (the sanitizer's) need room */
static double scrub_until_ms;
static struct {
    CUmemGenericAllocationHandle handle;
    size_t bytes;
} deferred[WK_DEFERRED_MAX];
static int n_deferred;
static size_t deferred_bytes;

void wk_note_release(size_t bytes)
{
    double now = now_ms();
    if (scrub_until_ms < now)
        scrub_until_ms = now;
    scrub_until_ms += (double)bytes / WK_SCRUB_BYTES_PER_MS;
}

void wk_scrub_wait(void)
{
    double t0 = now_ms(), wait = scrub_until_ms - t0;
    if (wait <= 0)
        return;
    if (wait > WK_SCRUB_WAIT_MAX_MS)
        wait = WK_SCRUB_WAIT_MAX_MS;
    struct timespec ts = {(time_t)(wait / 1e3), (long)(fmod(wait, 1e3) * 1e6)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    wk_phase_add(WK_PH_SCRUB, t0);
}

static void release_handle(CUmemGenericAllocationHandle handle, size_t bytes)
{
    cuMemRelease(handle);
    wk_note_release(bytes);
}

void wk_release_deferred(void)
{
    for (int i = 0; i < n_deferred; i++)
        release_handle(deferred[i].handle, deferred[i].bytes);
    n_deferred = 0;
    deferred_bytes = 0;
}

/* Keeps a handle for wk_release_deferred, the oldest ones released first while the kept bytes
 * would pass WK_DEFERRED_MAX_BYTES or the slots are full. */
static void defer_release(CUmemGenericAllocationHandle handle, size_t bytes)
{
    if (bytes > WK_DEFERRED_MAX_BYTES) {
        release_handle(handle, bytes);
        return;
    }
    int oldest = 0;
    while (oldest < n_deferred &&
           (n_deferred - oldest == WK_DEFERRED_MAX || deferred_bytes + bytes > WK_DEFERRED_MAX_BYTES)) {
        release_handle(deferred[oldest].handle, deferred[oldest].bytes);
        deferred_bytes -= deferred[oldest++].bytes;
    }
    memmove(deferred, deferred + oldest, (size_t)(n_deferred - oldest) * sizeof(deferred[0]));
    n_deferred -= oldest;
    deferred[n_deferred].handle = handle, deferred[n_deferred++].bytes = bytes;
    deferred_bytes += bytes;
}

/* Unmaps and gives back a mapping and its walls, after the work in flight (wk_buffer_free);
 * its memory goes back at the next wk_release_deferred. */
static void release_mapping(wk_buffer *b)
{
    if (b->base)
        cuCtxSynchronize();
    if (b->exact && b->base) {
        cuMemFree(b->base);
        wk_note_release(b->bytes);
    }
    if (!b->exact && b->base)
        cuMemUnmap(b->base, b->map_bytes);
    if (b->handle)
        defer_release(b->handle, b->map_bytes);
    if (b->reserved)
        cuMemAddressFree(b->reserved, b->reserved_bytes);
    memset(b, 0, sizeof(*b));
}

/* Takes the smallest kept mapping of need bytes or more, and not much more; 1 when taken. */
static int pool_take(wk_buffer *b, size_t need)
{
    int best = -1;
    /* the rest of a mapping is far guard zone, read after every execution: a loose fit cost
     * level 1 1.9 s of guard checks over 100 verifications when 2x was allowed */
    size_t most = need + (need / 16 > WK_REUSE_BYTES ? need / 16 : WK_REUSE_BYTES);
    for (int i = 0; i < pool_n; i++)
        if (pool[i].map_bytes >= need && pool[i].map_bytes <= most &&
            (best < 0 || pool[i].map_bytes < pool[best].map_bytes))
            best = i;
    if (best < 0)
        return 0;
    b->reserved = pool[best].reserved, b->reserved_bytes = pool[best].reserved_bytes;
    b->base = pool[best].base, b->map_bytes = pool[best].map_bytes, b->handle = pool[best].handle;
    pool_total -= pool[best].map_bytes;
    pool[best] = pool[--pool_n];
    return 1;
}

/* Keeps b's mapping for a later buffer; 1 when kept (b is then empty). */
static int pool_put(wk_buffer *b)
{
    if (!pool_enabled() || b->exact || !b->base || !b->handle || pool_n == WK_POOL_SLOTS ||
        b->map_bytes > WK_POOL_ENTRY_MAX || pool_total + b->map_bytes > WK_POOL_TOTAL_MAX)
        return 0;
    /* a kept mapping stays mapped, so a kernel with a wild pointer could read it: what its last
     * buffer held (a reference's output) is overwritten first, after the work queued on it */
    if (cuCtxSynchronize() != CUDA_SUCCESS ||
        cuMemsetD8Async(b->base, WK_POISON, b->map_bytes, 0) != CUDA_SUCCESS ||
        cuCtxSynchronize() != CUDA_SUCCESS)
        return 0;
    pool[pool_n] = (wk_buffer){.reserved = b->reserved, .reserved_bytes = b->reserved_bytes,
                               .base = b->base, .map_bytes = b->map_bytes, .handle = b->handle};
    pool_total += b->map_bytes;
    pool_n++;
    memset(b, 0, sizeof(*b));
    return 1;
}

void wk_buffer_pool_drain(void)
{
    for (int i = 0; i < pool_n; i++)
        release_mapping(&pool[i]);
    pool_n = 0;
    pool_total = 0;
}

/* The guard content is written on the worker's stream, like everything else that touches the
 * buffer afterwards: a memset on the legacy default stream is not ordered with a non-blocking
 * stream, and when the GPU is shared it landed after the first kernels had written the buffer
 * (measured on the H100 beside a busy neighbour: a scratch buffer overwritten under a running
 * reference). */
int wk_buffer_alloc(wk_gpu *g, wk_buffer *b, enum kc_dtype dtype, int64_t numel, strbuf *err)
{
    memset(b, 0, sizeof(*b));
    b->dtype = dtype;
    b->numel = numel;
    b->bytes = (size_t)numel * dtype_size(dtype);
    size_t span = round_up(b->bytes, WK_ALIGN);
    b->map_bytes = round_up(span + WK_GUARD_BYTES, g->map_granularity);
    CUresult rc = pool_take(b, b->map_bytes) ? CUDA_SUCCESS : map_between_walls(g, b);
    if (rc != CUDA_SUCCESS && (pool_n || n_deferred)) { /* the kept mappings' memory first */
        size_t map_bytes = b->map_bytes;
        release_mapping(b);
        wk_buffer_pool_drain();
        wk_release_deferred();
        b->dtype = dtype, b->numel = numel, b->bytes = (size_t)numel * dtype_size(dtype);
        b->map_bytes = map_bytes;
        rc = map_between_walls(g, b);
    }
    if (rc != CUDA_SUCCESS) {
        wk_buffer_free(b);
        return kc_fail(err, "cannot map %zu bytes on the GPU: %s", span, wk_cuda_error(rc));
    }
    wk_buffer_place(b, 0);
    /* the guards only: the buffer itself is generated or poisoned before every execution */
    return wk_buffer_reset_guards(g, b) == 0 ? 0 : kc_fail(err, "cannot write the guard bands");
}

void wk_buffer_place(wk_buffer *b, int front)
{
    if (b->exact || !b->base)
        return;
    b->front = front;
    b->ptr = front ? b->base : b->base + b->map_bytes - round_up(b->bytes, WK_VEC_ALIGN);
}

int wk_buffer_resize(wk_gpu *g, wk_buffer *b, enum kc_dtype dtype, int64_t numel, strbuf *err)
{
    size_t bytes = (size_t)numel * dtype_size(dtype);
    size_t need = round_up(round_up(bytes, WK_ALIGN) + WK_GUARD_BYTES, g->map_granularity);
    if (b->base && !b->exact && need <= b->map_bytes &&
        (b->map_bytes <= WK_REUSE_BYTES || b->map_bytes <= 4 * need)) {
        b->dtype = dtype, b->numel = numel, b->bytes = bytes;
        wk_buffer_place(b, b->front);
        return wk_buffer_reset_guards(g, b) == 0 ? 0 : kc_fail(err, "cannot write the guard bands");
    }
    int front = b->front;
    wk_buffer_free(b);
    if (wk_buffer_alloc(g, b, dtype, numel, err))
        return -1;
    wk_buffer_place(b, front);
    return 0;
}

/* 16 to 2032, a multiple of 16 and never of 256: where an exact buffer starts in its allocation. */
static size_t exact_offset(void)
{
    unsigned v = 0;
    if (getrandom(&v, sizeof(v), 0) != sizeof(v))
        v = (unsigned)now_ms();
    unsigned k = 1 + v % 127;
    return 16u * (k % 16 ? k : k + 1);
}

int wk_buffer_alloc_exact(wk_buffer *b, enum kc_dtype dtype, int64_t numel, strbuf *err)
{
    memset(b, 0, sizeof(*b));
    b->dtype = dtype;
    b->numel = numel;
    b->bytes = (size_t)numel * dtype_size(dtype);
    b->exact = 1;
    size_t off = exact_offset();
    CUresult rc = cuMemAlloc(&b->base, off + b->bytes);
    if (rc != CUDA_SUCCESS)
        return kc_fail(err, "cannot allocate %zu bytes on the GPU: %s", b->bytes, wk_cuda_error(rc));
    b->ptr = b->base + off;
    return 0;
}

/* The guard bands of a buffer within its mapping (none for an exact buffer), as four zones:
 * near ones, the WK_NEAR_BYTES on each side of the buffer, hold content from the run's key and
 * are watched between launches; far ones, the rest of the mapping (a reused mapping can be
 * much larger than its buffer), hold 0xFF and are checked after each execution. A write far
 * from a buffer faults in the runs that place it against that wall. */
enum { ZONE_FRONT_FAR, ZONE_FRONT_NEAR, ZONE_BACK_NEAR, ZONE_BACK_FAR, ZONES };
typedef struct guard_zone {
    CUdeviceptr p;
    long long n;
} guard_zone;

static guard_zone zone_of(const wk_buffer *b, int z)
{
    if (b->exact || !b->base)
        return (guard_zone){0, 0};
    CUdeviceptr end = b->base + b->map_bytes, after = b->ptr + b->bytes;
    CUdeviceptr near_front = b->ptr - b->base > WK_NEAR_BYTES ? b->ptr - WK_NEAR_BYTES : b->base;
    CUdeviceptr near_back = end - after > WK_NEAR_BYTES ? after + WK_NEAR_BYTES : end;
    switch (z) {
    case ZONE_FRONT_FAR: return (guard_zone){b->base, (long long)(near_front - b->base)};
    case ZONE_FRONT_NEAR: return (guard_zone){near_front, (long long)(b->ptr - near_front)};
    case ZONE_BACK_NEAR: return (guard_zone){after, (long long)(near_back - after)};
    default: return (guard_zone){near_back, (long long)(end - near_back)};
    }
}

static int zone_is_near(int z) { return z == ZONE_FRONT_NEAR || z == ZONE_BACK_NEAR; }

void wk_guard_rekey(wk_gpu *g)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof(v), 0) != sizeof(v))
        v = (uint64_t)now_ms() * 0x9E3779B97F4A7C15ull;
    g->guard_key = v | 1; /* 0 means the far zones' constant 0xFF (harness.cu guard_word) */
}

/* Writes a zone's content: the run's key in a near zone, 0xFF in a far one. */
static int zone_fill(wk_gpu *g, guard_zone zn, int near)
{
    if (zn.n <= 0)
        return 0;
    if (!near)
        return cuMemsetD8Async(zn.p, 0xFF, (size_t)zn.n, g->stream) == CUDA_SUCCESS ? 0 : -1;
    unsigned long long key = g->guard_key;
    void *args[] = {&zn.p, &zn.n, &key};
    return wk_launch_harness(g, g->k_guard_fill, zn.n / 8 + 1, args);
}

int wk_buffer_reset_guards(wk_gpu *g, wk_buffer *b)
{
    for (int z = 0; z < ZONES; z++)
        if (zone_fill(g, zone_of(b, z), zone_is_near(z)))
            return -1;
    return 0;
}

/* Keeps the mapping for a later buffer when the pool may (KC_MAP_POOL), else unmaps it after
 * the work in flight: unmapping a range that a queued operation (the scrub of the reference's
 * outputs, a guard reset) still writes made that operation fault, which the next
 * synchronisation reported as the next job's illegal address; seen only when a busy neighbour
 * on the GPU kept such work queued (measured on the H100, 2026-11-25). A kept mapping needs no
 * wait: whatever is queued on it runs before anything queued after it on the same stream. */
void wk_buffer_free(wk_buffer *b)
{
    if (!pool_put(b))
        release_mapping(b);
}

int wk_buffer_poison(wk_gpu *g, wk_buffer *b)
{
    if (!b->bytes)
        return 0;
    return cuMemsetD8Async(b->ptr, WK_POISON, b->bytes, g->stream) == CUDA_SUCCESS ? 0 : -1;
}

/* Cold L2 before every checked and timed run alike: persisting lines are reset (where the
 * driver allows the limit) and 2x the L2 size is written. */
int wk_flush_l2(wk_gpu *g)
{
    if (g->persisting_l2 && cuCtxResetPersistingL2Cache() != CUDA_SUCCESS)
        return -1;
    return cuMemsetD32Async(g->flush, 0x5a5a5a5a, g->flush_bytes / 4, g->stream) == CUDA_SUCCESS
               ? 0
               : -1;
}

#define CLOCK_PROBE_CYCLES 200000 /* about 0.1 ms: the reading's resolution is far below 0.1% */

int wk_clock_probe_launch(wk_gpu *g)
{
    long long cycles = CLOCK_PROBE_CYCLES;
    void *args[] = {&cycles, &g->clock_probe};
    return cuLaunchKernel(g->k_clock, 1, 1, 1, 1, 1, 1, 0, g->stream, args, NULL) == CUDA_SUCCESS
               ? 0
               : -1;
}

double wk_clock_probe_mhz(wk_gpu *g)
{
    unsigned long long v[2];
    if (cuMemcpyDtoH(v, g->clock_probe, sizeof(v)) != CUDA_SUCCESS || v[1] == 0)
        return 0;
    return (double)v[0] / (double)v[1] * 1e3;
}

/* After WK_IDLE_MS without work the GPU may have dropped to idle clocks; work on every SM
 * (KC_GPU_WARMUP_MS at most, default WK_WARMUP_MS; 0 turns it off) brings them back before a
 * job's first execution (its checking runs are the timing's samples). The SM clock probe says
 * when: the spin stops once the clock is within WK_WARM_CLOSE of the highest this worker has
 * seen, and does not start when it already is (a pause of a second rarely lowers it). A GPU
 * kept busy by a batch never waits for this. Returns the milliseconds spent. */
double wk_gpu_warm_up(wk_gpu *g, double idle_ms)
{
    const char *env = getenv("KC_GPU_WARMUP_MS");
    double warm_ms = env && *env ? atof(env) : WK_WARMUP_MS;
    if (idle_ms < WK_IDLE_MS || warm_ms <= 0)
        return 0;
    long long cycles = 1000000; /* about 0.5 ms at working clocks */
    void *args[] = {&cycles};
    double t0 = now_ms();
    for (;;) {
        double mhz = wk_clock_probe_launch(g) == 0 && cuStreamSynchronize(g->stream) == CUDA_SUCCESS
                         ? wk_clock_probe_mhz(g)
                         : 0;
        if (mhz > g->peak_clock_mhz)
            g->peak_clock_mhz = mhz;
        int warm = mhz > 0 && g->warm_probes > 0 && mhz >= WK_WARM_CLOSE * g->peak_clock_mhz;
        if (warm || now_ms() - t0 >= warm_ms)
            break;
        if (cuLaunchKernel(g->k_spin, (unsigned)g->sms * 2, 1, 1, 128, 1, 1, 0, g->stream, args,
                           NULL) != CUDA_SUCCESS ||
            cuStreamSynchronize(g->stream) != CUDA_SUCCESS)
            break;
    }
    g->warm_probes++; /* the first warm-up runs its whole time: the peak is not known yet */
    return now_ms() - t0;
}

int wk_launch_harness(wk_gpu *g, CUfunction f, long long n, void **args)
{
    long long blocks = (n + 255) / 256;
    if (blocks > (long long)g->sms * 32)
        blocks = (long long)g->sms * 32;
    if (blocks < 1)
        blocks = 1;
    return cuLaunchKernel(f, (unsigned)blocks, 1, 1, 256, 1, 1, 0, g->stream, args, NULL) ==
                   CUDA_SUCCESS
               ? 0
               : -1;
}

/* Shared memory: blocks of the largest dynamic size, one at a time per SM, four rounds over the
 * SMs (the block scheduler spreads them; each block writes it all). Local memory: blocks of 256
 * threads, enough for every thread slot of every SM four times over, each thread writing its
 * whole frame. */
int wk_scrub_on_chip(wk_gpu *g)
{
    int words = g->smem_optin / 4, sms = g->sms > 0 ? g->sms : 1;
    CUdeviceptr sink = g->scratch_u64;
    void *sargs[] = {&words}, *largs[] = {&sink};
    unsigned per_sm = (unsigned)(g->threads_per_sm > 0 ? g->threads_per_sm : 2048);
    unsigned local_blocks = (unsigned)sms * per_sm / 256 * 4;
    if (words > 0 &&
        (cuFuncSetAttribute(g->k_scrub_shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            g->smem_optin) != CUDA_SUCCESS ||
         cuFuncSetAttribute(g->k_scrub_shared, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                            100) != CUDA_SUCCESS ||
         cuLaunchKernel(g->k_scrub_shared, (unsigned)sms * 4, 1, 1, 1024, 1, 1,
                        (unsigned)g->smem_optin, g->stream, sargs, NULL) != CUDA_SUCCESS))
        return -1;
    return cuLaunchKernel(g->k_scrub_local, local_blocks, 1, 1, 256, 1, 1, 0, g->stream, largs,
                          NULL) == CUDA_SUCCESS ? 0 : -1;
}

size_t wk_unit_local_bytes(const wk_unit *u)
{
    size_t most = 0, stack = 0;
    for (int i = 0; i < u->lu.n_launches; i++) {
        int v = 0;
        if (u->funcs[i] &&
            cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, u->funcs[i]) == CUDA_SUCCESS &&
            (size_t)v > most)
            most = (size_t)v;
    }
    if (cuCtxGetLimit(&stack, CU_LIMIT_STACK_SIZE) != CUDA_SUCCESS)
        stack = 1024;
    return most + stack;
}

CUdeviceptr wk_sum_slot(const wk_gpu *g, int slot) { return g->sums + 8 * (CUdeviceptr)slot; }

CUresult wk_sums_clear(wk_gpu *g, int n)
{
    return cuMemsetD8Async(g->sums, 0, 8 * (size_t)n, g->stream);
}

CUresult wk_sums_read(wk_gpu *g, uint64_t *out, int n)
{
    CUresult rc = cuMemcpyDtoHAsync(out, g->sums, 8 * (size_t)n, g->stream);
    return rc == CUDA_SUCCESS ? cuStreamSynchronize(g->stream) : rc;
}

/* Adds the count of bytes of a zone that differ from its content to slot. */
static int zone_count_into(wk_gpu *g, guard_zone zn, int near, CUdeviceptr slot)
{
    unsigned long long key = near ? g->guard_key : 0;
    void *args[] = {&zn.p, &zn.n, &key, &slot};
    return zn.n > 0 ? wk_launch_harness(g, g->k_guard, zn.n / 8 + 1, args) : 0;
}

int wk_buffer_guard_damage_into(wk_gpu *g, const wk_buffer *b, CUdeviceptr slot)
{
    for (int z = 0; z < ZONES; z++)
        if (zone_count_into(g, zone_of(b, z), zone_is_near(z), slot))
            return -1;
    return 0;
}

/* Adds a zone to a table (the near or the far zones of every buffer); the launch's blocks
 * follow its longest range. */
static void table_add(wk_guard_table *t, guard_zone zn)
{
    if (zn.n <= 0 || t->n_ranges >= WK_WATCH_RANGES)
        return;
    t->r.r[t->n_ranges].p = zn.p, t->r.r[t->n_ranges++].n = zn.n;
    long long blocks = (zn.n / 8 + 255) / 256;
    blocks = blocks > 64 ? 64 : blocks;
    t->blocks = blocks > t->blocks ? blocks : t->blocks;
}

void wk_watch_set(const wk_buffer *bufs, int n, wk_watch *w)
{
    w->near.n_ranges = w->far.n_ranges = 0;
    w->near.blocks = w->far.blocks = 1;
    for (int i = 0; i < n; i++)
        for (int z = 0; z < ZONES; z++)
            table_add(zone_is_near(z) ? &w->near : &w->far, zone_of(&bufs[i], z));
    w->active = 0;
    w->checks = 0;
}

/* One launch over every range of a table (passed by value: no copy, no wait). */
static int table_count_into(wk_gpu *g, const wk_guard_table *t, unsigned long long key,
                            CUdeviceptr slot)
{
    if (t->n_ranges == 0)
        return 0;
    void *args[] = {(void *)&t->r, &key, &slot};
    return cuLaunchKernel(g->k_guard_ranges, (unsigned)t->blocks, (unsigned)t->n_ranges, 1, 256, 1,
                          1, 0, g->stream, args, NULL) == CUDA_SUCCESS
               ? 0
               : -1;
}

int wk_watch_count_into(wk_gpu *g, const wk_watch *w, CUdeviceptr slot)
{
    return table_count_into(g, &w->near, g->guard_key, slot) ||
           table_count_into(g, &w->far, 0, slot);
}

/* The cap keeps a schedule of many launches cheap: every gap up to WK_WATCH_EVERY launches,
 * then every WK_WATCH_EVERY-th. Only the near zones: a far write faults in the runs that place
 * the buffer against that wall. */
int wk_watch_check(wk_gpu *g, wk_watch *w, long long launch_index)
{
    if (!w || !w->active || launch_index == 0 ||
        (launch_index > WK_WATCH_EVERY && launch_index % WK_WATCH_EVERY))
        return 0;
    w->checks++;
    return table_count_into(g, &w->near, g->guard_key, wk_sum_slot(g, WK_WATCH_SLOT));
}

int wk_buffer_checksum_into(wk_gpu *g, const wk_buffer *b, CUdeviceptr slot)
{
    CUdeviceptr p = b->ptr;
    long long nbytes = (long long)b->bytes;
    unsigned long long key = g->sum_key;
    void *args[] = {&p, &nbytes, &slot, &key};
    return wk_launch_harness(g, g->k_checksum, nbytes / 8 / 4 + 1, args);
}

/* The harness's draw parameters of a tensor at dims: a, b (bounds, mean/std, ...), lo, hi. */
struct draw_params {
    int dtype, dist;
    double a, b;
    long long lo, hi;
};

static int draw_params_of(const tensor_spec *t, const dimset *dims, struct draw_params *d,
                          strbuf *err)
{
    memset(d, 0, sizeof(*d));
    d->dtype = (int)t->dtype, d->dist = (int)t->dist;
    if (tensor_init_params(t, dims, &d->a, &d->b, err))
        return -1;
    if (t->dist == KC_DIST_SIMPLEX)
        d->a = 0;
    int64_t v;
    if (t->dist == KC_DIST_RANDINT || t->dist == KC_DIST_SEGMENTS) { /* segments: L, count */
        if (expr_eval(t->lo_expr, dims, &v, err))
            return -1;
        d->lo = v;
        if (expr_eval(t->hi_expr, dims, &v, err))
            return -1;
        d->hi = v;
    }
    return 0;
}

/* The run's value classes with the tensor's rows (first dim) and columns (last dim). */
static int fill_mode_of(const tensor_spec *t, const dimset *dims, long long n,
                        const wk_fill_mode *mode, wk_fill_mode *m, strbuf *err)
{
    memset(m, 0, sizeof(*m));
    if (!mode)
        return 0;
    *m = *mode;
    int64_t first = 1, last = 1;
    if (t->rank && (expr_eval(t->shape[0], dims, &first, err) ||
                    expr_eval(t->shape[t->rank - 1], dims, &last, err)))
        return -1;
    m->row_stride = first > 0 ? n / first : 1;
    m->cols = last > 0 ? last : 1;
    return 0;
}

/* After the fill of a float tensor of normals (std d->b): its secret spikes and special values
 * (kc_fill_secrets, one thread), the checksum in sum (if any) kept up to date. */
static int fill_secrets(wk_gpu *g, CUdeviceptr p, long long n, const struct draw_params *d,
                        uint64_t seed, unsigned tensor_index, CUdeviceptr sum, const wk_fill_mode *m)
{
    int is_float = d->dtype == KC_F32 || d->dtype == KC_F16 || d->dtype == KC_BF16 || d->dtype == KC_F64;
    if (!(m->mode & (WK_FILL_SPIKES | WK_FILL_SPECIAL)) || d->dist != KC_DIST_NORMAL || !is_float || n <= 0)
        return 0;
    int dtype = d->dtype;
    double b = d->b;
    void *args[] = {&p, &n, &dtype, &b, &seed, &tensor_index, &sum, (void *)m, &g->sum_key};
    return cuLaunchKernel(g->k_fill_secrets, 1, 1, 1, 1, 1, 1, 0, g->stream, args, NULL) == CUDA_SUCCESS
               ? 0
               : -1;
}

/* A packed input (problem.h, "views": a network's parameters in one buffer): the padding
 * between views NaN, then each view drawn as a tensor of its own (its dist and fan_in, its
 * shape's rows and columns for the value classes, its own Philox stream: tensor index +
 * (k + 1) << 16; varied when the caller's spec says vary_views), then one checksum of the
 * whole buffer. Views start 256-byte aligned (the loader's layout). */
static int fill_views(wk_gpu *g, wk_buffer *b, const tensor_spec *t, const dimset *dims,
                      uint64_t seed, unsigned tensor_index, CUdeviceptr sum,
                      const wk_fill_mode *mode, strbuf *err)
{
    long long n = b->numel, lo = 0, hi = 0;
    int dtype = (int)t->dtype, dist = KC_DIST_CONSTANT;
    double nan = __builtin_nan(""), zero = 0;
    CUdeviceptr none = 0;
    wk_fill_mode plain;
    memset(&plain, 0, sizeof(plain));
    void *pargs[] = {&b->ptr, &n, &dtype, &dist, &nan, &zero, &lo, &hi, &seed, &tensor_index,
                     &none, &plain, &g->sum_key};
    if (n && wk_launch_harness(g, g->k_fill, (long long)(b->bytes / 8) + 1, pargs))
        return kc_fail(err, "input generation failed for %s", t->name);
    for (int k = 0; k < t->n_views; k++) {
        tensor_spec tmp;
        const tensor_spec *v = t->vary_views ? tensor_spec_varied(&t->views[k], &tmp) : &t->views[k];
        int64_t start, count;
        struct draw_params d;
        wk_fill_mode m;
        if (view_extent(&t->views[k], dims, &start, &count, err) ||
            draw_params_of(v, dims, &d, err) || fill_mode_of(v, dims, count, mode, &m, err))
            return -1;
        if (start < 0 || count < 0 || start + count > n)
            return kc_fail(err, "view %s of %s lies outside it", v->name, t->name);
        CUdeviceptr at = b->ptr + (CUdeviceptr)start * dtype_size(t->dtype);
        long long cn = count;
        unsigned idx = tensor_index + ((unsigned)(k + 1) << 16);
        void *args[] = {&at, &cn, &d.dtype, &d.dist, &d.a, &d.b, &d.lo, &d.hi, &seed, &idx,
                        &none, &m, &g->sum_key};
        if (cn && (wk_launch_harness(g, g->k_fill, cn * (long long)dtype_size(t->dtype) / 8 + 1, args) ||
                   fill_secrets(g, at, cn, &d, seed, idx, 0, &m)))
            return kc_fail(err, "input generation failed for %s (view %s)", t->name, v->name);
    }
    if (sum && wk_buffer_checksum_into(g, b, sum))
        return kc_fail(err, "checksumming %s failed", t->name);
    return 0;
}

/* Rows of normals into probability rows: a block per row (kc_simplex), or, for fewer rows than
 * would fill the GPU twice over, each row cut into parts of a block each (at most
 * WK_SIMPLEX_PARTS parts in all: kc_simplex_part, then kc_simplex_apply). */
static int normalise_simplex(wk_gpu *g, CUdeviceptr p, long long rows, long long L, int dtype)
{
    long long sms = g->sms > 0 ? g->sms : 1;
    long long chunks = rows >= 2 * sms ? 1 : (4 * sms + rows - 1) / rows;
    if (chunks > WK_SIMPLEX_PARTS / rows)
        chunks = WK_SIMPLEX_PARTS / rows;
    if (chunks > L / 4096)
        chunks = L / 4096;
    if (chunks <= 1) {
        void *args[] = {&p, &rows, &L, &dtype};
        unsigned blocks = (unsigned)(rows < 65535 ? rows : 65535);
        return cuLaunchKernel(g->k_simplex, blocks, 1, 1, 256, 1, 1, 0, g->stream, args, NULL) ==
                       CUDA_SUCCESS
                   ? 0
                   : -1;
    }
    int c = (int)chunks;
    unsigned blocks = (unsigned)(rows * chunks);
    void *args[] = {&p, &L, &dtype, &c, &g->simplex_parts};
    return cuLaunchKernel(g->k_simplex_part, blocks, 1, 1, 256, 1, 1, 0, g->stream, args, NULL) ==
                       CUDA_SUCCESS &&
                   cuLaunchKernel(g->k_simplex_apply, blocks, 1, 1, 256, 1, 1, 0, g->stream, args,
                                  NULL) == CUDA_SUCCESS
               ? 0
               : -1;
}

int wk_fill_input(wk_gpu *g, wk_buffer *b, const tensor_spec *t, const dimset *dims, uint64_t seed,
                  unsigned tensor_index, CUdeviceptr sum, const wk_fill_mode *mode, strbuf *err)
{
    if (t->n_views)
        return fill_views(g, b, t, dims, seed, tensor_index, sum, mode, err);
    long long n = b->numel;
    struct draw_params d;
    wk_fill_mode m;
    if (draw_params_of(t, dims, &d, err) || fill_mode_of(t, dims, n, mode, &m, err))
        return -1;
    /* a simplex row is normalised after the fill: its checksum comes after that */
    CUdeviceptr fused = t->dist == KC_DIST_SIMPLEX ? 0 : sum;
    void *args[] = {&b->ptr, &n, &d.dtype, &d.dist, &d.a, &d.b, &d.lo, &d.hi, &seed, &tensor_index,
                    &fused, &m, &g->sum_key};
    long long words = (long long)(b->bytes / 8) + 1;
    if (n && (wk_launch_harness(g, g->k_fill, words, args) ||
              fill_secrets(g, b->ptr, n, &d, seed, tensor_index, fused, &m)))
        return kc_fail(err, "input generation failed for %s", t->name);
    if (t->dist == KC_DIST_SIMPLEX && n) {
        int64_t last = 1;
        if (t->rank && expr_eval(t->shape[t->rank - 1], dims, &last, err))
            return -1;
        long long rows = last ? n / last : 0, L = last;
        if (rows && normalise_simplex(g, b->ptr, rows, L, d.dtype))
            return kc_fail(err, "simplex normalisation failed for %s", t->name);
        if (sum && wk_buffer_checksum_into(g, b, sum))
            return kc_fail(err, "checksumming %s failed", t->name);
    }
    return 0;
}

