#!/usr/bin/env bash
# Rebuilds every calibration code object (co/*.co) from the sources kept here, offline:
#   HIP kernels (hip/)      with clang-22, device-only, -O3, code object v5, gfx950;
#   Gluon kernels (gluon/)  with Triton 3.9.0 (pip) through gluon/compile_gluon.py.
# usage: build.sh           rebuild co/ in place
#        build.sh --check   rebuild into a temporary directory and compare byte for byte
#                           with the committed co/ (exit 1 on any difference)
#        build.sh --check --hip-only
#                           the same for the clang-built kernels alone (what the test suite
#                           runs: tests need no Python; the Gluon ones are checked by hand)
# -cuid fixes the compilation-unit id clang would otherwise derive from the paths, so the
# code objects are byte-identical wherever they are built.
# The list of code objects is the one the manifests (kernels/*.toml) name; this script is
# the recipe for each of them.
set -euo pipefail
here=$(cd -- "$(dirname -- "$0")" && pwd)
cd "$here"

mode=build
[[ ${1:-} == --check ]] && mode=check
hip_only=0
[[ ${2:-} == --hip-only ]] && hip_only=1
if [[ $mode == check ]]; then
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
else
    out=$here/co
    mkdir -p "$out"
fi

clang=${CLANG:-clang-22}
command -v "$clang" >/dev/null || { echo "build.sh: $clang not found (Debian package clang-22)" >&2; exit 2; }
python=${PYTHON:-python3}

hip() { # hip NAME SOURCE [DEFINES...]
    local name=$1 src=$2
    shift 2
    "$clang" -x hip -std=c++20 --offload-arch=gfx950 -nogpulib -nogpuinc --cuda-device-only \
        --no-gpu-bundle-output -O3 -mcode-object-version=5 -Ihip/include -cuid="$name" "$@" \
        -o "$out/$name.co" "hip/$src"
}

gluon() { # gluon NAME (file gluon/NAME.py, kernel NAME)
    TRITON_DISABLE_LINE_INFO=1 "$python" gluon/compile_gluon.py "gluon/$1.py" "$1" gfx950 "$out/$1.co" \
        2> >(grep -v -E 'leaked|nanobind|refleak|skipped remainder' >&2) >/dev/null
}

# AMD ROCm blog "FP8 GEMM Optimization on AMD CDNA4" (MI355X).
hip blog_naive blog_naive.hip
hip blog_lds_tiled blog_lds_tiled.hip -DTILE=16
for s in "256 256 512" "4096 4096 4096" "8192 8192 8192"; do
    read -r m n k <<<"$s"
    hip "blog_pingpong_${m}x${n}x${k}" blog_pingpong.hip -DCAL_M="$m" -DCAL_N="$n" -DCAL_K="$k"
done

# ROCm/gfx950-gluon-tutorials a16w16 (MI355X).
if [[ $hip_only == 0 ]]; then
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
        [[ $hip_only == 1 && $(basename "$f") != blog_* ]] && continue
        [[ -e $out/$(basename "$f") ]] || { echo "build.sh --check: co/$(basename "$f") has no recipe" >&2; status=1; }
    done
    [[ $status == 0 ]] && echo "build.sh --check: all $(ls "$out"/*.co | wc -l) code objects reproduce"
    exit $status
fi
echo "build.sh: built $(ls "$out"/*.co | wc -l) code objects in $out"
