// Raw-buffer range checking (ISA.md §2.2-2.3) with clang-22's buffer builtins:
// per-dword checks of partly in-range dwordx2/x4 vectors, soffset outside the check,
// inst_offset inside it, OOB loads returning 0, OOB stores writing nothing, sub-dword
// accesses, and a GEMM edge tile that relies on all of it.
#define __global__ __attribute__((global))
typedef unsigned u32;
typedef unsigned char u8;
typedef unsigned short u16;
typedef u32 v2u32 __attribute__((ext_vector_type(2)));
typedef u32 v4u32 __attribute__((ext_vector_type(4)));
#define RSRC(p, n) __builtin_amdgcn_make_buffer_rsrc((void*)(p), (short)0, (int)(n), 0x00020000)
#define INVALID 0x80000000u  // an offset far beyond any NUM_RECORDS: the access is dropped

// out[16*lane + j]; nrec = NUM_RECORDS in bytes; soff = an SGPR offset.
extern "C" __global__ void oob_load(const u32* src, u32* out, u32 nrec, u32 soff) {
  u32 l = __builtin_amdgcn_workitem_id_x();
  __amdgpu_buffer_rsrc_t r = RSRC(src, nrec);
  u32* o = out + 16 * l;
  v2u32 x2 = __builtin_amdgcn_raw_buffer_load_b64(r, 8 * l, 0, 0);
  o[0] = x2.x;
  o[1] = x2.y;
  // The constant 32 goes to the instruction's offset field (checked by the test).
  v4u32 x4 = __builtin_amdgcn_raw_buffer_load_b128(r, 16 * l + 32, 0, 0);
  o[2] = x4.x;
  o[3] = x4.y;
  o[4] = x4.z;
  o[5] = x4.w;
  o[6] = __builtin_amdgcn_raw_buffer_load_b32(r, 4 * l, soff, 0);
  o[7] = __builtin_amdgcn_raw_buffer_load_b8(r, nrec - 14 + l, 0, 0);
  o[8] = __builtin_amdgcn_raw_buffer_load_b16(r, nrec - 14 + 2 * l, 0, 0);
  // voffset + 4*dword would wrap to a small in-range offset without saturation.
  v4u32 w = __builtin_amdgcn_raw_buffer_load_b128(r, 0xFFFFFFF8u, 0, 0);
  o[9] = w.x | w.y | w.z | w.w;
}

// Stores into a buffer that starts `pre` bytes into a larger allocation.
extern "C" __global__ void oob_store(u8* region, u32 pre, u32 nrec, u32 soff, u32 pre_b, u32 nrec_b, u32 pre_s,
                                     u32 nrec_s) {
  u32 l = __builtin_amdgcn_workitem_id_x();
  __amdgpu_buffer_rsrc_t r = RSRC(region + pre, nrec);
  v4u32 v = {16 * l + 1, 16 * l + 2, 16 * l + 3, 16 * l + 4};
  __builtin_amdgcn_raw_buffer_store_b128(v, r, 16 * l, 0, 0);
  __builtin_amdgcn_raw_buffer_store_b32(0x5000 + l, r, 4 * l, soff, 0);
  __builtin_amdgcn_raw_buffer_store_b128(v, r, 0xFFFFFFF8u, 0, 0);
  if (l < 8) {
    __amdgpu_buffer_rsrc_t rb = RSRC(region + pre_b, nrec_b);
    __builtin_amdgcn_raw_buffer_store_b8((u8)(0x40 + l), rb, l, 0, 0);
    __amdgpu_buffer_rsrc_t rs = RSRC(region + pre_s, nrec_s);
    __builtin_amdgcn_raw_buffer_store_b16((u16)(0x7100 + l), rs, 2 * l, 0, 0);
  }
}

// C = A*B on a 32x32 tile per workgroup (256 threads, 4 rows each), f32, row-major with
// leading dimensions. Rows >= M and columns >= N are never masked: A's rows load as zeros
// from the bounds check, C's stores beyond the last row are dropped by it, and columns
// >= N use an invalid offset. rowsum[tile*32 + i] = the sum of the tile's A row i as loaded.
extern "C" __global__ void edge_gemm(const float* A, const float* B, float* C, float* rowsum, u32 M, u32 N, u32 K,
                                     u32 lda, u32 ldb, u32 ldc) {
  u32 t = __builtin_amdgcn_workitem_id_x();
  u32 row0 = 32 * __builtin_amdgcn_workgroup_id_x();
  u32 col0 = 32 * __builtin_amdgcn_workgroup_id_y();
  u32 rows_left = M - row0;  // > 0 for every launched tile
  u32 cols_left = N - col0;
  __amdgpu_buffer_rsrc_t ra = RSRC(A + row0 * lda, rows_left * lda * 4);
  __amdgpu_buffer_rsrc_t rb = RSRC(B + col0, ((K - 1) * ldb + cols_left) * 4);
  __amdgpu_buffer_rsrc_t rc = RSRC(C + row0 * ldc + col0, ((rows_left - 1) * ldc + cols_left) * 4);
  u32 c = t % 32;
  float acc[4] = {0, 0, 0, 0};
  for (u32 k = 0; k < K; ++k) {
    float b = __builtin_bit_cast(float, __builtin_amdgcn_raw_buffer_load_b32(rb, c < cols_left ? 4 * (k * ldb + c) : INVALID, 0, 0));
    for (u32 j = 0; j < 4; ++j) {
      u32 r = t / 32 + 8 * j;
      float a = __builtin_bit_cast(float, __builtin_amdgcn_raw_buffer_load_b32(ra, 4 * (r * lda + k), 0, 0));
      acc[j] += a * b;
    }
  }
  for (u32 j = 0; j < 4; ++j) {
    u32 r = t / 32 + 8 * j;
    u32 off = c < cols_left ? 4 * (r * ldc + c) : INVALID;
    __builtin_amdgcn_raw_buffer_store_b32(__builtin_bit_cast(u32, acc[j]), rc, off, 0, 0);
  }
  if (t < 32) {
    float s = 0;
    for (u32 k = 0; k < K; ++k)
      s += __builtin_bit_cast(float, __builtin_amdgcn_raw_buffer_load_b32(ra, 4 * (t * lda + k), 0, 0));
    rowsum[__builtin_amdgcn_workgroup_id_x() * 32 + t] = s;
  }
}
