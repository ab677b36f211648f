-- ckt.autotune on the CPU target with tiny copy kernels: the winner is the fastest measured
-- config and computes the right thing; pruned candidates are never compiled (counted as the
-- compile cache's entries in a fresh cache directory); a build that errors on some configs is
-- reported, not fatal; the remembered choice survives a restart (another process) and a garbled
-- entry; two processes tuning at once both finish with a valid entry; bad input is an error
-- naming the argument; the library's autotune = true.
local ckt = require "ckt"
local copy = require "ckt.kernels.copy"

local CKT_LUA = os.getenv("CKT_LUA") or "build/ckt-lua"
local dev = ckt.device("cpu")
local M, N = 16, 512

local function fresh_dir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. d))
  return d
end

local function count_entries(dir)
  local n = 0
  local p = io.popen("ls " .. dir .. " 2>/dev/null")
  for f in p:lines() do if f:match("%.ckt$") then n = n + 1 end end
  p:close()
  return n
end

local x = dev:alloc("f32", M * N)
local xs = ckt.array("f32", M * N):random{seed = 7, lo = -1, hi = 1}
x:upload(xs)
local y = dev:alloc("f32", M * N)
local problem = {X = x, Y = y, M = M, N = N}

local function build(c)
  if c.fail then error("no such config") end
  local k, g = copy.build{dtype = "f32", tile = {c.tm, c.tn}, block = c.block}
  return k, g(M, N)
end

local SPACE = {tm = {1, 2}, tn = {128, 256}, block = {32}}

