-- Compile test of the kernel library for one GPU target (argument: gfx90a or sm_90), compile
-- only: every library kernel in every dtype compiles without spills or scratch and with the LDS
-- it declares; the transpose uses 128-bit LDS and global accesses (code-object checks). Exits 77
-- ("SKIPPED: ...") without the compiler.
local target = arg[1] or "gfx90a"
local copy, ew = require "ckt.kernels.copy", require "ckt.kernels.elementwise"
local tr, red = require "ckt.kernels.transpose", require "ckt.kernels.reduce"

local function compile(k) return k:compile{target = target, compile_only = true, cache = false} end
local probe = ckt.kernel{name = "probe", block = 64, build = function(b) end}
local ok, e = pcall(compile, probe)
if not ok then
  if tostring(e):find("not found") or tostring(e):find("cannot load") or tostring(e):find("no NVRTC") then
    print(("SKIPPED: %s kernel compile tests: %s"):format(target, e))
    os.exit(77)
  end
  error(e)
end

-- LDS above CUDA's 48 KiB static limit is an extern array sized at launch: the code object declares none of it
local function dynamic_lds(k) return k:source(target):find("extern __shared__", 1, true) ~= nil end

local failures = 0
local function check(cond, what)
  print(("%s %s"):format(cond and "ok  " or "FAIL", what))
  if not cond then failures = failures + 1 end
end

