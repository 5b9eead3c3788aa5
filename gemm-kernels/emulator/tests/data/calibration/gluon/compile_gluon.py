"""Compiles one Gluon kernel of this directory offline (no GPU) with Triton 3.9 for an AMD
arch and writes the code object (HSACO).

usage: compile_gluon.py FILE.py KERNEL ARCH OUT.co

The signature is the tutorial's a16w16 one: three fp16 pointers, then M, N, K and six
strides as i32, specialised as the JIT specialises a row-major launch (unit strides
constant, everything else divisible by 16: so M, N, K and the leading dimensions must be
multiples of 16); BLOCK_M = BLOCK_N = 256, BLOCK_K = 64, num_warps = 4 (the `matmul` host
wrappers of ROCm/gfx950-gluon-tutorials). Line info is off so that the code object does
not depend on the checkout's path.
"""
import importlib.util
import os
import sys

os.environ.setdefault("TRITON_DISABLE_LINE_INFO", "1")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

WANT = "3.9.0"


def main():
    path, name, arch, out = sys.argv[1:5]
    if triton.__version__ != WANT:
        sys.exit(f"triton {triton.__version__} found, {WANT} required (the code objects were built with it)")
    spec = importlib.util.spec_from_file_location("calibration_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = getattr(mod, name)
    args = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn",
            "stride_cm", "stride_cn"]
    sig = {a: ("*fp16" if a.endswith("_ptr") else "i32") for a in args}
    consts = {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64}
    # What Triton's JIT launcher specialises for the tutorial's launch (A row-major, B
    # k-contiguous, i.e. stored N x K, as its load layouts require; C row-major): the unit
    # strides become the constant 1, and the pointers and the other integers (sizes and
    # leading dimensions that are multiples of 16) carry tt.divisibility = 16.
    for unit in ("stride_ak", "stride_bk", "stride_cn"):
        consts[unit] = 1
    sig.update({c: "constexpr" for c in consts})
    attrs = {(i,): [["tt.divisibility", 16]] for i, a in enumerate(args) if a not in consts}
    src = GluonASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("hip", arch, 64), options={"num_warps": 4})
    with open(out, "wb") as f:
        f.write(k.asm["hsaco"])
    print(f"{out}: kernel {k.metadata.name}, shared {k.metadata.shared} B")


if __name__ == "__main__":
    main()
