// The wvSplitK_hf_sml_ kernel of vLLM v0.9.0 (csrc/rocm/skinny_gemms.cu, Apache-2.0,
// Copyright the vLLM project), as vLLM's host function wvSplitK instantiates it for f16
// with a batch of one token: WVSPLITK(16, 2, 2, 2, 2, 2, 2, 1), i.e.
// wvSplitK_hf_sml_<half, THRDS 64, YTILE 2, WvPrGrp 16, A_CHUNK 8, UNRL 2, N 1>.
// This file is ours; the kernel text is not kept in this repository: build.sh takes vLLM's
// file from the PyPI sdist vllm-0.9.0.tar.gz (SHA-256 checked), keeps its device part
// (lines 16-112 and 261-528: the arch macros, the type maps, loadnt, DOT2C and the kernel),
// and compiles it here with the stand-in header below (no torch, no ROCm).
#include "vllm_skinny_shim.h"
#include "vllm_skinny_device.inc"

template __global__ void wvSplitK_hf_sml_<half, 64, 2, 16, 8, 2, 1>(const int K, const int M, const half* B,
                                                                    const half* __restrict__ A, half* C,
                                                                    const int _WvPrGrp, const int CuCount);
