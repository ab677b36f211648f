"""The torch side of bench/launch.lua, run beside it on the GPU host (torch is not in ckt's
process): the same chain (elementwise -> GEMM -> row sum, f16) and the same GEMM loop, launched
back to back on one stream, wall clock until the stream is drained, per iteration.

python3 bench/launch_torch.py [sizes=1024,4096,8192] [json=bench/results/launch_torch.json]
"""
import json
import sys
import time

import torch

sizes = [int(s) for s in (sys.argv[1] if len(sys.argv) > 1 else "1024,4096,8192").split(",")]
out = sys.argv[2] if len(sys.argv) > 2 else "bench/results/launch_torch.json"
LOOP = 100
dev = torch.device("cuda")
result = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
          "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "gemm": [], "chain": []}


def wall(fn, n=LOOP):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


print("| torch | dtype | M=N=K | wall µs (100 on a stream) |")
print("|---|---|---|---|")
for dt in (torch.float16, torch.bfloat16):
    for S in sizes:
        a = torch.rand(S, S, device=dev, dtype=dt) * 4 - 2
        b = torch.rand(S, S, device=dev, dtype=dt) * 4 - 2  # stored N x K (b_major "k")
        c = torch.empty(S, S, device=dev, dtype=dt)
        us = wall(lambda: torch.matmul(a, b.t(), out=c))
        result["gemm"].append({"dtype": str(dt), "size": S, "wall_us": us})
        print(f"| matmul | {dt} | {S} | {us:.1f} |")

print()
print("| chain elementwise -> GEMM -> row sum (f16) | M=N=K | wall µs a chain |")
print("|---|---|---|")
for S in sizes:
    x = torch.rand(S, S, device=dev, dtype=torch.float16) * 4 - 2
    b = torch.rand(S, S, device=dev, dtype=torch.float16) * 4 - 2
    a = torch.empty_like(x)
    c = torch.empty(S, S, device=dev, dtype=torch.float16)
    y = torch.empty(S, device=dev, dtype=torch.float32)

    def chain():
        torch.add(x * 0.5, 1, out=a)
        torch.matmul(a, b.t(), out=c)
        torch.sum(c, dim=1, dtype=torch.float32, out=y)

    us = wall(chain)
    result["chain"].append({"size": S, "wall_us": us})
    print(f"| torch eager (4 kernels) | {S} | {us:.1f} |")

with open(out, "w") as f:
    json.dump(result, f, indent=1)
print("JSON:", out)
