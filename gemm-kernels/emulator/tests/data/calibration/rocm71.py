#!/usr/bin/env python3
"""ROCm 7.1.0's LLVM optimiser and AMDGPU back end on clang-22's unoptimised device IR.

The blog's ping-pong kernel was measured with ROCm 7.1.0's hipcc. ROCm's clang cannot be
installed here, but ROCm 7.1.0's LLVM can: the PyPI wheel rocm-llvm-python==7.1.0.555.43
ships librocmllvm.so ("AMD clang version 20.0.0git (roc-7.1.0 25425 1b0eada6b0ee)", branch
release/rocm-rel-7.1.0) with LLVM's C API. This script runs, through that C API (ctypes),
what clang's back end would run after its front end:

  1. parse the IR that `clang-22 ... -O3 -Xclang -disable-llvm-passes -emit-llvm -S` wrote,
     after the edits LLVM 20 needs to read LLVM 22's IR (each one below, all mechanical);
  2. set the target machine's own data layout, as clang does for its target;
  3. run `default<O3>` with the tuning clang uses at -O3 (loop and SLP vectorisation, loop
     interleaving and unrolling on) and the AMDGPU pass-builder callbacks of the target
     machine;
  4. emit a relocatable object with the AMDGPU back end at the aggressive optimisation
     level, PIC, with the `-mllvm` options clang-22's driver passes for HIP
     (`--amdhsa-code-object-version=5`, `-amdgpu-internalize-symbols`).

build.sh links the object with ld.lld-22 (`--no-undefined -shared`, as clang's driver does).

IR edits (LLVM 22 -> LLVM 20), nothing else is changed:
  - the function attribute `nocreateundeforpoison` (LLVM 22; on the MFMA intrinsic's
    declaration) is removed: LLVM 20's parser rejects it;
  - the target features cube-insts, cvt-pknorm-vop2-insts, lerp-inst, qsad-insts, sad-insts
    (LLVM 22 names for instructions gfx950 has) are removed from "target-features": LLVM 20
    ignores them with a warning, so removing them changes nothing but the warnings;
  - llvm.lifetime.start/end: LLVM 22 passes the pointer alone, LLVM 20 takes (i64 size,
    ptr) with size an immediate; each call is rebuilt with the alloca's allocation size,
    the size clang-20 writes there (CodeGenFunction::EmitLifetimeStart).

usage: rocm71.py IN.ll OUT.o
The library is $ROCM71_LLVM, or librocmllvm.so of the `rocm.llvm` package this Python
imports (pip install rocm-llvm-python==7.1.0.555.43); its SHA-256 must be the one below,
so that the build is the same everywhere.
"""
import ctypes as C
import hashlib
import importlib.util
import os
import re
import sys

LIB_SHA256 = "5e8724b6098491c790f03b0481b07c481b87591b6adb4e6aef050c8792fe6d89"
UNKNOWN_FEATURES = ["cube-insts", "cvt-pknorm-vop2-insts", "lerp-inst", "qsad-insts", "sad-insts"]
MLLVM = [b"--amdhsa-code-object-version=5", b"-amdgpu-internalize-symbols"]
TRIPLE, CPU = b"amdgcn-amd-amdhsa", b"gfx950"

P = C.c_void_p


def library_path():
    path = os.environ.get("ROCM71_LLVM")
    if not path:
        try:
            spec = importlib.util.find_spec("rocm.llvm")
        except ModuleNotFoundError:
            spec = None
        if spec is None or not spec.submodule_search_locations:
            sys.exit("rocm71.py: no rocm.llvm package (pip install rocm-llvm-python==7.1.0.555.43) and no $ROCM71_LLVM")
        path = os.path.join(list(spec.submodule_search_locations)[0], "librocmllvm.so")
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != LIB_SHA256:
        sys.exit(f"rocm71.py: {path} is not rocm-llvm-python 7.1.0.555.43's librocmllvm.so (sha256 {digest})")
    return path


def edit_ir(text):
    text = re.sub(r" nocreateundeforpoison\b", "", text)
    for f in UNKNOWN_FEATURES:
        text = re.sub(r",\+" + re.escape(f) + r'(?=[,"])', "", text)
    return text


