// Sum of 256 floats per workgroup through LDS with a barrier per tree level.
// -DNO_BARRIER removes the barriers: a deliberately broken variant for the race detector.
#define __global__ __attribute__((global))
#ifdef NO_BARRIER
#define BARRIER()
#else
#define BARRIER() __builtin_amdgcn_s_barrier()
#endif
extern "C" __global__ void reduce(const float* in, float* out) {
  __attribute__((shared)) float buf[256];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  unsigned g = __builtin_amdgcn_workgroup_id_x();
  buf[t] = in[g * 256 + t];
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  BARRIER();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  for (unsigned s = 128; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    BARRIER();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  }
  if (t == 0) out[g] = buf[0];
}
