-- ckt kernel library: helpers shared by the library's kernels.
local ckt = ckt or require "ckt"
local common = {}

-- elements of `dtype` in one 16-byte access, the widest global / LDS access of every target
function common.vec(dtype) return 16 // ckt.array(dtype, 1):bytes() end

return common
