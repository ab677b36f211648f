-- Streams, events, graphs and asynchronous launches on the CPU target (issue 25, DESIGN.md §3.8):
-- launches on one stream run in order, streams ordered by events, copies on a stream ordered with
-- its launches, synchronous copies see every stream's work; asynchronous results equal the
-- synchronous ones bit for bit; the error of a kernel that faults at run time comes with the next
-- synchronization, naming the launch, and only once; a buffer closed while launches that use it
-- are in flight is kept until they are done; streams, events and graphs of another device or
-- closed ones are refused, naming the argument; captured graphs replay their launches.
-- Random non-zero data; outputs poisoned before every run.
local ckt = require "ckt"
local ew = require "ckt.kernels.elementwise"

local dev = ckt.device("cpu")

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, "expected an error")
  return tostring(e)
end
local function has(e, text) assert(e:find(text, 1, true), ("%q lacks %q"):format(e, text)) end

-- Y = Y * a + c over n f32 elements, one 64-element tile per block: each launch reads what the
-- one before it wrote, so the result tells whether they ran in order
local axpb = ckt.kernel{name = "axpb", block = 64, build = function(b)
  local Y = b:pointer("Y", "f32")
  local n = b:size("n")
  local a, c = b:scalar("a"), b:scalar("c")
  local w = ckt.local_tile(ckt.tensor(Y, "f32", {shape = {n}}, {pad = true}), {64}, {b:block_id()})
  w:store(b:map(function(y) return y * a + c end, w:load()))
end}:compile{target = "cpu"}
local function grid(n) return (n + 63) // 64 end

-- the steps (a, c): a a power of two and c a multiple of 1/8, so y * a + c is exact in double and
-- rounds once to f32 on both sides (fused or not)
local function steps(count, seed)
  local r, out = seed, {}
  for i = 1, count do
    r = (r * 1103515245 + 12345) % 2147483648
    out[i] = {({0.5, -2, 0.25, 1, -0.5})[r % 5 + 1], ((r >> 8) % 41 - 20) / 8}
  end
  return out
end
-- got against x put through the steps in order, f32 rounding after each step: every element of
-- a small array, a sample (every 61st and the last) of a large one
local function check(got, x, st, what)
  local n, one = x:size(), ckt.array("f32", 1)
  local stride = n <= 4096 and 1 or 61
  local i = 0
  while i < n do
    local v = x[i]
    for _, p in ipairs(st) do
      one[0] = v * p[1] + p[2]
      v = one[0]
    end
    if got[i] ~= v then error(("%s: element %d is %s, want %s"):format(what or "result", i, tostring(got[i]), tostring(v)), 2) end
    i = i + stride
    if i >= n and i - stride < n - 1 then i = n - 1 end
  end
end
local function exact(got, want, what)
  local ok, e, at = got:compare(want, {rtol = 0, atol = 0})
  assert(ok, ("%s: max error %s at %s"):format(what or "result", tostring(e), tostring(at)))
end
local function random(n, seed) return ckt.array("f32", n):random{seed = seed, lo = 0.5, hi = 4} end

-- a kernel that faults at run time on the CPU target (an LDS window at origin o leaves its
-- tensor when o > 0): the launch checks cannot see it
local fault = ckt.kernel{name = "lds_far", block = 64, build = function(b)
  local o = b:size("o")
  local w = ckt.tile_window(ckt.tensor("lds", "f32", ckt.layout{64}), {64}, {o})
  w:store(w:load())
end}:compile{target = "cpu"}

