-- The sources the lab starts from: the library's sm_90a GEMM (f16, K-major) as the library
-- builds it, and with persistent = true; given a third path, the sm_90 (mma.sync) default.
--   ckt-lua bench/hopper_lab/gen.lua DEFAULT.cu PERSISTENT.cu [SYNC.cu]
local gemm = require "ckt.kernels.gemm"
local function gen(o, path)
  local f = assert(io.open(path, "w"))
  f:write(gemm.build(o):source(o.target))
  f:close()
end
gen({target = "sm_90a", dtype = "f16"}, assert(arg[1], "usage: gen.lua DEFAULT.cu PERSISTENT.cu"))
gen({target = "sm_90a", dtype = "f16", persistent = true}, assert(arg[2], "usage: gen.lua DEFAULT.cu PERSISTENT.cu"))
if arg[3] then gen({target = "sm_90", dtype = "f16"}, arg[3]) end
