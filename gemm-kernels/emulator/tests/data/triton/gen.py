#!/usr/bin/env python3
"""Generates the Triton GEMM code objects the emulator's `tests/triton.rs` runs.

Triton 3.9 (`pip install triton==3.9.0`) compiles offline, with no GPU, for gfx942 and
gfx950: `triton.compile(ASTSource(...), target=GPUTarget("hip", arch, 64))`, and the code
object is `compiled.asm["hsaco"]`. This script compiles one GEMM kernel (below) for a set of
configurations and writes `<name>.hsaco` plus `manifest.json`, which records everything a
launcher needs without Python: the runtime kernel arguments in Triton's signature order (and
which were specialised away as constexpr), the LDS size, the grid formula and the block size.

Run from anywhere:  python3 gemm-kernels/emulator/tests/data/triton/gen.py
"""

# The kernel is Triton's matrix-multiplication tutorial kernel
# (python/tutorials/03-matrix-multiplication.py, https://github.com/triton-lang/triton),
# Copyright 2018-2020 Philippe Tillet, Copyright 2020-2022 OpenAI, MIT licence:
#   Permission is hereby granted, free of charge, to any person obtaining a copy of this
#   software and associated documentation files (the "Software"), to deal in the Software
#   without restriction, including without limitation the rights to use, copy, modify, merge,
#   publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
#   to whom the Software is furnished to do so, subject to the following conditions: The above
#   copyright notice and this permission notice shall be included in all copies or substantial
#   portions of the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND.
# with an EVEN_K switch (as in Triton's AMD GEMM kernels, e.g. ROCm/triton
# python/perf-kernels) that drops the K mask when K is a multiple of BLOCK_K.

import json
import os
import re
import subprocess
import sys
import warnings

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
warnings.filterwarnings("ignore")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                  EVEN_K: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


# Triton dtype names per (arch, our dtype): FNUZ fp8 on gfx942, OCP fp8 on gfx950.
TRITON_DTYPE = {
    ("gfx942", "bf16"): "bf16", ("gfx950", "bf16"): "bf16",
    ("gfx942", "f16"): "fp16", ("gfx950", "f16"): "fp16",
    ("gfx942", "e4m3"): "fp8e4b8", ("gfx950", "e4m3"): "fp8e4nv",
    ("gfx942", "e5m2"): "fp8e5b16", ("gfx950", "e5m2"): "fp8e5",
}
# C's dtype: the input dtype for 16-bit inputs, f16 for fp8 (as Triton's tutorial does).
OUT_DTYPE = {"bf16": "bf16", "f16": "f16", "e4m3": "f16", "e5m2": "f16"}
TRITON_OUT = {"bf16": "bf16", "f16": "fp16"}

# (dtype, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, even_k). BLOCK_K as Triton's AMD
# GEMM configurations use it (python/perf-kernels/gemm.py, tutorial 03's HIP configs): 32-64
# for 16-bit inputs, 64-128 for fp8. The 256x256 tiles spill to scratch.
CONFIGS = [
    ("bf16", 64, 64, 64, 4, 2, False),
    ("bf16", 128, 128, 64, 4, 2, True),
    ("bf16", 128, 64, 32, 4, 3, False),
    ("bf16", 128, 256, 64, 8, 2, True),
    ("bf16", 256, 256, 64, 4, 2, False),
    ("bf16", 256, 256, 32, 8, 3, True),
    ("f16", 64, 128, 64, 4, 3, True),
    ("f16", 128, 128, 32, 8, 2, False),
    ("f16", 256, 128, 64, 8, 3, False),
    ("f16", 256, 256, 32, 8, 2, True),
    ("e4m3", 64, 64, 128, 4, 2, True),
    ("e4m3", 128, 128, 128, 8, 2, False),
    ("e4m3", 256, 256, 128, 8, 2, False),
    ("e5m2", 128, 64, 128, 4, 3, False),
    ("e5m2", 128, 128, 64, 8, 3, True),
]
ARCHS = ["gfx942", "gfx950"]
GROUP_M = 8


def runtime_args(dt_in, dt_out, layout="nn"):
    """Triton's signature with the AOT launcher's hints (triton/tools/compile.py): pointers
    and leading dimensions divisible by 16, unit strides specialised to constexpr 1.
    `layout` "nn": B row-major K x N (stride_bn = 1); "tn": B given as W, N x K row-major
    (a Linear layer's weights, C = A * W^T: stride_bk = 1, stride_bn = K at run time)."""
    t_in, t_out = dt_in, dt_out
    b_strides = ([("stride_bk", "i32", "16"), ("stride_bn", "i32", "1")] if layout == "nn"
                 else [("stride_bk", "i32", "1"), ("stride_bn", "i32", "16")])
    return [
        ("a_ptr", "*" + t_in, "16"), ("b_ptr", "*" + t_in, "16"), ("c_ptr", "*" + t_out, "16"),
        ("M", "i32", ""), ("N", "i32", ""), ("K", "i32", ""),
        ("stride_am", "i32", "16"), ("stride_ak", "i32", "1"),
    ] + b_strides + [
        ("stride_cm", "i32", "16"), ("stride_cn", "i32", "1"),
    ]


