extern "C" __global__ void __launch_bounds__(1024, 2) spill(float *p, int n) {
  float a[96];
  #pragma unroll
  for (int i = 0; i < 96; i++) a[i] = p[threadIdx.x * 96 + i];
  for (int j = 0; j < n; j++) {
    #pragma unroll
    for (int i = 0; i < 96; i++) a[i] = a[i] * a[(i + 7) % 96] + 1.0f;
  }
  #pragma unroll
  for (int i = 0; i < 96; i++) p[threadIdx.x * 96 + i] = a[i];
}
__device__ __noinline__ float helper(float *q, int i) { float t[16]; for (int k = 0; k < 16; k++) t[k] = q[k]; return t[i & 15]; }
extern "C" __global__ void two(float *p, int i) { __shared__ float s[256]; s[threadIdx.x] = p[threadIdx.x]; __syncthreads(); p[threadIdx.x] = helper(s, i); }
