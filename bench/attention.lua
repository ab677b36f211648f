-- The attention forward (ckt.kernels.attention) on a GPU: correctness against the double
-- reference at a small awkward shape (GPU == the CPU target's emulation too), then TFLOP/s
-- (4·B·H·S²·D, half for causal) by events, median of the bench's reps, and the wall clock of 20
-- launches back to back on a stream (what an application sees), on random data, at the issue's
-- shapes. torch SDPA's backends on the same shapes: bench/attention_torch.py beside it.
--
-- ckt-lua bench/attention.lua [target=sm_90] [json=bench/results/attention.json] [shapes=B,H,S,D;...] [tiles=default]
--   tiles: comma-separated "default" or BRxBC (the tile option) with @overlap / @serial and @pingpong /
--   @nopingpong (the schedule options), each timed at every shape it builds for
local target = arg[1] or "sm_90"
local json_path = arg[2] or "bench/results/attention.json"
local shape_arg = arg[3] or "4,32,4096,128;16,16,1024,64;1,32,16384,128"
local tile_arg = arg[4] or "default"
package.path = (arg and arg[0] and arg[0]:match("(.*/)") or "./") .. "lib/?.lua;" .. package.path
local bench = require "measure"
local attention = require "ckt.kernels.attention"
local okd, dev = pcall(ckt.device, ckt.target(target).runtime)
if not okd then print("SKIPPED: bench/attention.lua: no device for " .. target .. ": " .. tostring(dev)); os.exit(77) end
local cpu = ckt.device("cpu")
local failures = 0
-- the tiles asked for: nil (the default) or {BR, BC}
local tiles = {}
for ts in tile_arg:gmatch("[^,]+") do
  if ts == "default" then tiles[#tiles + 1] = {name = ts}
  else
    local br, bc, rest = ts:match("^(%d+)x(%d+)(.*)$")
    if not br then error("tiles: '" .. ts .. "' is not default or BRxBC[@overlap|@serial][@pingpong|@nopingpong]") end
    local t = {name = ts, tile = {tonumber(br), tonumber(bc)}}
    for flag in rest:gmatch("@(%w+)") do
      if flag == "overlap" or flag == "serial" then t.overlap = flag == "overlap"
      elseif flag == "pingpong" or flag == "nopingpong" then t.pingpong = flag == "pingpong"
      else error("tiles: '" .. ts .. "': unknown schedule @" .. flag .. " (overlap, serial, pingpong, nopingpong)") end
    end
    tiles[#tiles + 1] = t
  end
end

-- correctness: B=2, H=4, H_kv=2, S_q=77 (S_q=177 for 128-row tiles), S_k=131, causal and not, f16
-- and bf16, head_dim 64/128, each tile asked for that builds
local checks = {}
for _, dt in ipairs{"f16", "bf16"} do
  for _, D in ipairs{64, 128} do
    for _, causal in ipairs{false, true} do
     for _, tl in ipairs(tiles) do
      if pcall(attention.build, {dtype = dt, head_dim = D, causal = causal, target = target, tile = tl.tile, overlap = tl.overlap, pingpong = tl.pingpong}) then
      local B, H, Hkv, Sq, Sk = 2, 4, 2, tl.tile and tl.tile[1] > 64 and 177 or 77, 131
      local q = ckt.array(dt, B * H * Sq * D):random{seed = 1, lo = -1, hi = 1}
      local kk = ckt.array(dt, B * Hkv * Sk * D):random{seed = 2, lo = -1, hi = 1}
      local v = ckt.array(dt, B * Hkv * Sk * D):random{seed = 3, lo = -1, hi = 1}
      local ref_o, ref_lse = attention.reference(q, kk, v, {B = B, H = H, H_kv = Hkv, S_q = Sq, S_k = Sk, head_dim = D, causal = causal})
      local function run(d, t)
        local k, grid = attention.build{dtype = dt, head_dim = D, causal = causal, target = t, tile = tl.tile, overlap = tl.overlap, pingpong = tl.pingpong}
        local exe = k:compile{target = t}
        local bo, bl = d:alloc(dt, B * H * Sq * D):upload(ckt.array(dt, B * H * Sq * D):poison()), d:alloc("f32", B * H * Sq):upload(ckt.array("f32", B * H * Sq):poison())
        exe:launch{grid = grid(B, H, Sq), Q = d:alloc(dt, #q):upload(q), K = d:alloc(dt, #kk):upload(kk), V = d:alloc(dt, #v):upload(v),
                   O = bo, LSE = bl, B = B, H = H, H_kv = Hkv, S_q = Sq, S_k = Sk}
        return bo:download(), bl:download()
      end
      local go, gl = run(dev, target)
      -- (the CPU target's emulation beside it for the first tile asked for: the rest costs minutes
      -- of emulation on the GPU host's CPU and tells no more)
      local co, cl
      if tl == tiles[1] then co, cl = run(cpu, target:match("^cpu") and target or ("cpu:" .. target)) end
      local tol = dt == "f16" and {rtol = 2e-3, atol = 2e-3} or {rtol = 1.6e-2, atol = 1.6e-2}
      local ok_o, err_o = go:compare(ref_o, tol)
      local ok_l = gl:compare(ref_lse, {rtol = 1e-4, atol = 1e-4})
      local same = co and (go:compare(co, {rtol = 0, atol = 0}) and gl:compare(cl, {rtol = 0, atol = 0})) or "not run"
      checks[#checks + 1] = {dtype = dt, head_dim = D, causal = causal, tile = tl.name, o_ok = ok_o, lse_ok = ok_l, max_err = err_o, gpu_equals_cpu = same}
      if not (ok_o and ok_l) then failures = failures + 1 end
      print(("check %s D=%d causal=%s tile %s: O %s (max err %g), LSE %s, GPU == cpu:%s bit for bit: %s"):format(dt, D, tostring(causal), tl.name,
            ok_o and "ok" or "WRONG", err_o, ok_l and "ok" or "WRONG", target, tostring(same)))
      end
     end
    end
  end
end

-- speed
local rows = {}
local s <close> = dev:stream()
print(("\n%s, %s\n"):format(dev:name(), target))
print("| B,H,S,D | causal | dtype | tile | registers | ms (events) | TFLOP/s (events) | wall ms (20 on a stream) | TFLOP/s (wall) |\n|---|---|---|---|---|---|---|---|---|")
for spec in shape_arg:gmatch("[^;]+") do
  local B, H, S, D = spec:match("(%d+),(%d+),(%d+),(%d+)")
  B, H, S, D = tonumber(B), tonumber(H), tonumber(S), tonumber(D)
  for _, causal in ipairs{false, true} do
    for _, tl in ipairs(tiles) do
      local dt = "f16"
      local okb, k, grid, p = pcall(attention.build, {dtype = dt, head_dim = D, causal = causal, target = target, tile = tl.tile, overlap = tl.overlap, pingpong = tl.pingpong})
      if okb then
        local exe = k:compile{target = target}
        local n = B * H * S * D
        local q, kk, v = bench.random_buffer(dev, dt, n, 1), bench.random_buffer(dev, dt, n, 2), bench.random_buffer(dev, dt, n, 3)
        local o, lse = dev:alloc(dt, n), dev:alloc("f32", B * H * S)
        local args = {grid = grid(B, H, S), Q = q, K = kk, V = v, O = o, LSE = lse, B = B, H = H, H_kv = H, S_q = S, S_k = S}
        local ms = bench.time_launch(exe, args)
        local wall = bench.wall_launch(exe, args, s, 20)
        local flops = 4 * B * H * S * S * D * (causal and 0.5 or 1)
        local res = exe:resources()
        local r = {B = B, H = H, S = S, D = D, causal = causal, dtype = dt, tile = ("%dx%d"):format(p.BR, p.BC) .. (p.overlap and "@overlap" or "") .. (p.pingpong and "@pingpong" or ""), registers = res.registers,
                   spills = res.spill_stores, ms = ms, tflops = flops / (ms * 1e-3) / 1e12, wall_ms = wall, wall_tflops = flops / (wall * 1e-3) / 1e12}
        rows[#rows + 1] = r
        print(("| %d,%d,%d,%d | %s | %s | %s | %s%s | %.3f | %.1f | %.3f | %.1f |"):format(B, H, S, D, tostring(causal), dt, r.tile, tostring(r.registers),
              (r.spills or 0) > 0 and (" (%d B spilled)"):format(r.spills) or "", ms, r.tflops, wall, r.wall_tflops))
        q:close(); kk:close(); v:close(); o:close(); lse:close()
      end
    end
  end
end
bench.write_json(json_path, {date = os.date("!%Y-%m-%d %H:%M UTC"), device = dev:name(), target = target, checks = checks, rows = rows})
if failures > 0 then error(failures .. " attention check(s) failed") end
