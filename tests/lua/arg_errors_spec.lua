-- Argument errors follow Lua's own conventions (luaL_argerror): "bad argument #n to 'f' (reason)",
-- the function's name taken from the call, the argument's position counted as the caller sees it
-- (methods without self), the reason naming the argument or field and what was wrong.
local ckt = require "ckt"

local function errmsg(f)
  local ok, e = pcall(f)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

local function has(msg, text) assert.truthy(msg:find(text, 1, true), ("%q lacks %q"):format(msg, text)) end

describe("argument errors", function()
  it("name the function from the call, the position and the reason", function()
    has(errmsg(function() return ckt.layout({4, "x"}) end), "bad argument #1 to 'layout' (shape must be an integer")
    has(errmsg(function() return ckt.layout({4, 8}, {1, 2.5}) end), "bad argument #2 to 'layout' (stride must be an integer, got 2.5)")
    has(errmsg(function() return ckt.composition(true, 2) end), "bad argument #1 to 'composition' (layout, integer or layout string expected, got boolean)")
    has(errmsg(function() return ckt.composition("(4,2):(1,4)", "((") end), "bad argument #2 to 'composition' (")
    has(errmsg(function() return ckt.blocked_product(ckt.layout(4), {2, 2}) end), "bad argument #2 to 'blocked_product' (one layout expected")
    has(errmsg(function() return ckt.array("f17", 4) end), "bad argument #1 to 'array' (dtype: ")
    has(errmsg(function() return ckt.array(4, 4) end), "bad argument #1 to 'array' (dtype must be a string")
    has(errmsg(function() return ckt.swizzle(3, "M", 3) end), "bad argument #2 to 'swizzle' (M must be an integer, got string)")
  end)
  it("count method arguments without self", function()
    local L = ckt.layout({4, 8})
    has(errmsg(function() return L:mode("a") end), "bad argument #1 to 'mode' (index must be an integer, got string)")
    local S = ckt.sfc{lengths = {4, 4}}
    has(errmsg(function() return S:step(0, "j") end), "bad argument #2 to 'step' (j must be an integer, got string)")
  end)
  it("blame the options table for a bad field, naming the field", function()
    has(errmsg(function() return ckt.encoding_pattern_2d{block_size = "256", y_per_tile = 64, x_per_tile = 64, vec_size = 8} end),
        "bad argument #1 to 'encoding_pattern_2d' (field 'block_size' must be an integer, got string)")
    has(errmsg(function() return ckt.encoding_pattern_2d{block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8, shufled = true} end),
        "bad argument #1 to 'encoding_pattern_2d' (unknown option 'shufled')")
    has(errmsg(function() return ckt.lds.analyze_tensor{target = "gfx90a", tensor_layout = ckt.layout({8, 8}), thread_map = ckt.layout(64), vector = 1.5} end),
        "bad argument #1 to 'analyze_tensor' (field 'vector' must be an integer, got 1.5)")
  end)
  it("blame the options table for a missing required field", function()
    has(errmsg(function() return ckt.kernel{block = 64, build = function() end} end), "bad argument #1 to 'kernel' (field 'name' (a C identifier) is required)")
    has(errmsg(function() return ckt.sfc{} end), "bad argument #1 to 'sfc' (field 'lengths' is required)")
    local k = ckt.kernel{name = "k", block = 32, build = function(b) b:size("n") end}
    local exe = k:compile{target = "cpu"}
    has(errmsg(function() return exe:launch{n = 1} end), "bad argument #1 to 'launch' (field 'grid' is required)")
    has(errmsg(function() return exe:launch{grid = "x", n = 1} end), "bad argument #1 to 'launch' (field 'grid' must be an integer or a list of up to 3 integers, got string)")
    -- the builder's methods taking an options table: #1 is the table (self not counted)
    local function build_err(f) return errmsg(function() return ckt.kernel{name = "k", block = 32, build = f} end) end
    has(build_err(function(b) b:mbarriers{} end), "bad argument #1 to 'mbarriers' (field 'count' is required)")
    has(build_err(function(b) b:mbarrier_wait{barrier = b:mbarriers{count = 1}, at = 0} end), "bad argument #1 to 'mbarrier_wait' (field 'phase' is required)")
  end)
  it("name a ckt object by its class", function()
    local build_err = function(f) return errmsg(function() return ckt.kernel{name = "k", block = 32, build = f} end) end
    has(build_err(function(b) b:mbarrier_wait{barrier = ckt.layout(4), at = 0, phase = 0} end),
        "bad argument #1 to 'mbarrier_wait' (field 'barrier' must be mbarriers (b:mbarriers{...}), got ckt.layout)")
    has(build_err(function(b) b:mbarrier_wait{barrier = b:mbarriers{count = 1}, at = ckt.layout(4), phase = 0} end),
        "bad argument #1 to 'mbarrier_wait' (field 'at': number or kernel expression expected, got ckt.layout)")
  end)
  it("still say whose value it is when the value came out of a table", function()
    -- a field of a field: the message names the path, as lauxlib cannot
    local tile = ckt.layout({64, 8}, {8, 1})
    has(errmsg(function() return ckt.lds.find_swizzle{target = "gfx90a", layout = tile, dtype = "f16", write = {thread_map = ckt.layout(64), vector = "8"},
                                                     read = {thread_map = ckt.layout(64), vector = 8}} end),
        "lds.find_swizzle: write: field 'vector' must be an integer, got string")
  end)
end)
