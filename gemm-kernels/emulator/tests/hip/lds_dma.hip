// LDS-DMA (global/buffer -> LDS without registers): 4 waves each stage a slice of a tile
// with `buffer_load_dword ... lds` (M0 + inst_offset + lane*4) and, on gfx950, the
// 16-byte forms `buffer_load_dwordx4 ... lds` and `global_load_lds_dwordx4/x3`
// (M0 + inst_offset + lane*16). The buffer's NUM_RECORDS cuts the source short so the
// last lanes are out of range and must write zeros. Then vmcnt(0), a barrier, and every
// thread reads LDS written by other waves.
// -DNO_VMCNT drops the wait before the barrier: the broken variant (the race detector
// must report it; the longest-latency schedule must give wrong data).
#define __global__ __attribute__((global))
typedef unsigned u32;
#define LDS(p) ((__attribute__((address_space(3))) void*)(p))
#define SENTINEL 0xDEADBEEFu
// Dword region: 4 waves * 64 lanes + 16 slack; wide regions: 4 waves * 64 lanes * 4
// dwords + 16 slack (the inst_offset pushes the last wave 4-8 dwords past its share).
#define NARROW 272
#define WIDE (4 * 256 + 16)
#define WIDE3 (4 * 256)
#ifdef GFX950
#define TOTAL (NARROW + WIDE + WIDE + WIDE3)
#else
#define TOTAL NARROW
#endif

extern "C" __global__ void lds_dma(const u32* src, u32* out, u32 num_records) {
  __attribute__((shared)) u32 tile[TOTAL];
  u32 t = __builtin_amdgcn_workitem_id_x();
  u32 wave = __builtin_amdgcn_readfirstlane(t / 64);
  u32 lane = t % 64;
  for (u32 i = t; i < TOTAL; i += 256) tile[i] = SENTINEL;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  __amdgpu_buffer_rsrc_t r = __builtin_amdgcn_make_buffer_rsrc((void*)src, (short)0, (int)num_records, 0x00020000);
  // Wave w: LDS[w*64 + 12 + lane] = src[w*64 + lane + 12] (inst_offset 48 moves both sides).
  __builtin_amdgcn_raw_ptr_buffer_load_lds(r, LDS(tile + wave * 64), 4, (wave * 64 + lane) * 4, 0, 48, 0);
#ifdef GFX950
  // Wave w: LDS[NARROW + w*256 + 4 + 4*lane .. +4] = src[w*256 + 4*lane + 4 .. +4] (offset 16).
  __builtin_amdgcn_raw_ptr_buffer_load_lds(r, LDS(tile + NARROW + wave * 256), 16, (wave * 256 + 4 * lane) * 4, 0, 16, 0);
  // Global form, 16 bytes, offset 32: LDS[NARROW+WIDE + w*256 + 8 + 4*lane ..] = src[w*256 + 4*lane + 8 ..].
  __builtin_amdgcn_global_load_lds((void*)(src + wave * 256 + 4 * lane), LDS(tile + NARROW + WIDE + wave * 256), 16, 32, 0);
  // 12 bytes: LDS[... + w*256 + 4*lane .. +3] = src[w*192 + 3*lane .. +3]; the 4th dword keeps the sentinel.
  __builtin_amdgcn_global_load_lds((void*)(src + wave * 192 + 3 * lane), LDS(tile + NARROW + 2 * WIDE + wave * 256), 12, 0, 0);
#endif
#ifndef NO_VMCNT
  __builtin_amdgcn_s_waitcnt(0x0f70);  // vmcnt(0)
#endif
  __builtin_amdgcn_s_barrier();
  // Read in reverse: almost every dword comes from another wave's DMA.
  for (u32 i = t; i < TOTAL; i += 256) out[i] = tile[TOTAL - 1 - i];
}
