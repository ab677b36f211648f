-- The module loads into a stock lua5.4 and says its version.
local ckt = require "ckt"

describe("require 'ckt'", function()
  it("has a version string", function()
    assert.is_string(ckt.version)
    assert.truthy(ckt.version:match("^%d+%.%d+%.%d+$"))
  end)
end)
