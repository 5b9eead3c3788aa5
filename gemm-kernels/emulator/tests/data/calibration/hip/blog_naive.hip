// Calibration test data (foreign code, not product code).
// Source: AMD ROCm blog "FP8 GEMM Optimization on AMD CDNA(TM)4 Architecture"
//   (Jiahui Cao, Amanzhol Salykov, Andy Luo, 10 Mar 2026), ROCm/rocm-blogs
//   blogs/software-tools-optimization/cdna4-gemm-kernels/README.md, section "Naive FP8 GEMM",
//   commit c9ef8066b5803794cc6f661c5f0d450153fd3a5c. Kernel body copied verbatim.
// Copyright (c) 2026 Advanced Micro Devices, Inc. (AMD). MIT licence (the blog's header):
//   Permission is hereby granted, free of charge, to any person obtaining a copy of this
//   software and associated documentation files (the "Software"), to deal in the Software
//   without restriction, including without limitation the rights to use, copy, modify,
//   merge, publish, distribute, sublicense, and/or sell copies of the Software, and to
//   permit persons to whom the Software is furnished to do so, subject to the following
//   conditions: The above copyright notice and this permission notice shall be included in
//   all copies or substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS",
//   WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED.
// Added here: the include of our minimal header and the two type names the blog leaves
// undefined (fp8e4m3 = OCP E4M3FN, bf16). Launch (not published): block 16x16.
#include "calib_hip.h"
using fp8e4m3 = __hip_fp8_e4m3;
using bf16 = __hip_bfloat16;

__global__ void baseline_fp8_gemm_kernel(const fp8e4m3* A,
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
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) {
        return;
    }

    // FP32 accumulation for one dot product.
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        acc += float(A[row * lda + k]) * float(B[col * ldb + k]);
    }
    const float c_prev = (beta == 0.0f) ? 0.0f : static_cast<float>(C[row * ldc + col]);
    //Write back in BF16.
    C[row * ldc + col] = bf16(alpha * acc + beta * c_prev);
}
