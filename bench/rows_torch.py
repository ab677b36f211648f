"""torch's own row kernels on bench/rows.lua's shapes, run beside it on the GPU host: torch.softmax
(last dim), F.layer_norm (weight and bias), F.rms_norm (weight), and the unfused residual add +
norm (h = x + r, then the norm of h: what the fused kernels replace). M x N with X ~256 MB, N in
128, 512, 1024, 4096, 8192, 32768; median of 20 launches by events and the wall clock of 100
calls; GB/s counts X read and Y written (plus R read and the sum written with the residual), the
same bytes as bench/rows.lua; the device-to-device copy (1 GiB) in the same run.

python3 bench/rows_torch.py [dtype=f16|bf16|f32] [json=bench/results/rows_torch_<dtype>.json]
"""
import json
import sys
import time

import torch
import torch.nn.functional as F

dt_name = sys.argv[1] if len(sys.argv) > 1 else "f16"
dtype = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[dt_name]
out = sys.argv[2] if len(sys.argv) > 2 else f"bench/results/rows_torch_{dt_name}.json"
esz = torch.tensor([], dtype=dtype).element_size()
BYTES = 256 << 20
NS = [128, 512, 1024, 4096, 8192, 32768]


def event_ms(f, reps=20):
    for _ in range(3):
        f()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]


def wall_ms(f, n=100):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        f()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3 / n


src = torch.rand(1 << 28, device="cuda", dtype=torch.float32)
dst = torch.empty_like(src)
d2d = 2 * (1 << 30) / (event_ms(lambda: dst.copy_(src)) * 1e-3) / 1e9
del src, dst

rows = []
print(f"device: {torch.cuda.get_device_name(0)}   torch {torch.__version__}   dtype: {dt_name}")
print(f"device-to-device copy: {d2d:.0f} GB/s (1 GiB, read + write)")
print("| kernel | M x N | ms | GB/s | % of D2D | wall ms | wall % |\n|---|---|---|---|---|---|---|")


def run(name, M, N, f, traffic):
    ms, wall = event_ms(f), wall_ms(f)
    gbs, wgbs = traffic / (ms * 1e-3) / 1e9, traffic / (wall * 1e-3) / 1e9
    rows.append({"kernel": name, "M": M, "N": N, "ms": ms, "gbs": gbs, "pct": 100 * gbs / d2d,
                 "wall_ms": wall, "wall_gbs": wgbs, "wall_pct": 100 * wgbs / d2d})
    print(f"| {name} | {M} x {N} | {ms:.3f} | {gbs:.0f} | {100 * gbs / d2d:.1f}% | {wall:.3f} | {100 * wgbs / d2d:.1f}% |")


for N in NS:
    M = BYTES // (N * esz)
    x = torch.rand(M, N, device="cuda", dtype=dtype) * 6 - 3
    w = torch.rand(N, device="cuda", dtype=dtype) + 0.5
    b = torch.rand(N, device="cuda", dtype=dtype) * 2 - 1
    two = 2 * M * N * esz
    run("torch.softmax", M, N, lambda: torch.softmax(x, -1), two)
    run("F.layer_norm", M, N, lambda: F.layer_norm(x, (N,), w, b, 1e-5), two)
    if hasattr(F, "rms_norm"):
        run("F.rms_norm", M, N, lambda: F.rms_norm(x, (N,), w, 1e-6), two)
    if N == 4096:
        r = torch.rand(M, N, device="cuda", dtype=dtype) * 2 - 1
        run("x + r, F.layer_norm (unfused)", M, N, lambda: F.layer_norm(x + r, (N,), w, b, 1e-5), 2 * two)
        if hasattr(F, "rms_norm"):
            run("x + r, F.rms_norm (unfused)", M, N, lambda: F.rms_norm(x + r, (N,), w, 1e-6), 2 * two)
        del r
    del x

with open(out, "w") as f:
    json.dump({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "device": torch.cuda.get_device_name(0),
               "torch": torch.__version__, "dtype": dt_name, "d2d_gbs": d2d, "rows": rows}, f, indent=1)
print("wrote " + out)
