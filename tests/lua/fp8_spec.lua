-- The 8-bit float host arrays (OCP FP8: e4m3 = E4M3FN, e5m2): every code through get/set, rounding
-- to nearest even, saturation like the hardware's cvt.rn.satfinite, NaN, subnormals, and the
-- helpers (fill, random, compare, copy, totable, tostring, poison).
local ckt = require "ckt"

-- a code's value from the format's definition (nil: NaN)
local function value(fmt, c)
  local eb, mb, bias = fmt == "e4m3" and 4 or 5, fmt == "e4m3" and 3 or 2, fmt == "e4m3" and 7 or 15
  local e, m = (c >> mb) & ((1 << eb) - 1), c & ((1 << mb) - 1)
  local s = (c & 0x80) ~= 0 and -1 or 1
  if fmt == "e4m3" and e == 15 and m == 7 then return nil end
  if fmt == "e5m2" and e == 31 then return m == 0 and s * math.huge or nil end
  if e == 0 then return s * m * 2.0 ^ (1 - bias - mb) end
  return s * ((1 << mb) + m) * 2.0 ^ (e - bias - mb)
end

-- the code an array holds: write the value, read back through a u8 view (assign/totable of a u8
-- array of the same bytes is not available, so compare values instead)
describe("fp8 arrays", function()
  for _, fmt in ipairs{"e4m3", "e5m2"} do
    it(fmt .. ": every code's value round trips through set/get", function()
      local a <close> = ckt.array(fmt, 256)
      assert.equal(fmt, a:dtype()); assert.equal(256, a:bytes())
      local max = fmt == "e4m3" and 448 or 57344
      for c = 0, 255 do
        local v = value(fmt, c)
        if v then
          a[c] = v
          local want = (v == math.huge and max) or (v == -math.huge and -max) or v -- satfinite
          assert.equal(want, a[c])
          if v == 0 then assert.equal(1 / v, 1 / a[c]) end -- the zero's sign
        else
          a[c] = 0 / 0
          assert.is_true(a[c] ~= a[c])
        end
      end
      local t = a:totable()
      assert.equal(256, #t)
      assert.equal(a[100], t[101])
    end)
  end

  it("rounds to nearest even and saturates (cvt.rn.satfinite)", function()
    local a <close> = ckt.array("e4m3", 8)
    a[0] = 1 + 2^-4          -- tie between 1 and 1.125: to even (1)
    a[1] = 1 + 3 * 2^-4      -- tie: to even (1.25)
    a[2] = 464               -- max + half an ulp: a tie with NaN's code, to 448
    a[3] = 1e9               -- saturates
    a[4] = -math.huge        -- saturates to -max
    a[5] = 2^-10             -- half the smallest subnormal: to 0
    a[6] = 3 * 2^-10         -- 1.5 subnormal units: to even (2 units)
    a[7] = 1000              -- an integer: through the same rounding
    assert.same({1, 1.25, 448, 448, -448, 0, 2^-8, 448}, a:totable())
    local b <close> = ckt.array("e5m2", 5)
    b[0] = 61440; b[1] = math.huge; b[2] = 1 + 2^-3; b[3] = 2^-17; b[4] = -(1 + 3 * 2^-3)
    assert.same({57344, 57344, 1, 0, -1.5}, b:totable())
  end)

  it("fill, random, compare, copy, poison, tostring", function()
    local a <close> = ckt.array("e4m3", {4, 4}):fill(0.3)
    for i = 0, 15 do assert.equal(0.3125, a[i]) end
    assert.matches("ckt.array%(e4m3, 4x4%): 0.3125", tostring(a))
    local r <close> = ckt.array("e5m2", 1000):random{seed = 3, lo = -500, hi = 500}
    local seen = {}
    for i = 0, 999 do
      local v = r[i]
      assert.is_true(v ~= 0 and v >= -512 and v <= 512)
      local back = ckt.array("e5m2", 1); back[0] = v; assert.equal(v, back[0]) -- already representable
      seen[v] = true
    end
    local c <close> = r:copy()
    assert.is_true((c:compare(r)))
    local f <close> = ckt.array("f32", 1000)
    for i = 0, 999 do f[i] = r[i] * (1 + 0.1) end -- within e5m2's half ulp (12.5%)
    assert.is_true((r:compare(f)))
    for i = 0, 999 do f[i] = r[i] * 1.3 end
    assert.is_false((r:compare(f)))
    local p <close> = ckt.array("e4m3", 2):poison()
    assert.is_true(p[0] ~= p[0]) -- 0xFF is e4m3's negative NaN
    local q <close> = ckt.array("e5m2", 2):poison()
    assert.is_true(q[1] ~= q[1])
  end)

  it("refuses the name fp8 (which format?) naming the two", function()
    local ok, e = pcall(ckt.array, "fp8", 4)
    assert.is_false(ok)
    assert.matches("e4m3, e5m2", tostring(e))
  end)
end)
