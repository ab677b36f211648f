"""torch SDPA's backends on bench/attention.lua's shapes (forward, f16, TFLOP/s = 4·B·H·S²·D, half
for causal; median of 20 by events), run beside it on the GPU host.

python3 bench/attention_torch.py [shapes=4,32,4096,128;16,16,1024,64;1,32,16384,128] [json]
"""
import json
import sys
import time

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

shapes = [tuple(int(x) for x in s.split(",")) for s in (sys.argv[1] if len(sys.argv) > 1 else "4,32,4096,128;16,16,1024,64;1,32,16384,128").split(";")]
out = sys.argv[2] if len(sys.argv) > 2 else "bench/results/attention_torch.json"
backends = {"FLASH (FA2)": SDPBackend.FLASH_ATTENTION, "cuDNN": SDPBackend.CUDNN_ATTENTION,
            "memory-efficient": SDPBackend.EFFICIENT_ATTENTION}
rows = []
print("| B,H,S,D | causal | backend | ms | TFLOP/s |\n|---|---|---|---|---|")
for B, H, S, D in shapes:
    q, k, v = (torch.rand(B, H, S, D, device="cuda", dtype=torch.float16) * 2 - 1 for _ in range(3))
    for causal in (False, True):
        for name, be in backends.items():
            try:
                with sdpa_kernel(be):
                    f = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    for _ in range(3):
                        f()
                    ts = []
                    for _ in range(20):
                        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        a.record(); f(); b.record(); b.synchronize()
                        ts.append(a.elapsed_time(b))
                ms = sorted(ts)[len(ts) // 2]
                tf = 4 * B * H * S * S * D * (0.5 if causal else 1) / (ms * 1e-3) / 1e12
                rows.append({"B": B, "H": H, "S": S, "D": D, "causal": causal, "backend": name, "ms": ms, "tflops": tf})
                print(f"| {B},{H},{S},{D} | {causal} | {name} | {ms:.3f} | {tf:.1f} |")
            except Exception as e:  # a backend that does not take the shape
                print(f"| {B},{H},{S},{D} | {causal} | {name} | - | unavailable: {str(e)[:60]} |")
with open(out, "w") as f:
    json.dump({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "device": torch.cuda.get_device_name(0), "rows": rows}, f, indent=1)