describe("ckt.autotune", function()
  local dir, ctx_dir
  setup(function() dir = fresh_dir() end)

  it("measures every config, returns the fastest and its executable", function()
    local best, exe, rep = ckt.autotune{build = build, space = SPACE, problem = problem, target = "cpu", quiet = true, force = true, runs = 3, name = "spec.fastest"}
    assert.are.equal(4, #rep)
    local fastest = math.huge
    for _, e in ipairs(rep) do
      assert.are.equal("measured", e.status)
      assert.is_true(e.ms > 0 and e.compile_ms >= 0)
      fastest = math.min(fastest, e.ms)
    end
    assert.are.equal(fastest, rep[rep.best].ms)
    assert.are.equal(best, rep[rep.best].config)
    -- the winner copies correctly (poisoned output first)
    y:upload(ckt.array("f32", M * N):poison())
    local tiles = (M + best.tm - 1) // best.tm * ((N + best.tn - 1) // best.tn)
    exe:launch{grid = tiles, X = x, Y = y, M = M, N = N}
    local ys = ckt.array("f32", M * N)
    y:download(ys)
    assert.is_true(ys:compare(xs, {rtol = 0, atol = 0}))
  end)

  it("never compiles pruned candidates and reports failed builds", function()
    local d = fresh_dir()
    local script = ([[
      local copy = require "ckt.kernels.copy"
      local dev = ckt.device("cpu")
      local M, N = 16, 512
      local x, y = dev:alloc("f32", M * N), dev:alloc("f32", M * N)
      x:upload(ckt.array("f32", M * N):random{seed = 1})
      local best, exe, rep = ckt.autotune{
        build = function(c)
          if c.tn == 64 then error("refused on purpose") end
          local k, g = copy.build{dtype = "f32", tile = {c.tm, c.tn}, block = 32}
          return k, g(M, N)
        end,
        space = {tm = {1, 2, 4}, tn = {64, 128, 1024}},
        filter = function(c) if c.tm == 2 then return false, "tm 2 not wanted" end return true end,
        problem = {X = x, Y = y, M = M, N = N}, target = "cpu", quiet = true, runs = 1}
      local s = rep.stats
      print(s.measured, s.pruned, s.failed, s.compiled)
      for i, e in ipairs(rep) do assert(e.why == e.reason and e.time == e.ms); print(i, e.config.tm, e.config.tn, e.status, e.reason) end
    ]])
    local f = io.open(d .. "/t.lua", "w"); f:write(script); f:close()
    local p = io.popen(("CKT_CACHE_DIR=%s %s %s/t.lua 2>&1"):format(d, CKT_LUA, d))
    local out = p:read("a"); p:close()
    -- tm 1, 4 x tn 128 build; tn 1024 does not divide N = 512 (pruned by the problem), tn 64
    -- fails to build, tm 2 is filtered: 2 measured, 2 + 3 pruned, 2 failed
    local measured, pruned, failed, compiled = out:match("^(%d+)\t(%d+)\t(%d+)\t(%d+)")
    assert.are.same({"2", "5", "2", "2"}, {measured, pruned, failed, compiled}, out)
    assert.truthy(out:find("filter: tm 2 not wanted", 1, true), out)
    assert.truthy(out:find("\t4\t64\tfailed\tbuild: ", 1, true), out) -- the contract's `why` is the same text
    assert.truthy(out:find("build: .*refused on purpose"), out)
    assert.truthy(out:find("does not fit the problem", 1, true), out)
    -- the compiler ran exactly twice: two compile-cache entries, plus the remembered choice
    assert.are.equal(3, count_entries(d))
  end)

  it("remembers the winner across processes and ignores a garbled entry", function()
    local d = fresh_dir()
    local script = [[
      local copy = require "ckt.kernels.copy"
      local dev = ckt.device("cpu")
      local M, N = 16, 512
      local x, y = dev:alloc("f32", M * N), dev:alloc("f32", M * N)
      local best, exe, rep = ckt.autotune{name = "spec.remember",
        build = function(c) local k, g = copy.build{dtype = "f32", tile = {1, c.tn}, block = 32}; return k, g(M, N) end,
        space = {tn = {128, 256}}, problem = {X = x, Y = y, M = M, N = N}, target = "cpu", quiet = true, runs = 1}
      print(rep.remembered, best.tn, rep.note or "-")
    ]]
    local f = io.open(d .. "/t.lua", "w"); f:write(script); f:close()
    local function run()
      local p = io.popen(("CKT_CACHE_DIR=%s %s %s/t.lua 2>&1"):format(d, CKT_LUA, d))
      local out = p:read("a"); p:close()
      return out
    end
    local first = run()
    assert.truthy(first:match("^false\t%d+\t%-"), first)
    local second = run()
    assert.are.equal(first:match("\t(%d+)"), second:match("\t(%d+)"))
    assert.truthy(second:match("^true"), second)
    -- garble every entry's last byte: the remembered one is ignored and reported, then rewritten
    local p = io.popen("ls " .. d .. "/*.ckt")
    for path in p:lines() do
      local fh = io.open(path, "r+b"); fh:seek("end", -1); fh:write("#"); fh:close()
    end
    p:close()
    local third = run()
    assert.truthy(third:match("^false\t%d+\ta damaged remembered choice was ignored"), third)
    assert.truthy(run():match("^true"))
  end)

  it("lets two processes tune the same kernel at once", function()
    local d = fresh_dir()
    local script = [[
      local copy = require "ckt.kernels.copy"
      local dev = ckt.device("cpu")
      local M, N = 16, 512
      local x, y = dev:alloc("f32", M * N), dev:alloc("f32", M * N)
      local best, exe, rep = ckt.autotune{name = "spec.concurrent", force = true,
        build = function(c) local k, g = copy.build{dtype = "f32", tile = {c.tm, 128}, block = 32}; return k, g(M, N) end,
        space = {tm = {1, 2, 4}}, problem = {X = x, Y = y, M = M, N = N}, target = "cpu", quiet = true, runs = 2}
      print("done", rep.stored, best.tm)
    ]]
    local f = io.open(d .. "/t.lua", "w"); f:write(script); f:close()
    local cmd = ("CKT_CACHE_DIR=%s %s %s/t.lua > %s/out%%d 2>&1"):format(d, CKT_LUA, d, d)
    assert(os.execute("(" .. cmd:format(1) .. ") & (" .. cmd:format(2) .. ") & wait"))
    for i = 1, 2 do
      local fh = io.open(d .. "/out" .. i); local out = fh:read("a"); fh:close()
      assert.truthy(out:match("^done\ttrue\t%d"), out)
    end
    -- the entry left behind is valid: a third process uses it
    local p = io.popen(("CKT_CACHE_DIR=%s %s -e %q 2>&1"):format(d, CKT_LUA, (script:gsub("force = true,", ""):gsub('print%("done".-\n', 'print(rep.remembered)\n'))))
    local out = p:read("a"); p:close()
    assert.truthy(out:match("^true"), out)
  end)

  it("ignores a stale remembered choice, reuses this state's executable, honours budget_s and cache = false", function()
    local broken = {}
    local function b(c)
      if broken[c.tn] then error("this config no longer builds") end
      local k, g = copy.build{dtype = "f32", tile = {1, c.tn}, block = 32}
      return k, g(M, N)
    end
    local opts = {build = b, space = {tn = {128, 256}}, problem = problem, target = "cpu", quiet = true, runs = 1, name = "spec.stale"}
    local best, exe1 = ckt.autotune(opts)
    local again, exe2, r2 = ckt.autotune(opts)
    assert.is_true(r2.remembered)
    assert.are.equal(exe1, exe2) -- the same executable: no build, no compile-cache load
    -- report.stats is there when the winner is remembered (scripts read it): nothing measured
    assert.are.same({candidates = 2, measured = 0, pruned = 0, failed = 0, compiled = 0, not_reached = 0, remembered = true}, r2.stats)
    assert.are.equal(again, r2[r2.best].config)
    assert.is_true(r2.lookup_ms >= 0 and r2.seconds >= 0)
    broken[best.tn] = true
    opts.build = function(c) return b(c) end -- another build function: this state's executable is not reused
    local other, _, r3 = ckt.autotune(opts)
    assert.is_false(r3.remembered)
    assert.truthy(tostring(r3.note):find("stale remembered choice was ignored", 1, true), tostring(r3.note))
    assert.are_not.equal(best.tn, other.tn)
    -- a budget already spent before the first measurement: an error naming what happened
    local ok, err = pcall(ckt.autotune, {build = build, space = SPACE, problem = problem, target = "cpu", quiet = true, force = true,
                                         budget_s = 1e-9, name = "spec.budget"})
    assert.is_false(ok)
    assert.truthy(tostring(err):find("the budget ran out before any candidate was measured", 1, true), tostring(err))
    -- cache = false: cold compiles, none written to the compile cache
    local d = fresh_dir()
    local f = io.open(d .. "/t.lua", "w")
    f:write([[
      local copy = require "ckt.kernels.copy"
      local dev = ckt.device("cpu")
      local x, y = dev:alloc("f32", 16 * 512), dev:alloc("f32", 16 * 512)
      local _, _, rep = ckt.autotune{build = function(c) local k, g = copy.build{dtype = "f32", tile = {c.tm, 128}, block = 32}; return k, g(16, 512) end,
        space = {tm = {1, 2}}, problem = {X = x, Y = y, M = 16, N = 512}, target = "cpu", quiet = true, runs = 1, cache = false}
      print(rep.stats.compiled, rep.stored)
    ]])
    f:close()
    local p = io.popen(("CKT_CACHE_DIR=%s %s %s/t.lua 2>&1"):format(d, CKT_LUA, d))
    local out = p:read("a"); p:close()
    assert.truthy(out:match("^2\ttrue"), out)
    assert.are.equal(1, count_entries(d)) -- only the remembered choice
  end)

  it("shows a progress line on a terminal only, unless quiet", function()
    local d = fresh_dir()
    local f = io.open(d .. "/t.lua", "w")
    f:write([[
      local copy = require "ckt.kernels.copy"
      local dev = ckt.device("cpu")
      local x, y = dev:alloc("f32", 16 * 512), dev:alloc("f32", 16 * 512)
      ckt.autotune{build = function(c) local k, g = copy.build{dtype = "f32", tile = {c.tm, 128}, block = 32}; return k, g(16, 512) end,
        space = {tm = {1, 2}}, problem = {X = x, Y = y, M = 16, N = 512}, target = "cpu", runs = 1, force = true, quiet = arg[1] == "quiet"}
    ]])
    f:close()
    local function run(tty, quiet)
      local cmd = ("CKT_CACHE_DIR=%s %s %s/t.lua %s"):format(d, CKT_LUA, d, quiet and "quiet" or "")
      if tty then cmd = ("script -qec %q /dev/null"):format(cmd) end
      local p = io.popen(cmd .. " 2>&1 < /dev/null")
      local out = p:read("a"); p:close()
      return out
    end
    if os.execute("command -v script > /dev/null") then
      local shown = run(true, false)
      assert.truthy(shown:find("autotune: 2 candidates", 1, true), shown)
      assert.truthy(shown:find("2 measured", 1, true), shown)
      assert.falsy(run(true, true):find("autotune:", 1, true))
    end
    assert.are.equal("", run(false, false))
  end)

  it("uses a custom metric (lower is better)", function()
    local calls = 0
    local best, _, rep = ckt.autotune{build = build, space = SPACE, problem = problem, target = "cpu", quiet = true, force = true, runs = 1,
                                      name = "spec.metric", metric = function(r) calls = calls + 1; return -r.config.tn * 10 - r.config.tm end}
    assert.are.equal(4, calls)
    assert.are.same({2, 256, 32}, {best.tm, best.tn, best.block})
    assert.are.equal(-2562, rep[rep.best].score)
  end)

  it("takes a list of configs and a problem function", function()
    local best = ckt.autotune{build = build, space = {{tm = 1, tn = 128, block = 32}, {tm = 2, tn = 128, block = 64}},
                              problem = function() return problem end, target = "cpu", quiet = true, force = true, runs = 1}
    assert.truthy(best.tn == 128)
  end)

  it("refuses bad input naming the argument", function()
    local ok_opts = {build = build, space = SPACE, problem = problem, target = "cpu", quiet = true}
    local big = {}
    for i = 1, 101 do big[i] = i end
    local function with(k, v)
      local t = {}
      for a, b in pairs(ok_opts) do t[a] = b end
      t[k] = v
      return t
    end
    local cases = {
      {nil, "table expected"},
      {with("build", nil), "field 'build' must be a function"},
      {with("build", 3), "field 'build' must be a function"},
      {with("space", {}), "field 'space' is empty"},
      {with("space", 4), "field 'space' must be a table"},
      {with("space", {tm = {}}), "dimension 'tm' must be a non-empty list"},
      {with("space", {1, 2}), "config 1 must be a table"},
      {with("space", {{tm = 1, tn = 128, block = 32}, x = {1}}), "mixes a list of configs"},
      {with("space", {tm = {function() end}}), "a function cannot be part of a remembered choice"},
      {with("problem", nil), "field 'problem' must be a table"},
      {with("problem", {X = x, Y = y, M = M}), "field 'problem' lacks 'N'"},
      {with("problem", {X = 1, Y = y, M = M, N = N}), "'X' must be a device buffer"},
      {with("problem", {X = x, Y = y, M = 1.5, N = N}), "'M' must be an integer"},
      {with("problem", {X = x, Y = y, M = M, N = 100}), "no candidate could be measured"},
      {with("build", function() return "kernel" end), "field 'build' returned string"},
      {with("build", function(c) local k = copy.build{dtype = "f32", tile = {1, 128}, block = 32}; return k, 0 end), "the grid for config 1 must be a positive integer"},
      {with("build", function(c) local k, g = copy.build{dtype = "f32", tile = {1, 128}, block = 32}; return k, g(M, N), 5 end), "third result"},
      {with("target", 5), "field 'target' must be a string"},
      {with("target", "vax"), "unknown target"},
      {with("target", "sm_90"), "runs on a cuda device"},
      {with("metric", "speed"), "field 'metric' must be \"time\""},
      {with("runs", 0), "field 'runs' = 0 must be in"},
      {with("warmup", -1), "field 'warmup'"},
      {with("threads", 1.5), "field 'threads' must be an integer"},
      {with("budget_s", -1), "field 'budget_s'"},
      {with("bank_slack", 0.5), "field 'bank_slack'"},
      {with("quiet", "yes"), "field 'quiet' must be a boolean"},
      {with("colour", 1), "unknown option 'colour'"},
      {with("metric", function() return "fast" end), "metric must return a number"},
      {with("metric", function() return 0 / 0 end), "metric must return a number (lower is better), got NaN for config 1"},
      {with("space", {a = big, b = big}), "more than 10000 configs"},
      {with("filter", 1), "field 'filter' must be a function"},
      {with("key", {f = print}), "field 'key': a function cannot be part"},
    }
    for i, c in ipairs(cases) do
      local ok, err = pcall(ckt.autotune, c[1])
      assert.is_false(ok, "case " .. i)
      assert.truthy(tostring(err):find(c[2], 1, true), ("case %d: expected '%s' in: %s"):format(i, c[2], tostring(err)))
    end
  end)

  -- issue 30: budget_s over 10,000 configurations ran 16-25 s, grew to 3.1 GB and ended with
  -- "no candidate could be measured"; over 100 with budget_s = 3 it raised instead of returning
  -- the best so far. Each run is a fresh process (its RSS and a fresh cache directory).
  local function run_budget(nreps, budget, name)
    local d = fresh_dir()
    local f = io.open(d .. "/t.lua", "w")
    f:write(([[
      local copy = require "ckt.kernels.copy"
      local dev = ckt.device("cpu")
      local M, N = 64, 2048
      local x, y = dev:alloc("f32", M * N), dev:alloc("f32", M * N)
      local xs = ckt.array("f32", M * N):random{seed = 3, lo = -1, hi = 1}
      x:upload(xs)
      local function rss_mb() local fh = io.open("/proc/self/statm"); local _, r = fh:read("n", "n"); fh:close(); return r * 4096 / 2^20 end
      local reps = {}
      for i = 1, %d do reps[i] = i end
      collectgarbage()
      local rss0, lua0, t0 = rss_mb(), collectgarbage("count") / 1024, ckt.now()
      -- 4 x 5 x 5 x reps distinct copy kernels (the name makes each source distinct: real compiles)
      local ok, best, exe, rep = pcall(ckt.autotune, {name = %q, force = true, quiet = true, runs = 1, budget_s = %s,
        build = function(c) local k, g = copy.build{dtype = "f32", name = "copy_b" .. c.rep, tile = {c.tm, c.tn}, block = c.block}; return k, g(M, N) end,
        space = {tm = {1, 2, 4, 8}, tn = {128, 256, 512, 1024, 2048}, block = {32, 64, 128, 256, 512}, rep = reps},
        problem = {X = x, Y = y, M = M, N = N}, target = "cpu"})
      local elapsed = ckt.now() - t0
      print(("elapsed=%%.3f rss_growth=%%.1f lua_growth=%%.1f"):format(elapsed, rss_mb() - rss0, collectgarbage("count") / 1024 - lua0))
      if not ok then print("error=" .. tostring(best)) return end
      local s = rep.stats
      print(("stats=%%d,%%d,%%d,%%d,%%d,%%d partial=%%s stored=%%s"):format(s.candidates, s.measured, s.pruned, s.failed, s.compiled, s.not_reached,
        tostring(rep.partial), tostring(rep.stored)))
      print("note=" .. tostring(rep.note))
      -- the best so far: the fastest of those measured, and it copies correctly
      local fastest = math.huge
      for _, e in ipairs(rep) do if e.status == "measured" then fastest = math.min(fastest, e.ms) end end
      y:upload(ckt.array("f32", M * N):poison())
      exe:launch{grid = (M // best.tm) * (N // best.tn), X = x, Y = y, M = M, N = N}
      local ys = ckt.array("f32", M * N)
      y:download(ys)
      print(("best_is_fastest=%%s correct=%%s"):format(tostring(rep[rep.best].ms == fastest and rep[rep.best].config == best), tostring(ys:compare(xs, {rtol = 0, atol = 0}))))
    ]]):format(nreps, name, budget))
    f:close()
    local p = io.popen(("CKT_CACHE_DIR=%s %s %s/t.lua 2>&1"):format(d, CKT_LUA, d))
    local out = p:read("a"); p:close()
    return out, d
  end

  it("keeps budget_s over 10,000 configurations: the whole call, bounded memory, the best so far with a note", function()
    local out, d = run_budget(100, 2, "spec.budget10k")
    local elapsed, rss, lua = out:match("elapsed=([%d.]+) rss_growth=([%d.-]+) lua_growth=([%d.-]+)")
    assert.truthy(elapsed, out)
    assert.is_true(tonumber(elapsed) < 2 + 1.5, out)
    assert.is_true(tonumber(rss) < 300, out)
    assert.is_true(tonumber(lua) < 300, out)
    local n, measured, pruned, failed, compiled, not_reached = out:match("stats=(%d+),(%d+),(%d+),(%d+),(%d+),(%d+) partial=true stored=false")
    assert.truthy(n, out)
    assert.are.equal("10000", n)
    assert.is_true(tonumber(measured) >= 1 and tonumber(not_reached) > 0, out)
    assert.are.equal(10000, tonumber(measured) + tonumber(pruned) + tonumber(failed))
    local note = out:match("note=([^\n]*)")
    assert.truthy(note:find(("budget_s = 2 s ran out: %s of 10000 candidates measured"):format(measured), 1, true), out)
    assert.truthy(note:find(("%s not reached; the best so far is returned"):format(not_reached), 1, true), out)
    assert.truthy(out:find("best_is_fastest=true correct=true", 1, true), out)
    assert.are.equal(tonumber(compiled), count_entries(d)) -- a partial search is not remembered
  end)

  it("returns the best so far over 100 configurations, and says when the budget measured none", function()
    local out = run_budget(1, 2, "spec.budget100")
    local elapsed = out:match("elapsed=([%d.]+)")
    assert.truthy(elapsed, out)
    assert.is_true(tonumber(elapsed) < 2 + 1.5, out)
    assert.truthy(out:match("stats=100,%d+,%d+,%d+,%d+,%d+ partial=true stored=false"), out)
    assert.truthy(out:find("best_is_fastest=true correct=true", 1, true), out)
    -- too small a budget to measure any: a clear error, in time
    out = run_budget(1, 0.05, "spec.budget_none")
    elapsed = out:match("elapsed=([%d.]+)")
    assert.truthy(elapsed, out)
    assert.is_true(tonumber(elapsed) < 0.05 + 1.5, out)
    assert.truthy(out:find("error=autotune: the budget ran out before any candidate was measured (budget_s = 0.05 s", 1, true), out)
    assert.truthy(out:match("%d+ of 100 candidates reached"), out)
  end)

  it("tunes the library's copy and transpose with autotune = true", function()
    local cp = copy.build{dtype = "f32", autotune = {M = 16, N = 1024, quiet = true, force = true, runs = 1,
                                                     space = {tile = {{1, 256}, {2, 256}}, block = {32, 64}}}}
    assert.truthy(cp)
    local k, grid, rep = copy.build{dtype = "f32", autotune = {M = 16, N = 1024, quiet = true, runs = 1,
                                                               space = {tile = {{1, 256}, {2, 256}}, block = {32, 64}}}}
    assert.is_true(rep.remembered)
    assert.are.equal((16 // rep.config.tile[1]) * (1024 // 256), grid(16, 1024))
    local tr = require "ckt.kernels.transpose"
    local _, _, why, p, trep = tr.build{dtype = "f32", autotune = {M = 64, N = 64, quiet = true, force = true, runs = 1,
                                                                  space = {tile = {{32, 32}}, block = {64}, swizzle = {true, false}}}}
    -- the unswizzled tile is rated far worse by the bank model: pruned, never compiled
    assert.are.equal(1, trep.stats.pruned)
    assert.truthy(trep[2].reason:find("bank model", 1, true))
    assert.are.equal(true, trep.config.swizzle)
    assert.truthy(p and why)
    assert.has_error(function() copy.build{autotune = {target = 1}} end, "copy: autotune: unknown option 'target'")
    assert.has_error(function() copy.build{autotune = "yes"} end)
    if not pcall(ckt.device, "cuda") then
      local ok, err = pcall(copy.build, {autotune = true, target = "sm_90"})
      assert.is_false(ok)
      assert.truthy(tostring(err):find("needs a cuda device and this machine has none", 1, true), tostring(err))
    end
  end)
end)
