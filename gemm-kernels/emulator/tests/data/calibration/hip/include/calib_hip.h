// Minimal device-side stand-in for the parts of the HIP headers that the calibration
// kernels use, so that clang-22 can compile them with -nogpulib -nogpuinc (no ROCm here).
// Written for this project (not copied from ROCm): the thread/block index objects over
// the AMDGPU builtins, the attribute macros, the vector types, and the fp8/bf16 storage
// types with the conversions the kernels call.
//   * fp8 is OCP E4M3FN (the MI355X blog's `fp8e4m3`, HIP's `__hip_fp8_e4m3`); its float
//     conversion uses the gfx950 builtin (v_cvt_f32_fp8), as ROCm's header does on gfx950.
//   * bf16 from float rounds to nearest even through clang's __bf16 (v_cvt_pk_bf16_f32 on
//     gfx950), as ROCm's __float2bfloat16 does.
#pragma once

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
// As HIP's amd_hip_runtime.h defines it: max threads -> flat work-group size, min blocks per
// multiprocessor -> amdgpu_waves_per_eu (this sets the register budget the compiler uses).
#define __calib_lb1(t) __attribute__((amdgpu_flat_work_group_size(1, t)))
#define __calib_lb2(t, b) __attribute__((amdgpu_flat_work_group_size(1, t), amdgpu_waves_per_eu(b)))
#define __calib_lb_select(_1, _2, impl, ...) impl
#define __launch_bounds__(...) __calib_lb_select(__VA_ARGS__, __calib_lb2, __calib_lb1, )(__VA_ARGS__)

typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long uint64_t;
typedef unsigned long uintptr_t;

struct __calib_uint3 { unsigned x, y, z; };
static __device__ inline __attribute__((always_inline)) __calib_uint3 __calib_thread_idx() {
  return {__builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(), __builtin_amdgcn_workitem_id_z()};
}
static __device__ inline __attribute__((always_inline)) __calib_uint3 __calib_block_idx() {
  return {__builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(), __builtin_amdgcn_workgroup_id_z()};
}
// blockDim from the code object v5 implicit arguments (hidden_group_size_x/y/z: u16 at
// byte offsets 12, 14, 16 of the implicit-argument block).
static __device__ inline __attribute__((always_inline)) __calib_uint3 __calib_block_dim() {
  const unsigned short* p = (const unsigned short*)__builtin_amdgcn_implicitarg_ptr();
  return {p[6], p[7], p[8]};
}
#define threadIdx (__calib_thread_idx())
#define blockIdx (__calib_block_idx())
#define blockDim (__calib_block_dim())

struct float2 { float x, y; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };

// OCP E4M3FN storage (1 byte).
struct __hip_fp8_e4m3 {
  uint8_t __x;
  __device__ operator float() const { return __builtin_amdgcn_cvt_f32_fp8((int)__x, 0); }
};
struct __hip_fp8x4_e4m3 { uint32_t __x; };

struct __hip_bfloat16 {
  __bf16 data;
  __hip_bfloat16() = default;
  __device__ __hip_bfloat16(float f) : data((__bf16)f) {}
  __device__ operator float() const { return (float)data; }
};

// Workgroup barrier with the LDS fences HIP's __syncthreads() has.
static __device__ inline __attribute__((always_inline)) void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
