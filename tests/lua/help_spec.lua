-- help(x): the texts reach every documented function and type, stay true to the methods they
-- name, and extend at run time (ckt.add_help).
local ckt = require "ckt"

-- every function of ckt and of its sub-tables (ckt.lds), with its help name
local function functions()
  local out = {}
  for name, v in pairs(ckt) do
    if type(v) == "function" then out[#out + 1] = {name, v}
    elseif type(v) == "table" then
      for sub, f in pairs(v) do
        if type(f) == "function" then out[#out + 1] = {name .. "." .. sub, f} end
      end
    end
  end
  table.sort(out, function(a, b) return a[1] < b[1] end)
  return out
end

describe("help", function()
  it("lists the topics", function()
    local text, found = ckt.help_text()
    assert.is_true(found)
    assert.matches("tiling engine", text)
    for _, topic in ipairs {"layout", "composition", "encoding_pattern_2d", "nested_layout", "sfc", "lds.analyze", "default_target"} do
      assert.matches("%f[%w_.]" .. topic:gsub("%.", "%%.") .. "%f[^%w_.]", text)
    end
  end)

  -- Functions known to have no help topic yet: none. A new function without help fails the test
  -- (list it here only with a reason); the list is printed each run.
  local known_undocumented = {}

  it("finds a function by identity, as help('name') does", function()
    local documented, missing, known = 0, {}, {}
    for _, name in ipairs(known_undocumented) do known[name] = true end
    for _, nf in ipairs(functions()) do
      local name, f = nf[1], nf[2]
      local by_name, found = ckt.help_text(name)
      if found then
        documented = documented + 1
        assert.equal(by_name, (ckt.help_text(f)))
        assert.equal(by_name, (ckt.help_text("ckt." .. name)))
        -- the text is about this function: it names it (help's own texts name themselves too)
        local short = name:match("[^.]+$")
        assert.truthy(by_name:find(short, 1, true), name .. ": " .. by_name)
      else
        missing[#missing + 1] = name -- collected: every missing topic is reported, not only the first
      end
    end
    local new_missing, now_documented, missing_set = {}, {}, {}
    for _, name in ipairs(missing) do
      missing_set[name] = true
      if not known[name] then new_missing[#new_missing + 1] = "ckt." .. name end
    end
    for _, name in ipairs(known_undocumented) do
      if not missing_set[name] and ckt[name] ~= nil then now_documented[#now_documented + 1] = "ckt." .. name end
    end
    print(("help_spec: %d functions without a help topic (known, listed in help_spec.lua): %s"):format(
          #missing - #new_missing, table.concat(known_undocumented, ", ")))
    assert.is_true(#new_missing == 0, #new_missing .. " function(s) without a help topic (add one with ckt_l_help_add): "
                   .. table.concat(new_missing, ", "))
    assert.is_true(#now_documented == 0, "documented now, remove from known_undocumented in help_spec.lua: "
                   .. table.concat(now_documented, ", "))
    assert.is_true(documented >= 40, "only " .. documented .. " documented functions")
  end)

  it("documents the layout, swizzle and sfc functions completely", function()
    for _, nf in ipairs(functions()) do
      local name = nf[1]
      if not name:match("^lds%.") and not name:match("help") then
        local group = {layout = 1, composition = 1, coalesce = 1, sfc = 1, swizzle = 1, composed = 1, target = 1}
        if group[name] or name:match("divide$") or name:match("product$") then
          local _, found = ckt.help_text(name)
          assert.is_true(found, "ckt." .. name)
        end
      end
    end
  end)

  it("shows the help of an object's type", function()
    assert.equal((ckt.help_text "layout"), (ckt.help_text(ckt.layout {4, 8})))
    assert.equal((ckt.help_text "sfc"), (ckt.help_text(ckt.sfc {lengths = {4, 4}})))
    assert.equal((ckt.help_text "swizzle"), (ckt.help_text(ckt.swizzle(2, 3, 3))))
    local e = ckt.encoding_pattern_2d {block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8, pattern = "warp_raked"}
    assert.equal((ckt.help_text "encoding"), (ckt.help_text(e)))
  end)

  it("names only methods that exist", function()
    local objects = {
      layout = ckt.layout {4, 8},
      sfc = ckt.sfc {lengths = {4, 4}},
      encoding = ckt.encoding_pattern_2d {block_size = 256, y_per_tile = 64, x_per_tile = 64, vec_size = 8, pattern = "warp_raked"},
      nested_layout = ckt.nested_layout {subgroup_tile = {1, 1}, batch_tile = {1, 1}, outer_tile = {1, 1}, thread_tile = {4, 16},
        element_tile = {4, 1}, subgroup_strides = {0, 0}, thread_strides = {16, 1}},
    }
    -- the kernel-side objects: a kernel (its builder is the same type), a global tensor, a window,
    -- the registers a load gives, an executable, a binary, a host array, a device, a buffer, a
    -- compile future, an event, a graph
    local built = {}
    local k = ckt.kernel{name = "help_objects", block = 32, build = function(b)
      local X = b:pointer("X", "f32")
      built.tensor = ckt.tensor(X, "f32", {shape = {32}})
      built.window = ckt.tile_window(built.tensor, {32}, {0})
      built.ktensor = built.window:load()
      built.window:store(built.ktensor)
    end}
    objects.kernel, objects.tensor, objects.ktensor, objects.window = k, built.tensor, built.ktensor, built.window
    objects.tile_window = built.window
    objects.executable = k:compile{target = "cpu"}
    objects.binary = objects.executable:binary()
    objects.array = ckt.array("f32", 4)
    objects.device = ckt.device("cpu")
    objects.buffer = objects.device:alloc("f32", 4)
    objects.compile_future = k:compile_async{target = "cpu"}
    objects.compile_future:wait()
    objects.event = objects.device:default_stream():record()
    objects.graph = objects.device:capture(function() end)
    for _, topic in ipairs{"kernel", "ktensor", "window", "executable", "binary", "array", "device", "buffer", "compile_future", "event", "graph"} do
      assert.equal((ckt.help_text(topic)), (ckt.help_text(objects[topic])), topic .. ": help of the object's type")
    end
    local checked = 0
    for topic, obj in pairs(objects) do
      local text = ckt.help_text(topic)
      for method in text:gmatch(":([%a_][%w_]*)[%({]") do
        assert.equal("function", type(obj[method]), topic .. ":" .. method .. " is named in help but does not exist")
        checked = checked + 1
      end
    end
    print("help_spec: methods named in help and checked: " .. checked)
    assert.is_true(checked >= 100, "only " .. checked .. " methods named")
  end)

  it("answers unknown topics and values without failing", function()
    local text, found = ckt.help_text("no_such_thing")
    assert.is_false(found)
    assert.equal("no help for no_such_thing; help() lists the topics", text)
    assert.is_false(select(2, ckt.help_text(print)))
    assert.matches("no help for function", (ckt.help_text(print)))
    assert.matches("no help for number", (ckt.help_text(42)))
    assert.matches("no help for table", (ckt.help_text({})))
  end)

  it("prints and returns nothing (the REPL would print a returned text twice)", function()
    local printed = {}
    local real = _G.print
    _G.print = function(...) printed[#printed + 1] = table.concat({...}, "\t") end
    local n = select("#", ckt.help(ckt.composition))
    _G.print = real
    assert.equal(0, n)
    assert.same({(ckt.help_text "composition")}, printed)
  end)

  it("adds topics at run time, listed and found by name", function()
    ckt.add_help("spec_topic", "spec_topic: added by the help spec")
    assert.same({"spec_topic: added by the help spec", true}, {ckt.help_text("spec_topic")})
    assert.matches("spec_topic", (ckt.help_text()))
    ckt.add_help("spec_topic", "replaced")
    assert.equal("replaced", (ckt.help_text("spec_topic")))
    -- an added topic for a built-in name wins (a module may refine its own text)
    local before = ckt.help_text("pad")
    ckt.add_help("pad", "pad: refined")
    assert.equal("pad: refined", (ckt.help_text(ckt.pad)))
    local _, listed = ckt.help_text():gsub("%f[%w_.]pad%f[^%w_.]", "")
    assert.equal(1, listed)
    ckt.add_help("pad", before)
  end)

  it("refuses bad add_help arguments with the argument and reason", function()
    assert.error_matches(function() ckt.add_help() end, "bad argument #1 to '[%w.]*add_help' %(string expected, got no value%)")
    assert.error_matches(function() ckt.add_help("x") end, "bad argument #2 .*string expected")
    assert.error_matches(function() ckt.add_help({}, "t") end, "bad argument #1 .*string expected, got table")
    assert.error_matches(function() ckt.add_help("", "t") end, "the topic name is empty")
    assert.error_matches(function() ckt.add_help("x", "") end, "the help text is empty")
  end)
end)
