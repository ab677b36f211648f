-- Shared by the kernel benchmarks: timing by the median of launches, random device buffers, the
-- device-to-device copy bandwidth (the ceiling every figure is compared with, in the same run).
local measure = {}
measure.REPS = tonumber(os.getenv("CKT_BENCH_REPS") or "20")

function measure.median(t) table.sort(t); return t[(#t + 1) // 2] end

-- a device buffer of n random elements (never all zero); also returns the host array
function measure.random_buffer(d, dtype, n, seed)
  local a = ckt.array(dtype, n):random{seed = seed, lo = -2, hi = 2}
  local b = d:alloc(dtype, n)
  b:upload(a)
  return b, a
end

-- fn (which enqueues work on `stream`) called back to back for WARM_S seconds, then the stream
-- drained: the vendor library's warm-up before its timing, as time_launch's for ckt's kernels
function measure.warm_up(fn, stream)
  local t0 = ckt.now()
  repeat
    for _ = 1, 8 do fn() end
    stream:synchronize()
  until ckt.now() - t0 >= measure.WARM_S
end

-- milliseconds of one launch between two events: warm-up launches (at least 3, and for at least
-- WARM_S seconds: after a compile the GPU sat idle, and a long kernel's first 20 launches ran at
-- lower clocks — issue 27's 4096 x 4096 x 16384 timed 82.7-98.5% of cuBLAS first and 98.3-99.2%
-- right after with the same plan), then the median of REPS timed launches (each waits)
measure.WARM_S = 0.2
function measure.time_launch(exe, args)
  local timed = {timed = true}
  for k, v in pairs(args) do timed[k] = v end
  local t0, n = ckt.now(), 0
  repeat
    exe:launch(timed)
    n = n + 1
  until n >= 3 and ckt.now() - t0 >= measure.WARM_S
  local t = {}
  for i = 1, measure.REPS do t[i] = exe:launch(timed) end
  return measure.median(t)
end

-- what an application sees: the wall clock of `n` calls of fn back to back (each enqueues work
-- on `stream`) until the stream is drained, divided by n (after 3 warm-up calls), in milliseconds
function measure.wall_ms(fn, stream, n)
  n = n or 100
  for _ = 1, 3 do fn() end
  stream:synchronize()
  local t0 = ckt.now()
  for _ = 1, n do fn() end
  stream:synchronize()
  return (ckt.now() - t0) * 1e3 / n
end

-- wall_ms of exe's launch with args, enqueued on `stream`
function measure.wall_launch(exe, args, stream, n)
  local a = {}
  for k, v in pairs(args) do a[k] = v end
  a.timed, a.stream = nil, stream
  return measure.wall_ms(function() exe:launch(a) end, stream, n)
end

-- cuBLAS in this process (bench/cublas.c, built as ckt_cublas.so beside ckt-lua; looked up in
-- $CKT_BENCH_LIB, build/ and /tmp/ckt-build/), after the device (it runs in the primary context
-- ckt retained, current after an allocation): the handle, or nil and why; says which it is
function measure.open_cublas(dev)
  dev:alloc("f32", 1):close()
  package.cpath = (os.getenv("CKT_BENCH_LIB") and (os.getenv("CKT_BENCH_LIB") .. "/?.so;") or "") .. "build/?.so;/tmp/ckt-build/?.so;" .. package.cpath
  local ok, mod = pcall(require, "ckt_cublas")
  local cublas, why
  if ok then cublas, why = mod.open() else why = tostring(mod):gsub("\n.*", "") end
  print(cublas and ("cuBLAS: " .. cublas:library()) or ("cuBLAS skipped: " .. tostring(why)))
  return cublas, why
end

-- GB/s of a device-to-device copy of `bytes` (read + write counted)
function measure.d2d(dev, bytes)
  local n = bytes // 4
  local src = measure.random_buffer(dev, "f32", n, 1)
  local dst = dev:alloc("f32", n)
  for _ = 1, 3 do dst:copy_from(src) end
  local t = {}
  for i = 1, measure.REPS do t[i] = select(2, dst:copy_from(src)) end
  dst:close(); src:close()
  return 2 * bytes / (measure.median(t) * 1e-3) / 1e9
end

-- JSON text of a Lua value (tables with a list part become arrays; NaN becomes null)
-- A GEMM configuration of the benchmarks' command lines: "default" or
-- TMxTNxTK/block/stages[/group], either followed by @-options: "@cp.async" or "@tma" (how the
-- operand tiles reach LDS on sm_90a), "@persistent" (a persistent grid of 132 blocks) or
-- "@persistentN" (of N blocks), "@pN" (sm_90a: N wgmma groups in flight), "@clN" (sm_90a: clusters
-- of N blocks sharing B's tiles; "@clnN" along N, sharing A's), "@skN" (sm_90a: split_k = N) -> {name=, tile=, block=, stages=,
-- group=, copy=, persistent=, mma_pending=, cluster=, cluster_along=, split_k=}
function measure.gemm_config(s)
  local body, opts = s:match("^([^@]+)(.*)$")
  local c = {name = s}
  for o in opts:gmatch("@([^@]+)") do
    if o == "persistent" then c.persistent = true
    elseif o:match("^persistent%d+$") then c.persistent = tonumber(o:sub(11))
    elseif o == "unaligned" then c.aligned = false -- any M, N, K (sm_90a: element copies, or with @tma ragged bulk copies)
    elseif o == "direct" then c.epilogue_lds = false -- mma.sync path: C stored straight from the fragments (no LDS tile)
    elseif o == "prologue" then c.fused_prologue = false -- cp.async: the prologue's own copies before the K loop
    elseif o == "lds" then c.epilogue_lds = true -- mma.sync path: C through an LDS tile
    elseif o == "fused" then c.fused_prologue = true -- cp.async: one copy site, the K loop's
    elseif o == "pwg" then c.producer_warpgroup = true -- bulk copies: a producer warpgroup (setmaxnreg)
    elseif o == "tmastore" then c.tma_store = true -- sm_90a: C leaves by bulk tensor stores
    elseif o:match("^p%d$") then c.mma_pending = tonumber(o:sub(2)) -- sm_90a: wgmma groups left in flight
    elseif o:match("^cl%d$") then c.cluster = tonumber(o:sub(3)) -- sm_90a: clusters of blocks sharing B's tiles
    elseif o:match("^cln%d$") then c.cluster, c.cluster_along = tonumber(o:sub(4)), "n" -- ... along N, sharing A's
    elseif o:match("^sk%d+$") then c.split_k = tonumber(o:sub(3)) -- sm_90a: the last wave's tiles split along K
    else c.copy = o end
  end
  if body == "default" then return c end
  local tm, tn, tk, block, stages, group = body:match("^(%d+)x(%d+)x(%d+)/(%d+)/(%d+)/?(%d*)$")
  if not tm then error("config '" .. s .. "' is not default or TMxTNxTK/block/stages[/group], then @copy, @persistent[N], @unaligned, @direct, @prologue, @lds, @fused, @pwg, @tmastore, @pN (mma_pending N), @clN / @clnN (clusters of N along M / N) or @skN (split_k N) optionally") end
  c.tile, c.block, c.stages = {tonumber(tm), tonumber(tn), tonumber(tk)}, tonumber(block), tonumber(stages)
  c.group = group ~= "" and tonumber(group) or nil
  return c
end

-- A split_k plan's launch (p.split_k > 1) takes a workspace and counters: allocated on dev for M x N
-- (the counters zeroed) and added to args, which is returned
function measure.split_args(dev, p, M, N, args)
  if not p or (p.split_k or 1) < 2 then return args end
  local sz = p.split_buffers(M, N)
  local ct = dev:alloc("i32", sz.counters)
  ct:memset(0)
  args.workspace, args.counters = dev:alloc("f32", sz.workspace), ct
  return args
end

function measure.tojson(v)
  if type(v) == "table" then
    local parts, isarr = {}, #v > 0
    for k, x in (isarr and ipairs or pairs)(v) do
      parts[#parts + 1] = (isarr and "" or ("%q: "):format(tostring(k))) .. measure.tojson(x)
    end
    return (isarr and "[" or "{") .. table.concat(parts, ", ") .. (isarr and "]" or "}")
  elseif type(v) == "string" then return ("%q"):format(v)
  elseif type(v) == "number" then return v ~= v and "null" or ("%.6g"):format(v)
  else return tostring(v) end
end

-- write v as JSON to path; says where (or why not)
function measure.write_json(path, v)
  local f, err = io.open(path, "w")
  if not f then print("could not write " .. path .. ": " .. tostring(err)); return end
  f:write(measure.tojson(v), "\n")
  f:close()
  print("wrote " .. path)
end

return measure
