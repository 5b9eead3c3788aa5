// Vector add: c[i] = a[i] + b[i] for i < n (one element per work-item, 256 per workgroup).
#define __global__ __attribute__((global))
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i < n) c[i] = a[i] + b[i];
}
