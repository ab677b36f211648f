-- ckt.kernels.gemm.lds: how each operand tile travels global -> LDS -> registers. The copy plan
-- (the threads' 16-byte vectors and the write map), the operand read map (what
-- b:blockwise_gemm / ldmatrix loads), and the LDS layout ckt.lds.find_swizzle picks from both,
-- so that both are conflict-free by the target's bank model.
local ckt = ckt or require "ckt"
local fail = require("ckt.kernels.gemm.options").fail
local hopper = require "ckt.kernels.gemm.hopper"
local lds = {}

-- threads along K of sm_90a's element copies of a K-major tile (lds.copy_plan)
local UNALIGNED_ALONG = 16

-- The copy of an operand's LDS tile (rows x TK); contiguous_rows: the row dim is contiguous in
-- global memory. Bulk copies: no thread moves an element (the tensor memory accelerator writes
-- the tile).
function lds.copy_plan(p, rows, contiguous_rows, name)
  if p.copy == "tma" then return {vector_dim = contiguous_rows and 0 or 1, scalar_per_vector = p.v} end
  local v = p.aligned and p.v or 1
  local len = contiguous_rows and rows or p.TK
  if len % v ~= 0 then fail(("tile %s of %d is not a multiple of %d-element vectors"):format(name, len, v)) end
  local along = len // v
  if p.block % along ~= 0 and along % p.block ~= 0 then fail(("block %d and the %d vectors along %s do not tile each other"):format(p.block, along, name)) end
  local t_along = math.min(along, p.block)
  -- sm_90a, element copies of a K-major tile: 16 threads along K (32 bytes of a row, one
  -- sector), so that a thread's elements lie on few rows. Each row it touches costs a 64-bit
  -- address live across the slice's loads (K is not known); 64 threads along K gave a thread 96
  -- rows at 128 x 256 x 64 and the kernel spilled beside its 128 accumulators (issue 27)
  if p.hopper and v == 1 and not contiguous_rows then t_along = math.min(t_along, UNALIGNED_ALONG) end
  local t_other = p.block // t_along
  local other = contiguous_rows and p.TK or rows
  if other % t_other ~= 0 then fail(("block %d does not divide the %dx%d %s tile into whole passes"):format(p.block, rows, p.TK, name)) end
  local c = {vector_dim = contiguous_rows and 0 or 1, scalar_per_vector = v}
  if contiguous_rows then
    c.thread_layout = ckt.layout({t_along, t_other}, {1, t_along})
    c.lds = ckt.layout({rows, p.TK}, {1, rows})
    -- write map: thread -> the first element of its vector, tile index row + rows * k
    c.write = ckt.layout({{t_along, t_other}, other // t_other}, {{v, rows}, rows * t_other})
  else
    c.thread_layout = ckt.layout({t_other, t_along}, {t_along, 1})
    c.lds = ckt.layout({rows, p.TK}, {p.TK, 1})
    c.write = ckt.layout({{t_along, t_other}, other // t_other}, {{rows * v, 1}, t_other})
  end
  return c
end

local function flat(t, out)
  out = out or {}
  if type(t) == "table" then for _, x in ipairs(t) do flat(x, out) end else out[#out + 1] = t end
  return out
end

-- ldmatrix's lane addresses over a wave's part of the tile: lane l points at one 16-byte row of
-- an 8 x 8 matrix, row l % 8 (trans: K + l % 8); A x4: M + 8 for matrices 1, 3, K + 8 for 2, 3;
-- B x4 (an even number of N tiles per wave): K + 8 for matrices 1, 3, the next N tile for 2, 3
-- (lanes 16..31 point at the odd tile); B x2 (odd): K + 8 for matrix 1. unit(r, k): the index
-- stride of r rows and k along K. Returns the lanes' and the values' shapes and strides.
local function ldmatrix_lanes(p, m, operand, unit, trans)
  local pw = operand == "A" and p.m_per_wave or p.n_per_wave
  local mm = operand == "A" and m.m or m.n
  local wm, wn = p.waves_m, p.waves_n
  local lane = trans and unit(0, 1) or unit(1, 0)
  if operand == "A" then
    return {8, 2, 2, wn, wm}, {lane, unit(8, 0), unit(0, 8), 0, unit(pw * mm, 0)}, {pw}, {unit(mm, 0)}
  elseif pw % 2 == 0 then
    return {8, 2, 2, wn, wm}, {lane, unit(0, 8), unit(mm, 0), unit(pw * mm, 0), 0}, {pw // 2}, {unit(2 * mm, 0)}
  end
  return {8, 2, 2, wn, wm}, {lane, unit(0, 8), 0, unit(pw * mm, 0), 0}, {pw}, {unit(mm, 0)}
end

-- Operand reads: what b:blockwise_gemm loads from LDS per K step is the traits' block-level
-- distribution of the operand, or on NVIDIA ldmatrix's row addresses (T:tv: (thread, value) ->
-- m * k_step + k over one K step of the rows x k_step tile); a lane's run of contiguous K
-- (k_chunk on NVIDIA: 4-byte reads; k_pack on AMD: 16-byte reads) is one vector. As a bank-model
-- thread map: (thread, vector) -> the tile index row + rows * k of the vector's first element,
-- for every K step of the slice. Returns the map and the vector length.
function lds.read_map(p, m, operand, rows, trans)
  local tv = p.traits:tv(operand, p.TM, p.TN, p.TK, p.block)
  local ks = p.k_step
  if trans then
    -- ldmatrix.trans from an M- / N-contiguous tile: a lane points at a 16-byte M / N row at one K
    -- (the row + rows * k index of its first element): vectors of 8 along the rows
    local tsh, tst, vsh, vst = ldmatrix_lanes(p, m, operand, function(r, k) return r + rows * k end, true)
    vsh[#vsh + 1], vst[#vst + 1] = p.TK // ks, rows * ks
    return ckt.layout({tsh, vsh}, {tst, vst}), 8
  end
  if p.vendor == "nvidia" and m.ldmatrix and p.k_pack == m.k_chunk then
    -- ldmatrix (what the CUDA dialect emits for K-contiguous 16-bit tiles): a lane points at one
    -- 16-byte K row of one 8 x 8 matrix
    local tsh, tst, vsh, vst = ldmatrix_lanes(p, m, operand, function(r, k) return r * ks + k end, false)
    table.insert(vsh, 1, 8); table.insert(vst, 1, 1)
    tv = ckt.layout({tsh, vsh}, {tst, vst})
  end
  local function conv(st) return (st // ks) + rows * (st % ks) end
  local ts, tt = flat(tv:mode(0):shape()), flat(tv:mode(0):stride())
  local vs, vt = flat(tv:mode(1):shape()), flat(tv:mode(1):stride())
  local run, i = 1, 1
  while i <= #vs and vt[i] == run do run = run * vs[i]; i = i + 1 end
  local tsh, tst, vsh, vst = {}, {}, {}, {}
  for j = 1, #ts do tsh[j], tst[j] = ts[j], conv(tt[j]) end
  for j = i, #vs do vsh[#vsh + 1], vst[#vst + 1] = vs[j], conv(vt[j]) end
  vsh[#vsh + 1], vst[#vst + 1] = p.TK // ks, rows * ks
  return ckt.layout({tsh, vsh}, {tst, vst}), run
end

-- The LDS layout of an operand's copy plan c (rows x TK), with why it was chosen
function lds.layout(p, m, o, c, rows, name, contiguous_rows)
  if p.hopper then return hopper.copy_lds(p, c, rows, name, contiguous_rows) end
  -- M/N-contiguous tiles: ldmatrix.trans on NVIDIA; element reads from MFMA's fragments on AMD
  local trans = contiguous_rows and p.vendor == "nvidia" and m.ldmatrix and p.k_pack == m.k_chunk
  if (contiguous_rows and not trans) or o.swizzle == false or p.dtype == "f32" then
    c.why = contiguous_rows and not trans and "M/N-contiguous tile, element operand reads" or p.dtype == "f32" and "row-major (f32 runs on the CPU only)" or "row-major (no swizzle)"
    return
  end
  local read, rv = lds.read_map(p, m, name, rows, trans)
  c.read, c.read_vector = read, rv
  local s = ckt.lds.find_swizzle{target = p.arch, layout = c.lds, dtype = p.dtype,
                                 write = {thread_map = c.write, vector = p.aligned and p.v or 1}, read = {thread_map = read, vector = rv}}
  c.lds, c.conflict_free = s.layout, s.conflict_free
  c.why = (s.swizzle and tostring(s.swizzle) or (s.padding_banks > 0 and (s.padding_banks .. " banks of padding") or "plain"))
          .. (s.conflict_free and ", conflict-free" or ", not conflict-free") .. " for " .. p.arch
end

-- the bank model's cycles and ideal cycles of one block's copy-in (write) and operand reads of
-- A and B, by ckt.lds.analyze_tensor on the plan's layouts
function lds.bank_report(p)
  local r = {}
  for _, x in ipairs{{"A", p.a_copy}, {"B", p.b_copy}} do
    local c = x[2]
    local function an(map, vector, op)
      local a = ckt.lds.analyze_tensor{target = p.arch, tensor_layout = c.lds, dtype = p.dtype, thread_map = map, vector = vector, op = op}
      return {cycles = a.cycles, ideal = a.ideal_cycles}
    end
    -- (bulk copies have no per-thread write map)
    r[x[1]] = {write = c.write and an(c.write, p.aligned and p.v or 1, "write") or nil, read = c.read and an(c.read, c.read_vector, "read") or nil}
  end
  return r
end

return lds
