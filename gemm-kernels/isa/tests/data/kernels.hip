#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __device__ __attribute__((device))
typedef _Float16 half;
typedef __bf16 bf16;

__device__ inline int tid() { return __builtin_amdgcn_workitem_id_x(); }
__device__ inline int bid() { return __builtin_amdgcn_workgroup_id_x(); }
extern "C" __global__ void vadd(const float* a, const float* b, float* c, long n) {
  long i = (long)bid() * 256 + tid();
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void vaddh(const half* a, const bf16* b, bf16* c, half* d, int n) {
  int i = bid() * 256 + tid();
  if (i < n) { c[i] = (bf16)((float)a[i] * (float)b[i]); d[i] = a[i] * (half)(float)b[i] + (half)1.0f; }
}
__device__ float wave_sum(float v) {
  for (int o = 32; o > 0; o >>= 1) {
    int lane = tid() & 63;
    v += __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute(((lane ^ o) << 2), __builtin_bit_cast(int, v)));
  }
  return v;
}
extern "C" __global__ void reduce(const float* a, float* out, int n) {
  __shared__ float sm[4];
  float s = 0;
  for (int i = bid() * 256 + tid(); i < n; i += 256 * 1024) s += a[i];
  s = wave_sum(s);
  if ((tid() & 63) == 0) sm[tid() >> 6] = s;
  __builtin_amdgcn_s_barrier();
  if (tid() == 0) { float t = sm[0] + sm[1] + sm[2] + sm[3]; __atomic_fetch_add(out, t, __ATOMIC_RELAXED); }
}
typedef float f4 __attribute__((ext_vector_type(4)));
typedef float f16v __attribute__((ext_vector_type(16)));
typedef short s4 __attribute__((ext_vector_type(4)));
typedef half h4 __attribute__((ext_vector_type(4)));
extern "C" __global__ void gemm(const h4* A, const h4* B, float* C, int K, int ldc, float alpha, float beta) {
  __shared__ h4 la[256], lb[256];
  f16v acc = {0};
  int t = tid();
  for (int k = 0; k < K; k += 8) {
    la[t] = A[bid()*K + k*64 + t]; lb[t] = B[k*64 + t];
    __builtin_amdgcn_s_barrier();
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(la[t ^ 1], lb[t ^ 3], acc, 0, 0, 0);
    __builtin_amdgcn_s_barrier();
  }
  for (int r = 0; r < 16; r++) { int idx = (r * 64 + t) * ldc; C[idx] = alpha * acc[r] + beta * C[idx]; }
}
extern "C" __global__ void cvt(const float* a, unsigned* o, int n) {
  int i = bid() * 256 + tid();
  if (i < n) {
    int p = __builtin_amdgcn_cvt_pk_fp8_f32(a[i], a[i+1], 0, false);
    p = __builtin_amdgcn_cvt_pk_bf8_f32(a[i+2], a[i+3], p, true);
    float f = __builtin_amdgcn_cvt_f32_fp8(p, 1) + __builtin_amdgcn_cvt_f32_bf8(p, 2);
    o[i] = p + __builtin_bit_cast(unsigned, f) + (unsigned)(long)a[i] + (unsigned)(double)a[i+5];
  }
}
