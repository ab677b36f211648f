-- Streams on a device (the GPU host's check of the launch issue; runs on the CPU target too):
-- ordering of dependent launches on one stream and across two (s2:wait(s1:record())), the results
-- of asynchronous launches equal to waited ones bit for bit (the library GEMM, the elementwise
-- kernel), a graph replay equal to its launches, uploads/downloads on a stream, and a buffer
-- closed while launches that use it are in flight. Exits 1 on any failed check.
--
-- ckt-lua tests/gpu/streams.lua [target=sm_90] [gemm_target=target] [size=512]
local target = arg[1] or "sm_90"
local gemm_target = arg[2] or target
local S = tonumber(arg[3] or "512")
local ew = require "ckt.kernels.elementwise"
local gemm = require "ckt.kernels.gemm"
local dev = ckt.device(ckt.target(target).runtime)
local failed = 0
local function check(name, ok, detail)
  print(("%-64s %s%s"):format(name, ok and "ok" or "FAILED", detail and ("  " .. tostring(detail)) or ""))
  if not ok then failed = failed + 1 end
end

-- 1. a chain of dependent launches on one stream: y = y * 0.5 + x, 50 times, against the same
-- chain on the CPU target (bit for bit: one rounding per step in both)
local n = 1 << 16
local k = ew.build{dtype = "f32", inputs = 2, f = function(y, x) return y * 0.5 + x end}
local exe, cexe = k:compile{target = target}, k:compile{target = "cpu"}
local cpu = ckt.device("cpu")
local xs = ckt.array("f32", n):random{seed = 1, lo = -1, hi = 1}
local y0 = ckt.array("f32", n):random{seed = 2, lo = -1, hi = 1}
local function chain(d, s)
  local bx, by = d:alloc("f32", n), d:alloc("f32", n)
  bx:upload(xs, {stream = s}); by:upload(y0, {stream = s})
  local a = {X1 = by, X2 = bx, Z = by, n = n, stream = s}
  return bx, by, a
end
local _, grid = ew.build{dtype = "f32", inputs = 2, f = function(y, x) return y * 0.5 + x end}
local s1 <close> = dev:stream()
local bx, by, a = chain(dev, s1)
a.grid = grid(n)
for _ = 1, 50 do exe:launch(a) end
local got = by:download(nil, {stream = s1})
local cs <close> = cpu:stream()
local _, cby, ca = chain(cpu, cs)
ca.grid = grid(n)
for _ = 1, 50 do cexe:launch(ca) end
local want = cby:download(nil, {stream = cs})
check("50 dependent launches on one stream == the CPU target's, bit for bit", (got:compare(want, {rtol = 0, atol = 0})))

-- 2. two streams: s2 continues what s1 produced, ordered by an event
local s2 <close> = dev:stream()
by:upload(y0, {stream = s1})
for _ = 1, 25 do exe:launch(a) end
s2:wait(s1:record())
local a2 = {grid = a.grid, X1 = by, X2 = bx, Z = by, n = n, stream = s2}
for _ = 1, 25 do exe:launch(a2) end
s2:synchronize()
check("25 launches on s1, then 25 on s2 after s2:wait(s1:record()) == the 50 on one stream", (by:download():compare(want, {rtol = 0, atol = 0})))

-- 3. the library GEMM: asynchronous launches == a waited launch, bit for bit; a graph of it too
local kg, gg = gemm.build{dtype = "f16", target = gemm_target, a_major = "k", b_major = "k"}
local eg = kg:compile{target = gemm_target}
local A = dev:alloc("f16", S * S):upload(ckt.array("f16", S * S):random{seed = 3, lo = -2, hi = 2})
local B = dev:alloc("f16", S * S):upload(ckt.array("f16", S * S):random{seed = 4, lo = -2, hi = 2})
local C1, C2, C3 = dev:alloc("f16", S * S), dev:alloc("f16", S * S), dev:alloc("f16", S * S)
local ga = {grid = gg(S, S, eg), A = A, B = B, M = S, N = S, K = S}
C1:upload(ckt.array("f16", S * S):poison()); C2:upload(ckt.array("f16", S * S):poison()); C3:upload(ckt.array("f16", S * S):poison())
ga.C = C1; ga.timed = true
local ms = eg:launch(ga)
ga.C = C2; ga.timed = nil; ga.stream = s1
for _ = 1, 20 do eg:launch(ga) end
local c1, c2 = C1:download(), C2:download(nil, {stream = s1})
check(("GEMM %d^3 %s: 20 asynchronous launches == a timed one (%.3f ms), bit for bit"):format(S, gemm_target, ms), (c1:compare(c2, {rtol = 0, atol = 0})))
local g = dev:capture(function(cst) local b = {stream = cst, C = C3}; for key, v in pairs(ga) do if key ~= "stream" and key ~= "C" then b[key] = v end end; eg:launch(b); exe:launch{grid = a.grid, X1 = by, X2 = bx, Z = by, n = n, stream = cst} end)
g:launch(s1); g:launch(s1)
s1:synchronize()
check("a graph (GEMM + elementwise) replayed twice: its GEMM == the launch, bit for bit", (C3:download():compare(c1, {rtol = 0, atol = 0})) and g:launches() == 2)
g:close()

-- 4. buffers closed while launches that use them are in flight, then new buffers of the same size
for round = 1, 3 do
  local tx, ty = dev:alloc("f32", n):upload(xs), dev:alloc("f32", n):upload(y0)
  local t = {grid = a.grid, X1 = ty, X2 = tx, Z = ty, n = n, stream = s1}
  for _ = 1, 50 do exe:launch(t) end
  local e = s1:record()
  tx:close(); ty:close() -- in flight: their memory must stay until s1 passes them
  local fresh = {}
  for i = 1, 4 do fresh[i] = dev:alloc("f32", n):upload(ckt.array("f32", n):fill(i)) end
  e:synchronize()
  local intact = true
  for i = 1, 4 do intact = intact and fresh[i]:download():compare(ckt.array("f32", n):fill(i), {rtol = 0, atol = 0}); fresh[i]:close() end
  check(("round %d: buffers closed in flight, new ones written meanwhile stay intact"):format(round), intact)
end
local ok, e = pcall(exe.launch, exe, {grid = a.grid, X1 = C1, X2 = bx, Z = by, n = n})
check("a buffer of the wrong dtype is refused by the launch", not ok and tostring(e):find("holds f16", 1, true) ~= nil, e)
dev:synchronize()
check("the device synchronizes clean at the end", true)
if failed > 0 then
  print(failed .. " stream check(s) FAILED")
  os.exit(1)
end
print("all stream checks passed")
