// Written for this project: the translation unit of one HipKittens fp8 GEMM code object
// (build.sh). HipKittens: https://github.com/HazyResearch/HipKittens, MIT License,
// Copyright (c) 2024 HazyResearch; not kept here: build.sh takes it at commit
// f09e9685c4c6aaa41fb3ebd4fe4ca664938589e1 and checks its SHA-256.
//
// The 8-wave fp8 GEMM, kernels/gemm/fp8fp32/FP8_8wave/ of that commit: utils.cpp (whole:
// load_st_to_rt) and hk_fp8_8wave_kernel.inc, which build.sh cuts from 8_wave.cu (lines
// 11-252: NUM_WARPS, the group type G and the kernel template matmul_device<M, N, K>; not
// the includes of <random>, <omp.h>, <chrono> and profile_utils.cpp, nor the host code).
// The instantiation below is ours: HipKittens' main() instantiates 8192^3.
// Launch (from 8_wave.cu's host code): grid M * N / (256 * 256), block 512, no dynamic LDS,
// the three gl (global layout) structs by value.
#include "kittens.cuh"
using namespace kittens;
#include "utils.cpp"
#include "hk_fp8_8wave_kernel.inc"

template __global__ void matmul_device<CAL_M, CAL_N, CAL_K>(const kittens::gl<fp8e4m3, 1, 1, CAL_M, CAL_K>,
                                                            const kittens::gl<fp8e4m3, 1, 1, CAL_N, CAL_K>,
                                                            const kittens::gl<bf16, 1, 1, CAL_M, CAL_N>);
