// Written for this project (not HipKittens' or ROCm's code). Definitions of the three ROCm
// device-library (ockl) functions that ROCm's HIP headers call for threadIdx, blockIdx and
// gridDim, for the HipKittens builds (build.sh): they are compiled with the real HIP headers
// but without ROCm's device libraries (-nogpulib), which would otherwise define them.
// Each is what ROCm-Device-Libs' ockl/src/workitem.cl does for code object v5:
//   __ockl_get_local_id(d)   -> __builtin_amdgcn_workitem_id_{x,y,z}
//   __ockl_get_group_id(d)   -> __builtin_amdgcn_workgroup_id_{x,y,z}
//   __ockl_get_num_groups(d) -> hidden_block_count_{x,y,z}: the first three u32 of the
//                               implicit kernel arguments (AMDGPUUsage, code object v5).
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