def fn(lib, name, res, *args):
    f = getattr(lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: rocm71.py IN.ll OUT.o")
    src, obj = sys.argv[1], sys.argv[2]
    lib = C.CDLL(library_path())
    for f in ["TargetInfos", "Targets", "TargetMCs", "AsmPrinters", "AsmParsers"]:
        getattr(lib, "LLVMInitializeAll" + f)()
    argv = [b"rocm71"] + MLLVM
    fn(lib, "LLVMParseCommandLineOptions", None, C.c_int, C.POINTER(C.c_char_p), C.c_char_p)(
        len(argv), (C.c_char_p * len(argv))(*argv), None
    )
    ctx = fn(lib, "LLVMContextCreate", P)()
    with open(src) as f:
        ir = edit_ir(f.read()).encode()
    buf = fn(lib, "LLVMCreateMemoryBufferWithMemoryRangeCopy", P, C.c_char_p, C.c_size_t, C.c_char_p)(
        ir, len(ir), src.encode()
    )
    mod, err = P(), C.c_char_p()
    if fn(lib, "LLVMParseIRInContext", C.c_int, P, P, C.POINTER(P), C.POINTER(C.c_char_p))(
        ctx, buf, C.byref(mod), C.byref(err)
    ):
        sys.exit("rocm71.py: parse: " + err.value.decode())

    tgt = P()
    if fn(lib, "LLVMGetTargetFromTriple", C.c_int, C.c_char_p, C.POINTER(P), C.POINTER(C.c_char_p))(
        TRIPLE, C.byref(tgt), C.byref(err)
    ):
        sys.exit("rocm71.py: target: " + err.value.decode())
    # LLVMCodeGenLevelAggressive = 3, LLVMRelocPIC = 2, LLVMCodeModelDefault = 0.
    tm = fn(lib, "LLVMCreateTargetMachine", P, P, C.c_char_p, C.c_char_p, C.c_char_p, C.c_int, C.c_int, C.c_int)(
        tgt, TRIPLE, CPU, b"", 3, 2, 0
    )
    layout = fn(lib, "LLVMCopyStringRepOfTargetData", C.c_char_p, P)(fn(lib, "LLVMCreateTargetDataLayout", P, P)(tm))
    fn(lib, "LLVMSetDataLayout", None, P, C.c_char_p)(mod, layout)

    sized_lifetimes(lib, ctx, mod)

    msg = C.c_char_p()
    if fn(lib, "LLVMVerifyModule", C.c_int, P, C.c_int, C.POINTER(C.c_char_p))(mod, 2, C.byref(msg)):
        sys.exit("rocm71.py: verify: " + msg.value.decode()[:4000])

    opts = fn(lib, "LLVMCreatePassBuilderOptions", P)()
    for o in ["LoopVectorization", "SLPVectorization", "LoopInterleaving", "LoopUnrolling"]:
        fn(lib, "LLVMPassBuilderOptionsSet" + o, None, P, C.c_int)(opts, 1)
    e = fn(lib, "LLVMRunPasses", P, P, C.c_char_p, P, P)(mod, b"default<O3>", tm, opts)
    if e:
        sys.exit("rocm71.py: passes: " + fn(lib, "LLVMGetErrorMessage", C.c_char_p, P)(e).decode())
    # LLVMObjectFile = 1.
    if fn(lib, "LLVMTargetMachineEmitToFile", C.c_int, P, P, C.c_char_p, C.c_int, C.POINTER(C.c_char_p))(
        tm, mod, obj.encode(), 1, C.byref(err)
    ):
        sys.exit("rocm71.py: emit: " + err.value.decode())


def sized_lifetimes(lib, ctx, mod):
    """Rebuilds LLVM 22's llvm.lifetime.start/end(ptr) calls as LLVM 20's (i64 size, ptr)."""
    get_named = fn(lib, "LLVMGetNamedFunction", P, P, C.c_char_p)
    lookup = fn(lib, "LLVMLookupIntrinsicID", C.c_uint, C.c_char_p, C.c_size_t)
    ptr5 = (P * 1)(fn(lib, "LLVMPointerTypeInContext", P, P, C.c_uint)(ctx, 5))
    decl = fn(lib, "LLVMGetIntrinsicDeclaration", P, P, C.c_uint, C.POINTER(P), C.c_size_t)
    ity = fn(lib, "LLVMIntrinsicGetType", P, P, C.c_uint, C.POINTER(P), C.c_size_t)
    count_params = fn(lib, "LLVMCountParamTypes", C.c_uint, P)
    td = fn(lib, "LLVMGetModuleDataLayout", P, P)(mod)
    builder = fn(lib, "LLVMCreateBuilderInContext", P, P)(ctx)
    first_use = fn(lib, "LLVMGetFirstUse", P, P)
    user = fn(lib, "LLVMGetUser", P, P)
    operand = fn(lib, "LLVMGetOperand", P, P, C.c_uint)
    is_alloca = fn(lib, "LLVMIsAAllocaInst", P, P)
    allocated = fn(lib, "LLVMGetAllocatedType", P, P)
    size_of = fn(lib, "LLVMABISizeOfType", C.c_ulonglong, P, P)
    i64 = fn(lib, "LLVMInt64TypeInContext", P, P)(ctx)
    const_int = fn(lib, "LLVMConstInt", P, P, C.c_ulonglong, C.c_int)
    position = fn(lib, "LLVMPositionBuilderBefore", None, P, P)
    call2 = fn(lib, "LLVMBuildCall2", P, P, P, P, C.POINTER(P), C.c_uint, C.c_char_p)
    erase = fn(lib, "LLVMInstructionEraseFromParent", None, P)
    rename = fn(lib, "LLVMSetValueName2", None, P, C.c_char_p, C.c_size_t)
    delete = fn(lib, "LLVMDeleteFunction", None, P)
    for name in ["llvm.lifetime.start", "llvm.lifetime.end"]:
        old = get_named(mod, (name + ".p5").encode())
        if not old:
            continue
        iid = lookup(name.encode(), len(name))
        fty = ity(ctx, iid, ptr5, 1)
        if count_params(fty) != 2:
            continue  # this LLVM's intrinsic has LLVM 22's form
        rename(old, b"lifetime.llvm22", 15)
        new = decl(mod, iid, ptr5, 1)
        while u := first_use(old):
            call = user(u)
            ptr = operand(call, 0)
            if not is_alloca(ptr):
                sys.exit(f"rocm71.py: {name} of a value that is not an alloca")
            position(builder, call)
            args = (P * 2)(const_int(i64, size_of(td, allocated(ptr)), 0), ptr)
            call2(builder, fty, new, args, 2, b"")
            erase(call)
        delete(old)


if __name__ == "__main__":
    main()
