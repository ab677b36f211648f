-- Shared by scripts/copy.lua and scripts/transpose.lua: build a library kernel, show its source
-- and resources, compile it for every target whose compiler is here, run it on the default
-- target, validate against the CPU reference. Not a script of its own (run the other two).
local demo = {}

local function section(title) print(("\n== %s %s"):format(title, ("="):rep(math.max(0, 70 - #title)))) end
demo.section = section

-- The one failure that skips a target: its compiler library is not installed (the engine's
-- "NVRTC not found (...)" / "hipRTC not found (...)", engine/src/jit_cuda.c, jit_hip.c).
-- Any other error -- a compile error of the generated code included -- is raised.
function demo.compiler_missing(e)
  e = tostring(e)
  return e:find("NVRTC not found (", 1, true) ~= nil or e:find("hipRTC not found (", 1, true) ~= nil
end

-- compile k for each target; prints resources, or "skipped" where the target's compiler library
-- is not installed; a compile failure is an error. Returns the counts compiled, skipped.
function demo.compile_everywhere(build, targets)
  section("compile for every target")
  local compiled, skipped = 0, {}
  for _, t in ipairs(targets) do
    local ok, res = pcall(function()
      local k = build(t)
      local exe = k:compile{target = t, compile_only = not ckt.target(t).emulated}
      local r, parts = exe:resources(), {}
      for _, key in ipairs{"vgprs", "sgprs", "registers", "lds_bytes", "vgpr_spills", "sgpr_spills", "spill_stores", "scratch_bytes"} do
        if r[key] then parts[#parts + 1] = key .. "=" .. r[key] end
      end
      return ("%-8s %7.1f ms %s  %s"):format(t, exe:compile_ms(), exe:from_cache() and "(cache)" or "       ", table.concat(parts, " "))
    end)
    if ok then
      compiled = compiled + 1
      print(res)
    elseif demo.compiler_missing(res) then
      skipped[#skipped + 1] = t
      print(("%-8s SKIPPED (compiler not installed): %s"):format(t, (tostring(res):gsub("\n.*", ""))))
    else
      error(("compile for %s failed: %s"):format(t, tostring(res)), 0)
    end
  end
  print(("compiled for %d of %d targets%s"):format(compiled, #targets,
        #skipped > 0 and (", SKIPPED " .. table.concat(skipped, ", ") .. " (not counted as compiled)") or ""))
  return compiled, #skipped
end

-- run exe over the problem: inputs (host arrays) uploaded, the output poisoned first,
-- downloaded, compared with the reference (rtol/atol 0: bit for bit)
function demo.run_and_check(exe, args, inputs, output, reference, grid, tol)
  local dev = ckt.device(ckt.target().emulated and "cpu" or nil)
  local bufs = {}
  for name, a in pairs(inputs) do
    bufs[name] = dev:alloc(a:dtype(), #a)
    bufs[name]:upload(a)
    args[name] = bufs[name]
  end
  output.array:poison()
  local out = dev:alloc(output.array:dtype(), #output.array)
  out:upload(output.array)
  args[output.name] = out
  args.grid = grid
  args.timed = true
  local ms = exe:launch(args)
  out:download(output.array)
  local ok, err, bad = output.array:compare(reference, tol or {rtol = 0, atol = 0})
  print(("run on %s: %d blocks in %.3f ms; %s (max abs error %g%s)"):format(dev:name(), grid, ms,
        ok and "matches the reference" or "MISMATCH", err, bad and (", first at " .. bad) or ""))
  if not ok then error("validation failed") end
end

return demo
