-- ckt kernel library: row kernels over an M x N row-major matrix, one result row per input row:
-- softmax along the last dimension, layernorm and rmsnorm (f16 / bf16 / f32 in, f32 statistics),
-- optionally on X + R (a residual added first, the sum rounded to the dtype and optionally written
-- out, as the fused add + norm of a transformer block). The thin modules ckt.kernels.softmax,
-- ckt.kernels.layernorm and ckt.kernels.rmsnorm call rows.build with their kind.
--
--   local layernorm = require "ckt.kernels.layernorm"
--   local k, grid = layernorm.build{dtype = "bf16", N = 4096, residual = true, sum = true}
--   exe:launch{grid = grid(M), X = x, R = r, W = w, Bias = bias, Y = y, Sum = s, M = M, N = N}
--
-- What a block does: R rows of T threads each (T consecutive threads per row, a power of two);
-- a thread holds up to 32 elements of its row as P vectors of v elements (16-byte accesses when
-- N is a multiple of 16 bytes), vector j of a thread at column (j * T + t) * v, so that a warp's
-- accesses are contiguous. A row of at most T * P * v elements (the kernel's `cap`) is read once
-- into registers: load, the statistics (b:fold per thread, b:block_reduce{threads = T} over the
-- row's threads: lane shuffles, and one exchange through LDS when T is wider than a wave), then
-- normalize and store from the same registers. Longer rows stream through the same tile twice:
-- the statistics (softmax: an online max and sum per thread; layernorm: sums shifted by the
-- row's first element, so that a mean far above the spread loses nothing; rmsnorm: the sum of
-- squares), then the outputs (the second read mostly from L2).
local ckt = ckt or require "ckt"
local rows = {}

local vec = require("ckt.kernels.common").vec

local NEG = -math.huge
-- bytes of a row a thread holds at most (P * v elements): 32 16-bit or 16 32-bit values, with
-- room for the f32 temporaries beside them (32 f32 values made the f32 kernels with both paths
-- spill on sm_90)
local ROW_BYTES = 64
local function max_values(dtype) return ROW_BYTES // ckt.array(dtype, 1):bytes() end
local MAX_T = 1024

rows.KINDS = {
  softmax = {options = {}},
  layernorm = {options = {"eps", "weight", "bias", "stats"}, eps = 1e-5, weight = true, bias = true},
  rmsnorm = {options = {"eps", "weight", "stats"}, eps = 1e-6, weight = true},
}
rows.COMMON = {"dtype", "out", "target", "N", "fixed", "residual", "sum", "strides", "threads",
               "vectors", "name"}

-- the options a kind takes (the common ones, then its own)
function rows.options(kind)
  local list = {}
  for _, n in ipairs(rows.COMMON) do list[#list + 1] = n end
  for _, n in ipairs(rows.KINDS[kind].options) do list[#list + 1] = n end
  return list
end

local function fail(kind, msg, level) error(kind .. ": " .. msg, level or 4) end

local function pow2_at_least(n) local p = 1; while p < n do p = p * 2 end; return p end

local function check_options(kind, o)
  if type(o) ~= "table" then fail(kind, "build takes a table of options") end
  local known, list = {}, rows.options(kind)
  for _, n in ipairs(list) do known[n] = true end
  for key in pairs(o) do
    if not known[key] then fail(kind, ("unknown option '%s' (known: %s)"):format(tostring(key), table.concat(list, ", "))) end
  end
  for _, n in ipairs{"fixed", "residual", "sum", "strides", "weight", "bias", "stats"} do
    if o[n] ~= nil and type(o[n]) ~= "boolean" then fail(kind, ("%s must be a boolean, got %s"):format(n, type(o[n]))) end
  end
  for _, n in ipairs{"dtype", "out"} do
    local d = o[n]
    if d ~= nil and d ~= "f16" and d ~= "bf16" and d ~= "f32" then
      fail(kind, ("%s must be \"f16\", \"bf16\" or \"f32\", got %s"):format(n, tostring(d)))
    end
  end
  local function posint(n, hi)
    local x = o[n]
    if x ~= nil and (math.type(x) ~= "integer" or x < 1 or x > hi) then
      fail(kind, ("%s must be an integer in 1..%d, got %s"):format(n, hi, tostring(x)))
    end
  end
  posint("N", (1 << 31) - 1)
  posint("threads", MAX_T)
  posint("vectors", 32)
  if o.eps ~= nil and (type(o.eps) ~= "number" or not (o.eps >= 0 and o.eps < math.huge)) then
    fail(kind, ("eps must be a finite number >= 0, got %s"):format(tostring(o.eps)))
  end
  if o.sum and not o.residual then fail(kind, "sum = true needs residual = true (Sum = X + R)") end
  if o.fixed and not o.N then fail(kind, "fixed = true needs N (the row length it fixes)") end
  if o.name ~= nil and type(o.name) ~= "string" then fail(kind, ("name must be a string, got %s"):format(type(o.name))) end
  if o.target ~= nil then
    local ok, rec = pcall(ckt.target, o.target)
    if not ok then fail(kind, ("target: %s"):format(tostring(rec))) end
  end
end

-- rows.plan(kind, options) -> the plan: dtypes, the vector width v, threads per row T (a power of
-- two), vectors per thread P, rows per block R, the one-pass capacity cap = T * P * v, the block.
function rows.plan(kind, o)
  if not rows.KINDS[kind] then error(("rows: unknown kind %s"):format(tostring(kind)), 3) end
  check_options(kind, o)
  local K = rows.KINDS[kind]
  local p = {kind = kind}
  p.dtype = o.dtype or "f16"
  p.out = o.out or p.dtype
  p.residual, p.sum, p.strides = o.residual == true, o.sum == true, o.strides == true
  p.weight = K.weight and o.weight ~= false
  p.bias = K.bias and o.bias ~= false
  p.stats = o.stats == true
  p.eps = o.eps or K.eps
  p.N, p.fixed = o.N, o.fixed == true
  -- the widest access that the row length keeps aligned (N promised a multiple of it at launch)
  p.v = math.min(vec(p.dtype), vec(p.out))
  if p.N then while p.N % p.v ~= 0 do p.v = p.v // 2 end end
  local n = p.N or 8192 -- without a length: rows up to 8192 elements in registers, longer ones streamed
  local nvec = (n + p.v - 1) // p.v
  local values = max_values(p.dtype)
  local pmax = math.max(1, values // p.v)
  local P = o.vectors or math.min(pmax, math.max(1, (nvec + 31) // 32))
  if P * p.v > math.max(values, p.v) then fail(kind, ("vectors: %d vectors of %d elements exceed the %d values a thread holds"):format(P, p.v, values), 3) end
  local T = o.threads or math.min(MAX_T, pow2_at_least((nvec + P - 1) // P))
  if T & (T - 1) ~= 0 then fail(kind, ("threads must be a power of two, got %d"):format(T), 3) end
  if not o.vectors then P = math.min(P, math.max(1, (nvec + T - 1) // T)) end
  p.T, p.P = T, P
  p.R = math.max(1, 256 // T) -- short rows: several per block, at least 256 threads
  p.block = p.R * T
  p.cap = T * P * p.v
  -- the passes emitted: one (rows up to cap), streamed (longer), or both chosen at launch by N
  p.one = not p.fixed or p.N <= p.cap
  p.stream = not p.fixed or p.N > p.cap
  p.name = o.name or ("%s_%s%s%s"):format(kind, p.dtype, p.out ~= p.dtype and ("_" .. p.out) or "",
                                          p.residual and "_res" or "")
  return p
end

-- the kernel's parameters (pointers, sizes, row strides), in signature order
local function params(b, p)
  local dt, g = p.dtype, {}
  g.X = b:pointer("X", dt, {const = true})
  if p.residual then g.R = b:pointer("R", dt, {const = true}) end
  if p.weight then g.W = b:pointer("W", dt, {const = true}) end
  if p.bias then g.Bias = b:pointer("Bias", dt, {const = true}) end
  g.Y = b:pointer("Y", p.out)
  if p.sum then g.Sum = b:pointer("Sum", dt) end
  if p.stats and p.kind == "layernorm" then g.Mean = b:pointer("Mean", "f32") end
  if p.stats then g.Rstd = b:pointer("Rstd", "f32") end
  g.M = b:size("M")
  g.N = b:size("N", {value = p.fixed and p.N or nil, multiple_of = (not p.fixed and p.v > 1) and p.v or nil})
  b:require(ckt.gt(g.M, 0), p.kind .. ": M must be positive")
  b:require(ckt.gt(g.N, 0), p.kind .. ": N must be positive")
  g.stride = {}
  if p.strides then
    for _, name in ipairs{"X", "R", "Y", "Sum"} do
      if g[name] then
        local s = b:size("stride_" .. name, {multiple_of = p.v > 1 and p.v or nil})
        b:require(ckt.ge(s, g.N), ("%s: stride_%s must be at least N"):format(p.kind, name))
        g.stride[name] = s
      end
    end
  end
  return g
end

-- the global tensors over rows of N elements: N the size parameter, or (the path of the hinted
-- length) that length as a constant, the loads' masks, the column tests and the addresses then
-- folded. The launch checks every tensor's extent against its buffer, and this path's must not
-- refuse the other lengths: its inputs have no rows unless N is that length (read-only padded
-- tensors may be empty), and the outputs stay over the size parameter (an empty output would
-- empty the launch), their stores masked as before
local function tensors(g, p, N)
  local dt, M = p.dtype, g.M
  local Min = M
  if math.type(N) == "integer" and not p.fixed then Min = ckt.select(ckt.eq(g.N, N), g.M, 0) end
  local t = {M = M, N = N}
  local function mat(ptr, d, name, rows, cols) return ckt.tensor(ptr, d, {shape = {rows, cols}, stride = {g.stride[name] or cols, 1}}, {pad = true}) end
  t.x = mat(g.X, dt, "X", Min, N)
  if g.R then t.r = mat(g.R, dt, "R", Min, N) end
  t.y = mat(g.Y, p.out, "Y", M, g.N)
  if g.Sum then t.sum = mat(g.Sum, dt, "Sum", M, g.N) end
  -- weight and bias: one row read by every row (row stride 0)
  if g.W then t.w = ckt.tensor(g.W, dt, {shape = {Min, N}, stride = {0, 1}}, {pad = true}) end
  if g.Bias then t.bias = ckt.tensor(g.Bias, dt, {shape = {Min, N}, stride = {0, 1}}, {pad = true}) end
  if g.Mean then t.mean = ckt.tensor(g.Mean, "f32", {shape = {M, 1}, stride = {1, 0}}, {pad = true}) end
  if g.Rstd then t.rstd = ckt.tensor(g.Rstd, "f32", {shape = {M, 1}, stride = {1, 0}}, {pad = true}) end
  return t
end

-- The block's geometry: windows over its R rows (a tile of R x cap, moved along the rows when
-- streaming) and the per-row statistics (one f32 per thread, each thread its row's; a store of
-- one writes the row's element once per thread of the row, the same value).
local function geometry(b, p, t)
  local G = {}
  G.row0 = b:let(b:block_id() * p.R, "row0")
  G.dist = {thread_layout = ckt.layout({p.R, p.T}, {p.T, 1}), scalar_per_vector = p.v}
  G.stat_layout = ckt.layout({{p.T, p.R}, 1}, {{0, 1}, 0})
  function G.window(tensor) return ckt.tile_window(tensor, {p.R, p.cap}, {G.row0, 0}, G.dist) end
  function G.stat(fill)
    local r = ckt.tensor("register", "f32", G.stat_layout, {lengths = {p.R, 1}})
    b:clear(r, fill)
    return r
  end
  -- op over the row of each thread's values: its own, then its row's threads'
  function G.reduce(acc, src, op)
    if src then b:fold(acc, src, op) end
    b:block_reduce(acc, op, {threads = p.T})
    return acc
  end
  function G.store_stat(tensor, r) if tensor then ckt.tile_window(tensor, {p.R, 1}, {G.row0, 0}):store(r) end end
  -- a statistic map: f over one-value registers into a new one
  function G.smap(f, ...) return b:map(f, ...) end
  return G
end

-- X (+ R, rounded to the dtype; Sum written) at the windows' current place; fill: the value of
-- elements past N (each kind's neutral element)
local function load_input(b, p, w, fill, write_sum)
  local x = w.x:load{fill = fill}
  if not p.residual then return x end
  local h = b:map(function(a, c) return a + c end, x, w.r:load{fill = 0}, {dtype = p.dtype})
  if write_sum and w.sum then w.sum:store(h) end
  return h
end

local function windows(G, t)
  local w = {}
  for _, n in ipairs{"x", "r", "y", "sum", "w", "bias"} do if t[n] then w[n] = G.window(t[n]) end end
  return w
end

-- in a fixed order: pairs() walks a table in an order that changes from process to process, and the
-- generated source (the compile cache's key) must not
local function move(w, steps)
  for _, n in ipairs{"x", "r", "y", "sum", "w", "bias"} do if w[n] then w[n]:move(steps) end end
end

-- the epilogue of the norms: y = (x - mean) * rstd * w + bias (mean 0 for rmsnorm)
local function normalize(b, p, w, x, mean, rstd)
  local ins, f = {x, rstd}, nil
  if mean then ins[#ins + 1] = mean end
  if w.w then ins[#ins + 1] = w.w:load{fill = 0} end
  if w.bias then ins[#ins + 1] = w.bias:load{fill = 0} end
  f = function(a, rs, ...)
    local rest, i = {...}, 1
    local m = 0
    if mean then m = rest[i]; i = i + 1 end
    local y = (a - m) * rs
    if w.w then y = y * rest[i]; i = i + 1 end
    if w.bias then y = y + rest[i] end
    return y
  end
  ins[#ins + 1] = {dtype = p.out}
  w.y:store(b:map(f, table.unpack(ins)))
end

-- ---- one pass: the row in registers
local one = {}

-- exp(-inf - -inf) is NaN: an empty maximum shifts by 0
local function safe(m) return ckt.select(ckt.eq(m, NEG), 0, m) end

-- One pass: each thread's own maximum and sum of exp(x - it), then the row's in one exchange of
-- (maximum, sum) pairs (b:block_reduce "softmax"), where the row's maximum and then its sum took
-- two; each thread rescales its exponentials by exp(own maximum - the row's)
function one.softmax(b, p, t, G, w)
  local x = load_input(b, p, w, NEG, true)
  local mt = G.stat(NEG)
  b:fold(mt, x, "max")
  local e = b:map(function(a, mm) return ckt.exp(a - safe(mm)) end, x, mt, {dtype = "f32"})
  local m, s = G.stat(NEG), G.stat(0)
  b:map(function(a) return a end, mt, {into = m})
  b:fold(s, e, "sum")
  b:block_reduce(m, "softmax", {threads = p.T, sum = s})
  local scale = G.smap(function(own, row, ss) return ckt.exp(own - safe(row)) / ss end, mt, m, s)
  w.y:store(b:map(function(a, c) return a * c end, e, scale, {dtype = p.out}))
end

-- layernorm's shift k: X[row, 0] (+ R[row, 0], rounded), read by every thread of the row
local function row_shift(b, p, t, G)
  local k = ckt.tile_window(t.x, {p.R, 1}, {G.row0, 0}, G.stat_layout):load()
  if not t.r then return k end
  return b:map(function(a, c) return a + c end, k, ckt.tile_window(t.r, {p.R, 1}, {G.row0, 0}, G.stat_layout):load(), {dtype = p.dtype})
end

-- the sums of d = x - k and d^2 of the thread's elements of columns col0 + j < N into s1, s2
local function fold_shifted(b, t, x, k, s1, s2, col0)
  local d = b:map(function(a, kk, _, j) return ckt.select(ckt.lt(col0 + j, t.N), a - kk, 0) end,
                  x, k, {coords = true, dtype = "f32"})
  b:fold(s1, d, "sum")
  b:fold(s2, b:map(function(a) return a * a end, d), "sum")
end

-- mean and rstd from the row's shifted sums (the shifted-data variance: k is one of the row's
-- elements, so a mean far above the spread loses nothing to E[x^2] - E[x]^2's cancellation)
local function moments(G, p, N, k, s1, s2)
  local mean = G.smap(function(a, kk) return kk + a / N end, s1, k)
  local rstd = G.smap(function(a, q) return 1 / ckt.sqrt(ckt.max(q / N - (a / N) * (a / N), 0) + p.eps) end, s1, s2)
  return mean, rstd
end

-- One pass: both sums in one exchange between the row's threads (b:block_reduce of consecutive
-- reductions share their barriers, ckt_kernel_reduce_run), where the mean and then the centred
-- squares took two: at 4096 x 32768 on an H100 one block of 1024 threads a row, each exchange
-- two barriers with no other row's loads to hide them.
function one.layernorm(b, p, t, G, w)
  local N = t.N
  local x = load_input(b, p, w, 0, true)
  local k = row_shift(b, p, t, G)
  local s1, s2 = G.stat(0), G.stat(0)
  fold_shifted(b, t, x, k, s1, s2, 0)
  G.reduce(s1, nil, "sum")
  G.reduce(s2, nil, "sum")
  local mean, rstd = moments(G, p, N, k, s1, s2)
  normalize(b, p, w, x, mean, rstd)
  G.store_stat(t.mean, mean)
  G.store_stat(t.rstd, rstd)
end

function one.rmsnorm(b, p, t, G, w)
  local N = t.N
  local x = load_input(b, p, w, 0, true)
  local q = G.reduce(G.stat(0), b:map(function(a) return a * a end, x, {dtype = "f32"}), "sum")
  local rstd = G.smap(function(a) return 1 / ckt.sqrt(a / N + p.eps) end, q)
  normalize(b, p, w, x, nil, rstd)
  G.store_stat(t.rstd, rstd)
end

-- ---- streamed: the statistics over the tiles, then the outputs over them again
local stream = {}

-- a loop over the row's tiles (fn(w, col0) with the windows at column col0), fresh windows
local function tiles(b, p, t, G, fn)
  local w = windows(G, t)
  b:loop((t.N + p.cap - 1) // p.cap, function(i)
    fn(w, i * p.cap)
    move(w, {0, p.cap})
  end)
end

-- pass 2's input: Sum when it was written in pass 1, else X (+ R) again
local function reload(b, p, w, fill)
  if w.sum then return w.sum:load{fill = fill} end
  return load_input(b, p, w, fill, false)
end

function stream.softmax(b, p, t, G)
  local m, s = G.stat(NEG), G.stat(0)
  tiles(b, p, t, G, function(w)
    local x = load_input(b, p, w, NEG, true)
    local tm = G.stat(NEG)
    b:fold(tm, x, "max")
    local mn = G.smap(function(a, c) return ckt.max(a, c) end, m, tm)
    local e = b:map(function(a, mm) return ckt.exp(a - safe(mm)) end, x, mn, {dtype = "f32"})
    local ts = G.stat(0)
    b:fold(ts, e, "sum")
    b:map(function(ss, mo, mm, add) return ss * ckt.exp(mo - safe(mm)) + add end, s, m, mn, ts, {into = s})
    b:map(function(a) return a end, mn, {into = m})
  end)
  -- the row's max, each thread's sum rescaled to it, the row's sum
  local mr = G.stat(NEG)
  b:map(function(a) return a end, m, {into = mr})
  G.reduce(mr, nil, "max")
  b:map(function(ss, mo, mm) return ss * ckt.exp(mo - safe(mm)) end, s, m, mr, {into = s})
  G.reduce(s, nil, "sum")
  local inv = G.smap(function(ss) return 1 / ss end, s)
  tiles(b, p, t, G, function(w)
    local x = reload(b, p, w, NEG)
    w.y:store(b:map(function(a, mm, i) return ckt.exp(a - mm) * i end, x, mr, inv, {dtype = p.out}))
  end)
end

-- sums of d = x - k and d^2 over the row (k: the row's first element, the same in every thread)
local function shifted_sums(b, p, t, G, k, square_only)
  local s1, s2 = G.stat(0), G.stat(0)
  tiles(b, p, t, G, function(w, col0)
    local x = load_input(b, p, w, 0, true)
    if square_only then
      b:fold(s2, b:map(function(a) return a * a end, x, {dtype = "f32"}), "sum")
      return
    end
    fold_shifted(b, t, x, k, s1, s2, col0)
  end)
  if not square_only then G.reduce(s1, nil, "sum") end
  G.reduce(s2, nil, "sum")
  return s1, s2
end

function stream.layernorm(b, p, t, G)
  local N = t.N
  local k = row_shift(b, p, t, G)
  local s1, s2 = shifted_sums(b, p, t, G, k, false)
  local mean, rstd = moments(G, p, N, k, s1, s2)
  tiles(b, p, t, G, function(w) normalize(b, p, w, reload(b, p, w, 0), mean, rstd) end)
  G.store_stat(t.mean, mean)
  G.store_stat(t.rstd, rstd)
end

function stream.rmsnorm(b, p, t, G)
  local _, q = shifted_sums(b, p, t, G, nil, true)
  local rstd = G.smap(function(a) return 1 / ckt.sqrt(a / t.N + p.eps) end, q)
  tiles(b, p, t, G, function(w) normalize(b, p, w, reload(b, p, w, 0), nil, rstd) end)
  G.store_stat(t.rstd, rstd)
end

-- The paths: rows up to cap in one pass, longer ones streamed, chosen at launch by N. With a
-- hinted N (not fixed) that one pass can take, rows of exactly that length get a path of their own
-- in which N is a constant: no per-vector masks on the loads, no per-element column tests (on an
-- H100, layernorm at 16384 x 8192 ran at 82% of the copy bandwidth with them, 98% without). Other
-- lengths take the masked one pass, except where a row has 1024 threads: there the three paths
-- did not fit 64 registers a thread (layernorm spilled 32 bytes and ran at 83% at 4096 x 32768
-- against 91% fixed), so other lengths stream (the row read twice, the second time mostly from L2).
local function body(b, p)
  local g = params(b, p)
  local t = tensors(g, p, g.N)
  local G = geometry(b, p, t)
  local function one_pass(tt) one[p.kind](b, p, tt, G, windows(G, tt)) end
  local function streamed() stream[p.kind](b, p, t, G) end
  if not (p.one and p.stream) then
    if p.one then one_pass(t) else streamed() end
    return
  end
  if not (p.N and p.N <= p.cap) then
    b:when(ckt.le(t.N, p.cap), function() one_pass(t) end)
    b:when(ckt.gt(t.N, p.cap), streamed)
    return
  end
  local hinted = ckt.eq(t.N, p.N)
  b:when(hinted, function() one_pass(tensors(g, p, p.N)) end)
  if p.T < MAX_T then
    b:when(ckt.land(ckt.lnot(hinted), ckt.le(t.N, p.cap)), function() one_pass(t) end)
    b:when(ckt.gt(t.N, p.cap), streamed)
  else
    b:when(ckt.lnot(hinted), streamed)
  end
end

-- rows.build(kind, options) -> kernel, grid(M) (the block count), plan
function rows.build(kind, o)
  local p = rows.plan(kind, o or {})
  local k = ckt.kernel{name = p.name, block = p.block, build = function(b) body(b, p) end}
  local function grid(M)
    if math.type(M) ~= "integer" or M < 1 then error(("%s: grid: M must be a positive integer, got %s"):format(kind, tostring(M)), 2) end
    -- at most a grid's 2^31 - 1 blocks (M + R - 1 wrapped negative at 2^63 - 1; 2^40 rows gave 2^37 blocks)
    local MAX = (1 << 31) - 1
    if M > MAX * p.R then
      error(("%s: grid: M = %d rows of %d a block make more blocks than a grid holds (2^31 - 1)"):format(kind, M, p.R), 2)
    end
    return (M + p.R - 1) // p.R
  end
  return k, grid, p
end

-- ---- the reference in double precision over host arrays (row-major M x N, contiguous):
-- rows.reference(kind, {X =, R =, W =, Bias =, M =, N =, eps =, dtype =, out =}) -> Y (an array of
-- `out`), and Sum (dtype), Mean, Rstd (f32 arrays; layernorm / rmsnorm). The residual sum is
-- rounded to the dtype first, as the kernels do.
function rows.reference(kind, a)
  local M, N = a.M, a.N
  local K = rows.KINDS[kind]
  local eps = a.eps or K.eps
  local y = ckt.array(a.out or a.dtype, M * N)
  local sum = a.R and ckt.array(a.dtype, M * N) or nil
  local mean, rstd = ckt.array("f32", M), ckt.array("f32", M)
  local h = {}
  for m = 0, M - 1 do
    for n = 0, N - 1 do
      local i = m * N + n
      local v = a.X[i]
      if a.R then sum[i] = v + a.R[i]; v = sum[i] end
      h[n] = v
    end
    if kind == "softmax" then
      local mx = NEG
      for n = 0, N - 1 do mx = math.max(mx, h[n]) end
      local s = 0
      for n = 0, N - 1 do s = s + math.exp(h[n] - mx) end
      for n = 0, N - 1 do y[m * N + n] = math.exp(h[n] - mx) / s end
    else
      local mu = 0
      if kind == "layernorm" then
        for n = 0, N - 1 do mu = mu + h[n] end
        mu = mu / N
      end
      local q = 0
      for n = 0, N - 1 do q = q + (h[n] - mu) ^ 2 end
      local rs = 1 / math.sqrt(q / N + eps)
      mean[m], rstd[m] = mu, rs
      for n = 0, N - 1 do
        local v = (h[n] - mu) * rs
        if a.W then v = v * a.W[n] end
        if a.Bias then v = v + a.Bias[n] end
        y[m * N + n] = v
      end
    end
  end
  return y, sum, mean, rstd
end

return rows
