/* worker_driver: the NVIDIA driver (libcuda.so.1), loaded when the worker first needs it rather
 * than linked, so that kverify-gpu starts on a machine without the driver: --version and --help
 * work there, and a command that needs a GPU says in one line why it cannot run.
 *
 * Every driver entry point the worker calls is defined here, under the symbol name the compiled
 * objects reference: cuda.h maps many names to versioned symbols (cuMemAlloc is cuMemAlloc_v2,
 * cuEventElapsedTime is cuEventElapsedTime_v2), and since each wrapper below is written with the
 * plain name, the same macros give it, and the symbol looked up with dlsym, the versioned name;
 * cuda.h's declarations check each wrapper's parameters. A driver function used elsewhere and
 * missing from CUDA_DRIVER_FUNCTIONS is a link error (kverify-gpu is not linked with libcuda),
 * and tests/cli/test_worker_driver.sh checks the list against the worker's objects and the
 * toolkit's libcuda stub. The driver is loaded once, by whichever call comes first (any thread);
 * every symbol must resolve, else no call reaches the driver: each returns
 * CUDA_ERROR_NOT_INITIALIZED and wk_driver_load says why. CUPTI (libcupti, linked) does not need
 * libcuda to load: it finds the driver itself, once a CUDA call has loaded it here. */
#include "common/error.h"
#include "verify/service/gpu_probe.h"
#include "verify/worker/worker.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* X(name, parameters, arguments): one line per driver function the worker calls. */
#define CUDA_DRIVER_FUNCTIONS(X)                                                                 \
    X(cuInit, (unsigned int Flags), (Flags))                                                     \
    X(cuDriverGetVersion, (int *driverVersion), (driverVersion))                                 \
    X(cuGetErrorName, (CUresult error, const char **pStr), (error, pStr))                        \
    X(cuGetErrorString, (CUresult error, const char **pStr), (error, pStr))                      \
    X(cuDeviceGet, (CUdevice *device, int ordinal), (device, ordinal))                           \
    X(cuDeviceGetCount, (int *count), (count))                                                   \
    X(cuDeviceGetName, (char *name, int len, CUdevice dev), (name, len, dev))                    \
    X(cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev),                  \
      (pi, attrib, dev))                                                                         \
    X(cuDeviceTotalMem, (size_t *bytes, CUdevice dev), (bytes, dev))                             \
    X(cuDevicePrimaryCtxRetain, (CUcontext *pctx, CUdevice dev), (pctx, dev))                    \
    X(cuCtxSetCurrent, (CUcontext ctx), (ctx))                                                   \
    X(cuCtxSetLimit, (CUlimit limit, size_t value), (limit, value))                              \
    X(cuCtxGetLimit, (size_t *pvalue, CUlimit limit), (pvalue, limit))                            \
    X(cuCtxSynchronize, (void), ())                                                              \
    X(cuCtxResetPersistingL2Cache, (void), ())                                                   \
    X(cuStreamCreate, (CUstream *phStream, unsigned int Flags), (phStream, Flags))               \
    X(cuStreamSynchronize, (CUstream hStream), (hStream))                                        \
    X(cuEventCreate, (CUevent *phEvent, unsigned int Flags), (phEvent, Flags))                   \
    X(cuEventRecord, (CUevent hEvent, CUstream hStream), (hEvent, hStream))                      \
    X(cuEventSynchronize, (CUevent hEvent), (hEvent))                                            \
    X(cuEventElapsedTime, (float *pMilliseconds, CUevent hStart, CUevent hEnd),                  \
      (pMilliseconds, hStart, hEnd))                                                             \
    X(cuModuleLoadData, (CUmodule *module, const void *image), (module, image))                  \
    X(cuModuleUnload, (CUmodule hmod), (hmod))                                                   \
    X(cuModuleGetFunction, (CUfunction *hfunc, CUmodule hmod, const char *name),                 \
      (hfunc, hmod, name))                                                                       \
    X(cuFuncGetParamInfo,                                                                        \
      (CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize),              \
      (func, paramIndex, paramOffset, paramSize))                                                \
    X(cuFuncSetAttribute, (CUfunction hfunc, CUfunction_attribute attrib, int value),            \
      (hfunc, attrib, value))                                                                    \
    X(cuFuncGetAttribute, (int *pi, CUfunction_attribute attrib, CUfunction hfunc),              \
      (pi, attrib, hfunc))                                                                       \
    X(cuLaunchKernel,                                                                            \
      (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,        \
       unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                   \
       unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra),        \
      (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,         \
       hStream, kernelParams, extra))                                                            \
    X(cuMemAlloc, (CUdeviceptr *dptr, size_t bytesize), (dptr, bytesize))                        \
    X(cuMemFree, (CUdeviceptr dptr), (dptr))                                                     \
    X(cuMemGetAllocationGranularity,                                                             \
      (size_t *granularity, const CUmemAllocationProp *prop,                                     \
       CUmemAllocationGranularity_flags option),                                                 \
      (granularity, prop, option))                                                               \
    X(cuMemAddressReserve,                                                                       \
      (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,                        \
       unsigned long long flags),                                                                \
      (ptr, size, alignment, addr, flags))                                                       \
    X(cuMemAddressFree, (CUdeviceptr ptr, size_t size), (ptr, size))                             \
    X(cuMemCreate,                                                                               \
      (CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,      \
       unsigned long long flags),                                                                \
      (handle, size, prop, flags))                                                               \
    X(cuMemRelease, (CUmemGenericAllocationHandle handle), (handle))                             \
    X(cuMemMap,                                                                                  \
      (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,        \
       unsigned long long flags),                                                                \
      (ptr, size, offset, handle, flags))                                                        \
    X(cuMemUnmap, (CUdeviceptr ptr, size_t size), (ptr, size))                                   \
    X(cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count), \
      (ptr, size, desc, count))                                                                  \
    X(cuMemcpyDtoH, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount),                    \
      (dstHost, srcDevice, ByteCount))                                                           \
    X(cuMemcpyDtoHAsync,                                                                         \
      (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),                \
      (dstHost, srcDevice, ByteCount, hStream))                                                  \
    X(cuMemcpyHtoDAsync,                                                                         \
      (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream),          \
      (dstDevice, srcHost, ByteCount, hStream))                                                  \
    X(cuMemcpyDtoDAsync,                                                                         \
      (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),        \
      (dstDevice, srcDevice, ByteCount, hStream))                                                \
    X(cuMemGetInfo, (size_t *freeBytes, size_t *totalBytes), (freeBytes, totalBytes))            \
    X(cuMemsetD8Async, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream),    \
      (dstDevice, uc, N, hStream))                                                               \
    X(cuMemsetD32Async, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream),    \
      (dstDevice, ui, N, hStream))

