-- The library ready at install (ckt-lua --precompile, ckt.kernels.precompile), the compile
-- cache's hit / miss reports across processes (exe:cache_status()), and compile futures
-- (k:compile_async). Each precompile compiles a few kernels of the list (--only) so the spec
-- stays quick; every process after it is fresh.
local ckt = require "ckt"
local CKT_LUA = os.getenv("CKT_LUA") or "build/ckt-lua"

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok and 0 or code
end

local function fresh_dir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. d))
  return d
end

local function files(dir, pattern)
  local t = {}
  for f in io.popen("ls -a " .. dir):lines() do if f:match(pattern) then t[#t + 1] = dir .. "/" .. f end end
  return t
end

-- a compiler library that is missing skips its target; anything else is an error
local function available(target)
  local k = ckt.kernel{name = "precompile_probe", block = 64, build = function() end}
  local ok, e = pcall(k.compile, k, {target = target, compile_only = true, cache = false})
  if ok then return true end
  if e:find("hipRTC not found (", 1, true) or e:find("NVRTC not found (", 1, true) then print("SKIPPED: " .. target .. ": " .. e) return false end
  error(e)
end

-- In a fresh process: build a library kernel as a user would and print its cache status.
-- env: extra environment; build: Lua text of the build options; compile: of the compile options.
local function status_in_fresh_process(env, module, build, compile)
  local script = ([[
local m = require %q
local k = m.build(%s)
io.write(k:compile(%s):cache_status())]]):format(module, build, compile)
  local out, code = sh(("%s %s -e %q"):format(env, CKT_LUA, script))
  assert.equal(0, code, out)
  return out
end

describe("ckt-lua --precompile", function()
  local targets = {"cpu"}
  setup(function()
    if available("sm_90") then targets[#targets + 1] = "sm_90" end
    if available("gfx90a") then targets[#targets + 1] = "gfx90a" end
  end)

  it("fills the cache for each target; a fresh process's build of the same kernel is a hit", function()
    local d = fresh_dir()
    local out, code = sh(("CKT_CACHE_DIR=%s CKT_INSTALL_CACHE_DIR= %s --precompile %s --only copy_f32,transpose_f32"):format(d, CKT_LUA, table.concat(targets, " ")))
    assert.equal(0, code, out)
    for _, t in ipairs(targets) do
      assert.truthy(out:find("| copy_f32 | " .. t .. " | compiled | ", 1, true), out)
      assert.truthy(out:find("| transpose_f32 | " .. t .. " | compiled | ", 1, true), out)
    end
    assert.equal(2 * #targets, #files(d, "%.ckt$"))
    local env = ("CKT_CACHE_DIR=%s CKT_INSTALL_CACHE_DIR="):format(d)
    for _, t in ipairs(targets) do
      local build = ("{dtype = 'f32', target = %q}"):format(t)
      assert.equal("hit", status_in_fresh_process(env, "ckt.kernels.transpose", build, ("{target = %q}"):format(t)))
      assert.equal("hit", status_in_fresh_process(env, "ckt.kernels.copy", build, ("{target = %q, compile_only = true}"):format(t)))
      -- a changed option misses, and says which
      local miss = status_in_fresh_process(env, "ckt.kernels.copy", build,
                                           ("{target = %q, compile_only = true, options = {%q}}"):format(t, t == "cpu" and "-O1" or t == "sm_90" and "-lineinfo" or "-O2"))
      assert.truthy(miss:find("^miss: the compiler options differ %(cached: '%(none%)'; now: '"), miss)
      -- another tile of the same kernel name: the source
      miss = status_in_fresh_process(env, "ckt.kernels.transpose", ("{dtype = 'f32', target = %q, tile = {32, 32}, block = 64}"):format(t), ("{target = %q, compile_only = true}"):format(t))
      assert.truthy(miss:find("^miss: the source differs %(cached: 'sha256 "), miss)
    end
    -- the same directory as the install's read-only cache: a user with an empty cache hits there
    local mine = fresh_dir()
    local hit = status_in_fresh_process(("CKT_CACHE_DIR=%s CKT_INSTALL_CACHE_DIR=%s"):format(mine, d), "ckt.kernels.copy",
                                        "{dtype = 'f32', target = 'cpu'}", "{target = 'cpu'}")
    assert.equal("hit: the installed cache " .. d, hit)
    assert.equal(0, #files(mine, "%.ckt$")) -- nothing copied: read in place
    os.execute("rm -rf " .. d .. " " .. mine)
  end)

  it("precompiles the GEMM defaults for sm_90 (NVRTC): a fresh process hits", function()
    if not available("sm_90") then pending("NVRTC is not installed") return end
    local d = fresh_dir()
    local out, code = sh(("CKT_CACHE_DIR=%s CKT_INSTALL_CACHE_DIR= %s --precompile sm_90 --only gemm_f16_kk"):format(d, CKT_LUA))
    assert.equal(0, code, out)
    assert.truthy(out:find("| gemm_f16_kk | sm_90 | compiled |", 1, true), out)
    assert.equal("hit", status_in_fresh_process(("CKT_CACHE_DIR=%s CKT_INSTALL_CACHE_DIR="):format(d), "ckt.kernels.gemm",
                                                "{dtype = 'f16', target = 'sm_90'}", "{target = 'sm_90', compile_only = true}"))
    os.execute("rm -rf " .. d)
  end)

  it("a second run finds everything cached", function()
    local d = fresh_dir()
    local cmd = ("CKT_CACHE_DIR=%s CKT_INSTALL_CACHE_DIR= %s --precompile cpu --only copy_f32"):format(d, CKT_LUA)
    assert.equal(0, select(2, sh(cmd)))
    local out, code = sh(cmd)
    assert.equal(0, code, out)
    assert.truthy(out:find("| copy_f32 | cpu | cached | ", 1, true), out)
    assert.truthy(out:find("| hit |", 1, true), out)
    os.execute("rm -rf " .. d)
  end)

  it("garbage in the cache: a damaged entry is a miss that says so; garbage beside it is ignored", function()
    local d = fresh_dir()
    local env = ("CKT_CACHE_DIR=%s CKT_INSTALL_CACHE_DIR="):format(d)
    assert.equal(0, select(2, sh(("%s %s --precompile cpu --only copy_f32"):format(env, CKT_LUA))))
    local entry, why = files(d, "%.ckt$")[1], files(d, "%.why$")[1]
    assert.truthy(entry); assert.truthy(why)
    local f = assert(io.open(why, "w")); f:write("v1\tnot hex\n\0\0garbage\tv1\n" .. ("x"):rep(70000)); f:close()
    local status = function() return status_in_fresh_process(env, "ckt.kernels.copy", "{dtype = 'f32', target = 'cpu'}", "{target = 'cpu'}") end
    assert.equal("hit", status()) -- the entry is fine: the record beside it is only a diagnosis
    f = assert(io.open(entry, "w")); f:write("CKTCACHE garbage"); f:close()
    local miss = status()
    assert.truthy(miss:find("^miss: a damaged entry %(truncated header%) was removed: "), miss)
    assert.equal("hit", status()) -- rebuilt by that compile
    -- a record file too large or unparsable says nothing, and a miss still has a reason
    f = assert(io.open(why, "w")); f:write(("\255"):rep(100)); f:close()
    miss = status_in_fresh_process(env, "ckt.kernels.copy", "{dtype = 'f32', target = 'cpu'}", "{target = 'cpu', options = {'-O1'}}")
    assert.truthy(miss:find("^miss: "), miss)
    os.execute("rm -rf " .. d)
  end)

  it("refuses no target, an unknown target, an unknown kernel and stray arguments, saying so", function()
    local cases = {
      {"--precompile", "needs at least one target"},
      {"--precompile nosuch", "target 'nosuch' is not supported"},
      {"--precompile cpu --only nosuch", "no kernel 'nosuch' in the list"},
      {"--precompile cpu script.lua", "target 'script.lua' is not supported"},
      {"--precompile cpu --only", "takes targets only"},
      {"--precompile cpu --only copy_f32 x", "takes targets only"},
    }
    for _, c in ipairs(cases) do
      local out, code = sh(("CKT_CACHE_DIR=/nonexistent-ckt %s %s"):format(CKT_LUA, c[1]))
      assert.equal(1, code, c[1] .. ": " .. out)
      assert.truthy(out:find(c[2], 1, true), c[1] .. ": " .. out)
      assert.falsy(out:find("traceback", 1, true), out)
    end
  end)

  it("every kernel of the list emits the same source in two processes (the key stays valid across them)", function()
    -- Lua seeds its string hashes per process: a pairs() walk that reaches the generated code
    -- reorders it, and the entry that process wrote is never hit again
    local script = [[
local pre = require "ckt.kernels.precompile"
local dir = arg[1]
for _, t in ipairs{"cpu", "sm_90", "sm_90a", "gfx90a"} do
  for _, e in ipairs(pre.LIST) do
    local ok, m = pcall(require, e[2])
    if ok then
      local b = {target = t}
      for k, v in pairs(e[3]) do b[k] = v end
      local f = assert(io.open(("%s/%s_%s"):format(dir, e[1], t), "w"))
      f:write(m.build(b):source(t))
      f:close()
    end
  end
end]]
    local d = fresh_dir()
    local f = assert(io.open(d .. "/emit.lua", "w")); f:write(script); f:close()
    for _, sub in ipairs{"a", "b"} do
      os.execute("mkdir -p " .. d .. "/" .. sub)
      local out, code = sh(("%s %s/emit.lua %s/%s"):format(CKT_LUA, d, d, sub))
      assert.equal(0, code, out)
    end
    local names, differ = files(d .. "/a", "_"), {}
    assert.is_true(#names >= 4 * 17, #names)
    for _, a in ipairs(names) do
      local b = a:gsub("/a/", "/b/")
      local fa, fb = assert(io.open(a)), assert(io.open(b))
      if fa:read("a") ~= fb:read("a") then differ[#differ + 1] = a:match("[^/]+$") end
      fa:close(); fb:close()
    end
    assert.same({}, differ)
    os.execute("rm -rf " .. d)
  end)

  it("run checks its arguments", function()
    local pre = require "ckt.kernels.precompile"
    local function err(o) local ok, e = pcall(pre.run, o); assert.is_false(ok); return tostring(e) end
    assert.truthy(err(5):find("run takes a table", 1, true))
    assert.truthy(err{}:find("no target given", 1, true))
    assert.truthy(err{targets = {}}:find("no target given", 1, true))
    assert.truthy(err{targets = {7}}:find("targets[1] must be a string, got number", 1, true))
    assert.truthy(err{targets = {"sm_7"}}:find("target 'sm_7' is not supported", 1, true))
    assert.truthy(err{targets = {"cpu"}, only = "copy_f32"}:find("only must be a list", 1, true))
    assert.truthy(err{targets = {"cpu"}, tagets = 1}:find("unknown option 'tagets'", 1, true))
    -- every entry of the list names a module and build options
    for i, e in ipairs(pre.LIST) do
      assert.equal("string", type(e[1]), i); assert.equal("string", type(e[2]), i); assert.equal("table", type(e[3]), i)
    end
  end)
end)

describe("k:compile_async", function()
  local tr = require "ckt.kernels.transpose"

  it("returns a future at once; wait gives the executable, once", function()
    local k = tr.build{dtype = "f32", target = "cpu", name = "async_spec_" .. os.time()}
    local f = k:compile_async{target = "cpu", cache = false}
    assert.truthy(tostring(f):find("ckt.compile_future (async_spec_", 1, true))
    local exe = f:wait()
    assert.is_true(f:ready())
    assert.equal("cpu", exe:target())
    assert.equal(k, exe:kernel())
    assert.equal("off: not read or written (cache = false)", exe:cache_status())
    local ok, e = pcall(f.wait, f)
    assert.is_false(ok)
    assert.truthy(tostring(e):find("already waited for", 1, true), e)
  end)

  it("many at once, collected in any order; the kernels need no other reference", function()
    local fs = {}
    for i = 1, 4 do fs[i] = tr.build{dtype = "f32", target = "cpu:sm_90", name = "async_many_" .. i}:compile_async{target = "cpu:sm_90", compile_only = true} end
    collectgarbage()
    for i = 4, 1, -1 do
      local exe = fs[i]:wait()
      assert.equal("async_many_" .. i, exe:kernel():name())
    end
  end)

  it("a failing compile raises at the wait, naming the compile", function()
    local k = tr.build{dtype = "f32", target = "cpu"}
    local f = k:compile_async{target = "cpu", options = {"-fno-such-flag-ckt"}, cache = false}
    local ok, e = pcall(f.wait, f)
    assert.is_false(ok)
    assert.truthy(tostring(e):find("compile", 1, true), e)
    assert.is_true(f:ready())
  end)

  it("a future dropped or closed before its wait is cancelled or waited for, never leaked", function()
    local k = tr.build{dtype = "f32", target = "cpu"}
    for _ = 1, 3 do k:compile_async{target = "cpu", compile_only = true} end
    do local f <close> = k:compile_async{target = "cpu", compile_only = true} end
    collectgarbage(); collectgarbage()
  end)

  it("checks its arguments", function()
    local k = tr.build{dtype = "f32", target = "cpu"}
    local function err(...) local ok, e = pcall(k.compile_async, ...); assert.is_false(ok); return tostring(e) end
    assert.truthy(err(k, 5):find("table expected, got number", 1, true))
    assert.truthy(err(k, {target = 5}):find("target", 1, true))
    assert.truthy(err(k, {target = "nosuch"}):find("compile_async: ", 1, true))
    assert.truthy(err(k, {target = "nosuch"}):find("nosuch", 1, true))
    assert.truthy(err(k, {tagret = "cpu"}):find("tagret", 1, true))
    assert.truthy(err(k, {target = "cpu", options = "-O2"}):find("options", 1, true))
    assert.truthy(err({}, {target = "cpu"}):find("ckt.kernel", 1, true))
    local f = k:compile_async{target = "cpu", compile_only = true}
    local ok, e = pcall(f.wait, {})
    assert.is_false(ok)
    assert.truthy(tostring(e):find("a compile future (k:compile_async) expected, got table", 1, true), e)
    ok, e = pcall(f.ready, 3)
    assert.is_false(ok)
    assert.truthy(tostring(e):find("compile future", 1, true), e)
    f:wait()
  end)
end)
