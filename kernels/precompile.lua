-- ckt kernel library: the library's default configurations, compiled ahead of time into the
-- persistent compile cache (`ckt-lua --precompile TARGET...`, CMake's CKT_PRECOMPILE_TARGETS at
-- install time), so that a user's first build of one of them is a cache hit.
--
-- precompile.LIST is the list: a kernel is one line, {name, module, build options}. The build
-- gets `target =` added (what a user's build on that default target gets), and the kernel is
-- compiled for that target exactly as k:compile{target = T} would (the cache key is the source,
-- the target, the options, the compiler and its version, and the ckt version). A module that
-- does not exist (yet) is skipped; a kernel a target cannot have (say so in `targets`) too.
--
--   local pre = require "ckt.kernels.precompile"
--   local rows, failed = pre.run{targets = {"sm_90", "gfx90a"}, only = {"copy_f32"}}
--   pre.print(rows)
local ckt = ckt or require "ckt"
local pre = {}

-- {name (what --only selects), module, build options, targets = a pattern the target must match (optional)}
pre.LIST = {
  {"gemm_f16_kk", "ckt.kernels.gemm", {dtype = "f16", a_major = "k", b_major = "k"}},
  {"gemm_f16_kn", "ckt.kernels.gemm", {dtype = "f16", a_major = "k", b_major = "n"}},
  {"gemm_f16_mk", "ckt.kernels.gemm", {dtype = "f16", a_major = "m", b_major = "k"}},
  {"gemm_f16_mn", "ckt.kernels.gemm", {dtype = "f16", a_major = "m", b_major = "n"}},
  {"gemm_bf16_kk", "ckt.kernels.gemm", {dtype = "bf16", a_major = "k", b_major = "k"}},
  {"gemm_bf16_kn", "ckt.kernels.gemm", {dtype = "bf16", a_major = "k", b_major = "n"}},
  {"gemm_bf16_mk", "ckt.kernels.gemm", {dtype = "bf16", a_major = "m", b_major = "k"}},
  {"gemm_bf16_mn", "ckt.kernels.gemm", {dtype = "bf16", a_major = "m", b_major = "n"}},
  {"copy_f32", "ckt.kernels.copy", {dtype = "f32"}},
  {"copy_f16", "ckt.kernels.copy", {dtype = "f16"}},
  {"transpose_f32", "ckt.kernels.transpose", {dtype = "f32"}},
  {"transpose_f16", "ckt.kernels.transpose", {dtype = "f16"}},
  {"reduce_sum_f32", "ckt.kernels.reduce", {dtype = "f32", op = "sum"}},
  {"reduce_max_f32", "ckt.kernels.reduce", {dtype = "f32", op = "max"}},
  {"elementwise_f32", "ckt.kernels.elementwise", {dtype = "f32"}},
  {"attn_f16_d64", "ckt.kernels.attention", {dtype = "f16", head_dim = 64}},
  {"attn_f16_d128", "ckt.kernels.attention", {dtype = "f16", head_dim = 128}},
  -- the row kernels, once their modules exist
  {"softmax_f32", "ckt.kernels.softmax", {dtype = "f32"}},
  {"softmax_f16", "ckt.kernels.softmax", {dtype = "f16"}},
  {"layernorm_f16", "ckt.kernels.layernorm", {dtype = "f16"}},
  {"rmsnorm_f16", "ckt.kernels.rmsnorm", {dtype = "f16"}},
}

local function fail(msg) error("precompile: " .. msg, 3) end

-- a module, or nil when it does not exist (any other error while loading it is raised)
local function module(name)
  local ok, m = pcall(require, name)
  if ok then return m end
  if tostring(m):find("module '" .. name .. "' not found", 1, true) then return nil end
  error(m, 0)
end

-- The arguments: targets (each a target ckt knows), only (names of LIST, each known).
local function check(o)
  if type(o) ~= "table" then fail("run takes a table {targets = {...}, only = {...}}, got " .. type(o)) end
  for k in pairs(o) do
    if k ~= "targets" and k ~= "only" and k ~= "threads" then fail(("unknown option '%s' (targets, only, threads)"):format(tostring(k))) end
  end
  if type(o.targets) ~= "table" or #o.targets == 0 then
    fail("no target given: name one or more, e.g. ckt-lua --precompile sm_90 sm_90a gfx90a cpu")
  end
  for i, t in ipairs(o.targets) do
    if type(t) ~= "string" then fail(("targets[%d] must be a string, got %s"):format(i, type(t))) end
    local ok, err = pcall(ckt.target, t)
    if not ok then fail(("target '%s' is not supported: %s"):format(t, tostring(err):gsub("^.-: ", "", 1))) end
  end
  local only
  if o.only ~= nil then
    if type(o.only) ~= "table" then fail("only must be a list of kernel names, got " .. type(o.only)) end
    only = {}
    local known = {}
    for _, e in ipairs(pre.LIST) do known[e[1]] = true end
    for i, n in ipairs(o.only) do
      if not known[n] then fail(("only[%d]: no kernel '%s' in the list (precompile.LIST)"):format(i, tostring(n))) end
      only[n] = true
    end
  end
  return only
end

-- Load the target's compiler once (and fail early, naming it, when it is not installed).
local function warm_up(target)
  local k = ckt.kernel{name = "precompile_warm_up", block = 64, build = function() end}
  local ok, err = pcall(k.compile, k, {target = target, compile_only = true, cache = false})
  if not ok then fail(("target '%s': its compiler is not usable here: %s"):format(target, tostring(err))) end
end

-- pre.run{targets = {...}, only = {names}, threads = n} -> rows, failures: every kernel of the
-- list for every target built, started on the compile pool (k:compile_async) and collected;
-- rows[i] = {name =, target =, status = "compiled" | "cached" | "skipped" | "failed", ms =, why =}.
function pre.run(o)
  local only = check(o)
  for _, t in ipairs(o.targets) do warm_up(t) end
  local rows, failures = {}, 0
  for _, target in ipairs(o.targets) do
    for _, e in ipairs(pre.LIST) do
      local name, modname, opts = e[1], e[2], e[3]
      if not only or only[name] then
        local row = {name = name, target = target}
        rows[#rows + 1] = row
        local m = module(modname)
        if not m then
          row.status, row.why = "skipped", modname .. " is not in this library"
        elseif e.targets and not target:match(e.targets) then
          row.status, row.why = "skipped", "not a kernel of " .. target
        else
          local b = {target = target}
          for k, v in pairs(opts) do b[k] = v end
          local ok, k = pcall(m.build, b)
          if not ok then
            row.status, row.why, failures = "failed", "build: " .. tostring(k), failures + 1
          else
            row.kernel = k
            row.future = k:compile_async{target = target, compile_only = true}
          end
        end
      end
    end
  end
  for _, row in ipairs(rows) do
    if row.future then
      local ok, exe = pcall(row.future.wait, row.future)
      if ok then
        row.status = exe:from_cache() and "cached" or "compiled"
        row.ms, row.why = exe:compile_ms(), exe:cache_status()
      else
        row.status, row.why, failures = "failed", tostring(exe), failures + 1
      end
      row.future, row.kernel = nil, nil
    end
  end
  return rows, failures
end

-- The table of a run: one row a kernel and target.
function pre.print(rows, wall_s)
  print("| kernel | target | result | compile ms | cache |")
  print("|---|---|---|---|---|")
  local n = 0
  for _, r in ipairs(rows) do
    if r.status == "compiled" then n = n + 1 end
    print(("| %s | %s | %s | %s | %s |"):format(r.name, r.target, r.status, r.ms and ("%.1f"):format(r.ms) or "",
          (r.why or ""):gsub("\n.*", ""):gsub("|", "/")))
  end
  if wall_s then print(("%d compiled in %.2f s (%d kernels listed) on %d compile threads"):format(n, wall_s, #rows, ckt.compile_pool_threads())) end
end

-- `ckt-lua --precompile TARGET... [--only NAME,...]`: the table; true when nothing failed.
function pre.main(targets, only)
  local t0 = ckt.now()
  local ok, rows, failures = pcall(pre.run, {targets = targets, only = only})
  if not ok then error((tostring(rows):gsub("^.-(precompile: )", "%1", 1)), 0) end -- the message, not this file's line
  pre.print(rows, ckt.now() - t0)
  if failures > 0 then io.stderr:write(("precompile: %d of %d kernels failed (the table says why)\n"):format(failures, #rows)) end
  return failures == 0
end

return pre
