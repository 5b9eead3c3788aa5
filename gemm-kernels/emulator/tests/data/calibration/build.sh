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
#        HK_ONLY=1 build.sh [--check]
#                           build (or check) only the HipKittens code objects
#        HK_ONLY_NEW=1 build.sh
#                           build only the HipKittens code objects co/ lacks, then stop
#                           (sources: $HIPKITTENS_SRC, $ROCM_HIP_SRC, $ROCM_CLR_SRC, below)
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

# HK_ONLY=1 and HK_ONLY_NEW=1 skip every kernel but HipKittens' (below).
hk_only=${HK_ONLY:-}${HK_ONLY_NEW:-}
# AMD ROCm blog "FP8 GEMM Optimization on AMD CDNA4" (MI355X).
if [[ -z $hk_only ]]; then
    hip blog_naive blog_naive.hip
    hip lds_tiled_per_wave lds_tiled_per_wave.hip
fi
# vLLM's wvSplitK (MI300X, rocm-libraries PR 12329's decode table).
needs_sdist=(vllm_wvsplitk)
if [[ -z $hk_only ]] && [[ $clang_only == 0 || -n ${VLLM_SDIST:-} ]]; then
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
if [[ $clang_only == 0 && -z $hk_only ]]; then
    for s in "${pingpong_sizes[@]}"; do
        read -r m n k <<<"$s"
        [[ -n ${PINGPONG_ONLY_NEW:-} && -e co/blog_pingpong_${m}x${n}x${k}.co ]] && continue
        rocm71 "blog_pingpong_${m}x${n}x${k}" blog_pingpong.hip -DCAL_M="$m" -DCAL_N="$n" -DCAL_K="$k"
    done
    [[ -n ${PINGPONG_ONLY_NEW:-} ]] && { echo "build.sh: ping-pong code objects built"; exit 0; }
fi

# HipKittens' bf16 and fp8 GEMMs (issue 24; MI355X figures published in HipKittens' analysis/).
# Neither HipKittens (MIT) nor ROCm's HIP headers (MIT) are kept here: hk_src takes the files
# below at pinned commits and checks the SHA-256 of the whole set. Each comes from $VAR, a git
# directory holding the commit (a clone or bare mirror: `git archive`) or a directory holding
# those files of it, else from GitHub's archive of the commit (codeload.github.com).
#   HIPKITTENS_SRC  HazyResearch/HipKittens f09e9685c4c6: LICENSE, include/, the five mi350x
#                   bf16 kernels (analysis/bf16_gemm/mi350x/kernel_<S>.cpp), the 8-wave and
#                   4-wave fp8 GEMMs (kernels/gemm/fp8fp32/FP8_{8,4}wave/)
#   ROCM_HIP_SRC    ROCm/HIP c5e11fcac824 (VERSION 6.3.0): LICENSE.txt, include/hip/
#   ROCM_CLR_SRC    ROCm/clr f9f995c6d0ae (the same weeks): LICENCE, hipamd/include/hip/amd_detail/
# The HIP tree clang-22 sees (--rocm-path) is include/hip of both, a hip_version.h and the
# bin/.hipVersion that make clang's driver take it as a HIP installation (6.3.0, from VERSION).
# Flags beyond hipflags: HipKittens' own for CDNA4 (-DKITTENS_CDNA4 -DHIP_ENABLE_WARP_SYNC_BUILTINS
# -ffast-math, -I<hip>/include/hip for its <hip_bf16.h>), and three that clang-22 needs with
# ROCm 6.3's headers: -D__AMDGCN_WAVEFRONT_SIZE=64 (clang 22 no longer predefines it; gfx950 is
# wave64), -Wno-invalid-constexpr (HipKittens' constexpr packing<half> builds a __half2, whose
# constructor ROCm 6.3 does not make constexpr; no bf16 or fp8 code uses it), and
# hip/include/hk_ockl_shim.h (the four ockl work-item functions the headers call, as ROCm's
# device library defines them for code object v5; -nogpulib links no device library).
# Like the ping-pong, clang-22's front end and ROCm 7.1.0's LLVM (rocm71.py): HipKittens
# measured with ROCm 7.0's hipcc; clang-22's own back end spills the fp8 kernel (README).
hk_commit=f09e9685c4c6aaa41fb3ebd4fe4ca664938589e1
hip_commit=c5e11fcac8249ce4f7e70157588ff9661a870b59
clr_commit=f9f995c6d0aecec28debd3db0f41df0c15ec003d
hk_bf16_files=()
for s in 1024 2048 4096 8192 16384; do hk_bf16_files+=("analysis/bf16_gemm/mi350x/kernel_$s.cpp"); done
hk_files=(LICENSE include "${hk_bf16_files[@]}" kernels/gemm/fp8fp32/FP8_8wave/8_wave.cu
    kernels/gemm/fp8fp32/FP8_8wave/utils.cpp kernels/gemm/fp8fp32/FP8_4wave/4_wave.cu
    kernels/gemm/fp8fp32/FP8_4wave/utils.cpp)
