-- ckt kernel library: `autotune = true` (or a table of tuning options) in a kernel's build{}.
-- The kernel's configuration (tile, block, ...) is chosen by ckt.autotune on the device at hand,
-- for a problem of random data at the sizes given (autotune = {M=, N=, K=}) or representative
-- ones, and remembered in the cache directory: the next build with the same options measures
-- nothing. A GPU target on a machine without that GPU is an error naming the alternative (the
-- CPU target emulating it); the CPU target tunes for the CPU.
--
--   local k, grid = copy.build{dtype = "f16", autotune = true}
--   local k, grid = copy.build{dtype = "f16", autotune = {M = 8192, N = 8192, quiet = true}}
local ckt = ckt or require "ckt"
local tuning = {}

local OPTIONS = {M = true, N = true, K = true, space = true, quiet = true, force = true, runs = true, warmup = true,
                 budget_s = true, threads = true, bank_slack = true, min_occupancy = true, allow_spills = true}

-- the tuning options of o.autotune (true or a table), checked
local function options(kind, o)
  local t = o.autotune
  if t == true then t = {} end
  if type(t) ~= "table" then error(("%s: autotune must be true or a table of tuning options, got %s"):format(kind, type(t)), 4) end
  for k in pairs(t) do
    if not OPTIONS[k] then error(("%s: autotune: unknown option '%s'"):format(kind, tostring(k)), 4) end
  end
  for _, d in ipairs{"M", "N", "K"} do
    local v = t[d]
    if v ~= nil and (math.type(v) ~= "integer" or v < 1) then error(("%s: autotune.%s must be a positive integer, got %s"):format(kind, d, tostring(v)), 4) end
  end
  return t
end

-- The device a target runs on, or a clear error.
function tuning.device(kind, target)
  local rec = ckt.target(target)
  local ok, dev = pcall(ckt.device, rec.runtime)
  if not ok then
    error(("%s: autotune for target '%s' needs a %s device and this machine has none (%s); tune for the CPU target instead (cpu:%s)")
          :format(kind, target, rec.runtime, tostring(dev), rec.arch), 4)
  end
  return dev, rec
end

-- A device buffer of n random elements (never all zero) and one of n poisoned ones.
function tuning.buffers(dev, dtype, n, seed)
  local x = dev:alloc(dtype, n)
  x:upload(ckt.array(dtype, n):random{seed = seed, lo = -1, hi = 1})
  return x
end

-- What to tune per library kernel: the space per target, the problem sizes (CPU: small, so a
-- tuning run stays quick; GPU: representative), the launch arguments, the grid, the costs.
local SPECS = {}

local function elems(dtype) return 16 // ckt.array(dtype, 1):bytes() end

SPECS.copy = function(lib)
  return {
    space = function(rec, fixed)
      local v = elems(fixed.dtype or "f32")
      if rec.runtime == "cpu" then return {tile = {{1, 64 * v}, {4, 64 * v}, {2, 256 * v}}, block = {64, 256}} end
      return {tile = {{1, 128 * v}, {2, 128 * v}, {1, 256 * v}, {2, 256 * v}, {4, 256 * v}, {8, 256 * v}}, block = {128, 256}}
    end,
    sizes = function(t, rec) local cpu = rec.runtime == "cpu"; return {M = t.M or (cpu and 64 or 8192), N = t.N or (cpu and 4096 or 8192)} end,
    problem = function(dev, s, fixed)
      local dt = fixed.dtype or "f32"
      return {X = tuning.buffers(dev, dt, s.M * s.N, 1), Y = dev:alloc(dt, s.M * s.N), M = s.M, N = s.N}
    end,
    grid = function(r, s) return r[2](s.M, s.N) end,
    build = lib.build,
  }
end

SPECS.transpose = function(lib)
  return {
    space = function(rec, fixed)
      local v = elems(fixed.dtype or "f32")
      if rec.runtime == "cpu" then return {tile = {{8 * v, 8 * v}, {16 * v, 16 * v}}, block = {64, 256}, swizzle = {true, false}} end
      return {tile = {{8 * v, 8 * v}, {16 * v, 16 * v}, {16 * v, 32 * v}, {32 * v, 16 * v}, {32 * v, 32 * v}}, block = {64, 128, 256},
              swizzle = {true, false}}
    end,
    sizes = function(t, rec) local cpu = rec.runtime == "cpu"; return {M = t.M or (cpu and 256 or 8192), N = t.N or (cpu and 256 or 8192)} end,
    problem = function(dev, s, fixed)
      local dt = fixed.dtype or "f32"
      return {X = tuning.buffers(dev, dt, s.M * s.N, 2), Y = dev:alloc(dt, s.M * s.N), M = s.M, N = s.N}
    end,
    grid = function(r, s) return r[2](s.M, s.N) end,
    -- the bank model over the plan's two LDS accesses (the write of step 1, the read of step 2)
    costs = function(r, target)
      local p = r[4]
      local arch = ckt.target(target).arch
      local c, i = 0, 0
      for _, x in ipairs{{p.read, "read"}, {p.write, "write"}} do
        -- a block smaller than a wave has no rating: the candidate goes unrated
        local ok, a = pcall(ckt.lds.analyze_tensor, {target = arch, tensor_layout = p.lds, dtype = p.dtype, thread_map = x[1], vector = p.v, op = x[2]})
        if not ok then return nil end
        c, i = c + a.cycles, i + a.ideal_cycles
      end
      return {bank_cycles = c, bank_ideal = i}
    end,
    build = lib.build,
  }
