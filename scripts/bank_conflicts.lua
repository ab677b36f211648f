-- AMD's note on LDS bank conflicts and the XOR preshuffle, end to end: LDS bank conflicts of an MFMA-style fp16 tile on gfx90a, and their remedies.
local T = ckt.target("gfx90a")
print(("gfx90a: %d banks x %d B, %d KiB LDS, wave %d"):format(T.lds_banks, T.bank_bytes, T.lds_bytes // 1024, T.wave_size))

-- The tile: 64 rows (M) x KPerBlock = 64 fp16 columns, row-major in LDS; KPack = 8 (16 bytes).
local K, KPack = 64, 8
local tile = ckt.layout({64, K}, "row")

-- Thread maps: (thread, value) -> tile index of the first element of a 16-byte vector
-- (the tile index of (row, col) is row + 64*col, CuTe's colexicographic order).
-- Writes: lane l stores row l//8 + 8v, columns 8*(l%8) .. +7 (ds_write_b128).
local write_map = ckt.layout({{8, 8}, 8}, {{512, 1}, 8})
-- Reads: the MFMA 16x16x16 A operand: lane l reads row l%16 + 16v, columns 8*(l//16) .. +7 (vertical).
local read_map = ckt.layout({{16, 4}, 4}, {{1, 512}, 16})

local function show(name, r)
  print(("%-34s %3d cycles for %3d ideal  (%d-way worst)"):format(name, r.cycles, r.ideal_cycles, r.ways))
end

local w = ckt.lds.analyze_tensor{target = "gfx90a", tensor_layout = tile, dtype = "f16", thread_map = write_map, vector = 8, op = "write"}
show("ds_write_b128, row-major", w)
assert(w.cycles == w.ideal_cycles, "consecutive 16-byte writes are conflict-free")

local r = ckt.lds.analyze_tensor{target = "gfx90a", tensor_layout = tile, dtype = "f16", thread_map = read_map, vector = 8, op = "read"}
show("ds_read_b128 (MFMA A), row-major", r)
print(r.report)
assert(r.ways == 4, "the vertical read is 4-way conflicted, as AMD's note on LDS bank conflicts says")

-- Remedy 1: pad every row by some banks (costs LDS).
for _, banks in ipairs{4, 8} do -- multiples of 4 banks keep the 16-byte alignment ds_read_b128 needs
  local padded, extra = ckt.lds.pad(tile, banks, "f16")
  local pr = ckt.lds.analyze_tensor{target = "gfx90a", tensor_layout = padded, dtype = "f16", thread_map = read_map, vector = 8, op = "read"}
  show(("padding %d bank(s): %s (+%d B)"):format(banks, tostring(padded), extra), pr)
end

-- Remedy 2: the XOR preshuffle (col' = (row mod KPerBlock/KPack) xor col, in KPack units): no LDS cost.
local xs = ckt.lds.xor_preshuffle(K, KPack, 64) -- a composed layout over the row-major (64, K) tile
local xr = ckt.lds.analyze_tensor{target = "gfx90a", tensor_layout = xs, dtype = "f16", thread_map = read_map, vector = 8, op = "read"}
local xw = ckt.lds.analyze_tensor{target = "gfx90a", tensor_layout = xs, dtype = "f16", thread_map = write_map, vector = 8, op = "write"}
show("XOR preshuffle " .. tostring(xs:swizzle()) .. " read", xr)
show("XOR preshuffle write", xw)
assert(xr.cycles == xr.ideal_cycles and xw.cycles == xw.ideal_cycles, "the XOR preshuffle removes the conflicts")

-- Remedy 3: let the search find one by itself.
local found = ckt.lds.find_swizzle{target = "gfx90a", layout = tile, dtype = "f16",
  write = {thread_map = write_map, vector = 8}, read = {thread_map = read_map, vector = 8}}
print(("find_swizzle: %s  conflict-free=%s  LDS %d B (+%d)"):format(tostring(found.layout), tostring(found.conflict_free),
  found.lds_bytes, found.lds_extra_bytes))
assert(found.conflict_free)
print(("  (%d placements analysed; read %d/%d cycles, write %d/%d)"):format(found.candidates, found.read.cycles, found.read.ideal_cycles,
  found.write.cycles, found.write.ideal_cycles))
-- Without swizzles that keep 16-byte vectors whole (M = 0 splits them), the search falls back to padding and says what it costs.
local padded = ckt.lds.find_swizzle{target = "gfx90a", layout = tile, dtype = "f16", M = {0, 0},
  write = {thread_map = write_map, vector = 8}, read = {thread_map = read_map, vector = 8}}
print(("find_swizzle, M = 0 only: %s  conflict-free=%s  padding %d banks, +%d B"):format(tostring(padded.layout),
  tostring(padded.conflict_free), padded.padding_banks, padded.lds_extra_bytes))
assert(padded.conflict_free and padded.lds_extra_bytes > 0)

-- The same read on NVIDIA sm_90 (128-bit accesses: four phases of 8 lanes).
local nv_map = ckt.layout({{16, 2}, {4, 2}}, {{1, 512}, {16, 1024}})
local nr = ckt.lds.analyze_tensor{target = "sm_90", tensor_layout = tile, dtype = "f16", thread_map = nv_map, vector = 8, op = "read"}
show("sm_90 lds128 (same pattern, warp 32)", nr)
