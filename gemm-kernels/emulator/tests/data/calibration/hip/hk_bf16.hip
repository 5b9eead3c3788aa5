// Written for this project: the translation unit of one HipKittens bf16 GEMM code object
// (build.sh). HipKittens: https://github.com/HazyResearch/HipKittens, MIT License,
// Copyright (c) 2024 HazyResearch; not kept here: build.sh takes it at commit
// f09e9685c4c6aaa41fb3ebd4fe4ca664938589e1 and checks its SHA-256.
//
// hk_bf16_kernel.inc (written by build.sh) is analysis/bf16_gemm/mi350x/kernel_<S>.cpp of
// that commit, the source of HipKittens' published MI355X bf16 figures, with three
// mechanical changes and no other:
//   - its `#include "pyutils/pyutils.cuh"` line is removed and everything from
//     `void dispatch_micro` on (host code: the launch and the pybind11 module) is cut;
//   - its `#define M`, `#define K`, `#define N` take CAL_M, CAL_K, CAL_N (the same values
//     at the published sizes; other values for the test and the Llama shapes).
// Launch (from the cut host code): grid (N / BLOCK_SIZE) * (M / BLOCK_SIZE), block 512,
// dynamic LDS MAX_SHARED_MEMORY (160000 bytes), the micro_globals struct by value.
#include "hk_bf16_kernel.inc"
