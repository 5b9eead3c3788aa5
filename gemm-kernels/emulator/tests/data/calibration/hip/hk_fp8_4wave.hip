// Written for this project: the translation unit of one HipKittens fp8 GEMM code object
// (build.sh). HipKittens: https://github.com/HazyResearch/HipKittens, MIT License,
// Copyright (c) 2024 HazyResearch; not kept here: build.sh takes it at commit
// f09e9685c4c6aaa41fb3ebd4fe4ca664938589e1 and checks its SHA-256.
//
// The 4-wave fp8 GEMM, kernels/gemm/fp8fp32/FP8_4wave/ of that commit: utils.cpp (whole: the
// load and MFMA helpers) and hk_fp8_4wave_kernel.inc, which build.sh cuts from 4_wave.cu
// (lines 13-817: NUM_WARPS, the group type G, do_interleaved_cluster and the three kernel
// templates matmul_device, matmul_device_1024, matmul_device_2048; not the includes of
// <random>, <omp.h>, <chrono> and profile_utils.cpp, the SIZE define, nor the host code).
// The instantiation below is ours and picks the kernel as 4_wave.cu's matmul_host does:
// matmul_device_1024 at 1024^3 (64 x 64 tile), matmul_device_2048 at 2048^3 (128 x 128),
// matmul_device otherwise (256 x 256). Launch: grid (M / tile) * (N / tile), block 256, no
// dynamic LDS, the three gl structs by value.
#include "kittens.cuh"
using namespace kittens;
#include "utils.cpp"
#include "hk_fp8_4wave_kernel.inc"

#define HK_ARGS                                                                                \
    (const kittens::gl<fp8e4m3, 1, 1, CAL_M, CAL_K>, const kittens::gl<fp8e4m3, 1, 1, CAL_N, CAL_K>, \
     const kittens::gl<bf16, 1, 1, CAL_M, CAL_N>)
#if CAL_M == 1024 && CAL_N == 1024 && CAL_K == 1024
template __global__ void matmul_device_1024<CAL_M, CAL_N, CAL_K> HK_ARGS;
#elif CAL_M == 2048 && CAL_N == 2048 && CAL_K == 2048
template __global__ void matmul_device_2048<CAL_M, CAL_N, CAL_K> HK_ARGS;
#else
template __global__ void matmul_device<CAL_M, CAL_N, CAL_K> HK_ARGS;
#endif
