-- ckt.kernels.gemm.hopper: sm_90a's setup — the warpgroup grid, the wgmma instruction, the MMA
-- groups left in flight, and the LDS layouts wgmma's descriptors describe.
local ckt = ckt or require "ckt"
local fail = require("ckt.kernels.gemm.options").fail
local hopper = {}

-- Has the target warpgroup MMAs? (sm_90a, cpu:sm_90a: the record's hardware model says)
function hopper.available(rec) return rec.hw.wgmma end

-- The warpgroup grid and the wgmma instruction. Warpgroups split TM first (each at least 64 rows,
-- one m64 instruction per 64 rows), then TN; the instruction's N is the largest of 256, 208, 192 (the
-- 16-bit forms), 128, 64 that divides a warpgroup's columns.
function hopper.setup(p, o)
  if p.block % 128 ~= 0 then fail(("block %d is not a whole number of 128-thread warpgroups (wgmma on sm_90a)"):format(p.block)) end
  local wgs = p.block // 128
  local wm = 1
  for c = wgs, 1, -1 do
    if wgs % c == 0 and p.TM % (c * 64) == 0 then wm = c; break end
  end
  local wn = wgs // wm
  if p.TM % (wm * 64) ~= 0 then fail(("tile TM %d is not a multiple of 64 rows per warpgroup (wgmma m64)"):format(p.TM)) end
  if p.TN % wn ~= 0 then fail(("tile TN %d does not split over %d warpgroups"):format(p.TN, wn)) end
  local cols, n = p.TN // wn, nil
  for _, c in ipairs(p.fp8 and {256, 128, 64} or {256, 208, 192, 176, 128, 64}) do if cols % c == 0 then n = c; break end end
  if not n then fail(("tile TN %d gives %d columns per warpgroup, not a multiple of 64 nor 208 (wgmma n64/n128/n192/n208/n256)"):format(p.TN, cols)) end
  -- one instruction's K is 32 bytes (16 elements of 16 bits, 32 of the 8-bit floats); a swizzle
  -- row 32, 64 or 128 bytes (p.k_atom elements: the K-major LDS atom and bulk-copy box width)
  local e = p.fp8 and 1 or 2
  local kin, row = 32 // e, 128 // e
  if not (p.TK == kin or p.TK == 2 * kin or p.TK % row == 0) then fail(("tile TK %d must be %d, %d, or a multiple of %d (whole swizzle rows of %d-bit elements)"):format(p.TK, kin, 2 * kin, row, 8 * e)) end
  if o.k_pack and o.k_pack ~= kin then fail(("k_pack %s: wgmma takes its whole K of %d from LDS (k_pack %d)"):format(tostring(o.k_pack), kin, kin)) end
  if o.swizzle == false then fail("swizzle = false: wgmma's LDS layouts are the hardware's swizzled ones") end
  p.k_atom = math.min(p.TK, row)
  p.instr = ("wgmma_m64n%dk%d_%s"):format(n, kin, p.dtype)
  if o.instr and o.instr ~= p.instr then fail(("instr %s: this tile and block take %s"):format(o.instr, p.instr)) end
  p.waves_m, p.waves_n = wm, wn
  -- wgmma groups left in flight while the next slice's copies and barrier run: each one costs a
  -- slice of copy look-ahead (a stage they still read cannot be refilled), so S - 2 at most
  p.mma_pending = o.mma_pending or (p.stages >= 3 and 1 or 0)
  if math.type(p.mma_pending) ~= "integer" or p.mma_pending < 0 or p.mma_pending > p.stages - 2 then
    fail(("mma_pending %s must be an integer in 0..stages-2 = %d"):format(tostring(o.mma_pending), p.stages - 2))
  end
end

