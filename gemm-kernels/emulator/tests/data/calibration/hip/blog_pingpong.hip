// Instantiates the blog's 8-wave ping-pong kernel (blog_pingpong_kernel.h, foreign test
// data) for one problem size: the kernel takes M, N, K as template parameters, so each
// size is its own code object. Build with -DCAL_M=.. -DCAL_N=.. -DCAL_K=.. (multiples of
// 256, 256, 128; K >= 256). Launch: grid (M/256)*(N/256) workgroups, block 512.
#include "blog_pingpong_kernel.h"
template __global__ void fp8_gemm_256x256x128<CAL_M, CAL_N, CAL_K>(fp8* A, fp8* B, bf16* C);
