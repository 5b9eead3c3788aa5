// Small HIP kernels for the reader test (tests/llvm_reader.rs). No headers: the
// attributes and AMDGPU builtins are spelled out, so clang-22 compiles this with
// -nogpulib -nogpuinc and no ROCm install.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef float float16v __attribute__((ext_vector_type(16)));

extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(1, 256)))
lds_reverse(float* out) {
  __shared__ float tile[256];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  tile[t] = (float)t;
  __builtin_amdgcn_s_barrier();
  out[__builtin_amdgcn_workgroup_id_x() * 256 + t] = tile[255 - t];
}

extern "C" __global__ void mfma_tile(const half4* a, const half4* b, float16v* c) {
  unsigned t = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workitem_id_y() * 64;
  float16v acc = c[t];
  for (int k = 0; k < 4; ++k)
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a[t * 4 + k], b[t * 4 + k], acc, 0, 0, 0);
  c[t] = acc;
}

extern "C" __global__ void grid3d(int* out, unsigned pitch) {
  unsigned x = __builtin_amdgcn_workgroup_id_x() * 4 + __builtin_amdgcn_workitem_id_x();
  unsigned y = __builtin_amdgcn_workgroup_id_y() * 4 + __builtin_amdgcn_workitem_id_y();
  unsigned z = __builtin_amdgcn_workgroup_id_z() * 4 + __builtin_amdgcn_workitem_id_z();
  out[(z * pitch + y) * pitch + x] = (int)(x ^ y ^ z);
}

// Reads the block size, so the code object v5 implicit arguments (hidden_*) appear.
extern "C" __global__ void scale_by_blockdim(float* v) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
               __builtin_amdgcn_workitem_id_x();
  v[i] *= (float)__builtin_amdgcn_workgroup_size_x();
}
