-- LuaRocks: `luarocks make` in a clone builds ckt with CMake (Release) and installs the Lua module
-- `ckt` (the kernel library ckt.kernels.* is built into it) and ckt-lua; the C library, headers
-- and the kernel sources stay in the rock's directory (c-lib/, include/, share/ckt/kernels). CI builds it into a local tree:
-- tests/rock/luarocks_make.sh.
rockspec_format = "3.0"
package = "ckt"
version = "scm-1"
source = {
   -- `luarocks make` builds the clone it runs in; this URL is only used by `luarocks install`
   -- of the rockspec alone, from the repository the clone came from.
   url = "git+file://.",
}
description = {
   summary = "A Lua-scriptable tiling engine: CuTe layouts, CK Tile distributions, a GPU kernel builder",
   detailed = [[
ckt gives the layout mathematics of CuTe, CK Tile and IREE (hierarchical shape:stride layouts
with the CuTe algebra, tile-distribution encodings, nested layouts, space-filling curves, an
LDS / shared-memory bank model) as Lua objects, and a kernel builder that emits HIP, CUDA and C
and compiles them (hipRTC, NVRTC, the host C compiler).]],
}
dependencies = {
   "lua >= 5.4, < 5.5",
}
build = {
   type = "cmake",
   variables = {
      CMAKE_BUILD_TYPE = "Release",
      CMAKE_INSTALL_PREFIX = "$(PREFIX)",
      CKT_LUA_CMOD_DIR = "$(LIBDIR)",
      -- LuaRocks deploys everything under lib/ as Lua modules: the C libraries, pkg-config and
      -- CMake files of ckt stay in the rock's directory under c-lib/ instead.
      CMAKE_INSTALL_LIBDIR = "c-lib",
      LUA_INCLUDE_DIR = "$(LUA_INCDIR)",
      CKT_BUILD_TESTS = "OFF",
      BUILD_TESTING = "OFF",
   },
}
