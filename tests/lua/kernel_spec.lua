-- The kernel builder on the CPU target: every library kernel against a CPU reference (random,
-- never all-zero data; outputs poisoned before each run; sizes that do not divide the tiles),
-- exact f16/bf16 rounding, the generated source, and clear refusals of bad input.
local ckt = require "ckt"
local copy, ew = require "ckt.kernels.copy", require "ckt.kernels.elementwise"
local tr, red = require "ckt.kernels.transpose", require "ckt.kernels.reduce"

local dev = ckt.device("cpu")

-- run a compiled kernel: inputs uploaded, the output poisoned, downloaded
local function run(exe, args, inputs, out_name, out)
  for name, a in pairs(inputs) do
    local b = dev:alloc(a:dtype(), #a)
    b:upload(a)
    args[name] = b
  end
  out:poison()
  local bo = dev:alloc(out:dtype(), #out)
  bo:upload(out)
  args[out_name] = bo
  exe:launch(args)
  bo:download(out)
  return out
end

-- the one error that may skip a GPU compile test: the compiler library itself is not installed
-- (engine/src/jit_cuda.c, jit_hip.c: "NVRTC not found (...)", "hipRTC not found (...)"); a
-- compile error of the generated code, or anything else, fails the test
local function compiler_missing(e)
  e = tostring(e)
  return e:find("NVRTC not found (", 1, true) ~= nil or e:find("hipRTC not found (", 1, true) ~= nil
end

local function exact(got, want)
  local ok, err, bad = got:compare(want, {rtol = 0, atol = 0})
  assert(ok, ("mismatch: max error %s at %s"):format(tostring(err), tostring(bad)))
end

describe("library kernels on the CPU target", function()
  for _, dt in ipairs{"f32", "f16", "bf16", "i32"} do
    it("copy " .. dt .. ": padded edge tiles, bit for bit", function()
      local M, N = 77, 200
      local k, grid = copy.build{dtype = dt, tile = {16, 64}, pad = true}
      local x = ckt.array(dt, {M, N}):random{seed = 5, lo = -100, hi = 100}
      local y = run(k:compile{target = "cpu"}, {grid = grid(M, N), M = M, N = N}, {X = x}, "Y", ckt.array(dt, {M, N}))
      exact(y, x)
    end)
  end

  it("copy with specialized sizes folds them into the source", function()
    local k, grid = copy.build{dtype = "f32", tile = {8, 32}, M = 64, N = 96}
    local src = k:source("cpu")
    assert.truthy(src:find("M = 64 (specialized at build time)", 1, true))
    assert.equal(2, #k:signature())
    local x = ckt.array("f32", {64, 96}):random{seed = 9}
    exact(run(k:compile{target = "cpu"}, {grid = grid(64, 96)}, {X = x}, "Y", ckt.array("f32", {64, 96})), x)
  end)

  for _, dt in ipairs{"f32", "f16", "bf16"} do
    it("transpose " .. dt .. " through a swizzled LDS tile, bit for bit", function()
      local k, grid, why = tr.build{dtype = dt}
      assert.truthy(why:find("conflict-free", 1, true))
      local T = dt == "f32" and 64 or 128
      local M, N = 2 * T, 3 * T
      local x = ckt.array(dt, {M, N}):random{seed = 3}
      local y = run(k:compile{target = "cpu"}, {grid = grid(M, N), M = M, N = N}, {X = x}, "Y", ckt.array(dt, {N, M}))
      exact(y, tr.reference(x, M, N))
    end)
  end

  it("transpose without a swizzle gives the same result", function()
    local k, grid = tr.build{dtype = "f32", swizzle = false}
    local x = ckt.array("f32", {64, 128}):random{seed = 4}
    exact(run(k:compile{target = "cpu"}, {grid = grid(64, 128), M = 64, N = 128}, {X = x}, "Y", ckt.array("f32", {128, 64})), tr.reference(x, 64, 128))
  end)

  it("transpose: rectangular tiles with several sub-blocks per thread, and the NVIDIA defaults, bit for bit", function()
    for _, c in ipairs{{"f32", {32, 64}, 64}, {"f16", {128, 64}, 64}, {"f32", {64, 64}, 128}} do
      local k, grid, _, p = tr.build{dtype = c[1], tile = c[2], block = c[3]}
      assert.are.equal(c[3], p.block)
      local M, N = 2 * c[2][1], 3 * c[2][2]
      local x = ckt.array(c[1], {M, N}):random{seed = 5}
      exact(run(k:compile{target = "cpu"}, {grid = grid(M, N), M = M, N = N}, {X = x}, "Y", ckt.array(c[1], {N, M})), tr.reference(x, M, N))
    end
    local _, _, _, p32 = tr.build{dtype = "f32", target = "sm_90"}
    local _, _, _, p16 = tr.build{dtype = "f16", target = "sm_90"}
    assert.are.same({64, 64, 128}, {p32.TM, p32.TN, p32.block})
    assert.are.same({256, 128, 128}, {p16.TM, p16.TN, p16.block})
  end)

  it("pass loops: the NVIDIA f16 transpose and a tall padded copy repeat one sub-block in a loop, bit for bit", function()
    -- the sm_90 f16 default (256 x 128 tile, 128 threads: 32 vectors per thread and step) on the CPU
    local k, grid = tr.build{dtype = "f16", tile = {256, 128}, block = 128}
    local src = k:source("cpu")
    local _, loops = src:gsub("as 4 passes of 64 values", "")
    assert.are.equal(2, loops, "global -> LDS and LDS -> global should be loops of 4 passes")
    local _, loads = src:gsub("CKT_LD16%(v, [^p]", "")
    local _, whole = src:gsub("CKT_LD16%(ckt_fw%[%d%], [^p]", "")
    assert.are.equal(8, loads) -- one pass of each step, not 32 + 32: LDS -> global's values
    assert.are.equal(8, whole) -- global -> LDS stores the vectors as loaded: they move whole
    assert.truthy(src:find("ckt_v16 ckt_fw[8]; /* the pass's vectors, stored as loaded */", 1, true))
    -- the LDS -> global half's register tile holds one pass's 64 values, reused by each pass (256
    -- a thread in all)
    assert.truthy(src:find("r%d+%[128%]%[64%]; /%* registers: 64 per thread %*/"), "the C target: one pass's values a thread")
    assert.truthy(tr.build{dtype = "f16", target = "sm_90"}:source("sm_90"):find("ckt_u16 r%d+%[64%]; /%* registers: one pass's values %*/"))
    local M, N = 2 * 256, 3 * 128
    local x = ckt.array("f16", {M, N}):random{seed = 11}
    exact(run(k:compile{target = "cpu"}, {grid = grid(M, N), M = M, N = N}, {X = x}, "Y", ckt.array("f16", {N, M})), tr.reference(x, M, N))
    -- on the GPUs the passes stay a loop (the compiler would unroll it again)
    assert.truthy(tr.build{dtype = "f16", target = "sm_90"}:source("sm_90"):find("#pragma unroll 1\n%s*for %(int it = 0; it < 4; %+%+it%)"))
    -- masked edge tiles inside a pass loop: sizes that divide neither the tile nor a pass
    local kc, gc = copy.build{dtype = "f32", tile = {64, 256}, block = 64, pad = true}
    assert.truthy(kc:source("cpu"):find("passes of", 1, true))
    assert.truthy(kc:source("cpu"):find("else for (int ckt_q = 0; ckt_q < 4; ++ckt_q) ckt_fw[0].f32[ckt_q] = 0", 1, true))
    local Mc, Nc = 150, 1000
    local xc = ckt.array("f32", {Mc, Nc}):random{seed = 12, lo = -50, hi = 50}
    exact(run(kc:compile{target = "cpu"}, {grid = gc(Mc, Nc), M = Mc, N = Nc}, {X = xc}, "Y", ckt.array("f32", {Mc, Nc})), xc)
    -- small accesses stay straight-line code (the library's copy, the f32 transposes)
    assert.falsy(copy.build{dtype = "f32"}:source("cpu"):find("passes of", 1, true))
    local t32 = tr.build{dtype = "f32", target = "sm_90"}:source("sm_90")
    assert.falsy(t32:find("passes of", 1, true))
    -- (whose global -> LDS half still moves its vectors whole, and declares no registers for them)
    assert.truthy(t32:find("ckt_v16 ckt_fw[8]; /* the copy's vectors, stored as loaded */", 1, true))
    local _, regs = t32:gsub("/%* registers %*/", "")
    assert.are.equal(1, regs) -- the LDS -> global half's, which it transposes value by value
  end)

  it("pass loops move vectors whole only where the store takes the load's vectors unconverted", function()
    -- f16 in, f32 out: the store converts each value, so the pass keeps them in registers
    local function widen(out)
      return ckt.kernel{name = "widen", block = 64, build = function(b)
        local X, Y = b:pointer("X", "f16", {const = true}), b:pointer("Y", out)
        local M = b:size("M")
        local gx = ckt.tensor(X, "f16", {shape = {M, 256}}, {pad = true})
        local gy = ckt.tensor(Y, out, {shape = {M, 256}}, {pad = true})
        ckt.local_tile(gy, {64, 256}, {b:block_id(), 0}):store(ckt.local_tile(gx, {64, 256}, {b:block_id(), 0}):load())
      end}
    end
    local conv, same = widen("f32"):source("cpu"), widen("f16"):source("cpu")
    assert.truthy(conv:find("passes of", 1, true)); assert.falsy(conv:find("ckt_fw", 1, true))
    assert.truthy(same:find("passes of", 1, true)); assert.truthy(same:find("ckt_fw", 1, true))
    local M = 150 -- masked rows in the last block
    local x = ckt.array("f16", {M, 256}):random{seed = 13, lo = -8, hi = 8}
    for _, out in ipairs{"f32", "f16"} do
      local y = run(widen(out):compile{target = "cpu"}, {grid = 3, M = M}, {X = x}, "Y", ckt.array(out, {M, 256}))
      for i = 0, M * 256 - 1 do assert.equal(x[i], y[i]) end
    end
  end)

  it("transpose refuses tiles and blocks that do not fit together", function()
    local function err(o) local ok, e = pcall(tr.build, o); assert.is_false(ok); return e end
    assert.truthy(err{dtype = "f32", tile = {30, 64}}:find("tile 30x64: both sides must be multiples of 4"))
    assert.truthy(err{dtype = "f32", tile = {64, 64}, block = 100}:find("block 100 must cover whole rows"))
    assert.truthy(err{dtype = "f32", tile = {64, 64}, block = 2048}:find("block 2048"))
  end)

  it("transpose refuses sizes that are not multiples of the tile at launch", function()
    local k = tr.build{dtype = "f32"}
    local exe = k:compile{target = "cpu"}
    local b = dev:alloc("f32", 100 * 64)
    local ok, e = pcall(exe.launch, exe, {grid = 1, X = b, Y = b, M = 100, N = 64})
    assert.is_false(ok)
    assert.truthy(e:find("M = 100 is not a multiple of 64"), e)
  end)

  for _, dt in ipairs{"f32", "f16", "bf16"} do
    it("elementwise " .. dt .. ": relu(x*y + 1) with exact rounding to " .. dt, function()
      local n = 5000 -- not a multiple of the block tile
      local f = function(x, y) return ckt.max(x * y + 1, 0) end
      local k, grid = ew.build{dtype = dt, inputs = 2, f = f}
      local x = ckt.array(dt, n):random{seed = 1, lo = -3, hi = 3}
      local y = ckt.array(dt, n):random{seed = 2, lo = -3, hi = 3}
      local z = run(k:compile{target = "cpu"}, {grid = grid(n), n = n}, {X1 = x, X2 = y}, "Z", ckt.array(dt, n))
      -- the reference in double precision; the kernel computes in f32, then rounds to dt
      local want = ew.reference(f, dt, x, y)
      -- f32 arithmetic then one rounding to dt: at most 1 ulp from the double reference
      local ok, err = z:compare(want, {rtol = dt == "f32" and 1e-6 or 1e-3, atol = dt == "f32" and 1e-6 or 1e-3})
      assert(ok, "max error " .. tostring(err))
    end)
  end

  it("elementwise with exp, select, cast and a different output dtype", function()
    local n = 1024
    local f = function(x) return ckt.select(ckt.lt(x, 0), ckt.exp(x) - 1, ckt.cast(x * 3, "f16")) end
    local k, grid = ew.build{dtype = "f32", out_dtype = "f16", f = f}
    local x = ckt.array("f32", n):random{seed = 8, lo = -2, hi = 2}
    local z = run(k:compile{target = "cpu"}, {grid = grid(n), n = n}, {X1 = x}, "Z", ckt.array("f16", n))
    local want = ckt.array("f16", n)
    for i = 0, n - 1 do local v = x[i]; want[i] = v < 0 and math.exp(v) - 1 or v * 3 end
    local ok, err = z:compare(want, {rtol = 1e-3, atol = 1e-3})
    assert(ok, "max error " .. tostring(err))
  end)

  it("elementwise exp2 (the base-2 exponential softmax folds log2(e) into), folded on constants too", function()
    local n = 1000
    local f = function(x) return ckt.exp2(x) + ckt.exp2(ckt.float(3)) end
    local k, grid = ew.build{dtype = "f32", f = f}
    local x = ckt.array("f32", n):random{seed = 9, lo = -20, hi = 20}
    local z = run(k:compile{target = "cpu"}, {grid = grid(n), n = n}, {X1 = x}, "Z", ckt.array("f32", n))
    local want = ckt.array("f32", n)
    for i = 0, n - 1 do want[i] = 2.0 ^ x[i] + 8 end
    local ok, err = z:compare(want, {rtol = 1e-6, atol = 1e-6})
    assert(ok, "max error " .. tostring(err))
    assert.equal(8.0, ckt.exp2(3.0)) -- a Lua number: Lua's own math
    local okc, e = pcall(ckt.exp2, "x")
    assert.is_false(okc); assert.truthy(tostring(e):find("exp2", 1, true))
  end)

  for _, op in ipairs{"sum", "max", "min"} do
    for _, dt in ipairs{"f32", "f16"} do
      it("row reduction " .. op .. " over " .. dt .. " (rows not a multiple of the tile)", function()
        local M, N = 37, 3000
        local k, grid = red.build{dtype = dt, op = op}
        local x = ckt.array(dt, {M, N}):random{seed = 6, lo = -1, hi = 1}
        local y = run(k:compile{target = "cpu"}, {grid = grid(M), M = M, N = N}, {X = x}, "Y", ckt.array("f32", M))
        local want = red.reference(x, M, N, op)
        local ok, err = y:compare(want, {rtol = op == "sum" and 1e-4 or 0, atol = op == "sum" and 1e-4 or 0})
        assert(ok, "max error " .. tostring(err))
      end)
    end
  end
end)

describe("loading compiled kernels", function()
  it("runs the kernel it was given, with many kernels loaded one after another (no stale module)", function()
    local x = ckt.array("f32", 256):random{seed = 12}
    for i = 1, 6 do
      local k = ckt.kernel{name = "scale" .. i, block = 64, build = function(b)
        local X, Y = b:pointer("X", "f32", {const = true}), b:pointer("Y", "f32")
        local w = ckt.tile_window(ckt.tensor(X, "f32", {shape = {256}}), {256}, {0})
        local r = b:map(function(v) return v * i end, w:load())
        ckt.tile_window(ckt.tensor(Y, "f32", {shape = {256}}), {256}, {0}):store(r)
      end}
      local y = run(k:compile{target = "cpu", cache = false}, {grid = 1}, {X = x}, "Y", ckt.array("f32", 256))
      for j = 0, 255, 17 do assert.equal((string.unpack("f", string.pack("f", x[j] * i))), y[j]) end
      k = nil
      collectgarbage()
    end
  end)
end)

describe("generated source", function()
  local k = copy.build{dtype = "f32", tile = {8, 32}}
  it("is the same index arithmetic in all three dialects", function()
    local c, h, u = k:source("cpu"), k:source("gfx90a"), k:source("sm_90")
    local function body(s) return s:match("const ckt_i64 i0 = ([^;]+);") end
    assert.equal(body(c), body(h)); assert.equal(body(h), body(u))
    assert.truthy(h:find("extern \"C\" __global__", 1, true)); assert.truthy(c:find("for (int tid = 0; tid < 256; ++tid)", 1, true))
  end)
  it("comments each access with its tensor, window and thread arrangement", function()
    local s = k:source("gfx90a")
    assert.truthy(s:find("load from global X (M,N):(N,1), window 8x32", 1, true), s)
    assert.truthy(s:find("4-element accesses along dim 1", 1, true))
  end)
  it("refuses unknown targets", function()
    local ok, e = pcall(k.source, k, "vax780")
    assert.is_false(ok); assert.truthy(e:find("target 'vax780'"))
  end)
end)

describe("builder refusals", function()
  local function build_err(fn, block)
    local ok, e = pcall(ckt.kernel, {name = "bad", block = block or 64, build = fn})
    assert.is_false(ok)
    return e
  end
  it("kernel options", function()
    assert.truthy(select(2, pcall(ckt.kernel, {name = "k", block = 0, build = function() end})):find("block"))
    assert.truthy(select(2, pcall(ckt.kernel, {name = "k", block = -3, build = function() end})):find("block"))
    assert.truthy(select(2, pcall(ckt.kernel, {name = "1x", block = 64, build = function() end})):find("name"))
    assert.truthy(select(2, pcall(ckt.kernel, {name = "k", block = 64})):find("build"))
    assert.truthy(select(2, pcall(ckt.kernel, {name = "k", block = 64, build = function() end, bogus = 1})):find("bogus"))
    assert.truthy(select(2, pcall(ckt.kernel, "k")):find("table"))
  end)
  it("builder calls outside the build function", function()
    local saved
    local k = ckt.kernel{name = "k", block = 64, build = function(b) saved = b end}
    local ok, e = pcall(saved.pointer, saved, "X", "f32")
    assert.is_false(ok); assert.truthy(e:find("already built"))
    assert.truthy(select(2, pcall(ckt.tensor, "lds", "f32", ckt.layout{8, 8})):find("only inside a kernel's build function"))
    assert.equal("k", k:name())
  end)
  it("tensors: wrong types, ranks, dtypes, sizes", function()
    assert.truthy(build_err(function(b) ckt.tensor("flash", "f32", ckt.layout(8)) end):find("flash"))
    assert.truthy(build_err(function(b) ckt.tensor("lds", "f99", ckt.layout(8)) end):find("f99"))
    assert.truthy(build_err(function(b) local X = b:pointer("X", "f16"); ckt.tensor(X, "f32", {shape = {8}}) end):find("holds f16"))
    assert.truthy(build_err(function(b) local X = b:pointer("X", "f32"); ckt.tensor(X, "f32", {shape = {0}}) end):find(">= 1"))
    assert.truthy(build_err(function(b) local X = b:pointer("X", "f32"); ckt.tensor(X, "f32", {shape = {1, 2, 3, 4, 5}}) end):find("rank"))
    assert.truthy(build_err(function(b) ckt.tensor("lds", "f32", ckt.layout{100000, 100}) end):find("LDS"))
    assert.truthy(build_err(function(b) ckt.tensor("register", "f32", 0) end):find("values per thread"))
  end)
  it("windows: non-divisible tiles, rank mismatches, thread-dependent origins", function()
    local function with_x(f) return build_err(function(b)
      local X = b:pointer("X", "f32")
      f(b, ckt.tensor(X, "f32", {shape = {100, 64}}))
    end) end
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {32, 64}, {0, 0}) end):find("does not divide shape 100"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4}, {0}) end):find("rank"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4, 4}, {0}) end):find("origin"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4, 4}, {b:thread_id(), 0}) end):find("thread id"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4, -4}, {0, 0}) end):find(">= 1"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4, 4}, {-8, 0}) end):find("negative"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4, 4}, {0, 0}):load{dist = ckt.layout({64, 1}, {1, 0})} end):find("distribution"))
    assert.truthy(with_x(function(b, g) ckt.tile_window(g, {4, 4}, {0, 0}):load{scalar_per_vector = 3} end):find("scalar_per_vector"))
  end)
  it("a runtime size must divide the window, checked at launch", function()
    local k = ckt.kernel{name = "rt", block = 64, build = function(b)
      local X, Y = b:pointer("X", "f32", {const = true}), b:pointer("Y", "f32")
      local n = b:size("n")
      local w = ckt.tile_window(ckt.tensor(X, "f32", {shape = {n}}), {256}, {b:block_id() * 256})
      ckt.tile_window(ckt.tensor(Y, "f32", {shape = {n}}), {256}, {b:block_id() * 256}):store(w:load())
    end}
    local exe = k:compile{target = "cpu"}
    local bx, by = dev:alloc("f32", 300), dev:alloc("f32", 300)
    local ok, e = pcall(exe.launch, exe, {grid = 1, X = bx, Y = by, n = 300})
    assert.is_false(ok); assert.truthy(e:find("multiple of the window length 256"), e)
  end)
  it("stores to const pointers, syncs in divergent branches, unbalanced scopes", function()
    assert.truthy(build_err(function(b)
      local X = b:pointer("X", "f32", {const = true})
      local w = ckt.tile_window(ckt.tensor(X, "f32", {shape = {64}}), {64}, {0})
      w:store(w:load())
    end):find("read%-only"))
    assert.truthy(build_err(function(b) b:when(ckt.lt(b:thread_id(), 3), function() b:sync() end) end):find("sync"))
    assert.truthy(build_err(function(b) b:loop(b:thread_id(), function() end) end):find("thread id"))
    assert.truthy(build_err(function(b) error("my own failure") end):find("my own failure"))
  end)
  it("expressions: mixing kernels, comparing with <, float bit operations", function()
    local other
    ckt.kernel{name = "o", block = 32, build = function(b) other = b:size("n") end}
    assert.truthy(build_err(function(b) local n = b:size("n"); local _ = n + other end):find("another kernel"))
    assert.truthy(build_err(function(b) local n = b:size("n"); local _ = n < 3 end):find("ckt.lt"))
    assert.truthy(build_err(function(b) local s = b:scalar("s"); local _ = s & 3 end):find("integer"))
    assert.truthy(build_err(function(b) local _ = b:size("n") + {} end):find("bad argument #2 to 'add' (number or kernel expression expected, got table)", 1, true))
    local e
    ckt.kernel{name = "u", block = 32, build = function(b) e = b:size("n") end}
    assert.is_false(pcall(getmetatable(e).__unm, 5)) -- a metamethod called directly: an error, not a crash
    assert.is_false(pcall(getmetatable(e).__add, 5, 6))
    assert.equal(3, ckt.max(1, 3)); assert.equal(-2.5, ckt.min(-2.5, 0)); assert.is_true(ckt.lt(1, 2))
  end)
  it("launch: missing, unknown and mistyped arguments, other dtypes, wrong block", function()
    local k, grid = copy.build{dtype = "f32", tile = {8, 32}}
    local exe = k:compile{target = "cpu"}
    local bx, by, bh = dev:alloc("f32", 256), dev:alloc("f32", 256), dev:alloc("f16", 256)
    local function err(args) local ok, e = pcall(exe.launch, exe, args); assert.is_false(ok); return e end
    assert.truthy(err{grid = 1, X = bx, M = 8, N = 32}:find("'Y'"))
    assert.truthy(err{grid = 1, X = bx, Y = by, M = 8, N = 32, Z = 1}:find("'Z'"))
    assert.truthy(err{grid = 1, X = bx, Y = by, M = "8", N = 32}:find("'M'"))
    assert.truthy(err{grid = 1, X = bh, Y = by, M = 8, N = 32}:find("holds f16"))
    assert.truthy(err{grid = 1, block = 128, X = bx, Y = by, M = 8, N = 32}:find("block 128"))
    assert.truthy(err{grid = 1, X = 42, Y = by, M = 8, N = 32}:find("buffer"))
    assert.truthy(err{X = bx, Y = by, M = 8, N = 32}:find("grid"))
    assert.truthy(err{grid = 1, X = bx, Y = by, M = -8, N = 32}:find("negative"))
    assert.truthy(err{grid = 1, args = {bx, by, 8}}:find("3"))
    exe:launch{grid = grid(8, 32), args = {bx, by, 8, 32}}
  end)
  it("gfx and sm targets are compile-only here: launching them is refused, not crashed", function()
    local k = copy.build{dtype = "f32", tile = {8, 32}}
    local ok, exe = pcall(k.compile, k, {target = "gfx90a", compile_only = true})
    if not ok then
      if compiler_missing(exe) then pending("hipRTC not installed: " .. tostring(exe)) return end
      error(exe)
    end
    local bx = dev:alloc("f32", 256)
    local ok2, e = pcall(exe.launch, exe, {grid = 1, X = bx, Y = bx, M = 8, N = 32})
    assert.is_false(ok2)
    assert.matches("was compiled compile-only; compile it again to run it", tostring(e), 1, true)
  end)
