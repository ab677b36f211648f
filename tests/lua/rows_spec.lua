-- The row kernels (ckt.kernels.softmax / layernorm / rmsnorm, machinery in ckt.kernels.rows) on
-- the CPU targets against the double-precision reference, element by element, outputs poisoned
-- before every run: row lengths 1, 7, 128, 1000, 4099 (not a multiple of the vector), rows longer
-- than the kernel's one-pass capacity (the streamed path), M not a multiple of the rows per block,
-- f16 / bf16 / f32, residual on and off, layernorm with a mean far above the spread; the bad input
-- they refuse, naming the argument; the builder pieces they added (b:block_reduce{threads = n},
-- b:map's per-thread scalars and coords); the sm_90 and gfx90a compiles.
local ckt = require "ckt"
local rows = require "ckt.kernels.rows"
local softmax = require "ckt.kernels.softmax"
local layernorm = require "ckt.kernels.layernorm"
local rmsnorm = require "ckt.kernels.rmsnorm"

local dev = ckt.device("cpu")
local function up(a) local b = dev:alloc(a:dtype(), #a); b:upload(a); return b end

-- one output rounding (|y| of a few units) plus f32 statistics
local TOL = {f16 = 2e-3, bf16 = 1.6e-2, f32 = 1e-5}

-- builds and runs case c on target t; checks Y, Sum, Mean, Rstd against the reference
local function check(t, c)
  local kind, dt, M, N = c.kind, c.dtype, c.M, c.N
  local opts = {dtype = dt, out = c.out, N = c.hint, fixed = c.fixed, residual = c.residual, sum = c.residual,
                stats = kind ~= "softmax" or nil, weight = c.weight, bias = c.bias, strides = c.stride and true or nil}
  local k, grid, p = rows.build(kind, opts)
  -- streamed: rows past the capacity, and at 1024 threads a row the lengths other than the hint
  local streams = N > p.cap or (p.T == 1024 and c.hint ~= nil and N ~= c.hint and not c.fixed)
  assert.equal(c.stream == true, streams, "the case meant to take the " .. (c.stream and "streamed" or "one-pass") .. " path")
  local exe = k:compile{target = t}
  local ld = c.stride or N -- the row stride of every matrix
  local function mat(seed, lo, hi, shift)
    local a = ckt.array(dt, M * ld):random{seed = seed, lo = lo, hi = hi}
    if shift then for i = 0, #a - 1 do a[i] = a[i] + shift end end
    return a
  end
  local x = mat(1, -3, 3, c.shift)
  local r = c.residual and mat(2, -1, 1) or nil
  local w = ckt.array(dt, N):random{seed = 3, lo = 0.5, hi = 1.5}
  local bias = ckt.array(dt, N):random{seed = 4, lo = -1, hi = 1}
  local out = c.out or dt
  local y, s = ckt.array(out, M * ld), ckt.array(dt, M * ld)
  local mean, rstd = ckt.array("f32", M), ckt.array("f32", M)
  y:poison(); s:poison(); mean:poison(); rstd:poison()
  local by, bs, bm, br = up(y), up(s), up(mean), up(rstd)
  local args = {grid = grid(M), X = up(x), Y = by, M = M, N = not c.fixed and N or nil}
  if c.stride then for _, n in ipairs{"X", "R", "Y", "Sum"} do args["stride_" .. n] = c.stride end end
  if r then args.R, args.Sum = up(r), bs end
  if p.weight then args.W = up(w) end
  if p.bias then args.Bias = up(bias) end
  if p.stats then args.Rstd = br; if kind == "layernorm" then args.Mean = bm end end
  exe:launch(args)
  by:download(y); bs:download(s); bm:download(mean); br:download(rstd)
  -- the reference over the contiguous rows (a stride > N leaves gaps, which stay poisoned)
  local function rows_of(a)
    if not a or ld == N then return a end
    local o = ckt.array(a:dtype(), M * N)
    for m = 0, M - 1 do for n = 0, N - 1 do o[m * N + n] = a[m * ld + n] end end
    return o
  end
  local ry, rs, rm, rr = rows.reference(kind, {X = rows_of(x), R = rows_of(r), W = p.weight and w or nil,
                                               Bias = p.bias and bias or nil, M = M, N = N, dtype = dt, out = out})
  local tol = c.tol or TOL[out]
  local where = ("%s %s %s M=%d N=%d"):format(t, kind, dt, M, N)
  local ok, err, at = rows_of(y):compare(ry, {atol = tol, rtol = tol})
  assert.is_true(ok, ("%s Y: max error %g at %s"):format(where, err, tostring(at)))
  if ld ~= N then assert.is_true(y[N] ~= y[N], where .. ": a gap between rows was written") end
  if r then
    ok, err, at = rows_of(s):compare(rs, {atol = 0, rtol = 0})
    assert.is_true(ok, ("%s Sum: max error %g at %s"):format(where, err, tostring(at)))
  end
  if p.stats then
    ok, err, at = rstd:compare(rr, {atol = 1e-5, rtol = c.stat_tol or 1e-5})
    assert.is_true(ok, ("%s Rstd: max error %g at %s"):format(where, err, tostring(at)))
    if kind == "layernorm" then
      ok, err, at = mean:compare(rm, {atol = 1e-5, rtol = 1e-5})
      assert.is_true(ok, ("%s Mean: max error %g at %s"):format(where, err, tostring(at)))
    end
  end
end

-- per kind: lengths around the vector and the capacity (hint = the N the kernel is built for: a
-- launch at that N takes the path where it is a constant, any other length the masked one)
local CASES = {
  {dtype = "f16", M = 3, N = 1, hint = 1},
  {dtype = "f32", M = 5, N = 7, hint = 7, residual = true},
  {dtype = "f16", M = 37, N = 128, hint = 128},                 -- 16 rows a block, M not a multiple
  {dtype = "bf16", M = 11, N = 1000, hint = 1000, residual = true},
  {dtype = "f16", M = 3, N = 4099, hint = 4099, residual = true}, -- scalar accesses, masked tail
  {dtype = "bf16", M = 3, N = 2600, hint = 1000, stream = true},   -- longer than the capacity: streamed
  {dtype = "f16", M = 2, N = 1000, hint = 1000, fixed = true, only = "layernorm"}, -- N specialized
  {dtype = "f16", M = 5, N = 992, hint = 1000, residual = true}, -- below the hint: the masked pass
  {dtype = "bf16", M = 4, N = 8, hint = 128},                    -- far below it
  {dtype = "f16", M = 3, N = 1016, hint = 1000},                 -- above the hint, within the capacity
  {dtype = "f16", M = 2, N = 32760, hint = 32768, stream = true, only = "layernorm"}, -- 1024 threads a row: other lengths stream
}

describe("row kernels on the CPU targets", function()
  for _, kind in ipairs{"softmax", "layernorm", "rmsnorm"} do
    for i, c in ipairs(CASES) do
      if c.only and c.only ~= kind then goto next end
      it(("%s case %d: %s M=%d N=%d%s%s"):format(kind, i, c.dtype, c.M, c.N, c.residual and " residual" or "",
                                                 c.stream and " streamed" or ""), function()
        local cc = {}
        for key, v in pairs(c) do cc[key] = v end
        cc.kind = kind
        cc.only = nil
        check("cpu:sm_90", cc)
      end)
      ::next::
    end
  end

  it("run on cpu (gfx90a's waves of 64): groups wider and narrower than a wave, both paths", function()
    check("cpu", {kind = "layernorm", dtype = "f16", M = 5, N = 1000, hint = 1000, residual = true})
    check("cpu", {kind = "softmax", dtype = "bf16", M = 3, N = 4099, hint = 4099})
    check("cpu", {kind = "rmsnorm", dtype = "f16", M = 2, N = 2600, hint = 1000, stream = true, residual = true})
  end)

  it("takes row strides, f32 output from f16, and no weight or bias", function()
    check("cpu:sm_90", {kind = "layernorm", dtype = "f16", M = 4, N = 200, hint = 200, stride = 264, residual = true})
    check("cpu:sm_90", {kind = "softmax", dtype = "f16", out = "f32", M = 6, N = 300, hint = 300})
    check("cpu:sm_90", {kind = "layernorm", dtype = "bf16", M = 3, N = 500, hint = 500, weight = false, bias = false})
    check("cpu:sm_90", {kind = "rmsnorm", dtype = "f16", M = 3, N = 500, hint = 500, weight = false})
  end)

  it("runs the default kernel (no N given) on both paths", function()
    check("cpu:sm_90", {kind = "softmax", dtype = "f16", M = 2, N = 800})
    check("cpu:sm_90", {kind = "rmsnorm", dtype = "bf16", M = 2, N = 8200, stream = true, residual = true})
  end)

  -- mean 10^4 and spread ~2 in f32: E[x^2] - E[x]^2 in f32 loses everything (errors of order 1
  -- in the variance); the kernels' two passes over registers and the shifted sums of the
  -- streamed path keep the variance to f32's accuracy of x - mean (~1e-3 absolute here)
  it("layernorm keeps the variance of rows whose mean is far above their spread", function()
    check("cpu:sm_90", {kind = "layernorm", dtype = "f32", M = 3, N = 1000, hint = 1000, shift = 1e4, tol = 1e-2, stat_tol = 1e-3})
    check("cpu:sm_90", {kind = "layernorm", dtype = "f32", M = 3, N = 2600, hint = 1000, shift = 1e4, tol = 1e-2,
                        stat_tol = 1e-3, stream = true})
    check("cpu:sm_90", {kind = "layernorm", dtype = "f16", M = 3, N = 1000, hint = 1000, shift = 100, residual = true})
  end)
end)

describe("row kernels refuse bad input", function()
  local k, grid = layernorm.build{dtype = "f16", N = 256}
  local exe = k:compile{target = "cpu:sm_90"}
  local M, N = 4, 256
  local function buf(dt, n) return dev:alloc(dt, n) end
  local function args(over)
    local a = {grid = grid(M), X = buf("f16", M * N), W = buf("f16", N), Bias = buf("f16", N), Y = buf("f16", M * N), M = M, N = N}
    for key, v in pairs(over) do a[key] = v end
    return a
  end
  local function refused(over, pattern)
    local ok, err = pcall(exe.launch, exe, args(over))
    assert.is_false(ok)
    assert.matches(pattern, tostring(err))
  end

  it("at launch, naming the argument", function()
    assert.is_true(pcall(exe.launch, exe, args{}))
    refused({X = buf("f32", M * N)}, "X")                 -- a buffer of the wrong dtype
    refused({M = 0}, "M must be positive")
    refused({N = 0}, "N must be positive")
    refused({N = -8}, "N")
    refused({W = buf("f16", N - 8)}, "'W'")                -- W shorter than a row
    refused({Y = buf("f16", M * N - 1)}, "'Y'")
    refused({N = 100}, "N = 100 is not a multiple of 8")  -- the promise the 16-byte accesses need
  end)

  it("when built, naming the option", function()
    local function bad(mod, o, pattern)
      local ok, err = pcall(mod.build, o)
      assert.is_false(ok)
      assert.matches(pattern, tostring(err))
    end
    bad(softmax, {dtype = "f16", eps = 1e-5}, "softmax: unknown option 'eps'")
    bad(layernorm, {dtype = "f16", bogus = 1}, "layernorm: unknown option 'bogus'")
    bad(rmsnorm, {dtype = "f16", bias = true}, "rmsnorm: unknown option 'bias'")
    bad(layernorm, {dtype = "i8"}, "dtype must be")
    bad(layernorm, {out = "f64"}, "out must be")
    bad(rmsnorm, {N = 0}, "N must be an integer in 1")
    bad(rmsnorm, {N = 1.5}, "N must be an integer")
    bad(rmsnorm, {eps = -1}, "eps must be a finite number")
    bad(softmax, {residual = 1}, "residual must be a boolean")
    bad(softmax, {sum = true}, "sum = true needs residual = true")
    bad(softmax, {fixed = true}, "fixed = true needs N")
    bad(softmax, {threads = 48}, "threads must be a power of two")
    bad(softmax, {target = "sm_1"}, "softmax: target")
    local _, g = softmax.build{N = 128}
    local ok, err = pcall(g, 0)
    assert.is_false(ok)
    assert.matches("softmax: grid: M must be a positive integer", err)
  end)
end)

describe("builder pieces of the row kernels", function()
  -- a kernel of `block` threads, thread t holding row t of X (4 values): Y = body(b, the values)
  local function rows4_kernel(name, block, body)
    return ckt.kernel{name = name, block = block, build = function(b)
      local X, Y = b:pointer("X", "f32", {const = true}), b:pointer("Y", "f32")
      local dist = {thread_layout = ckt.layout({block, 1}, {1, 0}), scalar_per_vector = 4}
      local r = ckt.tile_window(ckt.tensor(X, "f32", {shape = {block, 4}}), {block, 4}, {0, 0}, dist):load()
      ckt.tile_window(ckt.tensor(Y, "f32", {shape = {block, 4}}), {block, 4}, {0, 0}, dist):store(body(b, r))
    end}
  end
  -- its Y on target t for X = x, the output poisoned first
  local function run_rows4(k, t, x)
    local y = ckt.array("f32", #x):poison()
    local by = up(y)
    k:compile{target = t}:launch{grid = 1, X = up(x), Y = by}
    by:download(y)
    return y
  end

  -- every thread's sum over its group of G threads (each thread holding 4 values of its row of X),
  -- as two values reduced at once, plus its coordinates: Y[t, j] = sum + t * 1000 + j * 100000
  local function group_kernel(G, block)
    return rows4_kernel("group_sum", block, function(b, r)
      local one = ckt.tensor("register", "f32", 1)
      b:clear(one, 0)
      b:fold(one, r, "sum")
      local two = ckt.tensor("register", "f32", 2)
      b:clear(two, 0)
      b:map(function(a, s) return a + s end, two, one, {into = two}) -- one value per thread: a scalar
      b:block_reduce(two, "sum", {threads = G})
      local s = ckt.tensor("register", "f32", 1)
      b:clear(s, 0)
      b:fold(s, two, "sum")
      return b:map(function(_, ss, i, j) return ss / 2 + i * 1000 + j * 100000 end, r, s, {coords = true})
    end)
  end

  it("a map's coordinates: the thread's part computed once per dimension read, a constant per value", function()
    local src = group_kernel(64, 256):source("sm_90")
    for r = 0, 1 do
      local _, n = src:gsub("const ckt_i64 ckt_mc" .. r .. " = ", "")
      assert.are.equal(1, n, "dimension " .. r)
    end
    assert.truthy(src:find("(ckt_mc1 + 3)", 1, true))
    assert.falsy(src:find("tid / 1 ", 1, true)) -- (no division by 1, no remainder the block never reaches)
  end)

  for _, t in ipairs{"cpu:sm_90", "cpu"} do
    it("b:block_reduce{threads = n} on " .. t .. ": groups of 1 to the whole block", function()
      local block = 256
      local x = ckt.array("f32", block * 4):random{seed = 9, lo = -2, hi = 2}
      for _, G in ipairs{1, 4, 64, 256} do
        local y = run_rows4(group_kernel(G, block), t, x)
        for th = 0, block - 1 do
          local g0, s = th - th % G, 0
          for u = g0, g0 + G - 1 do for j = 0, 3 do s = s + x[u * 4 + j] end end
          for j = 0, 3 do
            local want = s + th * 1000 + j * 100000
            assert.is_true(math.abs(y[th * 4 + j] - want) <= 1e-3 * math.abs(want),
                           ("%s G=%d thread %d value %d: %g, want %g"):format(t, G, th, j, y[th * 4 + j], want))
          end
        end
      end
    end)
  end

  -- consecutive reductions over the same groups share one exchange: a max and a sum of different
  -- accumulators in one, then the sum's accumulator reduced again (a sum of the group's sums: the
  -- same tensor twice must stay in order, so it gets an exchange of its own)
  local function run_kernel(G, block)
    return rows4_kernel("group_run", block, function(b, r)
      local mx, sm = ckt.tensor("register", "f32", 1), ckt.tensor("register", "f32", 1)
      b:clear(mx, -math.huge); b:clear(sm, 0)
      b:fold(mx, r, "max"); b:fold(sm, r, "sum")
      b:block_reduce(mx, "max", {threads = G})
      b:block_reduce(sm, "sum", {threads = G})
      b:block_reduce(sm, "sum", {threads = G})
      return b:map(function(_, m, s, _, j) return ckt.select(ckt.eq(j, 0), m, s) end, r, mx, sm, {coords = true})
    end)
  end

  for _, t in ipairs{"cpu:sm_90", "cpu"} do
    it("consecutive b:block_reduce over groups above a wave share one exchange on " .. t, function()
      local block, G = 256, 128
      local k = run_kernel(G, block)
      local _, exchanges = k:source("sm_90"):gsub("the waves' partials written", "")
      assert.equal(2, exchanges) -- max and sum together, then the sum again
      local x = ckt.array("f32", block * 4):random{seed = 11, lo = -2, hi = 2}
      local y = run_rows4(k, t, x)
      for th = 0, block - 1 do
        local g0, m, s = th - th % G, -math.huge, 0
        for u = g0, g0 + G - 1 do for j = 0, 3 do m = math.max(m, x[u * 4 + j]); s = s + x[u * 4 + j] end end
        assert.equal(m, y[th * 4])
        for j = 1, 3 do
          assert.is_true(math.abs(y[th * 4 + j] - G * s) <= 1e-3 * math.abs(G * s) + 1e-3,
                         ("%s thread %d: %g, want %g"):format(t, th, y[th * 4 + j], G * s))
        end
      end
    end)
  end

  -- the online softmax's statistics: each thread's (maximum, sum of exp(x - maximum)) of its 4
  -- values, then the group's in one exchange; the first group's values all -inf (an empty row:
  -- (-inf, 0) stays that)
  local function softmax_kernel(G, block)
    return rows4_kernel("group_softmax", block, function(b, r)
      local m, s = ckt.tensor("register", "f32", 1), ckt.tensor("register", "f32", 1)
      b:clear(m, -math.huge); b:clear(s, 0)
      b:fold(m, r, "max")
      local sm = b:map(function(mm) return ckt.select(ckt.eq(mm, -math.huge), 0, mm) end, m)
      b:fold(s, b:map(function(a, mm) return ckt.exp(a - mm) end, r, sm), "sum")
      b:block_reduce(m, "softmax", {threads = G, sum = s})
      return b:map(function(_, mm, ss, _, j) return ckt.select(ckt.eq(j, 0), mm, ss) end, r, m, s, {coords = true})
    end)
  end

  for _, t in ipairs{"cpu:sm_90", "cpu"} do
    it("b:block_reduce(maxima, \"softmax\", {threads = n, sum = sums}) on " .. t, function()
      local block = 256
      local x = ckt.array("f32", block * 4):random{seed = 13, lo = -20, hi = 20}
      for i = 0, 4 * 64 - 1 do x[i] = -math.huge end -- the first 64 threads: nothing but -inf
      for _, G in ipairs{1, 4, 32, 64, 256} do
        local k = softmax_kernel(G, block)
        if G > 32 then -- one exchange: the waves' pairs through the scratch, between two barriers
          local _, n = k:source("sm_90"):gsub("__syncthreads%(%)", "")
          assert.equal(2, n)
        end
        local y = run_rows4(k, t, x)
        for th = 0, block - 1 do
          local g0, M = th - th % G, -math.huge
          for u = g0, g0 + G - 1 do for j = 0, 3 do M = math.max(M, x[u * 4 + j]) end end
          local S = 0
          if M > -math.huge then for u = g0, g0 + G - 1 do for j = 0, 3 do S = S + math.exp(x[u * 4 + j] - M) end end end
          assert.equal(M, y[th * 4], ("%s G=%d thread %d: maximum"):format(t, G, th))
          assert.is_true(math.abs(y[th * 4 + 1] - S) <= 1e-5 * S, ("%s G=%d thread %d: sum %g, want %g"):format(t, G, th, y[th * 4 + 1], S))
        end
      end
    end)
  end

  it("refuses 'softmax' pairs where they cannot go, naming the reason", function()
    local function refused(f, pattern)
      local ok, err = pcall(ckt.kernel, {name = "bad", block = 64, build = f})
      assert.is_false(ok)
      assert.truthy(tostring(err):find(pattern, 1, true), tostring(err))
    end
    local function regs(b, n) local t = ckt.tensor("register", "f32", n or 1); b:clear(t, 0); return t end
    refused(function(b) b:block_reduce(regs(b), "softmax", {threads = 64}) end, "'softmax' needs the sums beside the maxima")
    refused(function(b) b:block_reduce(regs(b), "softmax") end, "'softmax' combines (maximum, sum) pairs across threads only")
    refused(function(b) b:fold(regs(b), regs(b, 4), "softmax") end, "fold: 'softmax' combines")
    refused(function(b) b:block_reduce(regs(b), "sum", {threads = 64, sum = regs(b)}) end, "sum = is the sums of 'softmax' pairs only")
    refused(function(b) local m = regs(b); b:block_reduce(m, "softmax", {threads = 64, sum = m}) end, "the sums must be a register tensor of their own")
    refused(function(b) b:block_reduce(regs(b), "softmax", {threads = 64, sum = regs(b, 2)}) end, "the same number of values (1 and 2)")
    refused(function(b) b:block_reduce(regs(b), "softmax", {threads = 64, sum = 3}) end, "sum")
    refused(function(b) b:block_reduce(regs(b), "softmax", {threads = 3, sum = regs(b)}) end, "threads must be a power of two")
  end)

  it("refuses bad groups and maps, naming the argument", function()
    local function refused(f, pattern)
      local ok, err = pcall(ckt.kernel, {name = "bad", block = 96, build = f})
      assert.is_false(ok)
      assert.matches(pattern, tostring(err))
    end
    local function acc(b) local a = ckt.tensor("register", "f32", 1); b:clear(a, 0); return a end
    refused(function(b) b:block_reduce(acc(b), "sum", {threads = 3}) end, "threads must be a power of two dividing the block of 96, got 3")
    refused(function(b) b:block_reduce(acc(b), "sum", {threads = 64}) end, "dividing the block")
    refused(function(b) b:block_reduce(acc(b), "sum", {threads = "x"}) end, "threads must be an integer")
    refused(function(b) b:block_reduce(acc(b), "sum", {thread = 4}) end, "thread")
    refused(function(b) b:block_reduce(acc(b), "avg", {threads = 4}) end, "block_reduce")
    refused(function(b)
      b:when(ckt.lt(b:thread_id(), 5), function() b:block_reduce(acc(b), "sum", {threads = 4}) end)
    end, "inside a branch whose condition depends on the thread id")
    refused(function(b) b:map(function(x, i) return x + i end, acc(b), {coords = true}) end, "coords needs a distributed input")
    refused(function(b)
      local two, three = ckt.tensor("register", "f32", 2), ckt.tensor("register", "f32", 3)
      b:clear(two, 0); b:clear(three, 0)
      b:map(function(x, y) return x + y end, two, three)
    end, "input 2 is distributed differently from input 1")
    -- a block of 96 threads is not whole waves of 64: refused when the source is made for cpu
    local k = ckt.kernel{name = "waves", block = 96, build = function(b) b:block_reduce(acc(b), "sum", {threads = 32}) end}
    local ok, err = pcall(k.source, k, "cpu")
    assert.is_false(ok)
    assert.matches("whole waves", tostring(err))
    assert.is_true(pcall(k.source, k, "cpu:sm_90"))
  end)
end)

-- compile only (no GPU here): fails on a compile error; pending only when the compiler library
-- is missing (NVRTC / hipRTC not found)
describe("row kernels compile for the GPUs", function()
  for _, t in ipairs{"sm_90", "gfx90a"} do
    it(t .. ": one pass with shuffles and an LDS exchange, and the streamed path, no spills", function()
      for _, c in ipairs{{"layernorm", {dtype = "bf16", N = 4096, residual = true, sum = true, stats = true}},
                         {"softmax", {dtype = "f16", N = 1024}},
                         {"rmsnorm", {dtype = "f16"}},
                         -- rows of 32768 at 1024 threads (64 registers a thread): the bf16 one spilled
                         {"layernorm", {dtype = "bf16", N = 32768}}, {"layernorm", {dtype = "f16", N = 32768}}} do
        local k = rows.build(c[1], c[2])
        local ok, exe = pcall(k.compile, k, {target = t, compile_only = true})
        if not ok and (tostring(exe):find("NVRTC not found (", 1, true) or tostring(exe):find("hipRTC not found (", 1, true)) then
          pending(t .. " compiler not installed: " .. tostring(exe))
          return
        end
        assert.is_true(ok, tostring(exe))
        local r = exe:resources()
        assert.equal(0, r.scratch_bytes or 0, c[1] .. " on " .. t .. " uses scratch")
        assert.equal(0, (r.spill_stores or 0) + (r.vgpr_spills or 0), c[1] .. " on " .. t .. " spills")
      end
    end)
  end
end)
