// Calibration test data (foreign code, not product code).
// Derived from: AMD ROCm blog "FP8 GEMM Optimization on AMD CDNA(TM)4 Architecture"
//   (Jiahui Cao, Amanzhol Salykov, Andy Luo, 10 Mar 2026), ROCm/rocm-blogs
//   blogs/software-tools-optimization/cdna4-gemm-kernels/README.md, section "LDS Tiling to
//   Improve Data Reuse", commit c9ef8066b5803794cc6f661c5f0d450153fd3a5c: its LDS-tiled
//   kernel (signature, f32 LDS tiles, K loop with two barriers, FMA loop, epilogue).
// Copyright (c) 2026 Advanced Micro Devices, Inc. (AMD). MIT licence (the blog's header):
//   Permission is hereby granted, free of charge, to any person obtaining a copy of this
//   software and associated documentation files (the "Software"), to deal in the Software
//   without restriction, including without limitation the rights to use, copy, modify,
//   merge, publish, distribute, sublicense, and/or sell copies of the Software, and to
//   permit persons to whom the Software is furnished to do so, subject to the following
//   conditions: The above copyright notice and this permission notice shall be included in
//   all copies or substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS",
//   WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED.
// Changed here (this project): the tiling, to the one the blog's published figure was
// measured with. The blog prints the body above without its tile sizes; the same authors'
// companion notebook (ROCm/gpuaidev docs/notebooks/gpu_dev_optimize/fp8_gemm_hip_cdna4.ipynb,
// commit 865dd7c41827a550402d2f326063131cb326077c, section "2. LDS Tiled Kernel") builds and
// times the LDS-tiled step with this tiling: a 16x16 block is 4 waves; wave w owns C rows
// 4w..4w+3 of the block's 16x16 tile and stages, per 16-wide K step, its own 4x16 slice of A
// and its own copy of the 16x16 slice of B (each thread loads one A byte and 4 B bytes,
// rows k = r, r+4, r+8, r+12 of its B column). The notebook carries no licence, so its code
// is not copied: this is the blog's kernel with that tiling written in.
#include "calib_hip.h"
using fp8e4m3 = __hip_fp8_e4m3;
using bf16 = __hip_bfloat16;

#define WAVES 4         // waves per 16x16 block
#define WAVE_ROWS 4     // C rows per wave (16 lanes x 4 rows = 64 lanes)
#define TILE_N 16
#define TILE_K 16

__global__ void lds_tiled_per_wave_fp8_gemm_kernel(const fp8e4m3* A,
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
    __shared__ float As[WAVES][WAVE_ROWS][TILE_K];
    __shared__ float Bs[WAVES][TILE_K][TILE_N];

    const int wave = threadIdx.y / WAVE_ROWS;
    const int r = threadIdx.y % WAVE_ROWS;
    const int row = blockIdx.y * (WAVES * WAVE_ROWS) + wave * WAVE_ROWS + r;
    const int col = blockIdx.x * TILE_N + threadIdx.x;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE_K) {
        As[wave][r][threadIdx.x] = float(A[row * lda + (k0 + threadIdx.x)]);

#pragma unroll
        for (int kb = r; kb < TILE_K; kb += WAVE_ROWS) {
            Bs[wave][kb][threadIdx.x] = float(B[col * ldb + (k0 + kb)]);
        }

        __syncthreads();

        for (int k = 0; k < TILE_K; ++k) {
            acc += As[wave][r][k] * Bs[wave][k][threadIdx.x];
        }

        __syncthreads();
    }

    const float c_prev = (beta == 0.0f) ? 0.0f : static_cast<float>(C[row * ldc + col]);
    C[row * ldc + col] = bf16(alpha * acc + beta * c_prev);
}
