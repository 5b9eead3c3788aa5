// Written for this project (not HipKittens' or ROCm's code). Definitions of the four ROCm
// device-library (ockl) functions that ROCm's HIP headers call for threadIdx, blockIdx,
// gridDim and blockDim, for the HipKittens builds (build.sh): they are compiled with the real
// HIP headers but without ROCm's device libraries (-nogpulib), which would otherwise define
// them. Each is what ROCm-Device-Libs' ockl/src/workitem.cl does for code object v5:
//   __ockl_get_local_id(d)   -> __builtin_amdgcn_workitem_id_{x,y,z}
//   __ockl_get_group_id(d)   -> __builtin_amdgcn_workgroup_id_{x,y,z}
//   __ockl_get_num_groups(d) -> hidden_block_count_{x,y,z}: the first three u32 of the
//                               implicit kernel arguments (AMDGPUUsage, code object v5)
//   __ockl_get_local_size(d) -> hidden_group_size_{x,y,z}, or hidden_remainder_{x,y,z} in
//                               the last workgroup of a partial grid (below).
#pragma once

extern "C" __device__ __attribute__((const)) size_t __ockl_get_local_id(unsigned int dim) {
    switch (dim) {
    case 0: return __builtin_amdgcn_workitem_id_x();
    case 1: return __builtin_amdgcn_workitem_id_y();
    case 2: return __builtin_amdgcn_workitem_id_z();
    default: return 0;
    }
}

extern "C" __device__ __attribute__((const)) size_t __ockl_get_group_id(unsigned int dim) {
    switch (dim) {
    case 0: return __builtin_amdgcn_workgroup_id_x();
    case 1: return __builtin_amdgcn_workgroup_id_y();
    case 2: return __builtin_amdgcn_workgroup_id_z();
    default: return 0;
    }
}

extern "C" __device__ __attribute__((const)) size_t __ockl_get_num_groups(unsigned int dim) {
    if (dim > 2) return 1;
    return ((const __attribute__((address_space(4))) unsigned int *)__builtin_amdgcn_implicitarg_ptr())[dim];
}

// blockDim (HipKittens' 4-wave fp8 GEMM): hidden_group_size_{x,y,z} (u16 at 12, 14, 16) for
// a full workgroup, hidden_remainder_{x,y,z} (u16 at 18, 20, 22) for the partial last one.
extern "C" __device__ __attribute__((const)) size_t __ockl_get_local_size(unsigned int dim) {
    if (dim > 2) return 1;
    const __attribute__((address_space(4))) char *p = (const __attribute__((address_space(4))) char *)__builtin_amdgcn_implicitarg_ptr();
    unsigned int group_id = __ockl_get_group_id(dim);
    unsigned int num_groups = ((const __attribute__((address_space(4))) unsigned int *)p)[dim];
    unsigned short size = ((const __attribute__((address_space(4))) unsigned short *)(p + 12))[dim];
    unsigned short rem = ((const __attribute__((address_space(4))) unsigned short *)(p + 18))[dim];
    return group_id < num_groups ? size : rem;
}