-- sm_90a with element copies (aligned = false and cp.async: any M, N, K): a thread loads each
-- element of its share of a slice into a register before storing it to LDS, and the compiler
-- issues a slice's loads together, so a thread holds at once its accumulators (TM TN / block),
-- its copy elements ((TM + TN) TK / block) and a 64-bit address per row it copies from (16
-- threads along K: (TM + TN) 16 / block rows, lds.copy_plan). Their sum, against what ptxas used
-- (NVRTC 13, sm_90a, f16 and bf16, every major): 272 at 128 x 256 x 64 / 256 spilled 100 bytes at
-- 255 registers; 248-288 took 252-255 (no margin); 224 took 226-245, 208 took 180-211, 160
-- took 178-194. The default tile and the shape model's candidates halve TK until the sum is
-- within ELEMENT_BUDGET (nil: no K slice of at least one instruction's K fits; a tile given is
-- taken as it is). Since the first K slice's MMAs are in the K loop (pipeline.lua) and the
-- generated index arithmetic changed (2026-11-28), 224 took 252-255 for 16-bit elements and
-- spilled 4 bytes at 255 (f16 and bf16 with B N-major, e4m3): the budget is 216 (208 for the
-- 8-bit elements), and a slice is at least two instructions' K: one (16 wide) ran 3.3x slower
-- on an H100 (4104^3 f16: 34.6 against 114.1 TFLOP/s, 32 wide). So the 128 x 256 tile has no
-- slice within the budget, and the default tile's TN halves (plan.lua): 128 x 128 x 64, 111.7 /
-- 104.4 TFLOP/s with A and B K-major / B N-major (docs/gemm.md).
hopper.ELEMENT_BUDGET = 216
hopper.ELEMENT_BUDGET_FP8 = 208

function hopper.element_tk(TM, TN, TK, block, fp8, sums)
  local kmin = 2 * (fp8 and 32 or 16) -- two instructions' K
  local budget = fp8 and hopper.ELEMENT_BUDGET_FP8 or hopper.ELEMENT_BUDGET
  -- (sums: accumulator sets a thread holds, 2 with fp8 block scales: the slice's product and the sum)
  local function cost(tk) return ((sums or 1) * TM * TN + (TM + TN) * tk + 2 * (TM + TN) * 16) / block end
  while TK > kmin and cost(TK) > budget do TK = TK // 2 end
  return cost(TK) <= budget and TK or nil
end

-- The LDS tile (rows x TK) in the layout wgmma's descriptors describe, as a ckt layout composed
-- with the hardware swizzle (Sw<B,3,3> on 16-bit elements is Sw<B,4,3> on bytes: 32B, 64B, 128B
-- for B = 1, 2, 3). K-major: rows of min(TK, 64) elements (32, 64 or 128 bytes), K beyond 64 in
-- further 64-wide atoms after all rows; M/N-major: 64-row atoms of 128-byte K rows.
function hopper.lds(p, rows, contiguous_rows)
  if contiguous_rows then
    if rows % 64 ~= 0 then fail(("an M/N-contiguous tile of %d rows is not whole 64-row atoms of the 128B swizzle"):format(rows)) end
    return ckt.composed(ckt.swizzle(3, 3, 3), 0, ckt.layout({{64, rows // 64}, p.TK}, {{1, 64 * p.TK}, 64})),
           "M/N-major 128B swizzle (64-row atoms, 128-byte K rows), read by wgmma through descriptors"
  end
  -- (8-bit elements: rows of up to 128 elements, Sw<B,4,3> on elements is Sw<B,4,3> on bytes)
  local e, w = p.fp8 and 1 or 2, p.k_atom
  local b = ({[32] = 1, [64] = 2, [128] = 3})[w * e]
  local l = p.TK <= w and ckt.layout({rows, p.TK}, {p.TK, 1}) or ckt.layout({rows, {w, p.TK // w}}, {w, {1, rows * w}})
  return ckt.composed(ckt.swizzle(b, p.fp8 and 4 or 3, 3), 0, l), ("K-major %dB swizzle (rows of %d bytes), read by wgmma through descriptors"):format(w * e, w * e)
end

-- The LDS side of an operand's copy plan c on sm_90a: the hardware layout, and with cp.async into
-- an M/N-contiguous tile the threads of one 64-row atom's copy (64 / v threads along the rows)
function hopper.copy_lds(p, c, rows, name, contiguous_rows)
  c.lds, c.why = hopper.lds(p, rows, contiguous_rows)
  if contiguous_rows and p.copy ~= "tma" then
    local v = p.aligned and p.v or 1
    local along = 64 // v
    if p.block % along ~= 0 or p.TK % (p.block // along) ~= 0 then
      fail(("block %d does not divide a 64 x %d atom of the M/N-contiguous %s tile into whole passes of %d-element copies"):format(p.block, p.TK, name, v))
    end
    c.atom_thread_layout = ckt.layout({along, p.block // along}, {1, along})
  end
end

return hopper
