#!/usr/bin/env python3
"""gpu_neighbour: another process on the same GPU, for tests that results do not depend on
what else runs there: holds GB of device memory (argument 1, default 40) and keeps the GPU busy
with float32 matrix products until killed. Prints "ready" once both are in place."""
import sys

import torch

gb = float(sys.argv[1]) if len(sys.argv) > 1 else 40.0
held = torch.empty(int(gb * 2**30) // 4, dtype=torch.float32, device="cuda")
a = torch.randn(8192, 8192, device="cuda")
first = True
while True:
    b = a @ a
    torch.cuda.synchronize()
    if first:
        print("ready", flush=True)
        first = False