/* The symbol of a name after cuda.h's macros: SYMBOL(cuMemAlloc) is "cuMemAlloc_v2". */
#define SYMBOL_TEXT(name) #name
#define SYMBOL(name) SYMBOL_TEXT(name)

/* The driver's functions (drv_cuMemAlloc: libcuda's cuMemAlloc_v2), set once it has loaded. */
#define POINTER(name, params, args) static CUresult (*drv_##name) params;
CUDA_DRIVER_FUNCTIONS(POINTER)

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded;                 /* every function resolved */
static char load_error[512];       /* else why not */

/* Resolves one function into *slot (a function pointer object, written as bytes: ISO C has no
 * conversion from dlsym's void * to a function pointer). 0, or -1 with load_error set. */
static int resolve(void *lib, const char *libname, const char *symbol, void *slot)
{
    void *fn = dlsym(lib, symbol);
    if (!fn) {
        snprintf(load_error, sizeof load_error, "the NVIDIA driver (%s) has no %s: it is older "
                 "than the CUDA %d.%d kverify-gpu was built with", libname, symbol,
                 CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
        return -1;
    }
    memcpy(slot, &fn, sizeof fn);
    return 0;
}

static void load_driver(void)
{
    const char *libname = kv_libcuda_name();
    void *lib = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(load_error, sizeof load_error, "the NVIDIA driver (%s) cannot be loaded: %s",
                 libname, dlerror());
        return;
    }
#define RESOLVE(name, params, args)                                                              \
    if (resolve(lib, libname, SYMBOL(name), &drv_##name))                                       \
        return;
    CUDA_DRIVER_FUNCTIONS(RESOLVE)
#undef RESOLVE
    loaded = 1; /* lib stays open for the life of the process */
}

static int driver_ready(void)
{
    pthread_once(&load_once, load_driver);
    return loaded;
}

int wk_driver_load(strbuf *err)
{
    return driver_ready() ? 0 : kc_fail(err, "%s", load_error);
}

/* The entry points the worker's objects call (cuMemAlloc here defines cuMemAlloc_v2). */
#define WRAPPER(name, params, args)                                                              \
    CUresult CUDAAPI name params                                                                 \
    {                                                                                            \
        return driver_ready() ? drv_##name args : CUDA_ERROR_NOT_INITIALIZED;                    \
    }
CUDA_DRIVER_FUNCTIONS(WRAPPER)
