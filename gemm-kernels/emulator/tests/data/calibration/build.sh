#!/usr/bin/env bash
# Rebuilds every calibration code object (co/*.co) from the sources kept here, offline:
#   HIP kernels (hip/)      with clang-22, device-only, -O3, code object v5, gfx950;
#   the blog's ping-pong kernel: clang-22's front end, then ROCm 7.1.0's LLVM (the compiler
#                           release the blog measured with; PyPI rocm-llvm-python==7.1.0.555.43)
#                           optimises and generates code through rocm71.py, ld.lld-22 links;
#   Gluon kernels (gluon/)  with Triton 3.9.0 (pip) through gluon/compile_gluon.py.
# usage: build.sh           rebuild co/ in place
#        build.sh --check   rebuild into a temporary directory and compare byte for byte
#                           with the committed co/ (exit 1 on any difference)
#        build.sh --check --clang-only
#                           the same for the kernels clang-22 builds alone (what the test
#                           suite runs: tests need no Python; the ROCm-LLVM and Gluon ones
#                           are checked by hand with the full --check)
#        PINGPONG_ONLY_NEW=1 build.sh
#                           build only the ping-pong code objects co/ lacks, then stop
# vLLM's wvSplitK (gfx942): its source is not kept here. $VLLM_SDIST names vllm-0.9.0.tar.gz
# (PyPI's sdist); without it the script downloads that file from PyPI's file host; either way
# its SHA-256 and that of csrc/rocm/skinny_gemms.cu in it are checked, and the device part
# (lines 16-112 and 261-528) is compiled through hip/vllm_wvsplitk.hip. `--clang-only` checks
# it only where $VLLM_SDIST is set (the test suite runs offline).
# Python: $PYTHON (default python3) with triton==3.9.0 for Gluon; $ROCM71_PYTHON (default
# $PYTHON) with rocm-llvm-python==7.1.0.555.43, or $ROCM71_LLVM naming its librocmllvm.so
# (the wheel is a zip: unzip it where pip cannot install it); rocm71.py checks its SHA-256.
# -cuid fixes the compilation-unit id clang would otherwise derive from the paths, so the
# code objects are byte-identical wherever they are built.
# The list of code objects is the one the manifests (kernels/*.toml) name; this script is
# the recipe for each of them.
set -euo pipefail
here=$(cd -- "$(dirname -- "$0")" && pwd)
cd "$here"

mode=build
[[ ${1:-} == --check ]] && mode=check
clang_only=0
[[ ${2:-} == --clang-only ]] && clang_only=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ $mode == check ]]; then
    out=$work/co
    mkdir "$out"
else
    out=$here/co
    mkdir -p "$out"
fi

clang=${CLANG:-clang-22}
command -v "$clang" >/dev/null || { echo "build.sh: $clang not found (Debian package clang-22)" >&2; exit 2; }
python=${PYTHON:-python3}
rocm71_python=${ROCM71_PYTHON:-$python}
lld=${LLD:-ld.lld-22}

hipflags=(-x hip -std=c++20 --offload-arch=gfx950 -nogpulib -nogpuinc --cuda-device-only
    --no-gpu-bundle-output -O3 -mcode-object-version=5 -Ihip/include)

hip() { # hip NAME SOURCE [DEFINES...]
    local name=$1 src=$2
    shift 2
    "$clang" "${hipflags[@]}" -cuid="$name" "$@" -o "$out/$name.co" "hip/$src"
}

vllm_url=https://files.pythonhosted.org/packages/26/e6/b4703aa8a0ce74984471cbe36b0f8c715e198ff68ca19eb0b22600703488/vllm-0.9.0.tar.gz
vllm_sdist_sha=78e3e71fbbd1adfc3b7095b4ab4b6d341c0cffc9e8b96f0c74db275d60108902
vllm_file_sha=3a918cf44c3d894756bda6f16b30aecf12291f25db7d580edc46e4984fd099bc
vllm_wvsplitk() { # the device part of vLLM v0.9.0's skinny_gemms.cu, for gfx942
    local sdist=${VLLM_SDIST:-}
    if [[ -z $sdist ]]; then
        sdist=$work/vllm-0.9.0.tar.gz
        curl -sSfL -o "$sdist" "$vllm_url"
    fi
    echo "$vllm_sdist_sha  $sdist" | sha256sum -c --quiet - || { echo "build.sh: $sdist is not vllm-0.9.0.tar.gz" >&2; exit 2; }
    tar -xzf "$sdist" -C "$work" vllm-0.9.0/csrc/rocm/skinny_gemms.cu
    local f=$work/vllm-0.9.0/csrc/rocm/skinny_gemms.cu
    echo "$vllm_file_sha  $f" | sha256sum -c --quiet - || { echo "build.sh: skinny_gemms.cu differs" >&2; exit 2; }
    sed -n '16,112p;261,528p' "$f" >"$work/vllm_skinny_device.inc"
    "$clang" "${hipflags[@]/gfx950/gfx942}" -I"$work" -cuid=vllm_wvsplitk -o "$out/vllm_wvsplitk.co" hip/vllm_wvsplitk.hip
}