def segment_sizes(path):
    """(group, private) segment fixed sizes and spill counts from the code object's
    metadata note, as llvm-readelf-22 prints it (LLVM 22 is installed for the tests)."""
    notes = subprocess.run(["llvm-readelf-22", "--notes", path], check=True,
                           capture_output=True, text=True).stdout
    get = lambda key: int(re.search(r"\." + key + r":\s+(\d+)", notes).group(1))
    return {"group_segment_fixed_size": get("group_segment_fixed_size"),
            "private_segment_fixed_size": get("private_segment_fixed_size"),
            "vgpr_spill_count": get("vgpr_spill_count"),
            "sgpr_spill_count": get("sgpr_spill_count")}


def compile_one(arch, dtype, bm, bn, bk, warps, stages, even_k, layout="nn", out_dtype=None,
                extra_options=None):
    t_in = TRITON_DTYPE[(arch, dtype)]
    t_out = TRITON_OUT[out_dtype or OUT_DTYPE[dtype]]
    sig, constexprs, attrs = {}, {}, {}
    args = runtime_args(t_in, t_out, layout)
    for i, (name, ty, hint) in enumerate(args):
        if hint == "1":
            sig[name] = "constexpr"
            constexprs[name] = 1
        else:
            sig[name] = ty
            if hint == "16":
                attrs[(i,)] = [["tt.divisibility", 16]]
    meta = {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": GROUP_M,
            "EVEN_K": even_k}
    for k, v in meta.items():
        sig[k] = "constexpr"
    constexprs.update(meta)
    src = ASTSource(matmul_kernel, sig, constexprs, attrs)
    options = {"num_warps": warps, "num_stages": stages}
    options.update(extra_options or {})
    k = triton.compile(src, target=GPUTarget("hip", arch, 64), options=options)
    return k, args


def kernel_entry(out_dir, name, arch, dtype, out_dtype, bm, bn, bk, warps, stages, even_k, k, args):
    """Writes `<name>.hsaco` and returns its manifest entry (None when its LDS exceeds the arch's)."""
    md = k.metadata
    lds_limit = {"gfx942": 65536, "gfx950": 163840}[arch]
    if md.shared > lds_limit:
        return None
    hsaco = k.asm["hsaco"]
    path = os.path.join(out_dir, name + ".hsaco")
    with open(path, "wb") as f:
        f.write(hsaco)
    seg = segment_sizes(path)
    kernel_args, offset = [], 0
    for (aname, ty, hint) in args:
        if hint == "1":
            continue
        size = 8 if ty.startswith("*") else 4
        offset = (offset + size - 1) // size * size
        kernel_args.append({"name": aname, "type": ty, "offset": offset, "size": size,
                            "divisibility": 16 if hint == "16" else 1})
        offset += size
    # Triton appends two pointers to every kernel: global scratch and profile scratch
    # (null when their sizes are 0, as here).
    for aname in ("global_scratch", "profile_scratch"):
        offset = (offset + 7) // 8 * 8
        kernel_args.append({"name": aname, "type": "*i8", "offset": offset, "size": 8,
                            "divisibility": 1})
        offset += 8
    assert md.global_scratch_size == 0 and md.profile_scratch_size == 0
    unit = [a for (a, _, hint) in args if hint == "1"]
    return {
        "file": name + ".hsaco",
        "kernel": md.name,
        "arch": arch,
        "dtype": dtype,
        "triton_dtype": TRITON_DTYPE[(arch, dtype)],
        "out_dtype": out_dtype,
        "block_m": bm, "block_n": bn, "block_k": bk, "group_m": GROUP_M,
        "num_warps": warps, "num_stages": stages,
        "masked": not even_k,
        "args": kernel_args,
        "constexpr": dict({a: 1 for a in unit},
                          BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
                          GROUP_SIZE_M=GROUP_M, EVEN_K=even_k),
        "kernarg_bytes": offset,
        # Triton allocates its LDS dynamically: the launch passes `dynamic_lds`
        # bytes on top of the descriptor's static size.
        "static_lds": seg["group_segment_fixed_size"],
        "dynamic_lds": md.shared,
        "private_segment_fixed_size": seg["private_segment_fixed_size"],
        "vgpr_spill_count": seg["vgpr_spill_count"],
        "sgpr_spill_count": seg["sgpr_spill_count"],
        "grid": "[cdiv(M, block_m) * cdiv(N, block_n), 1, 1]",
        "block": [warps * 64, 1, 1],
        "layout": ("A row-major MxK (stride_am, 1), B row-major KxN (stride_bk, 1), "
                   "C row-major MxN (stride_cm, 1)") if "stride_bn" in unit else
                  ("A row-major MxK (stride_am, 1), B = W^T with W row-major NxK (1, stride_bn), "
                   "C row-major MxN (stride_cm, 1)"),
        "triton_version": triton.__version__,
    }


