-- One launch of the default attention forward (sm_90, f16, 4 x 32 x 4096 x 128) for a profiler:
-- ncu -k regex:attn -c 1 --section SpeedOfLight --section WarpStateStats --section Occupancy
--     ckt-lua tests/gpu/attention_ncu.lua [head_dim=128] [causal=false]
local attention = require "ckt.kernels.attention"
local D = tonumber(arg[1] or "128")
local causal = arg[2] == "true"
local B, H, S = 4, 32, 4096
local dev = ckt.device("cuda")
local k, grid = attention.build{dtype = "f16", head_dim = D, causal = causal, target = "sm_90"}
local exe = k:compile{target = "sm_90"}
local function buf(n, seed) local a = ckt.array("f16", n):random{seed = seed, lo = -1, hi = 1}; local b = dev:alloc("f16", n); b:upload(a); return b end
local q, kk, v = buf(B * H * S * D, 1), buf(B * H * S * D, 2), buf(B * H * S * D, 3)
local o, lse = dev:alloc("f16", B * H * S * D), dev:alloc("f32", B * H * S)
print(("%.3f ms"):format(exe:launch{grid = grid(B, H, S), Q = q, K = kk, V = v, O = o, LSE = lse, B = B, H = H, H_kv = H, S_q = S, S_k = S, timed = true}))
local r = exe:resources()
print("registers", r.registers, "spills", r.spill_bytes, "lds", r.lds_bytes)