end)

-- ckt.local_partition on kernel tensors and tile windows (CuTe's local_partition: thread i owns
-- thr_coord(i) + k * thr_shape of the tile; value v is element v of the layout version's result)
describe("ckt.local_partition of kernel tensors and windows", function()
  local row, col = ckt.layout({16, 16}, "row"), ckt.layout({16, 16})
  local vec = {f32 = 4, f16 = 8}
  local thread_layouts = {{"row-major 16x16", row}, {"column-major 16x16", col},
                          {"row-major 8x32", ckt.layout({8, 32}, "row")}, {"column-major 32x8", ckt.layout({32, 8})}}

  -- Y = X tile by tile (tile x block 256), each thread moving its partition of the tile
  local function part_copy(dt, thr, opts, tile, how)
    tile = tile or {32, 64}
    return ckt.kernel{name = "pcopy", block = 256, build = function(b)
      local X, Y = b:pointer("X", dt, {const = true}), b:pointer("Y", dt)
      local M, N = b:size("M", {multiple_of = tile[1]}), b:size("N", {multiple_of = tile[2]})
      local gx, gy = ckt.tensor(X, dt, {shape = {M, N}}), ckt.tensor(Y, dt, {shape = {M, N}})
      local tm, tn = b:block_order{tiles = {M // tile[1], N // tile[2]}}
      local tid = b:thread_id()
      local src = ckt.local_partition(ckt.local_tile(gx, tile, {tm, tn}), thr, tid, opts)
      local dst = ckt.local_partition(ckt.local_tile(gy, tile, {tm, tn}), thr, tid, opts)
      if how == "copy" then b:copy(dst, src)
      elseif how == "blockwise" then b:blockwise_copy{src = src, dst = dst}
      else dst:store(src:load()) end
    end}
  end
  local function run_copy(k, dt, M, N, tile)
    local x = ckt.array(dt, {M, N}):random{seed = M + N, lo = -50, hi = 50}
    local grid = (M // tile[1]) * (N // tile[2])
    exact(run(k:compile{target = "cpu"}, {grid = grid, M = M, N = N}, {X = x}, "Y", ckt.array(dt, {M, N})), x)
  end

  for _, dt in ipairs{"f32", "f16"} do
    for _, tl in ipairs(thread_layouts) do
      it(("copies %s tiles through partitions by a %s thread layout (load/store, b:copy, blockwise_copy)"):format(dt, tl[1]), function()
        for _, how in ipairs{"load", "copy", "blockwise"} do run_copy(part_copy(dt, tl[2], nil, nil, how), dt, 96, 192, {32, 64}) end
      end)
    end

    it(dt .. ": scalar_per_vector gives each thread 16-byte runs and the accesses vectorize", function()
      local tile = {32, 16 * vec[dt]}
      for _, how in ipairs{"load", "copy"} do
        local k = part_copy(dt, row, {scalar_per_vector = vec[dt]}, tile, how)
        local src = k:source("cpu")
        assert.truthy(src:find(vec[dt] .. "-element accesses along dim 1", 1, true), src)
        assert.falsy(src:find("1-element accesses", 1, true))
        run_copy(k, dt, 64, 2 * tile[2], tile)
      end
    end)

    it(dt .. ": packed=true (CK wrapper's packed partition) gives each thread one block, vectorized", function()
      local k = part_copy(dt, row, {packed = true})
      local src = k:source("cpu") -- each thread: a 2 x 4 block
      assert.truthy(src:find("4-element accesses along dim 1", 1, true), src)
      run_copy(k, dt, 64, 128, {32, 64})
    end)

    it(dt .. ": transposes through LDS, row-major threads in and column-major threads out", function()
      for _, direct in ipairs{false, true} do
        local T = 32
        local k = ckt.kernel{name = "ptranspose", block = 256, build = function(b)
          local X, Y = b:pointer("X", dt, {const = true}), b:pointer("Y", dt)
          local M, N = b:size("M", {multiple_of = T}), b:size("N", {multiple_of = T})
          local gx = ckt.tensor(X, dt, {shape = {M, N}})
          local gyt = ckt.tensor(Y, dt, {shape = {M, N}, stride = {1, M}}) -- Y (N x M) seen as (m, n)
          -- a padded row-major LDS tile through a window, or a column-major one partitioned directly
          local s = ckt.tensor("lds", dt, direct and ckt.layout({T, T}) or ckt.layout({T, T}, {T + 1, 1}))
          local lt = direct and s or ckt.tile_window(s, {T, T}, {0, 0})
          local tm, tn = b:block_order{tiles = {M // T, N // T}}
          local tid = b:thread_id()
          b:copy(ckt.local_partition(lt, row, tid), ckt.local_partition(ckt.local_tile(gx, {T, T}, {tm, tn}), row, tid))
          b:sync()
          b:copy(ckt.local_partition(ckt.local_tile(gyt, {T, T}, {tm, tn}), col, tid), ckt.local_partition(lt, col, tid))
        end}
        local M, N = 64, 96
        local x = ckt.array(dt, {M, N}):random{seed = 21}
        local y = run(k:compile{target = "cpu"}, {grid = (M // T) * (N // T), M = M, N = N}, {X = x}, "Y", ckt.array(dt, {N, M}))
        exact(y, tr.reference(x, M, N))
      end
    end)
  end

  it("moves a partition along the tile row in a loop; plain register tensors store by value index", function()
    local k = ckt.kernel{name = "pmove", block = 256, build = function(b)
      local X, Y, Z = b:pointer("X", "f32", {const = true}), b:pointer("Y", "f32"), b:pointer("Z", "f32")
      local M, N = b:size("M", {multiple_of = 32}), b:size("N", {multiple_of = 64})
      local gx, gy = ckt.tensor(X, "f32", {shape = {M, N}}), ckt.tensor(Y, "f32", {shape = {M, N}})
      local tx = ckt.local_tile(gx, {32, 64}, {b:block_id(), 0})
      local px = ckt.local_partition(tx, row, b:thread_id(), {scalar_per_vector = 4})
      local py = ckt.local_partition(ckt.local_tile(gy, {32, 64}, {b:block_id(), 0}), row, b:thread_id(), {scalar_per_vector = 4})
      tx:move{0, 64} -- the parent moves; the partition made before it stays
      b:loop(N // 64, function()
        b:copy(py, px)
        px:move{0, 64}; py:move{0, 64}
      end)
      local ones = ckt.tensor("register", "f32", 8)
      b:clear(ones, 1.5)
      ckt.local_partition(ckt.local_tile(ckt.tensor(Z, "f32", {shape = {M, N}}), {32, 64}, {b:block_id(), 0}), col, b:thread_id()):store(ones)
    end}
    local M, N = 64, 192
    local x = ckt.array("f32", {M, N}):random{seed = 23}
    local bz = dev:alloc("f32", M * N)
    local z0 = ckt.array("f32", {M, N}):fill(0)
    bz:upload(z0)
    local y = run(k:compile{target = "cpu"}, {grid = M // 32, M = M, N = N, Z = bz}, {X = x}, "Y", ckt.array("f32", {M, N}))
    exact(y, x)
    local z = ckt.array("f32", {M, N})
    bz:download(z)
    for i = 0, M * N - 1 do assert.equal((i % N) < 64 and 1.5 or 0, z[i]) end
  end)

  it("masks a padded tensor's edge tiles", function()
    local k = ckt.kernel{name = "ppad", block = 256, build = function(b)
      local X, Y = b:pointer("X", "f32", {const = true}), b:pointer("Y", "f32")
      local M, N = b:size("M"), b:size("N")
      local gx = ckt.tensor(X, "f32", {shape = {M, N}}, {pad = true})
      local gy = ckt.tensor(Y, "f32", {shape = {M, N}}, {pad = true})
      local tm, tn = b:block_order{tiles = {(M + 31) // 32, (N + 63) // 64}}
      b:copy(ckt.local_partition(ckt.local_tile(gy, {32, 64}, {tm, tn}), col, b:thread_id()),
             ckt.local_partition(ckt.local_tile(gx, {32, 64}, {tm, tn}), col, b:thread_id()))
    end}
    local x = ckt.array("f32", {77, 100}):random{seed = 7}
    exact(run(k:compile{target = "cpu"}, {grid = 3 * 2, M = 77, N = 100}, {X = x}, "Y", ckt.array("f32", {77, 100})), x)
  end)

  -- What each thread holds: thread t's values of the partition of the 32 x 64 tile at (1, 1) of a
  -- 64 x 128 tensor, written to O[t * nv + v] through a packed 1-D partition.
  local function holdings(dt, thr, index, opts, active)
    local nv
    local k = ckt.kernel{name = "hold", block = 256, build = function(b)
      local X, O = b:pointer("X", dt, {const = true}), b:pointer("O", dt)
      local p = ckt.local_partition(ckt.local_tile(ckt.tensor(X, dt, {shape = {64, 128}}), {32, 64}, {1, 1}), thr, index(b:thread_id()), opts)
      nv = p:nvalues()
      local out = ckt.tensor(O, dt, {shape = {active * nv}})
      ckt.local_partition(out, ckt.layout(active), b:thread_id(), {packed = true}):store(p:load())
    end}
    local x = ckt.array(dt, {64, 128})
    if dt == "f32" then for i = 0, #x - 1 do x[i] = i end else x:random{seed = 5} end
    local o = run(k:compile{target = "cpu"}, {grid = 1}, {X = x}, "O", ckt.array(dt, active * nv))
    return x, o, nv
  end
  local tile = ckt.layout({32, 64}, {128, 1}) -- the tile in X
  local base = 32 * 128 + 64
  local function check(x, o, got_nv, want_nv, active, where)
    assert.equal(want_nv, got_nv)
    for t = 0, active - 1 do
      for v = 0, want_nv - 1 do
        local off = base + where(t, v)
        if o[t * want_nv + v] ~= x[off] then
          error(("thread %d value %d: got %s, the layout algebra says X[%d] = %s"):format(t, v, tostring(o[t * want_nv + v]), off, tostring(x[off])))
        end
      end
    end
  end

  for _, dt in ipairs{"f32", "f16"} do
    for _, tl in ipairs{{"row-major 16x16", row}, {"column-major 16x16", col}, {"(8,32):(32,1)", ckt.layout({8, 32}, {32, 1})},
                        {"(4,64):(1,4)", ckt.layout({4, 64}, {1, 4})}} do
      it(dt .. ": each thread's values are the layout algebra's local_partition, " .. tl[1], function()
        local x, o, nv = holdings(dt, tl[2], function(tid) return tid end, nil, 256)
        check(x, o, nv, 8, 256, function(t, v)
          local part, off = ckt.local_partition(tile, tl[2], t)
          return off + part(v)
        end)
      end)
    end
  end

  it("thread indices: thread_id // n and thread_id % n (threads sharing a part), fewer threads than the block", function()
    local thr = ckt.layout({8, 8}, "row") -- 64 threads: 32 values each
    local function want(index) return function(t, v)
      local part, off = ckt.local_partition(tile, thr, index(t))
      return off + part(v)
    end end
    for _, f in ipairs{{function(tid) return tid % 64 end, function(t) return t % 64 end},
                       {function(tid) return tid // 4 end, function(t) return t // 4 end},
                       {function(tid) return (tid >> 2) & 63 end, function(t) return (t >> 2) & 63 end}} do
      local x, o, nv = holdings("f32", thr, f[1], nil, 256)
      check(x, o, nv, 32, 256, want(f[2]))
    end
    -- 128 threads of a 256-thread block: the others take no part
    local half = ckt.layout({8, 16}, "row")
    local x, o, nv = holdings("f32", half, function(tid) return tid end, nil, 128)
    check(x, o, nv, 16, 128, function(t, v) local part, off = ckt.local_partition(tile, half, t); return off + part(v) end)
  end)

  it("scalar_per_vector: the layout algebra's partition of the tile's vectors; packed: its local_tile", function()
    local z = ckt.zipped_divide(tile, {1, 4})
    local vecl, rest = z:mode(0), z:mode(1)
    local x, o, nv = holdings("f32", row, function(tid) return tid end, {scalar_per_vector = 4}, 256)
    check(x, o, nv, 8, 256, function(t, v)
      local part, off = ckt.local_partition(rest, row, t)
      return vecl(v % 4) + off + part(v // 4)
    end)
    x, o, nv = holdings("f32", col, function(tid) return tid end, {values = {2, 2}}, 256)
    local z2 = ckt.zipped_divide(tile, {2, 2})
    check(x, o, nv, 8, 256, function(t, v)
      local part, off = ckt.local_partition(z2:mode(1), col, t)
      return z2:mode(0)(v % 4) + off + part(v // 4)
    end)
    x, o, nv = holdings("f32", col, function(tid) return tid end, {packed = true}, 256)
    check(x, o, nv, 8, 256, function(t, v)
      local blk, off = ckt.local_tile(tile, {2, 4}, {t % 16, t // 16}) -- thread coordinate (t % 16, t // 16)
      return off + blk(v)
    end)
  end)

  it("a store into a partition of another thread layout goes by value index (CuTe's copy)", function()
    for _, dt in ipairs{"f32", "f16"} do
      local k = ckt.kernel{name = "pshuffle", block = 256, build = function(b)
        local X, Y = b:pointer("X", dt, {const = true}), b:pointer("Y", dt)
        local gx, gy = ckt.tensor(X, dt, {shape = {32, 64}}), ckt.tensor(Y, dt, {shape = {32, 64}})
        local r = ckt.local_partition(gx, row, b:thread_id()):load()
        ckt.local_partition(gy, col, b:thread_id()):store(r)
      end}
      local x = ckt.array(dt, {32, 64}):random{seed = 17}
      local y = run(k:compile{target = "cpu"}, {grid = 1}, {X = x}, "Y", ckt.array(dt, {32, 64}))
      local L = ckt.layout({32, 64}, "row")
      local want = ckt.array(dt, {32, 64})
      for t = 0, 255 do
        local px, ox = ckt.local_partition(L, row, t)
        local py, oy = ckt.local_partition(L, col, t)
        for v = 0, 7 do want[oy + py(v)] = x[ox + px(v)] end
      end
      exact(y, want)
    end
  end)

  it("leaves the layout algebra's local_partition as it was", function()
    local l, off = ckt.local_partition(ckt.layout{8, 16}, ckt.layout "(2,4):(1,2)", 5)
    assert.equal("(4,4):(2,32)", tostring(l)); assert.equal(17, off)
  end)

  it("compiles for gfx90a and sm_90 where the compilers are present", function()
    local skipped = {}
    for _, target in ipairs{"gfx90a", "sm_90"} do
      for _, k in ipairs{part_copy("f16", row, {scalar_per_vector = 8}, {32, 128}, "copy"), part_copy("f32", col, nil, nil, "load")} do
        local ok, exe = pcall(k.compile, k, {target = target, compile_only = true, cache = false})
        if not ok then
          if compiler_missing(exe) then
            skipped[#skipped + 1] = target .. ": " .. tostring(exe)
            break
          end
          error(exe)
        end
        assert.truthy(exe:compile_only())
      end
    end
    if #skipped > 0 then pending("skipped " .. table.concat(skipped, "; ")) end
  end)

  describe("refusals", function()
    local function build_err(fn, block)
      local ok, e = pcall(ckt.kernel, {name = "bad", block = block or 256, build = fn})
      assert.is_false(ok)
      return tostring(e)
    end
    local function with_tile(f, block)
      return build_err(function(b)
        local X, Y = b:pointer("X", "f32"), b:pointer("Y", "f32")
        local gx = ckt.tensor(X, "f32", {shape = {64, 128}})
        f(b, ckt.local_tile(gx, {32, 64}, {0, 0}), gx, ckt.tensor(Y, "f32", {shape = {64, 128}}))
      end, block)
    end
    local function has(e, ...) for _, s in ipairs{...} do assert.truthy(e:find(s, 1, true), e) end end

    it("thread indices that are not the thread id (or // and % of it)", function()
      has(with_tile(function(b, t) ckt.local_partition(t, row, 5) end), "bad argument #3 to 'local_partition' (thread index must be the thread id or an expression of it", "got number")
      has(with_tile(function(b, t) ckt.local_partition(t, row) end), "bad argument #3 to 'local_partition' (thread index must be the thread id or an expression of it", "got no value")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:block_id()) end), "bad argument #3 to 'local_partition' (thread index must be the thread id or an expression of it", "does not depend on the thread id")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:size("n")) end), "bad argument #3 to 'local_partition' (thread index must be the thread id or an expression of it", "does not depend")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id() + 1) end), "bad argument #3 to 'local_partition' (thread index must be the thread id or an expression of it", "tid + 1")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id() * 2) end), "bad argument #3 to 'local_partition' (thread index must be the thread id or an expression of it")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id() + b:block_id()) end), "bad argument #3 to 'local_partition' (thread index must be the thread id or an expression of it")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:pointer("P", "f32")) end), "bad argument #3 to 'local_partition' (thread index must be the thread id or an expression of it", "a pointer")
      local other
      ckt.kernel{name = "o", block = 256, build = function(b) other = b:thread_id() end}
      has(with_tile(function(b, t) ckt.local_partition(t, row, other) end), "bad argument #3 to 'local_partition' (thread index belongs to another kernel)")
      -- an index that would reach past the thread layout for threads in the middle of the block
      has(with_tile(function(b, t) ckt.local_partition(t, ckt.layout({8, 8}), b:thread_id() % 128) end), "reaches 127", "only 64 threads")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id() % 24) end), "splits thr_layout's mode")
    end)

    it("thread layouts: wrong type, more threads than the block, rank, divisibility, not one to one, nested", function()
      has(with_tile(function(b, t) ckt.local_partition(t, {16, 16}, b:thread_id()) end), "bad argument #2 to 'local_partition' (thr_layout must be a ckt.layout over the threads, got table)")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id()) end, 64), "256 threads but the kernel's block only 64")
      has(with_tile(function(b, t) ckt.local_partition(t, ckt.layout(256), b:thread_id()) end), "1 modes but the tile has rank 2")
      has(with_tile(function(b, t) ckt.local_partition(t, ckt.layout({4, 8, 8}), b:thread_id()) end), "3 modes but the tile has rank 2")
      has(with_tile(function(b, t) ckt.local_partition(t, ckt.layout({8, 32}), b:thread_id(), {scalar_per_vector = 4}) end),
          "tile length 64 of dim 1 is not a multiple of 32 threads x 4 values")
      has(build_err(function(b)
        local X = b:pointer("X", "f32")
        ckt.local_partition(ckt.local_tile(ckt.tensor(X, "f32", {shape = {60, 60}}), {30, 60}, {0, 0}), row, b:thread_id())
      end), "tile length 30 of dim 0 is not a multiple of 16 threads")
      has(with_tile(function(b, t) ckt.local_partition(t, ckt.layout({16, 16}, {0, 1}), b:thread_id()) end), "one to one")
      has(with_tile(function(b, t) ckt.local_partition(t, ckt.layout({16, 16}, {32, 1}), b:thread_id()) end), "one to one")
      has(with_tile(function(b, t) ckt.local_partition(t, ckt.layout({{4, 4}, 16}, {{1, 4}, 16}), b:thread_id()) end), "must be flat")
    end)

    it("what is partitioned: registers, partitions, runtime-sized tensors", function()
      has(with_tile(function(b, t) ckt.local_partition(t:load(), row, b:thread_id()) end), "register tensor")
      has(with_tile(function(b, t) ckt.local_partition(ckt.local_partition(t, row, b:thread_id()), row, b:thread_id()) end), "already a partition")
      has(build_err(function(b)
        local X = b:pointer("X", "f32")
        ckt.local_partition(ckt.tensor(X, "f32", {shape = {b:size("M"), 64}}), row, b:thread_id())
      end), "runtime extent", "ckt.local_tile")
    end)

    it("options", function()
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id(), {bogus = 1}) end), "bogus")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id(), 4) end), "bad argument #4 to 'local_partition' (options table expected, got number)")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id(), {values = {2}}) end), "values lists 1 extents for a rank-2 tile")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id(), {values = {1, 2}, scalar_per_vector = 2}) end), "not both")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id(), {packed = true, scalar_per_vector = 2}) end), "packed=true")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id(), {scalar_per_vector = 32}) end), "scalar_per_vector 32")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id(), {scalar_per_vector = 2, vector_dim = 2}) end), "vector_dim 2")
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id(), {vector_dim = 0}) end), "needs scalar_per_vector")
    end)

    it("uses of a partition: dist=, thread_layout=, value counts that differ", function()
      has(with_tile(function(b, t) ckt.local_partition(t, row, b:thread_id()):load{dist = ckt.layout({256, 8}, {1, 256})} end), "no 'dist' here")
      has(with_tile(function(b, t, gx, gy)
        b:copy(ckt.local_partition(ckt.local_tile(gy, {32, 64}, {0, 0}), row, b:thread_id()), t, {dist = ckt.layout({256, 8}, {1, 256})})
      end), "destination is a partition")
      has(with_tile(function(b, t, gx, gy)
        b:blockwise_copy{src = ckt.local_partition(t, row, b:thread_id()), dst = ckt.local_tile(gy, {32, 64}, {0, 0}), thread_layout = row}
      end), "src is a partition", "thread_layout")
      has(with_tile(function(b, t, gx, gy)
        b:copy(ckt.local_partition(ckt.local_tile(gy, {64, 64}, {0, 0}), row, b:thread_id()), ckt.local_partition(t, row, b:thread_id()))
      end), "source partition gives each thread 8 values but the destination partition 16")
      has(with_tile(function(b, t)
        ckt.local_partition(t, row, b:thread_id()):store(ckt.tensor("register", "f32", 4))
      end), "holds 4 values per thread but the destination takes 8")
      has(with_tile(function(b, t, gx, gy)
        local r = ckt.local_partition(t, ckt.layout({8, 16}, "row"), b:thread_id()):load() -- 128 threads, 16 values
        ckt.local_partition(ckt.local_tile(gy, {64, 64}, {0, 0}), row, b:thread_id()):store(r)
      end), "held by 128 threads but the destination needs 256")
    end)
  end)
