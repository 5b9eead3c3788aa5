//! An emulated HIP runtime and RCCL over gemm-emu devices (work in progress).