describe("ordering", function()
  it("many dependent launches on one stream give the host reference computed in order", function()
    local n, st = 1000, steps(40, 7)
    local x = random(n, 1)
    local y = dev:alloc("f32", n)
    y:upload(x)
    local s <close> = dev:stream()
    for _, p in ipairs(st) do axpb:launch{grid = grid(n), Y = y, n = n, a = p[1], c = p[2], stream = s} end
    s:synchronize()
    local out = ckt.array("f32", n):poison()
    y:download(out, {stream = s})
    check(out, x, st)
  end)

  it("on the default stream too, and dev:synchronize() waits for it", function()
    local n, st = 777, steps(25, 3)
    local x = random(n, 2)
    local y = dev:alloc("f32", n)
    y:upload(x)
    for _, p in ipairs(st) do axpb:launch{grid = grid(n), Y = y, n = n, a = p[1], c = p[2]} end
    dev:synchronize()
    check(y:download(), x, st)
  end)

  it("two streams ordered by s2:wait(s1:record())", function()
    local n = 1 << 20 -- long enough that s2 would overtake s1 without the wait
    local x = random(n, 3)
    local y = dev:alloc("f32", n)
    y:upload(x)
    local s1 <close> = dev:stream()
    local s2 <close> = dev:stream()
    local st1, st2 = steps(6, 11), steps(6, 12)
    for _, p in ipairs(st1) do axpb:launch{grid = grid(n), Y = y, n = n, a = p[1], c = p[2], stream = s1} end
    s2:wait(s1:record())
    for _, p in ipairs(st2) do axpb:launch{grid = grid(n), Y = y, n = n, a = p[1], c = p[2], stream = s2} end
    s2:synchronize()
    local all = {}
    for _, p in ipairs(st1) do all[#all + 1] = p end
    for _, p in ipairs(st2) do all[#all + 1] = p end
    check(y:download(), x, all)
  end)

  it("uploads and downloads with {stream =} are ordered with the stream's launches", function()
    local n = 1 << 18
    local s <close> = dev:stream()
    local y = dev:alloc("f32", n)
    local x1, x2 = random(n, 21), random(n, 22)
    local st = steps(3, 5)
    local mid = ckt.array("f32", n):poison()
    y:upload(x1, {stream = s}) -- returns at once: the bytes are staged
    x1 = random(n, 21)         -- (x1 recomputed: the staged copy is what counts)
    for _, p in ipairs(st) do axpb:launch{grid = grid(n), Y = y, n = n, a = p[1], c = p[2], stream = s} end
    y:download(mid, {stream = s}) -- after the launches before it
    local staged = random(n, 22)
    y:upload(staged, {stream = s}) -- after the download
    staged:fill(123)               -- reusing the host memory at once changes nothing
    for _, p in ipairs(st) do axpb:launch{grid = grid(n), Y = y, n = n, a = p[1], c = p[2], stream = s} end
    local final = ckt.array("f32", n):poison()
    y:download(final, {stream = s})
    check(mid, x1, st, "download between the launches")
    check(final, x2, st, "download after the second upload")
  end)

  it("a synchronous download sees asynchronous launches on another stream (it waits for the whole device)", function()
    local n, st = 1 << 20, steps(5, 9)
    local x = random(n, 4)
    local y = dev:alloc("f32", n)
    y:upload(x)
    local s <close> = dev:stream()
    for _, p in ipairs(st) do axpb:launch{grid = grid(n), Y = y, n = n, a = p[1], c = p[2], stream = s} end
    local out = ckt.array("f32", n):poison()
    y:download(out) -- no stream, no synchronize before it
    check(out, x, st)
  end)

  it("asynchronous results equal the timed (synchronous) ones bit for bit", function()
    local f = function(x1, x2) return ckt.max(x1 * x2 + ckt.exp(x1 - x2), x2 / x1) end
    local k, g = ew.build{dtype = "f32", inputs = 2, f = f}
    local exe = k:compile{target = "cpu"}
    local n = 5000 * 4
    local a = ckt.array("f32", n):random{seed = 31, lo = -3, hi = 3}
    local b = ckt.array("f32", n):random{seed = 32, lo = 0.25, hi = 3}
    local ba, bb, z1, z2 = dev:alloc("f32", n), dev:alloc("f32", n), dev:alloc("f32", n), dev:alloc("f32", n)
    ba:upload(a); bb:upload(b)
    z1:upload(ckt.array("f32", n):poison()); z2:upload(ckt.array("f32", n):poison())
    local ms = exe:launch{grid = g(n), X1 = ba, X2 = bb, Z = z1, n = n, timed = true}
    assert.is_number(ms)
    assert.is_true(ms >= 0)
    local s <close> = dev:stream()
    assert.is_nil(exe:launch{grid = g(n), X1 = ba, X2 = bb, Z = z2, n = n, stream = s})
    s:synchronize()
    local r1, r2 = z1:download(), z2:download()
    exact(r2, r1, "asynchronous vs timed")
    assert.truthy((r1:compare(ew.reference(f, "f32", a, b), {rtol = 1e-5, atol = 1e-5}))) -- not poison twice
  end)
end)

describe("errors of asynchronous kernels", function()
  it("come with s:synchronize(), naming the launch, and only once", function()
    local s <close> = dev:stream()
    local y = dev:alloc("f32", 64)
    axpb:launch{grid = 1, Y = y, n = 64, a = 1, c = 1, stream = s}
    fault:launch{grid = {3, 2}, o = 1, stream = s} -- returns without error
    local e = err_of(s.synchronize, s)
    has(e, "launch #2 of kernel 'lds_far' on stream ")
    has(e, "left its tensor")
    s:synchronize() -- clean
    -- the stream runs again afterwards
    y:upload(ckt.array("f32", 64):fill(2))
    axpb:launch{grid = 1, Y = y, n = 64, a = 2, c = 1, stream = s}
    s:synchronize()
    assert.equal(5, y:download()[17])
  end)

  it("dev:synchronize() raises an error not yet reported, then is clean", function()
    local s <close> = dev:stream()
    fault:launch{grid = {3, 2}, o = 5, stream = s}
    local e = err_of(dev.synchronize, dev)
    has(e, "of kernel 'lds_far' on stream ")
    dev:synchronize()
    s:synchronize()
  end)

  it("on the default stream: raised by the next synchronous copy", function()
    local y = dev:alloc("f32", 64)
    fault:launch{grid = {3, 2}, o = 2, device = dev}
    has(err_of(y.download, y), "of kernel 'lds_far'")
    y:download()
  end)

  it("a timed launch raises its kernel's error at once", function()
    local s <close> = dev:stream()
    has(err_of(fault.launch, fault, {grid = {3, 2}, o = 1, stream = s, timed = true}), "launch #1 of kernel 'lds_far'")
    s:synchronize()
  end)

  it("an event after the failure: e:synchronize() fails, the stream reports the launch", function()
    local s <close> = dev:stream()
    fault:launch{grid = {3, 2}, o = 1, stream = s}
    local e = s:record()
    has(err_of(e.synchronize, e), "the stream's work before the event failed")
    has(err_of(s.synchronize, s), "launch #1 of kernel 'lds_far'")
    s:synchronize()
  end)

  it("argument errors are raised by the launch itself", function()
    local s <close> = dev:stream()
    local y = dev:alloc("f32", 64)
    has(err_of(axpb.launch, axpb, {grid = 1, Y = 3, n = 64, a = 1, c = 1, stream = s}), "argument 1 'Y' must be a device buffer, got number")
    has(err_of(axpb.launch, axpb, {grid = 1, Y = y, a = 1, c = 1, stream = s}), "argument 'n' (i32) is missing")
    has(err_of(axpb.launch, axpb, {grid = 1, Y = y, n = 64, a = "x", c = 1, stream = s}), "'a' must be a number, got string")
    local other <close> = ckt.device("cpu")
    local yo = other:alloc("f32", 64)
    has(err_of(axpb.launch, axpb, {grid = 1, Y = yo, n = 64, a = 1, c = 1, stream = s}), "argument 'Y' is a buffer of another device")
    has(err_of(axpb.launch, axpb, {grid = 1, Y = y, n = 65, a = 1, c = 1, stream = s}), "argument 'Y'")
    s:synchronize()
  end)
end)

describe("a buffer closed while launches that use it are in flight", function()
  it("keeps its memory until they are done; the other buffers' results are right", function()
    local n, st = 1 << 21, steps(12, 17)
    local x = random(n, 5)
    local victim, other = dev:alloc("f32", n), dev:alloc("f32", n)
    victim:upload(x); other:upload(x)
    local s <close> = dev:stream()
    for _, p in ipairs(st) do
      axpb:launch{grid = grid(n), Y = victim, n = n, a = p[1], c = p[2], stream = s}
      axpb:launch{grid = grid(n), Y = other, n = n, a = p[1], c = p[2], stream = s}
    end
    victim:close() -- in flight: freed once the stream is past its last use
    local fresh = dev:alloc("f32", n) -- must not get the victim's memory while it is in use
    fresh:upload(ckt.array("f32", n):fill(-1))
    s:synchronize()
    check(other:download(), x, st)
    local f = fresh:download()
    assert.equal(-1, f[0]); assert.equal(-1, f[n - 1])
    has(err_of(axpb.launch, axpb, {grid = 1, Y = victim, n = 64, a = 1, c = 1, stream = s}), "used after close")
    has(err_of(victim.upload, victim, x), "used after close")
  end)

  it("on several streams at once", function()
    local n, st = 1 << 20, steps(4, 23)
    local x = random(n, 6)
    local shared = dev:alloc("f32", n)
    shared:upload(x)
    local streams, outs = {}, {}
    for i = 1, 6 do -- more streams than a buffer remembers one by one
      streams[i] = dev:stream()
      outs[i] = dev:alloc("f32", n)
      outs[i]:upload(x)
      for _, p in ipairs(st) do
        axpb:launch{grid = grid(n), Y = outs[i], n = n, a = p[1], c = p[2], stream = streams[i]}
      end
      fault:launch{grid = 1, o = 0, stream = streams[i]} -- harmless
      axpb:launch{grid = grid(n), Y = shared, n = n, a = 1, c = 0, stream = streams[i]}
    end
    shared:close()
    dev:synchronize()
    for i = 1, 6 do
      check(outs[i]:download(), x, st, "stream " .. i)
      streams[i]:close()
    end
  end)
end)

describe("streams, events and graphs of another device, closed ones, wrong types", function()
  local other = ckt.device("cpu") -- each ckt.device call opens a device of its own
  local y = dev:alloc("f32", 64)

  it("a stream of another device is refused by launches and copies", function()
    local so <close> = other:stream()
    has(err_of(axpb.launch, axpb, {grid = 1, Y = y, n = 64, a = 1, c = 1, stream = so}), "a buffer of another device")
    has(err_of(fault.launch, fault, {grid = 1, o = 0, stream = so, device = dev}), "the stream belongs to another device")
    has(err_of(y.upload, y, ckt.array("f32", 64), {stream = so}), "upload: the stream belongs to another device")
    has(err_of(y.download, y, {stream = so}), "download: the stream belongs to another device")
    has(err_of(y.download, y, ckt.array("f32", 64), {stream = other:default_stream()}), "download: the stream belongs to another device")
  end)

  it("a closed stream is refused", function()
    local s = dev:stream()
    s:close()
    assert.equal("ckt.stream (closed)", tostring(s))
    has(err_of(axpb.launch, axpb, {grid = 1, Y = y, n = 64, a = 1, c = 1, stream = s}), "launch: the stream is closed")
    has(err_of(y.upload, y, ckt.array("f32", 64), {stream = s}), "upload: the stream is closed")
    has(err_of(y.download, y, {stream = s}), "download: the stream is closed")
    has(err_of(s.synchronize, s), "used after close")
    has(err_of(s.record, s), "used after close")
    local g <close> = dev:capture(function(cs) axpb:launch{grid = 1, Y = y, n = 64, a = 1, c = 1, stream = cs} end)
    has(err_of(g.launch, g, s), "graph launch: the stream is closed")
    s:close() -- twice: nothing
  end)

  it("a default stream keeps its device alive; closing it leaves the device's stream working", function()
    local s = ckt.device("cpu"):default_stream() -- the device handle is garbage at once
    collectgarbage(); collectgarbage()
    assert.truthy(tostring(s):find("^ckt.stream%(default on cpu"), tostring(s))
    s:record():synchronize()
    s:synchronize()
    s:close()
    assert.equal("ckt.stream (closed)", tostring(s))
    local d <close> = ckt.device("cpu")
    local ds = d:default_stream()
    ds:close()
    local b = d:alloc("f32", 64)
    axpb:launch{grid = 1, Y = b, n = 64, a = 0, c = 3, stream = d:default_stream()}
    assert.equal(3, b:download()[63])
  end)

  it("events from another stream order and measure; of another device they are refused", function()
    local s1 <close> = dev:stream()
    local s2 <close> = dev:stream()
    local e1 = s1:record()
    axpb:launch{grid = 1, Y = y, n = 64, a = 1, c = 1, stream = s2}
    local e2 = s2:record()
    s2:wait(e1)
    s1:wait(e2)
    local ms = e1:elapsed(e2)
    assert.is_number(ms)
    assert.is_true(e2:query())
    local so <close> = other:stream()
    local eo = so:record()
    has(err_of(e1.elapsed, e1, eo), "elapsed: the events belong to different devices")
    has(err_of(s1.wait, s1, eo), "wait: the event was recorded on another device")
    has(err_of(so.wait, so, e1), "wait: the event was recorded on another device")
    e1:close()
    has(err_of(s2.wait, s2, e1), "event: used after close")
  end)

  it("wrong types for every new function's arguments name the argument", function()
    local s <close> = dev:stream()
    local a = ckt.array("f32", 64)
    has(err_of(axpb.launch, axpb, {grid = 1, Y = y, n = 64, a = 1, c = 1, stream = 3}), "launch: stream must be a ckt.stream (dev:stream()), got number")
    has(err_of(axpb.launch, axpb, {grid = 1, Y = y, n = 64, a = 1, c = 1, stream = dev}), "launch: stream must be a ckt.stream (dev:stream()), got ckt.device")
    has(err_of(axpb.launch, axpb, {grid = 1, Y = y, n = 64, a = 1, c = 1, timed = "yes"}), "field 'timed' must be a boolean, got string")
    has(err_of(axpb.launch, axpb, {grid = 1, Y = y, n = 64, a = 1, c = 1, strem = s}), "'strem' is neither grid")
    has(err_of(y.upload, y, a, {stream = 1}), "upload: stream must be a ckt.stream (dev:stream()), got number")
    has(err_of(y.upload, y, a, 5), "options must be a table ({stream = s}), got number")
    has(err_of(y.upload, y, a, {strem = s}), "unknown option 'strem'")
    has(err_of(y.download, y, {stream = "x"}), "download: stream must be a ckt.stream (dev:stream()), got string")
    has(err_of(y.download, y, a, {stream = true}), "download: stream must be a ckt.stream (dev:stream()), got boolean")
    has(err_of(s.wait, s, 1), "expected an event (s:record()), got number")
    has(err_of(s.wait, s), "expected an event (s:record()), got no value")
    has(err_of(s.wait, s, s), "expected an event (s:record()), got ckt.stream")
    local e = s:record()
    has(err_of(e.elapsed, e, 1), "bad argument #1")
    has(err_of(e.elapsed, e, 1), "expected an event (s:record()), got number")
    has(err_of(e.elapsed, e), "got no value")
    has(err_of(dev.capture, dev, 1), "function expected, got number")
    has(err_of(dev.capture, dev), "function expected, got no value")
    local g <close> = dev:capture(function() end)
    has(err_of(g.launch, g, 1), "graph launch: stream must be a ckt.stream (dev:stream()), got number")
    has(err_of(g.launch, g, dev), "graph launch: stream must be a ckt.stream (dev:stream()), got ckt.device")
    local so <close> = other:stream()
    has(err_of(g.launch, g, so), "graph launch: the stream belongs to another device")
    has(err_of(dev.launch, dev, fault:binary(), {grid = 1, block = 64, params = {{"i32", "o"}}, args = {0}, stream = 1}), "launch: stream must be a ckt.stream")
  end)
end)

describe("graphs", function()
  it("dev:capture of N launches: g:launches() == N, each replay runs them again", function()
    local n, st = 3000, steps(7, 41)
    local x = random(n, 7)
    local y = dev:alloc("f32", n)
    y:upload(x)
    local g <close> = dev:capture(function(s)
      for _, p in ipairs(st) do axpb:launch{grid = grid(n), Y = y, n = n, a = p[1], c = p[2], stream = s} end
    end)
    assert.equal(#st, g:launches())
    exact(y:download(), x, "capturing runs nothing")
    g:launch()
    g:launch()
    dev:synchronize()
    local twice = {}
    for _ = 1, 2 do for _, p in ipairs(st) do twice[#twice + 1] = p end end
    check(y:download(), x, twice)
    local s <close> = dev:stream()
    g:launch(s)
    s:synchronize()
    for _, p in ipairs(st) do twice[#twice + 1] = p end
    check(y:download(), x, twice, "a third replay on a stream")
  end)

  it("keeps its buffers alive after their owner closes them", function()
    local n, st = 2048, steps(3, 43)
    local x = random(n, 8)
    local y, out = dev:alloc("f32", n), dev:alloc("f32", n)
    y:upload(x)
    out:upload(ckt.array("f32", n):poison())
    local copy = ckt.kernel{name = "copy", block = 64, build = function(b)
      local X, Z = b:pointer("X", "f32", {const = true}), b:pointer("Z", "f32")
      local m = b:size("n")
      local t = {ckt.tensor(X, "f32", {shape = {m}}, {pad = true}), ckt.tensor(Z, "f32", {shape = {m}}, {pad = true})}
      ckt.local_tile(t[2], {64}, {b:block_id()}):store(ckt.local_tile(t[1], {64}, {b:block_id()}):load())
    end}:compile{target = "cpu"}
    local g <close> = dev:capture(function(s)
      for _, p in ipairs(st) do axpb:launch{grid = grid(n), Y = y, n = n, a = p[1], c = p[2], stream = s} end
      copy:launch{grid = grid(n), X = y, Z = out, n = n, stream = s}
    end)
    y:close()
    g:launch()
    dev:synchronize()
    check(out:download(), x, st)
    has(err_of(copy.launch, copy, {grid = 1, X = y, Z = out, n = 64}), "used after close")
  end)

  it("inside a capture: timed launches, synchronize, record, wait and copies on its stream are refused", function()
    local y = dev:alloc("f32", 64)
    local e0 = dev:stream():record()
    local cases = {
      {function(s) axpb:launch{grid = 1, Y = y, n = 64, a = 1, c = 1, stream = s, timed = true} end, "a timed launch waits, which a capture cannot"},
      {function(s) s:synchronize() end, "synchronize: the stream is capturing a graph"},
      {function(s) s:record() end, "record: the stream is capturing a graph"},
      {function(s) s:wait(e0) end, "wait: the stream is capturing a graph"},
      {function(s) y:upload(ckt.array("f32", 64), {stream = s}) end, "upload: the stream is capturing a graph"},
      {function(s) y:download({stream = s}) end, "download: the stream is capturing a graph"},
      {function(s) dev:capture(function() end); error("boom: raised inside") end, "boom: raised inside"},
    }
    for _, c in ipairs(cases) do has(err_of(dev.capture, dev, c[1]), c[2]) end
  end)

  it("an error inside the capture function propagates and leaves nothing behind", function()
    local y = dev:alloc("f32", 64)
    y:upload(ckt.array("f32", 64):fill(1))
    local e = err_of(dev.capture, dev, function(s)
      axpb:launch{grid = 1, Y = y, n = 64, a = 2, c = 0, stream = s}
      error({code = 7})
    end)
    has(e, "table:") -- the value raised, as is
    dev:synchronize()
    assert.equal(1, y:download()[0]) -- the dropped launch never ran
    y:close() -- the dropped graph held it: freed now
  end)

  it("the capture's stream is closed afterwards; closing it inside the capture is refused", function()
    local kept
    local g <close> = dev:capture(function(s) kept = s end)
    assert.equal(0, g:launches())
    assert.equal("ckt.stream (closed)", tostring(kept))
    has(err_of(dev.capture, dev, function(s) s:close() end), "capture: the stream was closed inside the capture")
    collectgarbage()
  end)

  it("a replay costs less host time than its launches (printed, not asserted)", function()
    local y = dev:alloc("f32", 64)
    local s <close> = dev:stream()
    local N, R = 10, 200
    local g <close> = dev:capture(function(cs)
      for _ = 1, N do axpb:launch{grid = 1, Y = y, n = 64, a = 1, c = 0, stream = cs} end
    end)
    s:synchronize()
    local t0 = ckt.now()
    for _ = 1, R do for _ = 1, N do axpb:launch{grid = 1, Y = y, n = 64, a = 1, c = 0, stream = s} end end
    local t_launch = ckt.now() - t0
    s:synchronize()
    t0 = ckt.now()
    for _ = 1, R do g:launch(s) end
    local t_graph = ckt.now() - t0
    s:synchronize()
    print(("\nhost time of %d launches: %.2f us one by one, %.2f us as a graph replay (cpu)"):format(
      N, t_launch / R * 1e6, t_graph / R * 1e6))
  end)
end)
