-- The library GEMM's generated sources over a broad set of options and targets, dumped for a
-- byte-for-byte diff before and after a change to kernels/gemm (a refactoring must leave them
-- identical). Not a spec: run by hand.
--   ckt-lua tests/lua/gemm_golden.lua <dir>        one file per case under <dir>, plus <dir>/INDEX
--   diff -r before/ after/
-- A case that does not build is recorded with its error. Each file also holds the plan's scalar
-- fields and grid(M, N) at a few sizes. Lua positions in the text (an error's chunk:line, the
-- emitter's "line N:" comments) are normalised, so that moving code between files diffs clean.
local ckt = ckt or require "ckt"
local gemm = require "ckt.kernels.gemm"
local dir = assert(arg and arg[1], "usage: gemm_golden.lua <dir>")
os.execute("mkdir -p '" .. dir .. "'")

local TARGETS = {"cpu", "cpu:sm_90", "cpu:sm_90a", "cpu:gfx90a", "cpu:gfx942", "sm_80", "sm_90", "sm_90a", "gfx90a", "gfx908", "gfx942"}
local relu = function(x) return ckt.max(x, 0) end
local silu = function(x) return x / (1 + ckt.exp(-x)) end

local cases = {}
local function add(t, o)
  local c = {target = t}
  for k, v in pairs(o) do c[k] = v end
  cases[#cases + 1] = c
end
local function key(o)
  local ks = {}
  for k in pairs(o) do ks[#ks + 1] = k end
  table.sort(ks)
  local parts = {}
  for _, k in ipairs(ks) do
    local v = o[k]
    if type(v) == "table" then v = table.concat(v, "x")
    elseif type(v) == "function" then v = v == relu and "relu" or "silu" end
    parts[#parts + 1] = k .. "=" .. tostring(v)
  end
  return (table.concat(parts, ",")):gsub("[^%w=,._x-]", "_")
end

local VARIANTS = {
  {}, {copy = "cp.async"}, {copy = "tma"}, {persistent = true}, {persistent = 3}, {persistent = 3, copy = "tma"},
  {persistent = 2, copy = "cp.async"}, {aligned = false}, {aligned = true}, {aligned = false, persistent = 2},
}
for _, t in ipairs(TARGETS) do
  for _, dt in ipairs{"f16", "bf16", "f32"} do
    for _, mj in ipairs{{"k", "k"}, {"k", "n"}, {"m", "k"}, {"m", "n"}} do
      for _, v in ipairs(VARIANTS) do
        local o = {dtype = dt, a_major = mj[1], b_major = mj[2]}
        for k, x in pairs(v) do o[k] = x end
        add(t, o)
      end
    end
  end
  local extra = {
    {dtype = "f16", out = "f32"}, {dtype = "bf16", out = "f32"}, {dtype = "f16", out = "bf16"}, {dtype = "f32", out = "f16"},
    {dtype = "f16", out = "f32", copy = "tma"}, {dtype = "f16", out = "f32", persistent = 2, copy = "tma"},
    {dtype = "f16", epilogue = relu}, {dtype = "bf16", epilogue = silu, out = "f32"}, {dtype = "f16", epilogue = relu, persistent = 3},
    {dtype = "f16", epilogue = relu, copy = "tma"},
    {dtype = "f16", tile = {64, 64, 32}, block = 128}, {dtype = "f16", tile = {64, 64, 32}, block = 128, stages = 2},
    {dtype = "f16", tile = {128, 128, 32}, block = 256, stages = 3}, {dtype = "f16", tile = {128, 128, 64}, block = 128, stages = 3},
    {dtype = "f16", tile = {64, 128, 64}, block = 128, stages = 4, mma_pending = 2},
    {dtype = "f16", tile = {64, 128, 64}, block = 128, stages = 4, mma_pending = 0, copy = "tma"},
    {dtype = "bf16", tile = {128, 256, 64}, block = 256, stages = 3}, {dtype = "f16", tile = {64, 64, 16}, block = 128, stages = 2},
    {dtype = "f16", group = 1}, {dtype = "f16", group = 4, persistent = 3}, {dtype = "f16", swizzle = false},
    {dtype = "f16", a_major = "m", b_major = "n", swizzle = false}, {dtype = "f16", k_pack = 4}, {dtype = "f16", k_pack = 16},
    {dtype = "f16", instr = "mma_m16n8k16_f16"}, {dtype = "f16", instr = "mfma_f32_16x16x16f16"},
    {dtype = "f16", instr = "mfma_f32_32x32x8f16", k_pack = 4}, {dtype = "f16", name = "my_gemm"},
    {dtype = "f32", tile = {32, 32, 16}, block = 64}, {dtype = "f16", stages = 8, tile = {64, 64, 32}, block = 128},
  }
  for _, o in ipairs(extra) do add(t, o) end
end

local SIZES = {{1, 1}, {127, 129}, {1000, 3000}, {8192, 8192}, {100000, 7}}
local index = {}
for i, o in ipairs(cases) do
  local name = ("%04d_%s"):format(i, key(o))
  local out = {}
  local ok, k, grid, p = pcall(gemm.build, o)
  if not ok then
    out[#out + 1] = "ERROR " .. tostring(k)
  else
    for _, f in ipairs{"dtype", "out", "a_major", "b_major", "target", "arch", "instr", "TM", "TN", "TK", "block", "stages", "group",
                       "k_pack", "k_step", "waves_m", "waves_n", "m_per_wave", "n_per_wave", "v", "aligned", "copy", "persistent",
                       "mma_pending", "hopper", "name"} do
      out[#out + 1] = ("plan.%s = %s"):format(f, tostring(p[f]))
    end
    for _, d in ipairs{"M", "N", "K"} do out[#out + 1] = ("multiple_of.%s = %s"):format(d, tostring(p.multiple_of[d])) end
    for _, c in ipairs{{"a", p.a_copy}, {"b", p.b_copy}} do out[#out + 1] = ("%s_copy.why = %s"):format(c[1], tostring(c[2].why)) end
    for _, s in ipairs(SIZES) do out[#out + 1] = ("grid(%d, %d) = %s"):format(s[1], s[2], tostring(grid(s[1], s[2]))) end
    local oks, src = pcall(k.source, k, o.target)
    out[#out + 1] = oks and src or ("SOURCE ERROR " .. tostring(src))
  end
  -- Lua positions: an error's chunk:line, the emitter's "/* line N:" comments
  local text = table.concat(out, "\n"):gsub("([%w_/]+%.lua):%d+", "%1:N"):gsub("/%* line %d+: ", "/* line N: ")
  text = text:gsub("\nERROR [%w_/]+%.lua:N: ", "\nERROR "):gsub("^ERROR [%w_/]+%.lua:N: ", "ERROR ")
  local f = assert(io.open(dir .. "/" .. name, "w"))
  f:write(text, "\n")
  f:close()
  index[#index + 1] = name .. (ok and "" or " (error)")
end
local f = assert(io.open(dir .. "/INDEX", "w"))
f:write(table.concat(index, "\n"), "\n")
f:close()
print(("gemm_golden: %d cases into %s"):format(#cases, dir))