end)

-- b:let: a block-uniform value computed once (tile origins a loop reads without recomputing them)
describe("b:let", function()
  local function build(f) return pcall(ckt.kernel, {name = "lt", block = 32, build = f}) end
  local function refused(f, text)
    local ok, e = build(f)
    assert.is_false(ok)
    assert.truthy(tostring(e):find(text, 1, true), e)
  end

  it("is assigned once, read by every window in a loop, and gives the same results", function()
    local k = ckt.kernel{name = "lt", block = 32, build = function(b)
      local X, Y = b:pointer("X", "f32", {const = true}), b:pointer("Y", "f32")
      local n = b:size("n")
      local gx, gy = ckt.tensor(X, "f32", {shape = {n}}, {pad = true}), ckt.tensor(Y, "f32", {shape = {n}}, {pad = true})
      local base = b:let(b:block_id() * 128, "base")
      b:loop(4, function(i)
        ckt.tile_window(gy, {32}, {base + i * 32}):store(ckt.tile_window(gx, {32}, {base + i * 32}):load())
      end)
    end}
    local src = k:source("cpu")
    local _, sets = src:gsub("let0_base = ", "")
    assert.equal(2, sets, src) -- the declaration and one assignment, outside the loop
    assert.truthy(src:find("let0_base + k0 * 32", 1, true), src)
    local n = 300
    local xa = ckt.array("f32", {n}):random{seed = 11, lo = -3, hi = 3}
    local dev = ckt.device("cpu")
    local x, y = dev:alloc("f32", n), dev:alloc("f32", n)
    x:upload(xa); y:upload(ckt.array("f32", {n}):poison())
    k:compile{target = "cpu"}:launch{grid = 3, X = x, Y = y, n = n}
    local ya = ckt.array("f32", {n}); y:download(ya)
    for i = 0, n - 1 do assert.equal(xa[i], ya[i]) end
  end)

  it("refuses what it cannot compute once for the whole block", function()
    refused(function(b) b:let(b:thread_id()) end, "let: the value must be a block-uniform integer expression")
    refused(function(b) b:let(b:scalar("s")) end, "let: the value must be a block-uniform integer expression")
    refused(function(b) b:let("x") end, "value")
    refused(function(b) b:let() end, "value")
    refused(function(b) b:let(1, {}) end, "bad argument #2 to 'let' (string expected, got table)")
    refused(function(b) b:let(1, "2x") end, "let: name '2x' is not an identifier of at most 16 characters")
    refused(function(b) b:let(1, "a_name_longer_than_16") end, "at most 16 characters")
    refused(function(b) b:loop(4, function(i) b:let(i) end) end, "let: inside a loop, branch or producer region")
    refused(function(b) b:when(ckt.gt(b:block_id(), 0), function() b:let(1) end) end, "inside a loop, branch")
  end)
end)

