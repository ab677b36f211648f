-- A sandboxed script must not run native code: ckt.compile for the cpu target runs the host C
-- compiler on the script's source and a device launches the result. Found by the fuzz helper:
-- before the fix this wrote a file through fopen() from a "kernel".
local src = [[
#include <stdio.h>
typedef struct ckt_cpu_launch ckt_cpu_launch;
void k(void *const *a, const ckt_cpu_launch *l) { (void)a; (void)l; fopen("/tmp/ckt-escaped", "w"); }
]]
local function refused(what, f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, what .. " must be refused in a sandbox, it returned " .. tostring(e))
  assert(type(e) == "string" and e:find("sandbox", 1, true), what .. ": the error should say sandbox: " .. tostring(e))
end
refused("ckt.compile (cpu)", ckt.compile, {target = "cpu", source = src, name = "k"})
refused("ckt.compile (include a host file)", ckt.compile, {target = "cpu", source = '#include "/etc/passwd"\n', name = "k"})
refused("ckt.device", ckt.device, "cpu")
refused("require('ckt').compile", require("ckt").compile, {target = "cpu", source = src, name = "k"})
refused("package.loaded.ckt.device", package.loaded.ckt.device, "cpu")
print("sandbox_native_code: refused")
