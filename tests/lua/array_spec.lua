-- Host arrays, devices and device buffers: literal examples, seeded properties, bad input.
local ckt = require "ckt"

local function err(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

local cpu_kernel_prelude = [[
#include <stdint.h>
typedef struct ckt_cpu_launch { int64_t grid[3], block[3], block_id[3]; void *lds; } ckt_cpu_launch;
]]

describe("ckt.array", function()
  it("holds typed elements, 0-based", function()
    local a <close> = ckt.array("f32", 4)
    assert.equal(4, a:size()); assert.equal(4, #a); assert.equal("f32", a:dtype()); assert.equal(16, a:bytes())
    for i = 0, 3 do assert.equal(0, a[i]) end
    a[0] = 1.5; a:set(3, -2)
    assert.equal(1.5, a[0]); assert.equal(-2, a:get(3))
    local m = ckt.array("i32", {2, 3})
    assert.same({2, 3}, m:shape()); assert.equal(6, m:size())
    m[5] = 7; assert.equal(7, m[5]); assert.equal("integer", math.type(m[5]))
    local h = ckt.array("half", 1) -- aliases
    assert.equal("f16", h:dtype())
  end)

  it("rounds to the element type exactly (f16, bf16 round to nearest even; integers saturate)", function()
    local h = ckt.array("f16", 4)
    h[0] = 1 + 2^-11          -- a tie between 1 and 1+2^-10: to even
    h[1] = 1 + 3 * 2^-11      -- a tie: to even (up)
    h[2] = 65520              -- overflows to inf
    h[3] = 2^-25              -- half the smallest subnormal: tie to 0
    assert.equal(1, h[0]); assert.equal(1 + 2^-9, h[1]); assert.equal(math.huge, h[2]); assert.equal(0, h[3])
    local b = ckt.array("bf16", 2)
    b[0] = 1 + 2^-8; b[1] = 3.0
    assert.equal(1, b[0]); assert.equal(3, b[1])
    local i8 = ckt.array("i8", 3)
    i8[0] = 300; i8[1] = -300; i8[2] = 2.9
    assert.equal(127, i8[0]); assert.equal(-128, i8[1]); assert.equal(2, i8[2])
    local u8 = ckt.array("u8", 1); u8[0] = -5; assert.equal(0, u8[0])
    local i64 = ckt.array("i64", 1); i64[0] = math.maxinteger - 1; assert.equal(math.maxinteger - 1, i64[0])
  end)

  it("fills, copies, assigns and lists", function()
    local a = ckt.array("i32", 5):fill(3)
    assert.same({3, 3, 3, 3, 3}, a:totable())
    local c = a:copy(); c[0] = 9
    assert.equal(3, a[0]); assert.equal(9, c[0])
    a:assign{1, 2, 3, 4, 5}
    assert.same({1, 2, 3, 4, 5}, a:totable())
    assert.truthy(tostring(a):find("ckt.array%(i32, 5%): 1, 2, 3, 4, 5"))
  end)

  it("random is deterministic per seed, in range, and never zero by default", function()
    for _, dt in ipairs{"f16", "bf16", "f32", "f64", "i32", "i8", "u8", "i64"} do
      local a = ckt.array(dt, 2000):random{seed = 42}
      local b = ckt.array(dt, 2000):random{seed = 42}
      local c = ckt.array(dt, 2000):random{seed = 43}
      assert.is_true((a:compare(b, {rtol = 0, atol = 0})))
      assert.is_false((a:compare(c, {rtol = 0, atol = 0})))
      local float = dt:find("f") ~= nil
      local lo, hi = float and -1 or (dt == "u8" and 1 or -8), float and 1 or (dt == "u8" and 16 or 8)
      for i = 0, a:size() - 1 do
        assert.is_true(a[i] ~= 0, dt .. " produced a zero")
        assert.is_true(a[i] >= lo and a[i] <= hi, dt .. " out of range: " .. a[i])
      end
    end
    local r = ckt.array("f32", 1000):random{seed = 7, lo = 10, hi = 20}
    for i = 0, 999 do assert.is_true(r[i] >= 10 and r[i] < 20) end
    local z = ckt.array("i32", 1000):random{seed = 1, lo = -1, hi = 1, zeros = true}
    local seen = {}
    for i = 0, 999 do seen[z[i]] = true end
    assert.is_true(seen[0] and seen[1] and seen[-1])
  end)

  it("compare reports ok, the largest error and the first bad index", function()
    local ref = ckt.array("f32", 100):random{seed = 5}
    local out = ref:copy()
    local ok, maxerr, bad = out:compare(ref)
    assert.is_true(ok); assert.equal(0, maxerr); assert.is_nil(bad)
    out[17] = out[17] + 0.5; out[60] = out[60] + 1
    ok, maxerr, bad = out:compare(ref)
    assert.is_false(ok); assert.is_true(math.abs(maxerr - 1) < 1e-6); assert.equal(17, bad)
    -- a poisoned output fails everywhere (NaN), also against itself
    local p = ckt.array("f16", 8):poison()
    ok, maxerr, bad = p:compare(p)
    assert.is_false(ok); assert.equal(math.huge, maxerr); assert.equal(0, bad)
    assert.is_true(p[0] ~= p[0])
    assert.equal(-1, ckt.array("i32", 1):poison()[0])
    -- mixed types: an f16 result against an f32 reference, tolerance of the coarser type
    local r32 = ckt.array("f32", 64):random{seed = 9}
    local r16 = ckt.array("f16", 64)
    for i = 0, 63 do r16[i] = r32[i] end
    assert.is_true((r16:compare(r32)))
    assert.is_false((r16:compare(r32, {rtol = 0, atol = 1e-7})))
    -- property: the first bad index is the smallest perturbed one, for random perturbations
    local seed = 11
    for _ = 1, 50 do
      seed = (seed * 1103515245 + 12345) % 2^31
      local n = 1 + seed % 300
      local a = ckt.array("f32", n):random{seed = seed}
      local b = a:copy()
      local k = (seed // 7) % n
      b[k] = b[k] * 2 + 1
      local _, _, first = b:compare(a)
      assert.equal(k, first)
    end
  end)

  it("is to-be-closed: closing frees once and later use is an error", function()
    local kept
    do
      local a <close> = ckt.array("f32", 16)
      kept = a
    end
    assert.is_true(kept:closed())
    assert.truthy(err(function() return kept[0] end):find("used after close"))
    assert.truthy(err(kept.fill, kept, 1):find("used after close"))
    kept:close() -- closing again is harmless
    collectgarbage(); collectgarbage()
    assert.truthy(tostring(kept):find("closed"))
  end)

  it("refuses bad input with reasons", function()
    assert.truthy(err(ckt.array, "f128", 4):find("unknown element type 'f128'"))
    assert.truthy(err(ckt.array, 4, 4):find("dtype must be a string"))
    assert.truthy(err(ckt.array, "f32"):find("size"))
    assert.truthy(err(ckt.array, "f32", 0):find("extent 1 is 0"))
    assert.truthy(err(ckt.array, "f32", -3):find("must be positive"))
    assert.truthy(err(ckt.array, "f32", 2.5):find("integer"))
    assert.truthy(err(ckt.array, "f32", {4, 0}):find("extent 2 is 0"))
    assert.truthy(err(ckt.array, "f32", {}):find("1 to 8 extents"))
    assert.truthy(err(ckt.array, "f64", {2^31, 2^31}):find("exceed"))
    assert.truthy(err(ckt.array, "f32", math.maxinteger):find("exceed"))
    local a = ckt.array("f32", 4)
    assert.truthy(err(function() return a[4] end):find("index 4 is outside %[0, 4%)"))
    assert.truthy(err(function() return a[-1] end):find("outside"))
    assert.truthy(err(function() a[0] = "x" end):find("value must be a number"))
    assert.truthy(err(function() return a.nosuch end):find("no method 'nosuch'"))
    assert.truthy(err(a.random, a, {seed = 1, lo = 2, hi = 1}):find("lo %(2%) must be below hi %(1%)"))
    assert.truthy(err(a.random, a, {sed = 1}):find("sed"))
    assert.truthy(err(a.random, ckt.array("i32", 2), {lo = 0, hi = 0}):find("only zeros"))
    assert.truthy(err(a.compare, a, ckt.array("f32", 5)):find("sizes differ"))
    assert.truthy(err(a.compare, a, {1, 2, 3, 4}):find("must be a ckt.array"))
    assert.truthy(err(a.compare, a, a, {rtol = -1}):find("rtol"))
    assert.truthy(err(a.assign, a, {1, 2}):find("has 2 values, the array 4"))
  end)
end)

describe("ckt.device and buffers", function()
  it("opens the cpu device; GPU backends absent here say what to use instead", function()
    local dev <close> = ckt.device("cpu")
    assert.equal("cpu", dev:backend()); assert.equal("cpu", dev:target())
    assert.truthy(dev:name():find("worker threads"))
    assert.equal("cpu", ckt.device():backend()) -- the default target is cpu
    local ok, e = pcall(ckt.device, "cuda")
    if not ok then assert.truthy(e:find("cpu:sm_90")) end
    ok, e = pcall(ckt.device, "hip")
    if not ok then assert.truthy(e:find("cpu:gfx90a")) end
    assert.truthy(err(ckt.device, "vulkan"):find("unknown backend 'vulkan'"))
    assert.truthy(err(ckt.device, 3):find("must be a string"))
  end)

  it("uploads, downloads, copies and sets device memory", function()
    local dev <close> = ckt.device("cpu")
    local a = ckt.array("bf16", 1000):random{seed = 3}
    local buf <close> = dev:alloc("bf16", 1000)
    assert.equal(1000, buf:size()); assert.equal(2000, buf:bytes()); assert.equal("bf16", buf:dtype())
    buf:upload(a)
    local back = ckt.array("bf16", 1000):poison()
    buf:download(back)
    assert.is_true((back:compare(a, {rtol = 0, atol = 0})))
    local other <close> = dev:alloc("bf16", 1000)
    other:copy_from(buf)
    assert.is_true((other:download():compare(a, {rtol = 0, atol = 0})))
    other:memset(0)
    assert.equal(0, other:download()[999])
  end)

  it("launches a hand-written CPU kernel over a grid and checks the signature", function()
    local src = cpu_kernel_prelude .. [[
const unsigned long long axpy__lds_bytes = 64 * sizeof(float);
const int axpy__nparams = 4;
const int axpy__param_kinds[4] = {0, 0, 1, 3}; /* ptr, ptr, i32, f32 (ckt_param_kind) */
void axpy(void *const *args, const ckt_cpu_launch *l) {
  const float *x = *(const float *const *)args[0]; float *y = *(float *const *)args[1];
  int32_t n = *(const int32_t *)args[2]; float a = *(const float *)args[3];
  float *stage = (float *)l->lds;
  int64_t base = l->block_id[0] * l->block[0];
  for (int64_t t = 0; t < l->block[0]; t++) stage[t] = base + t < n ? x[base + t] : 0.0f;
  for (int64_t t = 0; t < l->block[0]; t++) if (base + t < n) y[base + t] += a * stage[t];
}]]
    local bin = ckt.compile{target = "cpu", source = src, name = "axpy"}
    local dev <close> = ckt.device("cpu")
    local params = {{"ptr", "x"}, {"ptr", "y"}, {"i32", "n"}, {"f32", "a"}}
    for _, n in ipairs{1, 63, 64, 65, 1000, 4099} do
      local x, y = ckt.array("f32", n):random{seed = n}, ckt.array("f32", n):random{seed = n + 1}
      local dx <close> = dev:alloc("f32", n):upload(x)
      local dy <close> = dev:alloc("f32", n):upload(y)
      local ms = dev:launch(bin, {grid = (n + 63) // 64, block = 64, params = params, args = {dx, dy, n, 0.5}, timed = true})
      assert.is_true(ms >= 0)
      local want = ckt.array("f64", n)
      for i = 0, n - 1 do want[i] = y[i] + 0.5 * x[i] end
      assert.is_true((dy:download():compare(want)))
    end
    local dx <close> = dev:alloc("f32", 8)
    local function launch_err(t) return err(dev.launch, dev, bin, t) end
    assert.truthy(launch_err{grid = 1, block = 64, params = {{"ptr", "x"}}, args = {dx}}:find("the kernel takes %(ptr,ptr,i32,f32%), the launch passes %(ptr%)"))
    assert.truthy(launch_err{grid = 1, block = 64, params = params, args = {dx, dx, 8}}:find("takes 4 arguments, got 3"))
    assert.truthy(launch_err{grid = 0, block = 64, params = params, args = {dx, dx, 8, 1}}:find("grid.x is 0"))
    assert.truthy(launch_err{grid = 1, block = 4096, params = params, args = {dx, dx, 8, 1}}:find("block.x = 4096 exceeds"))
    assert.truthy(launch_err{grid = 1, block = 64, params = params, args = {dx, 3, 8, 1}}:find("argument 2 'y' must be a device buffer"))
    assert.truthy(launch_err{grid = 1, block = 64, params = params, args = {dx, dx, 2^40, 1}}:find("does not fit i32"))
    assert.truthy(launch_err{grid = 1, block = 64, params = {{"vec4", "x"}}, args = {dx}}:find("unknown kind 'vec4'"))
    assert.truthy(launch_err{grid = 1, block = 64, args = {dx}}:find("'params'"))
    assert.truthy(launch_err{grid = 1, block = 64, params = params, args = {dx, dx, 8, 1}, gird = 2}:find("gird"))
    local co = ckt.compile{target = "cpu", source = src, name = "axpy", compile_only = true}
    assert.truthy(err(dev.launch, dev, co, {grid = 1, block = 64, params = params, args = {dx, dx, 8, 1}}):find("compile%-only"))
    assert.truthy(err(dev.launch, dev, "not a binary", {}):find("expected a compiled binary"))
  end)

  it("refuses bad buffer use", function()
    local dev <close> = ckt.device("cpu")
    assert.truthy(err(dev.alloc, dev, "f32", 0):find("extent 1 is 0"))
    assert.truthy(err(dev.alloc, dev, "q8", 4):find("unknown element type"))
    local b <close> = dev:alloc("f32", 4)
    assert.truthy(err(b.upload, b, ckt.array("f32", 5)):find("does not match the buffer"))
    assert.truthy(err(b.upload, b, ckt.array("i32", 4)):find("i32 x 4.*f32 x 4"))
    assert.truthy(err(b.download, b, "x"):find("expected a ckt.array"))
    assert.truthy(err(b.memset, b, 256):find("outside %[0, 255%]"))
    assert.truthy(err(b.copy_from, b, dev:alloc("f32", 8)):find("sizes differ"))
    local kept
    do local c <close> = dev:alloc("f32", 4); kept = c end
    assert.truthy(err(kept.upload, kept, ckt.array("f32", 4)):find("used after close"))
    -- a closed device keeps its live buffers usable; the device handle itself refuses use
    local d2 = ckt.device("cpu")
    local live <close> = d2:alloc("i32", 4)
    d2:close()
    live:upload(ckt.array("i32", 4):fill(5))
    assert.equal(5, live:download()[3])
    assert.truthy(err(d2.alloc, d2, "f32", 1):find("used after close"))
  end)
end)
