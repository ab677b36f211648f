-- Benchmark (not a test): in-process JIT latency after the compiler library is loaded.
-- Budget (issue 6): a cold compile of a small kernel <= 100 ms per target (hipRTC gfx90a, NVRTC sm_90).
-- Run: ckt-lua bench/jit_latency.lua   (writes bench/results/jit_latency.json)
local src = [[
// variant %d: a distinct source each time, so nothing is cached
extern "C" __global__ void __launch_bounds__(256) transpose_tile(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x %% 32, y = blockIdx.y * 32 + threadIdx.x / 32;
  for (int j = 0; j < 32; j += 8) if (x < n && y + j < n) tile[threadIdx.x / 32 + j][threadIdx.x %% 32] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x %% 32; y = blockIdx.x * 32 + threadIdx.x / 32;
  for (int j = 0; j < 32; j += 8) if (x < n && y + j < n) out[(y + j) * n + x] = tile[threadIdx.x %% 32][threadIdx.x / 32 + j];
}]]
local results, variant = {}, 0
local function median(t) table.sort(t) return t[(#t + 1) // 2] end
print("| target | compiler | first call (loads the library) | median of 5 cold compiles | budget |\n|---|---|---|---|---|")
for _, target in ipairs{"gfx90a", "sm_90", "cpu"} do
  local function one()
    variant = variant + 1
    local s = src:format(variant)
    if target == "cpu" then s = ("/* variant %d */ void transpose_tile(void) {}"):format(variant) end
    return ckt.compile{target = target, source = s, name = "transpose_tile"}
  end
  local ok, first = pcall(one)
  if not ok then
    print(("| %s | unavailable: %s | | | |"):format(target, first:gsub("\n.*", "")))
  else
    local t = {}
    for _ = 1, 5 do t[#t + 1] = one():compile_ms() end
    results[target] = {first_ms = first:compile_ms(), median_ms = median(t), compiler = first:compiler()}
    print(("| %s | %s | %.1f ms | %.1f ms | %s |"):format(target, first:compiler(), first:compile_ms(), median(t), target == "cpu" and "-" or "<= 100 ms"))
  end
end
local f = io.open("bench/results/jit_latency.json", "w")
if f then
  local parts = {}
  for k, v in pairs(results) do parts[#parts + 1] = ('"%s": {"first_ms": %.2f, "median_ms": %.2f}'):format(k, v.first_ms, v.median_ms) end
  f:write("{" .. table.concat(parts, ", ") .. "}\n")
  f:close()
end
