-- A guided tour of ckt: what exists, shown live.
print(("ckt %s — a Lua-scriptable tiling engine"):format(ckt.version))
