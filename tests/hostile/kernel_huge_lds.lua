-- Enormous LDS layouts: beyond any LDS, overflowing 64 bits, swizzled, and many large tensors
-- in one kernel. Each must be refused with a clear error (at the tensor or when the source for a
-- target is asked for), never allocated or enumerated for minutes.
local function refused(what, pattern, f)
  local ok, e = pcall(f)
  assert(not ok, what .. ": accepted")
  e = tostring(e)
  print(what .. ": " .. e:sub(1, 160))
  assert(e:find(pattern) or e:find("sandbox") or e:find("not enough memory"), what .. ": unclear error: " .. e)
end
local function kernel(build) return ckt.kernel{name = "k", block = 256, build = build} end
refused("2^31 x 2^31 LDS", "LDS", function() kernel(function() ckt.tensor("lds", "f32", ckt.layout({2^31, 2^31})) end) end)
refused("2^62-element LDS", "", function() kernel(function() ckt.tensor("lds", "f32", ckt.layout({2^31, 2^31}, {1, 2^31})) end) end)
refused("LDS stride 2^60", "LDS", function() kernel(function() ckt.tensor("lds", "f64", ckt.layout({2, 2}, {1, 2^60})) end) end)
refused("swizzled 2^23 LDS", "LDS", function()
  kernel(function() ckt.tensor("lds", "f32", ckt.layout({2^12, 2^11}), {swizzle = ckt.swizzle(3, 3, 3)}) end)
end)
-- one tensor per call at the largest accepted span: the sum is far beyond any target's LDS
refused("4096 x 16 MiB of LDS", "LDS", function()
  local k = kernel(function()
    for _ = 1, 4096 do ckt.tensor("lds", "f32", ckt.layout({2^11, 2^11})) end
  end)
  for _, t in ipairs{"gfx90a", "sm_90", "cpu"} do k:source(t) end
end)
-- a window over a huge LDS tile with a load through it
refused("window over a huge LDS tensor", "", function()
  kernel(function(b)
    local s = ckt.tensor("lds", "f32", ckt.layout({2^11, 2^11}))
    ckt.tile_window(s, {2^11, 2^11}, {0, 0}):load()
  end)
end)
local k = kernel(function() ckt.tensor("lds", "f32", ckt.layout({64, 64})) end)
assert(k:lds_bytes() == 64 * 64 * 4)
print("kernel_huge_lds: refused")
