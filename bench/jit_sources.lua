-- The generated sources of the library kernels whose cold compiles are compared (the GEMM and
-- attention defaults on sm_90a and sm_90, the sm_90 transposes), one file each:
-- <dir>/<kernel>_<target>_<variant>.cu. Run in two trees, then bench/jit_ab.sh compares them.
--   ckt-lua bench/jit_sources.lua <dir>
local dir = assert(arg[1], "usage: ckt-lua bench/jit_sources.lua <dir>")
local gemm = require "ckt.kernels.gemm"
local att = require "ckt.kernels.attention"
local tr = require "ckt.kernels.transpose"
local function put(name, k, t)
  local f = assert(io.open(dir .. "/" .. name .. ".cu", "w"))
  f:write(k:source(t))
  f:close()
end
for _, t in ipairs{"sm_90a", "sm_90"} do
  for _, dt in ipairs{"f16", "bf16"} do put(("gemm_%s_%s"):format(t, dt), (gemm.build{dtype = dt, target = t}), t) end
  for _, D in ipairs{64, 128} do put(("attention_%s_d%d"):format(t, D), (att.build{head_dim = D, target = t}), t) end
end
for _, dt in ipairs{"f32", "f16"} do put("transpose_sm_90_" .. dt, (tr.build{dtype = dt, target = "sm_90"}), "sm_90") end
