-- ckt kernel library: GEMM, C (M x N, row-major) = A (M x K) . B (K x N), f32 accumulation.
--   a_major = "k": A row-major M x K;        "m": A stored K x M row-major (M contiguous)
--   b_major = "n": B row-major K x N;        "k": B stored N x K row-major (the CK wrapper
--                                               GEMM tutorial's case: K contiguous)
-- A block computes one TM x TN tile of C (or, persistent, several), its K slices through a
-- multi-stage LDS ring, then the epilogue. The package, one concept a module:
--   options.lua    the options, their defaults per target and their checks
--   plan.lua       gemm.plan: the instruction, the wave grid, the copies, the LDS layouts
--   shapes.lua     the configuration for the problem sizes hinted (M =, N =, K =): a time model
--   hopper.lua     sm_90a's warpgroups, wgmma and its LDS layouts
--   lds.lua        copy plans, operand read maps, the swizzle search, the bank report
--   copies.lua     the global -> LDS copies of a K slice (cp.async, bulk tensor copies)
--   pipeline.lua   the kernel body: one producer/consumer schedule (copy and persistent settings)
--   schedule.lua   tile order, the persistent walk, the grid and occupancy
--   epilogue.lua   the accumulators through the epilogue into C
--   reference.lua  the CPU reference
local ckt = ckt or require "ckt"
local gemm = {}

gemm.OPTIONS = require("ckt.kernels.gemm.options").NAMES
gemm.plan = require "ckt.kernels.gemm.plan"
gemm.bank_report = require("ckt.kernels.gemm.lds").bank_report
gemm.reference = require "ckt.kernels.gemm.reference"
local pipeline = require "ckt.kernels.gemm.pipeline"
local schedule = require "ckt.kernels.gemm.schedule"

-- gemm.build(options) -> kernel, grid(M, N [, exe]) (the block count), plan
function gemm.build(o)
  -- autotune = true | {M=, N=, K=, ...}: tile, block and stages by measurement (ckt.kernels.tuning)
  -- (with size hints and no sizes of its own, autotune measures at the hinted sizes)
  if type(o) == "table" and o.autotune then
    if (o.M or o.N or o.K) and (o.autotune == true or type(o.autotune) == "table") then
      local t, c = {}, {}
      for k, v in pairs(o.autotune == true and {} or o.autotune) do t[k] = v end
      for k, v in pairs(o) do c[k] = v end
      for _, d in ipairs{"M", "N", "K"} do if t[d] == nil then t[d] = o[d] end end
      c.autotune = t
      o = c
    end
    return require("ckt.kernels.tuning").run("gemm", gemm, o)
  end
  if type(o) == "table" and (o.grouped ~= nil or o.index ~= nil) then return require("ckt.kernels.gemm.grouped").build(gemm, o, schedule) end -- grouped.lua
  local p = gemm.plan(o)
  if p.split_k > 1 then p.split_buffers = schedule.split_buffers(p) end -- (buffer sizes for a launch)
  local k = ckt.kernel{name = p.name, block = p.block, build = function(b) pipeline.body(b, p) end}
  return k, schedule.grid(p, k), p
end

return gemm