def write_manifest(out_dir, entries, **extra):
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(dict({"generator": "gen.py", "triton_version": triton.__version__}, **extra,
                       kernels=entries), f, indent=1)
        f.write("\n")


def main():
    out_dir = os.path.dirname(os.path.abspath(__file__))
    entries = []
    for arch in ARCHS:
        for (dtype, bm, bn, bk, warps, stages, even_k) in CONFIGS:
            k, args = compile_one(arch, dtype, bm, bn, bk, warps, stages, even_k)
            name = (f"triton_{arch}_{dtype}_{bm}x{bn}x{bk}_w{warps}_s{stages}_"
                    f"{'evenk' if even_k else 'masked'}")
            e = kernel_entry(out_dir, name, arch, dtype, OUT_DTYPE[dtype], bm, bn, bk, warps,
                             stages, even_k, k, args)
            if e is None:
                sys.exit(f"{arch} {dtype} {bm}x{bn}x{bk} s{stages}: {k.metadata.shared} bytes of "
                         f"LDS exceed the arch's: Triton would refuse to launch it")
            entries.append(e)
            print(f"{name}: {os.path.getsize(os.path.join(out_dir, e['file']))} bytes, LDS "
                  f"{e['dynamic_lds']}, scratch {e['private_segment_fixed_size']} bytes/lane",
                  file=sys.stderr)
    write_manifest(out_dir, entries)


# ---------------------------------------------------------------------------------------
# Sweep mode (issue 24, `gemm peers`): Triton's best configuration per cell.
#
#   gen.py --sweep DIR [--jobs N]            compile the first pass into DIR (manifest.json)
#   gen.py --sweep DIR --names FILE          compile only the configurations FILE names (one
#                                            kernel name a line: the winners kept as test data)
#   gen.py --pick RESULTS > FILE             the winners of a ranking (`gemm peers --sweep` output)
# peers/sweep.sh runs the whole recipe.
#
# The space, per arch, input dtype (bf16; fp8 e4m3: FNUZ on gfx942, OCP on gfx950) and layout
# ("nn": row-major C = A * B; "tn": the Linear layer C = A * W^T, W row-major N x K):
# BLOCK_M, BLOCK_N in {64, 128, 256}; BLOCK_K in {32, 64, 128} (bf16) or {64, 128} (fp8);
# 4 or 8 warps; 2 or 3 stages; matrix_instr_nonkdim 16 or 32; waves_per_eu 0 or 2; kpack 1 or 2
# (gfx942 only: Triton 3.9 overrides kpack to 1 on gfx950). C is bf16 (as our fp8 plans and the
# blog's ping-pong write it); K is always a multiple of BLOCK_K at the table's sizes (EVEN_K).
# Pruned: 64x64 with 8 warps and 256x256 with 4 warps (one wave per 64x32 or 128x128 of C:
# too little work or heavy spills), and every configuration whose LDS exceeds the arch's
# (Triton refuses to launch it). The first pass takes every (tile, BLOCK_K, warps) with the
# other axes at Triton's defaults (2 stages, nonkdim 16, waves_per_eu 0, kpack 1), plus a
# seeded random sample of SAMPLE more configurations of the whole space.
# ---------------------------------------------------------------------------------------

SWEEP_DTYPES = ["bf16", "e4m3"]
SWEEP_LAYOUTS = ["nn", "tn"]
SAMPLE = 36
SEED = 24


def sweep_name(arch, dtype, layout, bm, bn, bk, warps, stages, nonk, wpe, kpack):
    return (f"triton_{arch}_{dtype}_{layout}_{bm}x{bn}x{bk}_w{warps}_s{stages}_m{nonk}"
            f"_e{wpe}_k{kpack}")


def parse_sweep_name(name):
    m = re.fullmatch(r"triton_(gfx9\d\d)_(\w+?)_(nn|tn)_(\d+)x(\d+)x(\d+)_w(\d+)_s(\d+)_m(\d+)"
                     r"_e(\d+)_k(\d+)", name)
    if not m:
        sys.exit(f"gen.py: {name} is not a sweep kernel name")
    g = m.groups()
    return (g[0], g[1], g[2]) + tuple(int(x) for x in g[3:])


