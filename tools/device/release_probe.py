"""release_probe: does giving device memory back to the driver slow a memory-bound kernel for a while?
Times a 4 GiB float32 sum (PyTorch, events) back to back after cuMemCreate/cuMemMap,
cuMemUnmap/cuMemRelease and cuMemAlloc/cuMemFree of 4 and 16 GiB on another buffer (the driver API
through ctypes). Run on the GPU host: python3 tools/device/release_probe.py
Findings (H100, 2026-11-27): docs/results/gpu-2026-11-27-session5.md."""
import ctypes, time, torch
torch.cuda.init()
x = torch.empty(1 << 30, dtype=torch.float32, device="cuda"); x.normal_(); torch.cuda.synchronize()
cu = ctypes.CDLL("libcuda.so.1")
def ck(r, what):
    if r != 0: raise SystemExit(f"{what}: CUresult {r}")
class Loc(ctypes.Structure): _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]
class Prop(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", Loc),
                ("win32HandleMetaData", ctypes.c_void_p), ("compressionType", ctypes.c_ubyte),
                ("gpuDirectRDMACapable", ctypes.c_ubyte), ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]
class Access(ctypes.Structure): _fields_ = [("location", Loc), ("flags", ctypes.c_int)]
prop = Prop(); prop.type = 1; prop.location = Loc(1, 0)
def t():
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record(); x.sum(); e.record(); e.synchronize(); return s.elapsed_time(e)
def series(label, n=30):
    t0 = time.time(); out = [(time.time() - t0, t()) for _ in range(n)]
    print(label, " ".join(f"{a*1000:.0f}:{b:.3f}" for a, b in out), flush=True)
series("base")
GB = 1 << 30
for gb in (4, 16):
    size = gb * GB
    va = ctypes.c_uint64(); h = ctypes.c_uint64()
    ck(cu.cuMemAddressReserve(ctypes.byref(va), ctypes.c_size_t(size), ctypes.c_size_t(0), ctypes.c_uint64(0), ctypes.c_uint64(0)), "reserve")
    t0 = time.time(); ck(cu.cuMemCreate(ctypes.byref(h), ctypes.c_size_t(size), ctypes.byref(prop), ctypes.c_uint64(0)), "create")
    print(f"create{gb}G took {1000*(time.time()-t0):.1f} ms"); series(f"after-create{gb}G")
    ck(cu.cuMemMap(va, ctypes.c_size_t(size), ctypes.c_size_t(0), h, ctypes.c_uint64(0)), "map")
    acc = Access(Loc(1, 0), 3)
    ck(cu.cuMemSetAccess(va, ctypes.c_size_t(size), ctypes.byref(acc), ctypes.c_size_t(1)), "access")
    ck(cu.cuMemsetD32_v2(va, ctypes.c_uint(0x5a5a5a5a), ctypes.c_size_t(size // 4)), "memset"); torch.cuda.synchronize()
    series(f"after-map+memset{gb}G", 10)
    t0 = time.time()
    ck(cu.cuMemUnmap(va, ctypes.c_size_t(size)), "unmap"); ck(cu.cuMemRelease(h), "release")
    print(f"unmap+release{gb}G took {1000*(time.time()-t0):.1f} ms")
    series(f"after-release{gb}G")
    ck(cu.cuMemAddressFree(va, ctypes.c_size_t(size)), "addrfree")
    time.sleep(0.5)
    p = ctypes.c_uint64()
    t0 = time.time(); ck(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(size)), "alloc")
    print(f"cuMemAlloc{gb}G took {1000*(time.time()-t0):.1f} ms"); series(f"after-cuMemAlloc{gb}G")
    ck(cu.cuMemsetD32_v2(p, ctypes.c_uint(1), ctypes.c_size_t(size // 4)), "memset2"); torch.cuda.synchronize()
    t0 = time.time(); ck(cu.cuMemFree_v2(p), "free"); print(f"cuMemFree{gb}G took {1000*(time.time()-t0):.1f} ms")
    series(f"after-cuMemFree{gb}G")
    time.sleep(0.5)