end

SPECS.gemm = function(lib)
  return {
    space = function(rec)
      if rec.runtime == "cpu" then return {tile = {{64, 64, 32}, {128, 64, 32}}, block = {128, 256}, stages = {2}} end
      return {tile = {{64, 64, 32}, {128, 64, 32}, {64, 128, 32}, {128, 128, 32}, {128, 256, 32}, {256, 128, 32}, {64, 64, 64}, {128, 128, 64}},
              block = {128, 256}, stages = {2, 3, 4}}
    end,
    sizes = function(t, rec) local cpu = rec.runtime == "cpu"; return {M = t.M or (cpu and 128 or 4096), N = t.N or (cpu and 128 or 4096), K = t.K or (cpu and 64 or 4096)} end,
    problem = function(dev, s, fixed)
      local dt = fixed.dtype or "f16"
      return {A = tuning.buffers(dev, dt, s.M * s.K, 3), B = tuning.buffers(dev, dt, s.K * s.N, 4), C = dev:alloc(fixed.out or dt, s.M * s.N),
              M = s.M, N = s.N, K = s.K}
    end,
    grid = function(r, s) return r[2](s.M, s.N) end,
    -- the bank model over the plan's LDS layouts: copy-in writes and operand reads of A and B
    costs = function(r)
      local c, i = 0, 0
      for _, op in pairs(lib.bank_report(r[3])) do
        for _, a in pairs(op) do c, i = c + a.cycles, i + a.ideal end
      end
      return {bank_cycles = c, bank_ideal = i}
    end,
    build = lib.build,
  }
end

-- Tune library kernel `kind` (lib: its module) for build options o; returns what lib.build
-- returns for the winner, then the report (report.config: the winner, report.exe: its executable).
function tuning.run(kind, lib, o)
  local spec = SPECS[kind](lib)
  local t = options(kind, o)
  local target = o.target or (ckt.default_target and ckt.default_target()) or "cpu"
  local dev, rec = tuning.device(kind, target)
  local fixed = {}
  for k, v in pairs(o) do if k ~= "autotune" then fixed[k] = v end end
  local sizes = spec.sizes(t, rec)
  local problem = spec.problem(dev, sizes, fixed)
  local function opts_of(config)
    local b = {}
    for k, v in pairs(fixed) do b[k] = v end
    for k, v in pairs(config) do b[k] = v end
    b.target = target
    return b
  end
  local ok, best, exe, report = pcall(ckt.autotune, {
    name = "ckt.kernels." .. kind, key = {fixed = tuning.key_of(fixed), sizes = sizes},
    space = t.space or spec.space(rec, fixed),
    build = function(config)
      local r = table.pack(spec.build(opts_of(config)))
      return r[1], spec.grid(r, sizes), spec.costs and spec.costs(r, target) or nil
    end,
    problem = problem, target = target, quiet = t.quiet, force = t.force, runs = t.runs, warmup = t.warmup,
    budget_s = t.budget_s, threads = t.threads, bank_slack = t.bank_slack, min_occupancy = t.min_occupancy,
    allow_spills = t.allow_spills,
  })
  -- the problem's buffers go back to the device whether the search ended in a result or not
  for _, b in pairs(problem) do if type(b) == "userdata" and b.close then b:close() end end
  if not ok then error(best, 0) end
  -- a budget_s that ran out returns the best measured so far: report.partial, report.note say so
  local r = table.pack(spec.build(opts_of(best)))
  report.exe, report.config = exe, best
  r[r.n + 1] = report
  return table.unpack(r, 1, r.n + 1)
end

-- The canonical part of build options that are functions (an epilogue): their source position.
function tuning.key_of(fixed)
  local k = {}
  for name, v in pairs(fixed) do
    if type(v) == "function" then
      local i = debug and debug.getinfo and debug.getinfo(v, "S")
      k[name] = i and (i.short_src .. ":" .. i.linedefined) or "function"
    else
      k[name] = v
    end
  end
  return k
end

return tuning