def sweep_space(arch, dtype, layout):
    out = []
    for bm in (64, 128, 256):
        for bn in (64, 128, 256):
            for bk in ((32, 64, 128) if dtype == "bf16" else (64, 128)):
                for warps in (4, 8):
                    if (bm * bn == 64 * 64 and warps == 8) or (bm * bn == 256 * 256 and warps == 4):
                        continue
                    for stages in (2, 3):
                        for nonk in (16, 32):
                            for wpe in (0, 2):
                                for kpack in ((1, 2) if arch == "gfx942" else (1,)):
                                    out.append((arch, dtype, layout, bm, bn, bk, warps, stages,
                                                nonk, wpe, kpack))
    return out


def first_pass():
    import random
    rng = random.Random(SEED)
    chosen = []
    for arch in ARCHS:
        for dtype in SWEEP_DTYPES:
            for layout in SWEEP_LAYOUTS:
                space = sweep_space(arch, dtype, layout)
                base = [c for c in space if c[7:] == (2, 16, 0, 1)]
                rest = [c for c in space if c not in base]
                chosen += base + rng.sample(rest, min(SAMPLE, len(rest)))
    return chosen


def compile_sweep_one(args):
    out_dir, cfg = args
    (arch, dtype, layout, bm, bn, bk, warps, stages, nonk, wpe, kpack) = cfg
    name = sweep_name(*cfg)
    try:
        k, kargs = compile_one(arch, dtype, bm, bn, bk, warps, stages, True, layout=layout,
                               out_dtype="bf16",
                               extra_options={"matrix_instr_nonkdim": nonk, "waves_per_eu": wpe,
                                              "kpack": kpack})
    except Exception as e:  # noqa: BLE001 - a configuration Triton refuses is a result
        return name, None, f"compile failed: {str(e).splitlines()[0][:160] if str(e) else type(e).__name__}"
    e = kernel_entry(out_dir, name, arch, dtype, "bf16", bm, bn, bk, warps, stages, True, k, kargs)
    if e is None:
        return name, None, f"LDS {k.metadata.shared} bytes exceeds the arch's"
    e.update({"layout_kind": layout, "matrix_instr_nonkdim": nonk, "waves_per_eu": wpe,
              "kpack": kpack})
    return name, e, None


def sweep(out_dir, names_file, jobs):
    import multiprocessing
    os.makedirs(out_dir, exist_ok=True)
    if names_file:
        with open(names_file) as f:
            cfgs = [parse_sweep_name(line.split()[0]) for line in f
                    if line.strip() and not line.startswith("#")]
    else:
        cfgs = first_pass()
    entries, refused = [], []
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for i, (name, e, why) in enumerate(pool.imap(compile_sweep_one,
                                                     [(out_dir, c) for c in cfgs])):
            print(f"[{i + 1}/{len(cfgs)}] {name}: {why or 'ok'}", file=sys.stderr)
            if e is None:
                refused.append({"name": name, "why": why})
            else:
                entries.append(e)
    write_manifest(out_dir, entries, refused=refused)


# (shape, how many) kept per arch, dtype and layout from the ranking (`gen.py --pick`).
KEEP = [("8192x8192x8192", 2), ("4096x4096x4096", 1), ("2048x2048x2048", 1), ("1024x1024x1024", 1)]


def pick(results):
    """Prints the winners of a `gemm peers --sweep` ranking (winners.txt): per arch, dtype and
    layout the top KEEP of each shape, configurations with identical predictions counted once."""
    res = {}
    with open(results) as f:
        for line in f:
            if line.startswith("# top") or line.startswith("# winners"):
                break
            p = line.split()
            if line.startswith("#") or len(p) < 6 or p[4].startswith("ours:"):
                continue
            try:
                tf = float(p[5])
            except ValueError:
                tf = float("-inf")
            res.setdefault(tuple(p[:3]), {}).setdefault(p[4], {})[p[3]] = tf
    print("# Triton 3.9 sweep winners kept as test data for gemm peers: per arch, dtype and layout the")
    print("# top 2 at 8192^3 and the top 1 at 4096^3, 2048^3 and 1024^3 of the first pass")
    print("# (sweep-results.txt), configurations with identical predictions at every size counted once.")
    for combo, names in res.items():
        chosen, seen = [], set()
        for shape, k in KEEP:
            for n in sorted(names, key=lambda n: -names[n].get(shape, -1e9))[:k]:
                sig = tuple(names[n].get(x) for x in sorted(names[n]))
                if n not in chosen and sig not in seen:
                    chosen.append(n)
                    seen.add(sig)
        print("# " + " ".join(combo))
        for n in chosen:
            print(n)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--pick":
        pick(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "--sweep":
        import argparse
        ap = argparse.ArgumentParser()
        ap.add_argument("--sweep", required=True)
        ap.add_argument("--names")
        ap.add_argument("--jobs", type=int, default=os.cpu_count())
        a = ap.parse_args()
        sweep(a.sweep, a.names, a.jobs)
    else:
        main()
