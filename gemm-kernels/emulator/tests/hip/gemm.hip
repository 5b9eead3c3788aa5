// Tiled GEMM with v_mfma_f32_32x32x{8,16}: C (M x N, f32, row-major) = A (M x K,
// row-major) * B^T where B is stored N x K row-major. A workgroup of 4 waves computes a
// 64 x 64 tile; per k-step the workgroup copies a 64-row slice of A and of B (8 bytes of
// k per row and lane group) into LDS with raw buffer loads, whose range check returns 0
// for rows past the edge of the matrix (M, N need not be multiples of 64; K must be a
// multiple of the k-step). Element type: -DBF16, -DF16 or -DFP8 (fp8 x fp8).
#define __global__ __attribute__((global))
typedef float v16f __attribute__((ext_vector_type(16)));
typedef short v4s __attribute__((ext_vector_type(4)));
typedef _Float16 v4h __attribute__((ext_vector_type(4)));
typedef unsigned long long u64;

#if defined(FP8)
#define EB 1
#define KS 16
#define MFMA(a, b, c) __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8((long)(a), (long)(b), c, 0, 0, 0)
#elif defined(F16)
#define EB 2
#define KS 8
#define MFMA(a, b, c) __builtin_amdgcn_mfma_f32_32x32x8f16(__builtin_bit_cast(v4h, a), __builtin_bit_cast(v4h, b), c, 0, 0, 0)
#else
#define EB 2
#define KS 8
#define MFMA(a, b, c) __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(__builtin_bit_cast(v4s, a), __builtin_bit_cast(v4s, b), c, 0, 0, 0)
#endif

extern "C" __global__ void gemm(const unsigned char* A, const unsigned char* B, float* C, int M, int N, int K) {
  __attribute__((shared)) u64 sa[128];
  __attribute__((shared)) u64 sb[128];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  unsigned row0 = __builtin_amdgcn_workgroup_id_x() * 64;
  unsigned col0 = __builtin_amdgcn_workgroup_id_y() * 64;
  __amdgpu_buffer_rsrc_t ra = __builtin_amdgcn_make_buffer_rsrc((void*)A, 0, M * K * EB, 0x00020000);
  __amdgpu_buffer_rsrc_t rb = __builtin_amdgcn_make_buffer_rsrc((void*)B, 0, N * K * EB, 0x00020000);
  unsigned w = t / 64, l = t % 64;
  unsigned wr = w / 2, wc = w % 2;
  v16f acc = {};
  for (int k0 = 0; k0 < K; k0 += KS) {
    unsigned u = t % 128, row = u / 2, half = u % 2;
    unsigned off0 = ((row0 + row) * K + k0) * EB + half * 8;
    unsigned off1 = ((col0 + row) * K + k0) * EB + half * 8;
    if (t < 128) {
      u64 v = __builtin_bit_cast(u64, __builtin_amdgcn_raw_buffer_load_b64(ra, off0, 0, 0));
      sa[row * 2 + half] = v;
    } else {
      u64 v = __builtin_bit_cast(u64, __builtin_amdgcn_raw_buffer_load_b64(rb, off1, 0, 0));
      sb[row * 2 + half] = v;
    }
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    u64 a = sa[(32 * wr + l % 32) * 2 + l / 32];
    u64 b = sb[(32 * wc + l % 32) * 2 + l / 32];
    acc = MFMA(a, b, acc);
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  }
  for (int r = 0; r < 16; r++) {
    unsigned i = 8 * (r / 4) + 4 * (l / 32) + r % 4, j = l % 32;
    unsigned gi = row0 + 32 * wr + i, gj = col0 + 32 * wc + j;
    if (gi < (unsigned)M && gj < (unsigned)N) C[gi * N + gj] = acc[r];
  }
}