for _, dt in ipairs{"f32", "f16", "bf16"} do
  local kernels = {
    copy = (copy.build{dtype = dt, pad = true}),
    elementwise = (ew.build{dtype = dt, inputs = 2, f = function(x, y) return ckt.max(x * y + 1, 0) end}),
    reduce = (red.build{dtype = dt, op = "max"}),
    transpose = (tr.build{dtype = dt, target = target}),
    -- the row kernels (ckt.kernels.rows): one pass and streamed in one kernel, shuffles and an
    -- LDS exchange between waves (256 threads a row)
    softmax = (require("ckt.kernels.softmax").build{dtype = dt}),
    layernorm = (require("ckt.kernels.layernorm").build{dtype = dt, residual = true, sum = true, stats = true}),
    rmsnorm = (require("ckt.kernels.rmsnorm").build{dtype = dt, N = 1024}),
  }
  for _, name in ipairs{"copy", "elementwise", "reduce", "transpose", "softmax", "layernorm", "rmsnorm"} do
    local exe = compile(kernels[name])
    local r = exe:resources()
    local spills = (r.vgpr_spills or 0) + (r.sgpr_spills or 0) + (r.spill_stores or 0) + (r.scratch_bytes or 0)
    local what = ("%s %s %s: compiled in %.0f ms (%s, scratch %d bytes)"):format(target, name, dt, exe:compile_ms(),
          r.vgprs and ("vgprs=" .. r.vgprs) or ("registers=" .. tostring(r.registers)), r.scratch_bytes or 0)
    -- every library kernel keeps its registers private: no spills and no scratch (AMD: the
    -- private segment of the code object's metadata is 0 bytes), and no LDS beyond what it
    -- declares (LLVM's AMDGPU backend can move private arrays to LDS: the bf16 elementwise
    -- kernel once had 64 bytes of scratch and 4096 bytes of LDS it never asked for)
    check(spills == 0, what .. ", no spills, no scratch")
    local dynamic = dynamic_lds(kernels[name])
    check(r.lds_bytes == (dynamic and 0 or kernels[name]:lds_bytes()), ("%s %s %s: LDS %d bytes as built (%d %s)"):format(
          target, name, dt, r.lds_bytes, kernels[name]:lds_bytes(), dynamic and "dynamic" or "static"))
    if name == "transpose" then
      local d, why = exe:disassembly()
      if not d then
        print(("SKIPPED: %s disassembly checks: %s"):format(target, why or "no disassembler"))
      elseif target:sub(1, 3) == "gfx" then
        for _, ins in ipairs{"ds_write_b128", "ds_read_b128", "global_load_dwordx4", "global_store_dwordx4"} do
          check(d:find(ins) ~= nil, ("%s transpose %s uses %s"):format(target, dt, ins))
        end
        local narrow = 0
        for _, ins in ipairs{"ds_read_b32", "ds_read_b64", "ds_write_b32", "ds_write_b64", "ds_read_u16", "ds_write_b16", "ds_read2", "ds_write2",
                             "global_load_dword ", "global_store_dword ", "global_load_short", "global_store_short"} do
          for _ in d:gmatch(ins) do narrow = narrow + 1 end
        end
        check(narrow == 0, ("%s transpose %s: no LDS or global access narrower than 128 bits (%d found)"):format(target, dt, narrow))
      else
        for _, ins in ipairs{"LDS%.128", "STS%.128", "LDG%.E%.128", "STG%.E%.128"} do
          check(d:find(ins) ~= nil, ("%s transpose %s uses %s"):format(target, dt, ins:gsub("%%", "")))
        end
      end
    end
  end
end
-- a 64 KiB LDS tile: above CUDA's 48 KiB static limit (then an extern array sized at launch),
-- exactly gfx90a's whole LDS
do
  local k = tr.build{dtype = "f32", target = target, tile = {128, 128}, block = 256}
  local dynamic = dynamic_lds(k)
  check(dynamic == (target:sub(1, 3) == "sm_"), ("%s transpose 128x128 f32: %d bytes of LDS declared %s"):format(target, k:lds_bytes(), dynamic and "dynamic" or "static"))
  local okc, err = pcall(compile, k)
  check(okc, ("%s transpose 128x128 f32 (64 KiB LDS) compiles%s"):format(target, okc and "" or (": " .. tostring(err))))
end
-- the library GEMM: f16 and bf16, the default configuration and every major combination:
-- no spills, no scratch, the LDS it declares; gfx90a: MFMA, 128-bit global loads, 128-bit LDS
-- operand reads (k_pack 8 halves); sm_90: the cp.async copies are in the source
do
  local gemm = require "ckt.kernels.gemm"
  for _, dt in ipairs{"f16", "bf16"} do
    for _, mj in ipairs{{"k", "k"}, {"k", "n"}, {"m", "k"}, {"m", "n"}} do
      local k, _, p = gemm.build{dtype = dt, target = target, a_major = mj[1], b_major = mj[2]}
      local exe = compile(k)
      local r = exe:resources()
      local spills = (r.vgpr_spills or 0) + (r.sgpr_spills or 0) + (r.spill_stores or 0) + (r.scratch_bytes or 0)
      local what = ("%s gemm %s a_major=%s b_major=%s (%dx%dx%d, %d threads, %d stages): compiled in %.0f ms (%s)"):format(target, dt, mj[1], mj[2],
            p.TM, p.TN, p.TK, p.block, p.stages, exe:compile_ms(), r.vgprs and ("vgprs=" .. r.vgprs .. " agprs=" .. tostring(r.agprs)) or ("registers=" .. tostring(r.registers)))
      check(spills == 0, what .. ", no spills, no scratch")
      local dynamic = dynamic_lds(k)
      check(r.lds_bytes == (dynamic and 0 or k:lds_bytes()), ("%s gemm %s: LDS %d bytes as built (%d)"):format(target, dt, r.lds_bytes, k:lds_bytes()))
      local d = exe:disassembly()
      if target:sub(1, 3) == "gfx" and d then
        check(d:find("v_mfma", 1, true) ~= nil, ("%s gemm %s %s%s: MFMA instructions"):format(target, dt, mj[1], mj[2]))
        if mj[1] == "k" and mj[2] == "k" then
          for _, ins in ipairs{"global_load_dwordx4", "ds_write_b128", "ds_read_b128"} do
            check(d:find(ins, 1, true) ~= nil, ("%s gemm %s kk uses %s"):format(target, dt, ins))
          end
        end
      elseif target:sub(1, 3) == "sm_" then
        check(k:source(target):find("cp.async.cg.shared.global", 1, true) ~= nil, ("%s gemm %s: cp.async copies"):format(target, dt))
      end
    end
  end
end
if failures > 0 then error(failures .. " check(s) failed") end
print("all kernel compile checks passed for " .. target)
