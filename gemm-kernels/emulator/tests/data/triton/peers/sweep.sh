#!/usr/bin/env bash
# The Triton 3.9 sweep of `gemm peers` (issue 24), end to end:
#   1. compile the first pass (gen.py --sweep: ~600 configurations, ~5 min on 2 cores);
#   2. rank every configuration with the timing model at 1024..8192 cubed (`gemm peers --sweep`;
#      ~2150 predictions: 455 s on 32 cores; set JOBS);
#   3. pick the winners (gen.py --pick) and compile only them into this folder with their manifest.
# usage: sweep.sh [WORKDIR]   (needs triton==3.9.0, llvm-readelf-22 and a release `gemm`: $GEMM,
#                              default target/release/gemm of the repository)
set -euo pipefail
here=$(cd -- "$(dirname -- "$0")" && pwd)
root=$(cd -- "$here/../../../../../.." && pwd)
work=${1:-$(mktemp -d)}
gemm=${GEMM:-$root/target/release/gemm}
python=${PYTHON:-python3}
"$python" "$here/../gen.py" --sweep "$work/sweep" --jobs "${COMPILE_JOBS:-2}"
"$gemm" peers --sweep --triton-dir "$work/sweep" \
    --shapes 1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192 --top 3 \
    --jobs "${JOBS:-$(nproc)}" --out "$work/sweep-results.txt" >/dev/null
"$python" "$here/../gen.py" --pick "$work/sweep-results.txt" >"$here/winners.txt"
rm -f "$here"/*.hsaco
"$python" "$here/../gen.py" --sweep "$here" --names "$here/winners.txt" --jobs "${COMPILE_JOBS:-2}"
echo "sweep.sh: winners in $here; every configuration's prediction in $work/sweep-results.txt" \
     "(the committed sweep-results.txt adds the header and the LDS refusals)"