hk_src() { # hk_src NAME OWNER/REPO COMMIT TREE-SHA256 VAR PATHS...: $work/NAME/PATHS of REPO at COMMIT
    local name=$1 repo=$2 commit=$3 sha=$4 var=$5
    shift 5
    local from=${!var:-} dst=$work/$name
    mkdir -p "$dst"
    if [[ -n $from ]] && git -C "$from" cat-file -e "$commit^{commit}" 2>/dev/null; then
        git -C "$from" archive "$commit" "$@" | tar -x -C "$dst"
    elif [[ -n $from ]]; then
        (cd "$from" && tar -c "$@") | tar -x -C "$dst"
    else
        local top=${repo#*/}-$commit
        curl -sSfL "https://codeload.github.com/$repo/tar.gz/$commit" |
            tar -xz -C "$dst" --strip-components=1 "${@/#/$top/}"
    fi
    local got
    got=$(cd "$dst" && find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
    [[ $got == "$sha" ]] || {
        echo "build.sh: $name: the files of $repo (\$$var) are not those of commit $commit (SHA-256 $got)" >&2
        exit 2
    }
}
hk_ready=0
hk_prepare() {
    [[ $hk_ready == 1 ]] && return
    hk_src hk HazyResearch/HipKittens $hk_commit 3dcd43798d56904035faa634fefc9616a30b30f7cd8a15f98618a89318d94120 \
        HIPKITTENS_SRC "${hk_files[@]}"
    hk_src hip ROCm/HIP $hip_commit 74a3cbf82b6a436166933810a6549d4a026309840a6ecac62fb9e7281c65f33a \
        ROCM_HIP_SRC LICENSE.txt include/hip
    hk_src clr ROCm/clr $clr_commit 35f3f5052ff9d563d21fee1a5affd8c78639e485fe943889b1a612f202ba29f5 \
        ROCM_CLR_SRC LICENCE hipamd/include/hip/amd_detail
    local r=$work/rocm
    mkdir -p "$r/include" "$r/bin"
    cp -r "$work/hip/include/hip" "$r/include/"
    cp -r "$work/clr/hipamd/include/hip/amd_detail" "$r/include/hip/"
    printf '#pragma once\n#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 3\n#define HIP_VERSION_PATCH 0\n#define HIP_VERSION_GITHASH ""\n#define HIP_VERSION_BUILD_ID 0\n#define HIP_VERSION_BUILD_NAME ""\n#define HIP_VERSION (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)\n' \
        >"$r/include/hip/hip_version.h"
    printf 'HIP_VERSION_MAJOR=6\nHIP_VERSION_MINOR=3\nHIP_VERSION_PATCH=0\n' >"$r/bin/.hipVersion"
    hk_ready=1
}
hk_build() { # hk_build NAME SOURCE INC-DIR M N K: clang-22 front end, ROCm 7.1.0 LLVM, ld.lld-22
    local name=$1 src=$2 inc=$3 m=$4 n=$5 k=$6
    "$clang" -x hip -std=c++20 --offload-arch=gfx950 -nogpulib --cuda-device-only --no-gpu-bundle-output \
        -O3 -mcode-object-version=5 --rocm-path="$work/rocm" -I"$work/rocm/include/hip" -I"$inc" \
        -I"$work/hk/include" -DKITTENS_CDNA4 -DHIP_ENABLE_WARP_SYNC_BUILTINS -ffast-math -w \
        -D__AMDGCN_WAVEFRONT_SIZE=64 -Wno-invalid-constexpr -include hip/include/hk_ockl_shim.h \
        -DCAL_M="$m" -DCAL_N="$n" -DCAL_K="$k" -cuid="$name" \
        -Xclang -disable-llvm-passes -emit-llvm -S -o "$work/$name.ll" "hip/$src"
    "$rocm71_python" rocm71.py "$work/$name.ll" "$work/$name.o"
    "$lld" --no-undefined -shared -o "$out/$name.co" "$work/$name.o"
}
hk_bf16() { # hk_bf16 TILE FROM-SIZE M N K: kernel_<FROM-SIZE>.cpp at M x N x K
    local tile=$1 from=$2 m=$3 n=$4 k=$5
    local inc=$work/hk_bf16_${m}x${n}x${k}
    mkdir -p "$inc"
    local f=$work/hk/analysis/bf16_gemm/mi350x/kernel_$from.cpp
    local cut
    cut=$(grep -n '^void dispatch_micro' "$f" | cut -d: -f1)
    sed -e '/^#include "pyutils\/pyutils.cuh"/d' -e "$cut,\$d" \
        -e 's/^#define M [0-9]*$/#define M CAL_M/' -e 's/^#define K [0-9]*$/#define K CAL_K/' \
        -e 's/^#define N [0-9]*$/#define N CAL_N/' "$f" >"$inc/hk_bf16_kernel.inc"
    [[ $(grep -c '^#define [MNK] CAL_[MNK]$' "$inc/hk_bf16_kernel.inc") == 3 ]] || { echo "build.sh: $f: no M/N/K defines" >&2; exit 2; }
    hk_build "hk_bf16_${tile}_${m}x${n}x${k}" hk_bf16.hip "$inc" "$m" "$n" "$k"
}
hk_fp8() { # hk_fp8 M N K: the 8-wave fp8 GEMM at M x N x K
    local d=$work/hk/kernels/gemm/fp8fp32/FP8_8wave
    [[ -e $d/hk_fp8_8wave_kernel.inc ]] || sed -n '11,252p' "$d/8_wave.cu" >"$d/hk_fp8_8wave_kernel.inc"
    hk_build "hk_fp8_8wave_${1}x${2}x${3}" hk_fp8_8wave.hip "$d" "$1" "$2" "$3"
}
hk_fp8_4w() { # hk_fp8_4w M N K: the 4-wave fp8 GEMM at M x N x K
    local d=$work/hk/kernels/gemm/fp8fp32/FP8_4wave
    [[ -e $d/hk_fp8_4wave_kernel.inc ]] || sed -n '13,817p' "$d/4_wave.cu" >"$d/hk_fp8_4wave_kernel.inc"
    hk_build "hk_fp8_4wave_${1}x${2}x${3}" hk_fp8_4wave.hip "$d" "$1" "$2" "$3"
}
# Sizes: HipKittens' (M = N = K 1024..16384: BLOCK_SIZE 128 in kernel_1024/2048, 256 from 4096 on,
# so two manifests), the Llama-3.1-70B prefill shapes of `gemm peers` (from kernel_8192.cpp: the
# 256 tile needs M, N multiples of 256 and K of 128) and the tests' small sizes.
hk_bf16_jobs=("128 1024 1024 1024 1024" "128 2048 2048 2048 2048" "128 1024 256 256 256"
    "256 4096 4096 4096 4096" "256 8192 8192 8192 8192" "256 16384 16384 16384 16384" "256 8192 512 512 512")
hk_fp8_jobs=("1024 1024 1024" "2048 2048 2048" "4096 4096 4096" "8192 8192 8192" "16384 16384 16384" "512 512 512")
# The 4-wave kernel's XCD remap (wgid % 8 * (grid / 8) + wgid / 8) needs a grid of a multiple of
# 8 workgroups: its test size is 512 x 1024 x 512 (2 x 4 tiles of 256).
hk_fp8_4w_jobs=("1024 1024 1024" "2048 2048 2048" "4096 4096 4096" "8192 8192 8192" "16384 16384 16384" "512 1024 512")
for m in 4096 16384; do
    for nk in "10240 8192" "8192 8192" "57344 8192" "8192 28672"; do
        hk_bf16_jobs+=("256 8192 $m $nk")
        hk_fp8_jobs+=("$m $nk")
        hk_fp8_4w_jobs+=("$m $nk")
    done
done
for j in "${hk_bf16_jobs[@]}"; do
    read -r t _ m n k <<<"$j"
    needs_python+=("hk_bf16_${t}_${m}x${n}x${k}")
done
for j in "${hk_fp8_jobs[@]}"; do
    read -r m n k <<<"$j"
    needs_python+=("hk_fp8_8wave_${m}x${n}x${k}")
done
for j in "${hk_fp8_4w_jobs[@]}"; do
    read -r m n k <<<"$j"
    needs_python+=("hk_fp8_4wave_${m}x${n}x${k}")
done
if [[ $clang_only == 0 ]]; then
    for j in "${hk_bf16_jobs[@]}"; do
        read -r t from m n k <<<"$j"
        [[ -n ${HK_ONLY_NEW:-} && -e co/hk_bf16_${t}_${m}x${n}x${k}.co ]] && continue
        hk_prepare
        hk_bf16 "$t" "$from" "$m" "$n" "$k"
    done
    for j in "${hk_fp8_jobs[@]}"; do
        read -r m n k <<<"$j"
        [[ -n ${HK_ONLY_NEW:-} && -e co/hk_fp8_8wave_${m}x${n}x${k}.co ]] && continue
        hk_prepare
        hk_fp8 "$m" "$n" "$k"
    done
    for j in "${hk_fp8_4w_jobs[@]}"; do
        read -r m n k <<<"$j"
        [[ -n ${HK_ONLY_NEW:-} && -e co/hk_fp8_4wave_${m}x${n}x${k}.co ]] && continue
        hk_prepare
        hk_fp8_4w "$m" "$n" "$k"
    done
    [[ -n ${HK_ONLY_NEW:-} ]] && { echo "build.sh: HipKittens code objects built"; exit 0; }
fi

# ROCm/gfx950-gluon-tutorials a16w16 (MI355X).
needs_python+=(v0_naive v2_async_copy v3_lds_padding v4_global_prefetch v5_local_prefetch)
if [[ $clang_only == 0 && -z $hk_only ]]; then
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
        [[ -n $hk_only && $(basename "$f") != hk_* ]] && continue
        [[ -e $out/$(basename "$f") ]] || { echo "build.sh --check: co/$(basename "$f") has no recipe" >&2; status=1; }
    done
    [[ $status == 0 ]] && echo "build.sh --check: all $(ls "$out"/*.co | wc -l) code objects reproduce"
    exit $status
fi
echo "build.sh: built $(ls "$out"/*.co | wc -l) code objects in $out"
