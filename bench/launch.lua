-- What an application sees: launches timed by the wall clock over loops of asynchronous launches
-- on one stream, beside the kernels' own event times, against cuBLAS (and torch, through
-- bench/launch_torch.py) in the same kind of loop. Three parts (the launch issue's list):
--   1. host cost of a launch: 10,000 launches of a tiny kernel (a 2 x 1024 f32 copy) back to back,
--      wall clock until the stream is drained / count; the time to enqueue alone; a waited (timed)
--      launch for comparison; a graph of 10 launches replayed against the 10 launches;
--   2. the library GEMM in an application loop: 100 launches back to back on one stream at each
--      size (f16, bf16; each GEMM target), wall clock / 100, beside the median event time, and
--      cuBLAS enqueued the same way on the same stream;
--   3. a chain (elementwise -> GEMM -> row reduction) launched 100 times: ckt alone, and with the
--      GEMM by cuBLAS, wall clock per chain.
-- Every GEMM result is checked against cuBLAS (or, without it, against the CPU reference at the
-- smallest size). JSON in bench/results/.
--
-- ckt-lua bench/launch.lua [target=sm_90] [json=bench/results/launch.json] [gemm_targets=sm_90,sm_90a]
--                          [sizes=1024,4096,8192] [dtypes=f16,bf16] [hints|nohints]
--   target "cpu" runs parts 1 and 3 on the CPU runtime (a dry run of the bench; no GEMM loop sizes
--   beyond the first unless given).
local target = arg[1] or "sm_90"
local json_path = arg[2] or "bench/results/launch.json"
local cpu_run = target:match("^cpu") ~= nil
local gemm_targets = arg[3] or (cpu_run and "cpu:sm_90" or "sm_90,sm_90a")
local size_arg = arg[4] or (cpu_run and "128" or "1024,4096,8192")
local dtype_arg = arg[5] or "f16,bf16"
local hints = (arg[6] or "hints") == "hints" -- "nohints": the size-blind default configuration
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local copy = require "ckt.kernels.copy"
local gemm = require "ckt.kernels.gemm"
local ew = require "ckt.kernels.elementwise"
local red = require "ckt.kernels.reduce"

local function split(s) local t = {} for x in s:gmatch("[^,]+") do t[#t + 1] = x end return t end
local okd, dev = pcall(ckt.device, ckt.target(target).runtime)
if not okd then
  print("SKIPPED: bench/launch.lua: no device for " .. target .. ": " .. tostring(dev))
  os.exit(77)
end
print(("bench/launch.lua on %s, %s"):format(dev:name(), os.date("!%Y-%m-%d %H:%M UTC")))

local cublas, cublas_why
if not cpu_run then
  cublas, cublas_why = bench.open_cublas(dev)
end

local s <close> = dev:stream()
local result = {date = os.date("!%Y-%m-%d %H:%M UTC"), device = dev:name(), target = target, tiny = {}, gemm = {}, chain = {}}
local failures = 0

-- 1. the host cost of a launch ------------------------------------------------------------------
do
  local M, N, COUNT = 2, 1024, 10000
  local k, grid = copy.build{dtype = "f32", tile = {1, 256}, block = 64}
  local exe = k:compile{target = target}
  local x = bench.random_buffer(dev, "f32", M * N, 1)
  local y = dev:alloc("f32", M * N)
  local a = {grid = grid(M, N), X = x, Y = y, M = M, N = N, stream = s}
  for _ = 1, 100 do exe:launch(a) end
  s:synchronize()
  local t0 = ckt.now()
  for _ = 1, COUNT do exe:launch(a) end
  local t1 = ckt.now()
  s:synchronize()
  local t2 = ckt.now()
  local timed = {grid = a.grid, X = x, Y = y, M = M, N = N, stream = s, timed = true}
  local event_ms = {}
  local t3 = ckt.now()
  for i = 1, 1000 do event_ms[i] = exe:launch(timed) end
  local t4 = ckt.now()
  local g = dev:capture(function(cs)
    local c = {grid = a.grid, X = x, Y = y, M = M, N = N, stream = cs}
    for _ = 1, 10 do exe:launch(c) end
  end)
  for _ = 1, 10 do g:launch(s) end
  s:synchronize()
  local REPL = 1000
  local t5 = ckt.now()
  for _ = 1, REPL do g:launch(s) end
  s:synchronize()
  local t6 = ckt.now()
  for _ = 1, REPL * 10 do exe:launch(a) end
  s:synchronize()
  local t7 = ckt.now()
  local ok = y:download():compare(x:download())
  if not ok then failures = failures + 1 end
  result.tiny = {kernel = "copy 2 x 1024 f32", launches = COUNT, enqueue_us = (t1 - t0) / COUNT * 1e6,
                 drained_us = (t2 - t0) / COUNT * 1e6, timed_wall_us = (t4 - t3) / 1000 * 1e6,
                 event_us = bench.median(event_ms) * 1e3, graph10_us = (t6 - t5) / REPL * 1e6,
                 launches10_us = (t7 - t6) / REPL * 1e6, valid = ok}
  local r = result.tiny
  print()
  print("| tiny kernel (copy 2 x 1024 f32) from Lua | µs a launch |")
  print("|---|---|")
  print(("| enqueue only (10,000 back to back) | %.2f |"):format(r.enqueue_us))
  print(("| enqueued until drained (10,000) | %.2f |"):format(r.drained_us))
  print(("| timed launch (waits; events) wall / event | %.2f / %.2f |"):format(r.timed_wall_us, r.event_us))
  print(("| graph of 10 launches replayed / the 10 launches | %.2f / %.2f |"):format(r.graph10_us, r.launches10_us))
  print(("| result valid | %s |"):format(tostring(ok)))
  g:close(); x:close(); y:close()
end

-- 2. the library GEMM in an application loop -----------------------------------------------------
local LOOP = 100
local function gemm_rows(gt, dt, S)
  local M, N, K = S, S, S
  -- the sizes as hints (an application that knows its problem passes them; gemm.build picks the
  -- tile for them): hints = false builds the size-blind default
  local hint = hints and {M = M, N = N, K = K} or {}
  local k, grid, plan = gemm.build{dtype = dt, target = gt, a_major = "k", b_major = "k", M = hint.M, N = hint.N, K = hint.K}
  local exe = k:compile{target = gt}
  local A = bench.random_buffer(dev, dt, M * K, 11)
  local B = bench.random_buffer(dev, dt, K * N, 12)
  local C, R = dev:alloc(dt, M * N), dev:alloc(dt, M * N)
  local args = {grid = grid(M, N, exe), A = A, B = B, C = C, M = M, N = N, K = K}
  local row = {target = gt, dtype = dt, size = S, flops = 2 * M * N * K, hints = hints,
               config = ("%dx%dx%d/%d/%d"):format(plan.TM, plan.TN, plan.TK, plan.block, plan.stages)}
  row.event_ms = bench.time_launch(exe, args)
  row.wall_ms = bench.wall_launch(exe, args, s, LOOP)
  if cublas then
    local p = {dtype = dt, out = dt, a_major = "k", b_major = "k", M = M, N = N, K = K, A = A:address(), B = B:address(), C = R:address()}
    p.stream = s:handle()
    bench.warm_up(function() cublas:gemm_async(p) end, s) -- (as time_launch warms ckt's up)
    row.cublas_event_ms = cublas:gemm(setmetatable({reps = bench.REPS}, {__index = p}))
    row.cublas_wall_ms = bench.wall_ms(function() cublas:gemm_async(p) end, s, LOOP)
    row.wall_ratio = row.cublas_wall_ms / row.wall_ms
    row.event_ratio = row.cublas_event_ms / row.event_ms
    local got, want = C:download(), R:download()
    row.valid = got:compare(want, {rtol = 2 ^ -7, atol = 4 * K * 2 ^ -21})
  elseif S <= 256 then
    local Ah, Bh = A:download(), B:download()
    local ref = gemm.reference(Ah, Bh, M, N, K, {a_major = "k", b_major = "k", out = "f32"})
    row.valid = C:download():compare(ref, {rtol = 2 ^ -7, atol = K * 2 ^ -10})
  end
  if row.valid == false then failures = failures + 1 end
  A:close(); B:close(); C:close(); R:close()
  return row
end

print()
print(("GEMM built %s"):format(hints and "with the sizes as hints (M =, N =, K =)" or "without hints (the default configuration)"))
print("| GEMM target | dtype | M=N=K | config | ckt event µs | ckt wall µs (100 on a stream) | cuBLAS event µs | cuBLAS wall µs | ckt/cuBLAS event | ckt/cuBLAS wall | valid |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for _, gt in ipairs(split(gemm_targets)) do
  for _, dt in ipairs(split(dtype_arg)) do
    for _, S in ipairs(split(size_arg)) do
      local ok, row = pcall(gemm_rows, gt, dt, tonumber(S))
      if not ok then
        row = {target = gt, dtype = dt, size = tonumber(S), error = tostring(row):gsub("\n.*", "")}
        failures = failures + 1
      end
      result.gemm[#result.gemm + 1] = row
      local function us(v) return v and ("%.1f"):format(v * 1e3) or "-" end
      local function pct(v) return v and ("%.1f%%"):format(100 * v) or "-" end
      print(("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |"):format(gt, dt, row.size, row.config or "-",
            row.error and ("failed: " .. row.error) or us(row.event_ms), us(row.wall_ms), us(row.cublas_event_ms),
            us(row.cublas_wall_ms), pct(row.event_ratio), pct(row.wall_ratio), tostring(row.valid)))
    end
  end
end

-- 3. a chain: elementwise -> GEMM -> row reduction ---------------------------------------------
do
  local gt = split(gemm_targets)[1]
  local S = tonumber(split(size_arg)[1])
  local M, N, K = S, S, S
  local ke, ge = ew.build{dtype = "f16", f = function(x) return x * 0.5 + 1 end}
  local kg, gg = gemm.build{dtype = "f16", target = gt, a_major = "k", b_major = "k", M = hints and M or nil, N = hints and N or nil, K = hints and K or nil}
  local kr, gr = red.build{dtype = "f16", op = "sum"}
  local ee, eg, er = ke:compile{target = gt}, kg:compile{target = gt}, kr:compile{target = gt}
  local X = bench.random_buffer(dev, "f16", M * K, 21)
  local A, B = dev:alloc("f16", M * K), bench.random_buffer(dev, "f16", K * N, 22)
  local C, Y, Y2 = dev:alloc("f16", M * N), dev:alloc("f32", M), dev:alloc("f32", M)
  local ae = {grid = ge(M * K), X1 = X, Z = A, n = M * K, stream = s}
  local ag = {grid = gg(M, N, eg), A = A, B = B, C = C, M = M, N = N, K = K, stream = s}
  local ar = {grid = gr(M), X = C, Y = Y, M = M, N = N, stream = s}
  local function chain() ee:launch(ae); eg:launch(ag); er:launch(ar) end
  local row = {target = gt, size = S, ckt_us = bench.wall_ms(chain, s, LOOP) * 1e3}
  if cublas then
    local p = {dtype = "f16", out = "f16", a_major = "k", b_major = "k", M = M, N = N, K = K, A = A:address(), B = B:address(), C = C:address(), stream = s:handle()}
    local ar2 = {grid = gr(M), X = C, Y = Y2, M = M, N = N, stream = s}
    local function chain2() ee:launch(ae); cublas:gemm_async(p); er:launch(ar2) end
    row.cublas_us = bench.wall_ms(chain2, s, LOOP) * 1e3
  end
  result.chain = row
  print()
  print(("| chain elementwise -> GEMM %d^3 -> row sum (f16, %s) | µs a chain |"):format(S, gt))
  print("|---|---|")
  print(("| ckt (3 launches) | %.1f |"):format(row.ckt_us))
  if row.cublas_us then print(("| ckt elementwise + cuBLAS GEMM + ckt row sum | %.1f |"):format(row.cublas_us)) end
  print("| torch (bench/launch_torch.py) | see its output |")
  X:close(); A:close(); B:close(); C:close(); Y:close(); Y2:close()
end

bench.write_json(json_path, result)
print("\nJSON: " .. json_path)
if failures > 0 then error(failures .. " launch bench check(s) failed") end
