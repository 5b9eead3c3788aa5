// Calibration test data (foreign code, not product code).
// Source: AMD ROCm blog "FP8 GEMM Optimization on AMD CDNA(TM)4 Architecture"
//   (Jiahui Cao, Amanzhol Salykov, Andy Luo, 10 Mar 2026), ROCm/rocm-blogs
//   blogs/software-tools-optimization/cdna4-gemm-kernels/README.md, section "LDS Tiling to
//   Improve Data Reuse", commit c9ef8066b5803794cc6f661c5f0d450153fd3a5c. Kernel body
//   copied verbatim.
// Copyright (c) 2026 Advanced Micro Devices, Inc. (AMD). MIT licence (the blog's header):
//   Permission is hereby granted, free of charge, to any person obtaining a copy of this
//   software and associated documentation files (the "Software"), to deal in the Software
//   without restriction, including without limitation the rights to use, copy, modify,
//   merge, publish, distribute, sublicense, and/or sell copies of the Software, and to
//   permit persons to whom the Software is furnished to do so, subject to the following
//   conditions: The above copyright notice and this permission notice shall be included in
//   all copies or substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS",
//   WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED.
// Added here: the include, the type names, and TILE_M = TILE_N = TILE_K = 16 (the blog does
// not publish them; the kernel indexes As[ty][tx] and Bs[ty][tx], so all three must equal
// the square block edge). Launch: block 16x16, grid (N/16, M/16); M, N, K multiples of 16.
#include "calib_hip.h"
using fp8e4m3 = __hip_fp8_e4m3;
using bf16 = __hip_bfloat16;
#ifndef TILE
#define TILE 16
#endif
#define TILE_M TILE
#define TILE_N TILE
#define TILE_K TILE

__global__ void lds_tiled_fp8_gemm_kernel(const fp8e4m3* A,
                                      const fp8e4m3* B,
                                      bf16* C,
                                      int M,
                                      int N,
                                      int K,
                                      int lda,
                                      int ldb,
                                      int ldc,
                                      float alpha,
                                      float beta) {
    __shared__ float As[TILE_M][TILE_K];
    __shared__ float Bs[TILE_K][TILE_N];

    const int row = blockIdx.y * TILE_M + threadIdx.y;
    const int col = blockIdx.x * TILE_N + threadIdx.x;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE_K) {
        As[threadIdx.y][threadIdx.x] = float(A[row * lda + (k0 + threadIdx.x)]);

        Bs[threadIdx.y][threadIdx.x] = float(B[col * ldb + (k0 + threadIdx.y)]);

        __syncthreads();

        for (int k = 0; k < TILE_K; ++k) {
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }

        __syncthreads();
    }

    const float c_prev = (beta == 0.0f) ? 0.0f : static_cast<float>(C[row * ldc + col]);
    C[row * ldc + col] = bf16(alpha * acc + beta * c_prev);
}