-- b:loop(n, body, {unroll = false}): the GPU dialects tell their compilers to keep the loop (a
-- turn of the sm_90a GEMM's epilogue each warpgroup's, serialized by barriers: NVVM wrote it out
-- twice); the C dialect's compiler decides itself. The loop computes the same either way.
describe("b:loop{unroll = false}", function()
  local function kernel(opts)
    return ckt.kernel{name = "rolled", block = 32, build = function(b)
      local X, Y = b:pointer("X", "f32", {const = true}), b:pointer("Y", "f32")
      local n = b:size("n")
      local gx, gy = ckt.tensor(X, "f32", {shape = {n}}, {pad = true}), ckt.tensor(Y, "f32", {shape = {n}}, {pad = true})
      b:loop(4, function(i)
        local w = ckt.tile_window(gx, {32}, {b:block_id() * 128 + i * 32})
        ckt.tile_window(gy, {32}, {b:block_id() * 128 + i * 32}):store(b:map(function(x) return x * 2 end, w:load()))
      end, opts)
    end}
  end

  it("puts #pragma unroll 1 before the loop on CUDA and HIP, and computes the same", function()
    local pragma = "#pragma unroll 1\n    for (ckt_i64 k0 = 0; k0 < 4; ++k0) {"
    for _, t in ipairs{"sm_90", "gfx90a"} do
      assert.truthy(kernel({unroll = false}):source(t):find(pragma, 1, true), t)
      assert.falsy(kernel():source(t):find(pragma, 1, true), t)
      assert.falsy(kernel({unroll = true}):source(t):find(pragma, 1, true), t)
    end
    assert.falsy(kernel({unroll = false}):source("cpu"):find("#pragma unroll", 1, true))
    local n = 300
    local xa = ckt.array("f32", {n}):random{seed = 5, lo = -4, hi = 4}
    local dev = ckt.device("cpu")
    local x, y = dev:alloc("f32", n), dev:alloc("f32", n)
    x:upload(xa)
    for _, opts in ipairs{{unroll = false}, {}} do
      y:upload(ckt.array("f32", {n}):poison())
      kernel(opts):compile{target = "cpu"}:launch{grid = 3, X = x, Y = y, n = n}
      local ya = ckt.array("f32", {n}); y:download(ya)
      for i = 0, n - 1 do assert.equal(xa[i] * 2, ya[i]) end
    end
  end)

  it("refuses options it does not know, naming them", function()
    local function err(opts)
      local ok, e = pcall(kernel, opts)
      assert.is_false(ok)
      return tostring(e)
    end
    assert.truthy(err({unroll = "no"}):find("bad argument #3 to 'loop' (field 'unroll' must be a boolean, got string)", 1, true))
    assert.truthy(err({unrol = false}):find("unrol", 1, true))
    assert.truthy(err(7):find("bad argument #3 to 'loop' (table expected, got number)", 1, true))
  end)
end)
