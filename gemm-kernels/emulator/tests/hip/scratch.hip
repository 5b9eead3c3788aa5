// A private array indexed by a run-time value: clang-22 -O3 keeps it in scratch (the
// private segment), with scratch_store/scratch_load on gfx942 and gfx950.
#define __global__ __attribute__((global))

extern "C" __global__ void scratch(const int* in, int* out, int n) {
  int buf[96];
  unsigned t = __builtin_amdgcn_workitem_id_x() + 64 * __builtin_amdgcn_workgroup_id_x();
  int x = in[t];
  for (int i = 0; i < 96; ++i) buf[i] = x * i + (int)t;
  int acc = 0;
  for (int i = 0; i < n; ++i) acc += buf[(i * 37 + (int)t) % 96] ^ i;
  out[t] = acc;
}