rocm71() { # rocm71 NAME SOURCE [DEFINES...]: clang-22 front end, ROCm 7.1.0 LLVM (rocm71.py)
    local name=$1 src=$2
    shift 2
    "$clang" "${hipflags[@]}" -cuid="$name" "$@" -Xclang -disable-llvm-passes -emit-llvm -S \
        -o "$work/$name.ll" "hip/$src"
    "$rocm71_python" rocm71.py "$work/$name.ll" "$work/$name.o"
    "$lld" --no-undefined -shared -o "$out/$name.co" "$work/$name.o"
}

gluon() { # gluon NAME (file gluon/NAME.py, kernel NAME)
    TRITON_DISABLE_LINE_INFO=1 "$python" gluon/compile_gluon.py "gluon/$1.py" "$1" gfx950 "$out/$1.co" \
        2> >(grep -v -E 'leaked|nanobind|refleak|skipped remainder' >&2) >/dev/null
}

# AMD ROCm blog "FP8 GEMM Optimization on AMD CDNA4" (MI355X).
hip blog_naive blog_naive.hip
hip lds_tiled_per_wave lds_tiled_per_wave.hip
# vLLM's wvSplitK (MI300X, rocm-libraries PR 12329's decode table).
needs_sdist=(vllm_wvsplitk)
if [[ $clang_only == 0 || -n ${VLLM_SDIST:-} ]]; then
    vllm_wvsplitk
fi
# Built with ROCm 7.1.0's LLVM: clang-22 spills it (README, "Known differences").
# The published sizes (256x256x512 is the test's), then the sizes of `gemm peers` (issue 24):
# M = N = K 1024..16384 and Llama-3.1-70B prefill, M = 4096 and 16384 tokens, N x K = 10240 x
# 8192, 8192 x 8192, 57344 x 8192, 8192 x 28672 (A M x K and B N x K, both K-contiguous: the
# Linear layout x * W^T).
pingpong_sizes=("256 256 512" "4096 4096 4096" "8192 8192 8192"
    "1024 1024 1024" "2048 2048 2048" "16384 16384 16384")
for m in 4096 16384; do
    for nk in "10240 8192" "8192 8192" "57344 8192" "8192 28672"; do
        pingpong_sizes+=("$m $nk")
    done
done
needs_python=()
for s in "${pingpong_sizes[@]}"; do
    read -r m n k <<<"$s"
    needs_python+=("blog_pingpong_${m}x${n}x${k}")
done
if [[ $clang_only == 0 ]]; then
    for s in "${pingpong_sizes[@]}"; do
        read -r m n k <<<"$s"
        [[ -n ${PINGPONG_ONLY_NEW:-} && -e co/blog_pingpong_${m}x${n}x${k}.co ]] && continue
        rocm71 "blog_pingpong_${m}x${n}x${k}" blog_pingpong.hip -DCAL_M="$m" -DCAL_N="$n" -DCAL_K="$k"
    done
    [[ -n ${PINGPONG_ONLY_NEW:-} ]] && { echo "build.sh: ping-pong code objects built"; exit 0; }
fi

# ROCm/gfx950-gluon-tutorials a16w16 (MI355X).
needs_python+=(v0_naive v2_async_copy v3_lds_padding v4_global_prefetch v5_local_prefetch)
if [[ $clang_only == 0 ]]; then
    for v in v0_naive v2_async_copy v3_lds_padding v4_global_prefetch v5_local_prefetch; do
        gluon "$v"
    done
fi

if [[ $mode == check ]]; then
    status=0
    for f in "$out"/*.co; do
        b=$(basename "$f")
        if ! cmp -s "$f" "co/$b"; then
            echo "build.sh --check: co/$b differs from a fresh build" >&2
            status=1
        fi
    done
    for f in co/*.co; do
        [[ $clang_only == 1 && " ${needs_python[*]} " == *" $(basename "$f" .co) "* ]] && continue
        [[ $clang_only == 1 && -z ${VLLM_SDIST:-} && " ${needs_sdist[*]} " == *" $(basename "$f" .co) "* ]] && continue
        [[ -e $out/$(basename "$f") ]] || { echo "build.sh --check: co/$(basename "$f") has no recipe" >&2; status=1; }
    done
    [[ $status == 0 ]] && echo "build.sh --check: all $(ls "$out"/*.co | wc -l) code objects reproduce"
    exit $status
fi
echo "build.sh: built $(ls "$out"/*.co | wc -l) code objects in $out"
