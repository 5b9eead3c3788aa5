// Stand-in for the pieces of the HIP/CUDA headers that the device part of vLLM's
// csrc/rocm/skinny_gemms.cu (v0.9.0) uses, so that clang-22 can compile its
// wvSplitK_hf_sml_ kernel with -nogpulib -nogpuinc (no ROCm, no torch here). Written for
// this project (not copied from ROCm or vLLM); see kernels/vllm_wvsplitk.toml.
//   * `half` is a 2-byte struct over _Float16 as HIP's __half is, and __float2half
//     rounds to nearest even (v_cvt_f16_f32), as HIP's does.
//   * torch's c10::Half / c10::BFloat16 are only named by the file's type maps: declared.
//   * std::is_same_v is the one standard-library piece the kernel uses.
#pragma once
#include "calib_hip.h"

#ifndef __HIPCC__
#define __HIPCC__ 1
#endif
#define __forceinline__ inline __attribute__((always_inline))

namespace std {
template <class A, class B> inline constexpr bool is_same_v = false;
template <class A> inline constexpr bool is_same_v<A, A> = true;
}  // namespace std
namespace c10 {
struct Half;
struct BFloat16;
}  // namespace c10

struct __half {
  _Float16 data;
  __half() = default;
  __device__ __half(_Float16 x) : data(x) {}
};
typedef __half half;
struct __half2 { _Float16 x, y; };
static __device__ __forceinline__ __half __float2half(float f) { return __half((_Float16)f); }
static __device__ __forceinline__ float2 __half22float2(__half2 v) { return {(float)v.x, (float)v.y}; }
static __device__ __forceinline__ __half2 __float22half2_rn(float2 v) { return {(_Float16)v.x, (_Float16)v.y}; }
struct __hip_bfloat162 { __bf16 x, y; };
static __device__ __forceinline__ __hip_bfloat16 __float2bfloat16(float f) { return __hip_bfloat16(f); }
static __device__ __forceinline__ float2 __bfloat1622float2(__hip_bfloat162 v) { return {(float)v.x, (float)v.y}; }
static __device__ __forceinline__ __hip_bfloat162 __float22bfloat162_rn(float2 v) { return {(__bf16)v.x, (__bf16)v.y}; }
// HIP vector types multiply element-wise (the bf16 branch of DOT2C uses it).
static __device__ __forceinline__ float2 operator*(float2 a, float2 b) { return {a.x * b.x, a.y * b.y}; }
static __device__ __forceinline__ float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
static __device__ __forceinline__ unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
