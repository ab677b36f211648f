# Which cuBLAS kernel runs a GEMM shape, and how fast: torch's a @ b.t() (A and B K-major, as
# bench/gemm.lua's "kk") in f16 or bf16 under torch.profiler, the kernel names printed with the
# time by CUDA events (20 calls after 3 warm-ups). Needs torch with CUDA (the GPU host has it).
#   python3 bench/cublas_kernels.py [MxNxK,...] [f16|bf16]
import sys

import torch
from torch.profiler import ProfilerActivity, profile

shapes = sys.argv[1] if len(sys.argv) > 1 else "4096x4096x4096,4096x4096x4104,4104x4104x4096,4104x4104x4104,8192x8192x8192"
dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[sys.argv[2] if len(sys.argv) > 2 else "f16"]
for shape in shapes.split(","):
    m, n, k = (int(x) for x in shape.split("x"))
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(n, k, device="cuda", dtype=dtype)
    for _ in range(3):
        c = a @ b.t()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            c = a @ b.t()
        torch.cuda.synchronize()
    names = sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and "Memset" not in e.name})
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(20):
        c = a @ b.t()
    end.record()
    torch.cuda.synchronize()
    us = start.elapsed_time(end) / 20 * 1e3
    print(f"{m}x{n}x{k}: {us:.1f} us, {2 * m * n * k / us / 1e6:.1f} TFLOP/s; kernels: {', '.join(names)}")
