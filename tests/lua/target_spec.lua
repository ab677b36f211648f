-- ckt.target(name).hw (capabilities and the resources of an SM / CU) and ckt.occupancy: the
-- engine's one occupancy model (ckt_target_occupancy), with bad input refused by name.
local ckt = require "ckt"

local function err(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok)
  return tostring(e)
end

describe("ckt.target(name).hw", function()
  it("holds the capabilities as flags", function()
    assert.is_true(ckt.target("sm_90a").hw.wgmma); assert.is_true(ckt.target("sm_90a").hw.tma)
    assert.is_false(ckt.target("sm_90").hw.wgmma); assert.is_true(ckt.target("sm_90").hw.tma)
    assert.is_false(ckt.target("sm_80").hw.tma); assert.is_false(ckt.target("gfx90a").hw.wgmma)
    assert.is_true(ckt.target("cpu:sm_90a").hw.wgmma) -- the emulated GPU's model
    assert.is_true(ckt.target("sm_90").hw.stmatrix); assert.is_true(ckt.target("sm_90a").hw.stmatrix)
    assert.is_false(ckt.target("sm_80").hw.stmatrix); assert.is_false(ckt.target("gfx90a").hw.stmatrix)
  end)

  it("holds each product's resources", function()
    local h = ckt.target("sm_90").hw -- H100 SXM
    assert.equal(132, h.sm_count); assert.equal(65536, h.regs_per_sm); assert.equal(255, h.regs_per_thread_max)
    assert.equal(8, h.reg_granule); assert.equal(228 * 1024, h.lds_per_sm); assert.equal(227 * 1024, h.lds_per_block)
    assert.equal(2048, h.threads_per_sm_max); assert.equal(32, h.blocks_per_sm_max); assert.equal(1024, h.threads_per_block_max)
    assert.equal(108, ckt.target("sm_80").hw.sm_count)
    local a = ckt.target("gfx90a").hw -- one GCD of an MI250X
    assert.equal(110, a.sm_count); assert.equal(4, a.simds); assert.equal(512, a.regs_per_thread_max); assert.equal("amd", a.vendor)
    assert.equal(160 * 1024, ckt.target("gfx950").hw.lds_per_sm)
  end)

  it("leaves the record's other fields as they were", function()
    local t = ckt.target("sm_90a")
    for _, k in ipairs{"wave_size", "lds_banks", "bank_bytes", "lds_bytes", "matrix", "instructions", "name", "vendor", "tma",
                       "target", "arch", "dialect", "compiler", "runtime", "emulated", "lds_static_bytes", "lds_max_bytes"} do
      assert.is_not_nil(t[k], k)
    end
    assert.equal(t.lds_bytes, t.hw.lds_per_block)
  end)

  it("refuses unknown targets", function()
    assert.truthy(err(ckt.target, "vax780"):find("unknown target", 1, true))
    assert.truthy(err(ckt.target, "sm_89"):find("unknown target 'sm_89'", 1, true)) -- no model
  end)
end)

describe("ckt.occupancy", function()
  it("gives the blocks an SM holds and what bounds them", function()
    assert.same({2, "registers"}, {ckt.occupancy("sm_90", {threads = 256, registers = 128, lds_bytes = 96 * 1024})})
    assert.same({1, "lds"}, {ckt.occupancy("sm_90a", {threads = 288, lds_bytes = 230448})})
    assert.same({32, "blocks"}, {ckt.occupancy("sm_90", {threads = 64})})
    assert.same({2, "threads"}, {ckt.occupancy("sm_90", {threads = 1024})})
    assert.same({4, "registers"}, {ckt.occupancy("gfx90a", {threads = 256, registers = 128})})
    assert.same({2, "registers"}, {ckt.occupancy("cpu:sm_90", {threads = 256, registers = 128})})
  end)

  it("refuses bad input by name", function()
    assert.truthy(err(ckt.occupancy, "vax780", {threads = 64}):find("unknown target", 1, true))
    assert.truthy(err(ckt.occupancy, "sm_89", {threads = 64}):find("unknown target", 1, true))
    assert.truthy(err(ckt.occupancy):find("target name expected", 1, true))
    assert.truthy(err(ckt.occupancy, 90, {threads = 64}):find("unknown target '90'", 1, true))
    assert.truthy(err(ckt.occupancy, {}, {threads = 64}):find("string expected", 1, true))
    assert.truthy(err(ckt.occupancy, "sm_90"):find("table expected", 1, true))
    assert.truthy(err(ckt.occupancy, "sm_90", {}):find("field 'threads' is required", 1, true))
    assert.truthy(err(ckt.occupancy, "sm_90", {threads = "many"}):find("field 'threads' must be an integer", 1, true))
    assert.truthy(err(ckt.occupancy, "sm_90", {threads = 1.5}):find("threads", 1, true))
    assert.truthy(err(ckt.occupancy, "sm_90", {threads = 0}):find("threads 0 must be 1 to 1024", 1, true))
    assert.truthy(err(ckt.occupancy, "sm_90", {threads = -32}):find("threads -32", 1, true))
    assert.truthy(err(ckt.occupancy, "sm_90", {threads = 64, registers = -1}):find("registers -1", 1, true))
    assert.truthy(err(ckt.occupancy, "sm_90", {threads = 64, registers = 300}):find("registers 300", 1, true))
    assert.truthy(err(ckt.occupancy, "sm_90", {threads = 64, lds_bytes = -8}):find("lds_bytes -8", 1, true))
    assert.truthy(err(ckt.occupancy, "sm_90", {threads = 64, lds_bytes = 1 << 20}):find("lds_bytes 1048576", 1, true))
    assert.truthy(err(ckt.occupancy, "sm_90", {threads = 64, regs = 32}):find("regs", 1, true)) -- a typo
  end)
end)
