-- Golden corpus of generated sources: writes the source every library kernel (several option sets)
-- and every kernel the scripts/ build emits for each target into a directory, one file per kernel
-- and target (an error message in the file where a target refuses the kernel). A refactoring of
-- the emitter is checked by dumping before and after and diffing the two directories: the
-- generated sources must stay byte-identical.
-- Run: ckt-lua tests/emit_golden/dump.lua OUTDIR [REPO_ROOT]; compare two dumps with
-- tests/emit_golden/compare.sh BEFORE AFTER (script line numbers in comments aside)
local out = assert(arg[1], "usage: dump.lua OUTDIR [REPO_ROOT]")
local root = arg[2] or "."
local targets = {"cpu", "cpu:gfx90a", "cpu:sm_90", "cpu:sm_90a", "gfx90a", "sm_80", "sm_90", "sm_90a"}

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
assert(os.execute("mkdir -p " .. sh_quote(out)))

local written = 0
local function write(name, text)
  local f = assert(io.open(out .. "/" .. name:gsub("[^%w_.-]", "_"), "w"))
  f:write(text)
  f:close()
  written = written + 1
end

-- an error without its Lua position (kernels/ are edited beside the emitter: line numbers move)
local function why(e) return "error: " .. tostring(e):gsub("^[^:%s]*%.lua:%d+: ", "") .. "\n" end

-- the source of kernel (or the error that made it) for target
local function emit(name, target, ok, k)
  if not ok then return write(name .. "@" .. target, why(k)) end
  local sok, src = pcall(k.source, k, target)
  write(name .. "@" .. target, sok and src or why(src))
end

local gemm = require "ckt.kernels.gemm"
local gemm_variants = {
  default = {},
  bf16 = {dtype = "bf16"},
  f32 = {dtype = "f32"},
  f16_f32out = {dtype = "f16", out = "f32"},
  mn = {a_major = "m", b_major = "n"},
  km = {a_major = "k", b_major = "n"},
  tma = {copy = "tma"},
  async = {copy = "cp.async"},
  persistent = {persistent = true},
  persistent_async = {persistent = true, copy = "cp.async"},
  bf16_f32out_persistent = {dtype = "bf16", out = "f32", persistent = true},
  stages2 = {stages = 2},
}
local names = {}
for n in pairs(gemm_variants) do names[#names + 1] = n end
table.sort(names)
for _, t in ipairs(targets) do
  for _, n in ipairs(names) do
    local o = {target = t}
    for key, v in pairs(gemm_variants[n]) do o[key] = v end
    emit("gemm_" .. n, t, pcall(gemm.build, o))
  end
end

local copy, ew = require "ckt.kernels.copy", require "ckt.kernels.elementwise"
local tr, red = require "ckt.kernels.transpose", require "ckt.kernels.reduce"
for _, dt in ipairs{"f32", "f16", "bf16"} do
  for _, t in ipairs(targets) do
    emit("copy_" .. dt, t, pcall(copy.build, {dtype = dt}))
    emit("copy_pad_" .. dt, t, pcall(copy.build, {dtype = dt, pad = true}))
    emit("transpose_" .. dt, t, pcall(tr.build, {dtype = dt, target = t}))
    emit("elementwise_" .. dt, t, pcall(ew.build, {dtype = dt, inputs = 2, f = function(x, y) return ckt.max(x * y + 1, 0) end}))
    emit("reduce_sum_" .. dt, t, pcall(red.build, {dtype = dt}))
    emit("reduce_max_" .. dt, t, pcall(red.build, {dtype = dt, op = "max"}))
  end
end

-- every kernel the scripts build: ckt.kernel is wrapped to keep them; the scripts run on the CPU
-- target with their output discarded
local scripts = {"copy", "transpose", "gemm", "tour", "layouts", "distributions", "bank_conflicts"}
local made, kernel = {}, ckt.kernel
ckt.kernel = function(...)
  local k = kernel(...)
  made[#made + 1] = k
  return k
end
local real_print, real_write = print, io.write
for _, s in ipairs(scripts) do
  made = {}
  local path = root .. "/scripts/" .. s .. ".lua"
  print, io.write = function() end, function() return io.stdout end
  arg = {[0] = path}
  local ok, err = pcall(dofile, path)
  print, io.write = real_print, real_write
  if not ok then write("script_" .. s .. "_error", why(err)) end
  for i, k in ipairs(made) do
    for _, t in ipairs(targets) do emit(("script_%s_%d"):format(s, i), t, true, k) end
  end
end
ckt.kernel = kernel
print(("%d files in %s"):format(written, out))
