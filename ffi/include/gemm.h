/*
 * gemm.h: the C ABI of the AMD GEMM library.
 *
 * C = alpha * op(A) * op(B) + beta * C, as in BLAS, for f32, f16, bf16 and the fp8 kinds of
 * gfx942 (FNUZ) and gfx950 (OCP), on every device of a context: AMD GPUs through HIP, and the
 * CPU everywhere. Every function returns a gemm_status_t; gemm_last_error_message() explains
 * the last failure on the calling thread. No function aborts or unwinds into C.
 */

#ifndef GEMM_H
#define GEMM_H

/* Generated from ffi/src/lib.rs by cbindgen (test `header_is_in_step`); do not edit. Regenerate with GEMM_BLESS=1 cargo test -p gemm-ffi. */

#include <stddef.h>
#include <stdint.h>
/*
 Checks once, at run time, that the library this program loaded was built with the header it was
 compiled against (ABI version and struct sizes; see GEMM_ABI_VERSION): GEMM_STATUS_SUCCESS, or
 GEMM_STATUS_INVALID_VALUE and gemm_last_error_message() naming what differs.
 */
#define GEMM_ABI_CHECK() gemm_abi_check(GEMM_ABI_VERSION, sizeof(gemm_problem_t), sizeof(gemm_epilogue_t), sizeof(gemm_fp8_scales_t), sizeof(gemm_device_info_t))

/*
 Device kinds in `gemm_device_info_t.kind`.
 */
#define GEMM_DEVICE_HOST 0

#define GEMM_DEVICE_HIP 1

#define GEMM_DEVICE_EMU 2

#define GEMM_DEVICE_OTHER 3

/*
 The library's version, `GEMM_VERSION_MAJOR.GEMM_VERSION_MINOR.GEMM_VERSION_PATCH` (the crates'
 version; a test keeps these in step with Cargo.toml). Compare the header's with the loaded
 library's `gemm_version()`.
 */
#define GEMM_VERSION_MAJOR 0

#define GEMM_VERSION_MINOR 1

#define GEMM_VERSION_PATCH 0

/*
 The version as one number for `#if`: MAJOR * 10000 + MINOR * 100 + PATCH.
 */
#define GEMM_VERSION 100

/*
 The ABI version this header describes. How the ABI grows:
 * a struct passed by pointer (gemm_problem_t, gemm_epilogue_t, gemm_fp8_scales_t,
   gemm_device_info_t) is **frozen once released**: its fields, order and size never change.
   New fields come in a new versioned struct (`gemm_problem_v2_t`, say) whose first member is
   `size_t size`, set by its init function, taken by new entry points; the old struct and the
   functions that take it keep working unchanged. New functions and new constants may be added
   at any time and do not change the ABI version;
 * anything else (a field removed or reordered, a signature changed, a status value renumbered)
   increments GEMM_ABI_VERSION.

 A program calls `GEMM_ABI_CHECK()` once (or compares `gemm_abi_version()` with
 GEMM_ABI_VERSION) so that a header and a library that disagree give a status and a message
 instead of structs read with the wrong layout.
 */
#define GEMM_ABI_VERSION 1

/*
 Bytes of a tensor-parallel unique id (`NCCL_UNIQUE_ID_BYTES`).
 */
#define GEMM_TP_UNIQUE_ID_BYTES 128

/*
 Status of every call. Values are fixed: they are part of the ABI.
 */
typedef enum {
  GEMM_STATUS_SUCCESS = 0,
  /*
   A required pointer was NULL.
   */
  GEMM_STATUS_NULL_POINTER = 1,
  /*
   Shapes do not fit together, or a buffer is smaller than the problem needs.
   */
  GEMM_STATUS_INVALID_SIZE = 2,
  /*
   A leading dimension is smaller than its matrix needs.
   */
  GEMM_STATUS_INVALID_LEADING_DIM = 3,
  /*
   A size computation overflows.
   */
  GEMM_STATUS_SIZE_OVERFLOW = 4,
  /*
   The dtype combination is not supported (by the library or the device).
   */
  GEMM_STATUS_UNSUPPORTED_DTYPE = 5,
  /*
   An enum-valued argument (dtype, layout, transpose) is out of range, or another argument is invalid.
   */
  GEMM_STATUS_INVALID_VALUE = 6,
  /*
   A buffer is not aligned to its element size.
   */
  GEMM_STATUS_MISALIGNED = 7,
  /*
   A device failed while computing.
   */
  GEMM_STATUS_DEVICE_ERROR = 8,
  /*
   No device with that index.
   */
  GEMM_STATUS_NO_SUCH_DEVICE = 9,
  /*
   Some items of a batch failed; their own statuses say why.
   */
  GEMM_STATUS_BATCH_PARTIAL_FAILURE = 10,
  /*
   Outputs of batch items overlap.
   */
  GEMM_STATUS_OVERLAPPING_OUTPUTS = 11,
  /*
   The device list could not be parsed or opened.
   */
  GEMM_STATUS_DEVICE_SELECTION = 12,
  /*
   A bug in the library was caught at the boundary (a Rust panic). Please report it.
   */
  GEMM_STATUS_INTERNAL_ERROR = 13,
  /*
   A device pointer or the stream belongs to another device than the one named.
   */
  GEMM_STATUS_WRONG_DEVICE = 14,
  /*
   A pointer given as device memory is not inside a live device allocation.
   */
  GEMM_STATUS_NOT_DEVICE_MEMORY = 15,
  /*
   The device named is not a HIP GPU (device-memory calls need one).
   */
  GEMM_STATUS_NOT_A_GPU = 16,
  /*
   A tensor-parallel unique id is malformed (not made by `gemm_tp_unique_id`/RCCL, damaged)
   or stale (its rendezvous is gone).
   */
  GEMM_STATUS_TP_BAD_UNIQUE_ID = 17,
  /*
   A tensor-parallel rank is not below the rank count.
   */
  GEMM_STATUS_TP_RANK_OUT_OF_RANGE = 18,
  /*
   The ranks of a tensor-parallel group called with different problems or options.
   */
  GEMM_STATUS_TP_DISAGREE = 19,
  /*
   A peer of a tensor-parallel group is gone (died, or aborted its communicator); the group
   was aborted.
   */
  GEMM_STATUS_TP_PEER_LOST = 20,
  /*
   A tensor-parallel call did not finish within the group's timeout; the group was aborted.
   */
  GEMM_STATUS_TP_TIMEOUT = 21,
  /*
   The tensor-parallel group was aborted and runs nothing more; destroy it.
   */
  GEMM_STATUS_TP_ABORTED = 22,
  /*
   Another RCCL/NCCL failure.
   */
  GEMM_STATUS_TP_COMM_ERROR = 23,
  /*
   A block-scaled GEMM's scale block shape is not one its kind defines (MX: 1 x 32 for both
   operands; block fp8: 1 x 128 or 128 x 128 per operand).
   */
  GEMM_STATUS_BLOCK_SHAPE = 24,
  /*
   An MX GEMM's K is not a multiple of 32 (the MX block): refused, pad K with zeros.
   */
  GEMM_STATUS_K_NOT_BLOCK_MULTIPLE = 25,
  /*
   A scale dtype does not match the element format (MX takes GEMM_SCALE_E8M0, block fp8
   GEMM_SCALE_F32; both operands the same).
   */
  GEMM_STATUS_SCALE_DTYPE = 26,
  /*
   The device's architecture cannot run this (MX on gfx942: no scaled MFMA, no fp6/fp4;
   block fp8 in the other arch's fp8 flavour).
   */
  GEMM_STATUS_UNSUPPORTED_ARCH = 27,
  /*
   The input is valid but the device has no kernel wired for it yet (block-scaled GEMMs on
   GPUs); the host computes it.
   */
  GEMM_STATUS_NO_KERNEL = 28,
} gemm_status_t;

/*
 An opaque set of devices.
 */
typedef struct gemm_context_t gemm_context_t;

/*
 One rank of a tensor-parallel group (opaque).
 */
typedef struct gemm_tp_group_t gemm_tp_group_t;

/*
 What a device is.
 */
typedef struct {
  /*
   NUL-terminated short name, e.g. "host:0".
   */
  char name[64];
  /*
   NUL-terminated description (CPU or GPU model), truncated to fit.
   */
  char description[256];
  /*
   GEMM_DEVICE_HOST, GEMM_DEVICE_HIP, GEMM_DEVICE_EMU or GEMM_DEVICE_OTHER.
   */
  uint32_t kind;
  /*
   Threads (host) or compute units (GPU).
   */
  uint32_t compute_units;
  /*
   Device memory in bytes (0 for the host).
   */
  uint64_t memory_bytes;
} gemm_device_info_t;

/*
 Storage order of A, B and C.
 */
typedef uint32_t gemm_layout_t;

/*
 Whether an input is used transposed.
 */
typedef uint32_t gemm_transpose_t;

/*
 Element types (values of `gemm_problem_t.a_type` etc.).
 */
typedef uint32_t gemm_dtype_t;

/*
 The precision f32 inputs are multiplied at (`gemm_problem_t.math`): full f32
 (`GEMM_MATH_DEFAULT`, 0: what a zero-initialised problem asks for), or, where the caller allows
 it, xf32 (`GEMM_MATH_ALLOW_XF32`: gfx942's xf32 MFMAs round each f32 input to 10 mantissa bits
 and run 4x the f32 rate; cuBLAS's `CUBLAS_COMPUTE_32F_FAST_TF32`). Other dtypes ignore it.
 */
typedef uint32_t gemm_math_t;

/*
 One GEMM: C = alpha * op(A) * op(B) + beta * C, with op(A) m x k, op(B) k x n, C m x n, all
 stored in `layout` with leading dimensions (in elements). beta == 0 never reads C. `math`
 (last, so positional initialisers that stop at `beta` get the default) allows reduced
 precision for f32 inputs.
 */
typedef struct {
  gemm_layout_t layout;
  gemm_transpose_t trans_a;
  gemm_transpose_t trans_b;
  gemm_dtype_t a_type;
  gemm_dtype_t b_type;
  gemm_dtype_t c_type;
  size_t m;
  size_t n;
  size_t k;
  size_t lda;
  size_t ldb;
  size_t ldc;
  float alpha;
  float beta;
  gemm_math_t math;
} gemm_problem_t;

/*
 The bias of a fused epilogue (gemm_epilogue_t): none, one f32 per row of C (m), or one per
 column (n), in the problem's own terms whatever its layout.
 */
typedef uint32_t gemm_bias_t;

/*
 The activation of a fused epilogue, applied after the bias.
 */
typedef uint32_t gemm_activation_t;

/*
 A fused epilogue: C = clamp(act(alpha * op(A) * op(B) + beta * C + bias)), rounded once to
 C's dtype. `clamp` 0 or 1; with 1, the result is clamped to [clamp_lo, clamp_hi].
 */
typedef struct {
  gemm_bias_t bias;
  gemm_activation_t activation;
  uint32_t clamp;
  float clamp_lo;
  float clamp_hi;
} gemm_epilogue_t;

/*
 The scales of an fp8 GEMM (gemm_run_scaled, gemm_run_device_scaled), as hipBLASLt's scale
 modes:
 D[i,j] = scale_d * (alpha * scale_a * scale_b * (row[i] * col[j] * acc[i,j]) + beta * C[i,j]),
 acc the f32 sum of the decoded fp8 products, evaluated in f32 in that order (w = row*col;
 x = w*acc; s = (scale_a*scale_b)*alpha; x = s*x, a zero operand giving +0; x = fma(beta, C, x)
 only when beta != 0; D = scale_d*x), then rounded once to C's dtype (f32, bf16 or f16). `row`
 is NULL (all ones) or `row_len` == m floats, one per row of op(A); `col` NULL or `col_len` == n
 floats, one per column of op(B); rows and columns are the problem's own whatever its layout.
 Host memory for gemm_run_scaled, device memory of the GEMM's GPU for gemm_run_device_scaled.
 */
typedef struct {
  float scale_a;
  float scale_b;
  float scale_d;
  const float *row;
  size_t row_len;
  const float *col;
  size_t col_len;
} gemm_fp8_scales_t;

/*
 The dtype of a block-scaled GEMM's scale tensor (`gemm_block_scale_t.dtype`).
 */
typedef uint32_t gemm_scale_dtype_t;

/*
 How a scale tensor of R scale rows and G K groups is laid out
 (`gemm_block_scale_t.layout`): where scale `(rb, g)` lives.
 */
typedef uint32_t gemm_scale_layout_t;

/*
 One operand's scale tensor of a block-scaled GEMM. Versioned (ABI rule): set `size` with
 `gemm_block_scale_init`, then the fields. The tensor holds `ceil(rows / block_rows)` scale
 rows (rows: M for X, N for W) of `ceil(K / block_k)` scales, laid out as `layout` says
 (row-major by default, `ld` scales apart); scale `(r / block_rows, l / block_k)` multiplies
 element `(r, l)`.
 */
typedef struct {
  /*
   `sizeof(gemm_block_scale_t)`, set by `gemm_block_scale_init`.
   */
  size_t size;
  /*
   The first scale: host memory for `gemm_run_block_scaled`, device memory for
   `gemm_run_device_block_scaled`. NULL only when the tensor is empty (K, or the operand's
   rows, 0).
   */
  const void *scales;
  /*
   GEMM_SCALE_E8M0 (MX) or GEMM_SCALE_F32 (block fp8).
   */
  gemm_scale_dtype_t dtype;
  /*
   Rows of the operand one scale covers: 1 (MX; block fp8 activations) or 128 (block fp8
   weights).
   */
  size_t block_rows;
  /*
   Elements along K one scale covers: 32 (MX) or 128 (block fp8).
   */
  size_t block_k;
  /*
   The layout's leading dimension: GEMM_SCALES_ROW_MAJOR, scales between the starts of two
   scale rows (at least `ceil(K / block_k)`); GEMM_SCALES_COL_MAJOR and GEMM_SCALES_K_TILED,
   the scale rows the tensor is laid out for (at least `ceil(rows / block_rows)`).
   */
  size_t ld;
  /*
   GEMM_SCALES_ROW_MAJOR (the default), GEMM_SCALES_COL_MAJOR or GEMM_SCALES_K_TILED.
   */
  gemm_scale_layout_t layout;
  /*
   GEMM_SCALES_K_TILED: the K groups of one tile (the MX kernels read 8 for fp4 x fp4, 4
   for every other pair); otherwise unused.
   */
  size_t tile;
} gemm_block_scale_t;

/*
 How `gemm_tensor_parallel` splits one GEMM over the devices of a context.
 */
typedef uint32_t gemm_tp_plan_t;

/*
 Options of a tensor-parallel group. Versioned (ABI rule): set `size` with
 `gemm_tp_options_init`, then change fields.
 */
typedef struct {
  /*
   `sizeof(gemm_tp_options_t)`, set by `gemm_tp_options_init`.
   */
  size_t size;
  /*
   How long a call may wait for its collectives before the group aborts (milliseconds).
   */
  uint64_t timeout_ms;
  /*
   Non-zero: overlap each chunk's collective with the next chunk's GEMM.
   */
  uint32_t overlap;
  /*
   Chunks of rows when overlapping (at least 1).
   */
  uint32_t chunks;
} gemm_tp_options_t;

/*
 How a row-parallel call (`gemm_tp_row_device`) sums the ranks' partial products.
 */
typedef uint32_t gemm_tp_reduce_t;

#define GEMM_DTYPE_F32 0

#define GEMM_DTYPE_F16 1

#define GEMM_DTYPE_BF16 2

/*
 gfx942 fp8 (E4M3FNUZ).
 */
#define GEMM_DTYPE_FP8_E4M3FNUZ 3

/*
 gfx942 bf8 (E5M2FNUZ).
 */
#define GEMM_DTYPE_FP8_E5M2FNUZ 4

/*
 gfx950 fp8 (OCP E4M3FN).
 */
#define GEMM_DTYPE_FP8_E4M3 5

/*
 gfx950 bf8 (OCP E5M2).
 */
#define GEMM_DTYPE_FP8_E5M2 6

/*
 OCP MX fp6 E2M3, packed (four elements in three bytes, as the MFMA reads them). Block-scaled
 GEMMs only (`gemm_run_block_scaled`); plain GEMMs answer GEMM_STATUS_UNSUPPORTED_DTYPE.
 */
#define GEMM_DTYPE_FP6_E2M3 7

/*
 OCP MX fp6 E3M2 ("bf6"), packed. Block-scaled GEMMs only.
 */
#define GEMM_DTYPE_FP6_E3M2 8

/*
 OCP MX fp4 E2M1, two per byte (the lower-indexed element in the low nibble). Block-scaled
 GEMMs only.
 */
#define GEMM_DTYPE_FP4_E2M1 9

#define GEMM_ROW_MAJOR 0

#define GEMM_COL_MAJOR 1

#define GEMM_NO_TRANS 0

#define GEMM_TRANS 1

/*
 Split N (the columns of op(B)); each device computes a block of C's columns, gathered into C.
 */
#define GEMM_TP_COLUMN 0

/*
 Split K; the f32 partial products are summed by a reduce-scatter, C rounded once.
 */
#define GEMM_TP_ROW_REDUCE_SCATTER 1

/*
 Split K; the f32 partial products are summed by an all-reduce, C rounded once.
 */
#define GEMM_TP_ROW_ALL_REDUCE 2

#define GEMM_MATH_DEFAULT 0

#define GEMM_MATH_ALLOW_XF32 1

#define GEMM_BIAS_NONE 0

#define GEMM_BIAS_PER_ROW 1

#define GEMM_BIAS_PER_COLUMN 2

#define GEMM_ACTIVATION_NONE 0

/*
 max(x, 0)
 */
#define GEMM_ACTIVATION_RELU 1

/*
 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 */
#define GEMM_ACTIVATION_GELU_TANH 2

/*
 x / (1 + exp(-x))
 */
#define GEMM_ACTIVATION_SILU 3

/*
 OCP MX E8M0: one byte per scale, the power of two `2^(code - 127)`, 0xFF is NaN (MX).
 */
#define GEMM_SCALE_E8M0 0

/*
 IEEE binary32 (block-scaled fp8).
 */
#define GEMM_SCALE_F32 1

/*
 `rb * ld + g` (each scale row contiguous along K).
 */
#define GEMM_SCALES_ROW_MAJOR 0

/*
 `rb + g * ld` (each K group contiguous along the rows: the DeepSeek GEMM challenge's
 activation scales; the block fp8 kernels read them with one line per 32 rows).
 */
#define GEMM_SCALES_COL_MAJOR 1

/*
 `(g / tile) * tile * ld + rb * tile + g % tile` (`tile` groups of every row together, tile
 after tile: the MX kernels read them with one line per 32 rows).
 */
#define GEMM_SCALES_K_TILED 2

/*
 All-reduce: every rank receives all of Y.
 */
#define GEMM_TP_ALL_REDUCE 0

/*
 Reduce-scatter: rank r receives the rows `gemm_tp_scatter_rows` names.
 */
#define GEMM_TP_REDUCE_SCATTER 1

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/*
 Creates a context. `devices` is a device list such as "host" or "host,host,host", or NULL for
 the default (the GEMM_DEVICES environment variable, else the best devices present).

 # Safety
 `devices` is NULL or a NUL-terminated string; `out` is NULL or points to writable storage for one pointer.
 */
gemm_status_t gemm_context_create(const char *devices,
                                  gemm_context_t **out);

/*
 Destroys a context made by gemm_context_create. NULL is accepted and ignored.

 # Safety
 `ctx` is NULL or a handle from `gemm_context_create` not yet destroyed and not in use by another thread.
 */
gemm_status_t gemm_context_destroy(gemm_context_t *ctx);

/*
 Number of devices in the context.

 # Safety
 `ctx` is NULL or a live handle; `out` is NULL or points to a writable `size_t`.
 */
gemm_status_t gemm_device_count(const gemm_context_t *ctx, size_t *out);

/*
 Describes device `index` of the context.

 # Safety
 `ctx` is NULL or a live handle; `out` is NULL or points to a writable `gemm_device_info_t`.
 */
gemm_status_t gemm_device_info(const gemm_context_t *ctx, size_t index, gemm_device_info_t *out);

/*
 One GEMM on the best device of the context. `a`, `b`, `c` point to the first element of each
 matrix, with as many elements as the problem's shape and leading dimensions need.

 # Safety
 `ctx` and `problem` are NULL or valid; `a`, `b` are NULL or readable and `c` NULL or writable for the elements the problem's shape and leading dimensions address; `c` does not overlap `a` or `b`.
 */
gemm_status_t gemm_run(gemm_context_t *ctx,
                       const gemm_problem_t *problem_,
                       const void *a,
                       const void *b,
                       void *c);

/*
 One GEMM on host memory with a fused epilogue (`epilogue`; `bias` the f32 vector its bias
 needs, m or n elements, NULL without a bias), computed on the host CPU with the GPU kernels'
 formulas and one rounding to C's dtype (f32, f16 or bf16). Bad input (a missing or unneeded
 bias vector, clamp bounds that are not an interval, unknown enum values): its status, C
 untouched.

 # Safety
 As for `gemm_run`; `epilogue` is NULL or valid; `bias` is NULL or readable for the elements
 the epilogue's bias needs.
 */
gemm_status_t gemm_run_epilogue(gemm_context_t *ctx,
                                const gemm_problem_t *problem_,
                                const void *a,
                                const void *b,
                                void *c,
                                const gemm_epilogue_t *epilogue,
                                const float *bias);

/*
 One GEMM with a fused epilogue on device memory of GPU `device`, queued on `stream`, as
 `gemm_run_device`; `bias` is a device pointer to the f32 vector the epilogue's bias needs (NULL
 without a bias). It runs in one kernel of the catalogue's fused family (bf16 -> bf16, a column
 bias in the kernel's column-major terms, i.e. a per-row bias of a row-major problem, with
 ReLU, GELU or SiLU); other epilogues are GEMM_STATUS_UNSUPPORTED_DTYPE on GPUs (gemm_run_epilogue
 computes every one on the host). `gemm_last_kernel` names the kernel.

 # Safety
 As for `gemm_run_device`; `epilogue` is NULL or valid; `bias` is NULL or a device pointer that
 stays allocated until the GEMM has run.
 */
gemm_status_t gemm_run_device_epilogue(gemm_context_t *ctx,
                                       size_t device,
                                       void *stream,
                                       const gemm_problem_t *problem_,
                                       const void *a,
                                       const void *b,
                                       void *c,
                                       const gemm_epilogue_t *epilogue,
                                       const float *bias);

/*
 One fp8 GEMM with scales (`gemm_fp8_scales_t`: per tensor, and optional per-row / per-column
 vectors in host memory) on host memory, computed on the host CPU with the GPU kernels' f32
 steps and one rounding to C's dtype. Bad input: scales for a non-fp8 problem or an fp8 C
 (GEMM_STATUS_UNSUPPORTED_DTYPE), a vector whose length is not m / n
 (GEMM_STATUS_INVALID_SIZE), a NULL vector with a length (GEMM_STATUS_NULL_POINTER); C
 untouched.

 # Safety
 As for `gemm_run`; `scales` is NULL or valid, and its non-NULL vectors are readable for their
 lengths.
 */
gemm_status_t gemm_run_scaled(gemm_context_t *ctx,
                              const gemm_problem_t *problem_,
                              const void *a,
                              const void *b,
                              void *c,
                              const gemm_fp8_scales_t *scales);

/*
 One fp8 GEMM with scales on device memory of GPU `device`, queued on `stream`, as
 `gemm_run_device`; the scale vectors of `scales` are device pointers on that GPU (NULL: none).
 It runs in the catalogue's fp8 kernel for the problem (`gemm_last_kernel` names it); the
 statuses of `gemm_run_scaled`, plus those of `gemm_run_device` for the operands and for the
 vectors (outside device memory, on another GPU, not 4-byte aligned). Nothing is queued on bad
 input.

 # Safety
 As for `gemm_run_device`; `scales` is NULL or valid, and its non-NULL vectors are device
 pointers that stay allocated until the GEMM has run.
 */
gemm_status_t gemm_run_device_scaled(gemm_context_t *ctx,
                                     size_t device,
                                     void *stream,
                                     const gemm_problem_t *problem_,
                                     const void *a,
                                     const void *b,
                                     void *c,
                                     const gemm_fp8_scales_t *scales);

/*
 Fills `scale` with its size and an MX default (NULL scales, GEMM_SCALE_E8M0, 1 x 32 blocks,
 ld 0, row-major): set `scales`, `ld` and, for block fp8, `dtype` and the block shape.

 # Safety
 `scale` is NULL or points to a writable `gemm_block_scale_t`.
 */
gemm_status_t gemm_block_scale_init(gemm_block_scale_t *scale);

/*
 One block-scaled GEMM on host memory: the Linear layer `Y = alpha * (sa . X) * (sb . W)^T +
 beta * Y` with MX operands (any of fp8_e4m3, fp8_e5m2, fp6_e2m3, fp6_e3m2, fp4_e2m1 per
 operand; E8M0 scales per 1 x 32; K a multiple of 32) or DeepSeek-V3 block fp8 (fp8 of one
 flavour; f32 scales per 1 x 128 or 128 x 128). `problem` must be GEMM_ROW_MAJOR with
 trans_a GEMM_NO_TRANS and trans_b GEMM_TRANS: `a` is X (M x K), `b` is W (N x K), both
 packed along K (fp4 two per byte, fp6 four per three bytes), `lda`/`ldb` in elements with
 every row 16-byte aligned (`ld * bits` a multiple of 128); `c` is Y (M x N, f32, bf16 or
 f16, `ldc >= N`; not read when beta is 0). Runs on the context's first device that can (the
 host computes it; see the Rust `Context::gemm_block_scaled`). Statuses: NULL pointers
 (GEMM_STATUS_NULL_POINTER), a scale struct whose size is not this library's or an enum out
 of range (GEMM_STATUS_INVALID_VALUE), GEMM_STATUS_BLOCK_SHAPE,
 GEMM_STATUS_K_NOT_BLOCK_MULTIPLE, GEMM_STATUS_SCALE_DTYPE, GEMM_STATUS_INVALID_LEADING_DIM
 (operand or scale ld), GEMM_STATUS_MISALIGNED (rows), GEMM_STATUS_UNSUPPORTED_DTYPE,
 GEMM_STATUS_SIZE_OVERFLOW, GEMM_STATUS_UNSUPPORTED_ARCH / GEMM_STATUS_NO_KERNEL (from a GPU
 with no host device after it); Y untouched on any of them.

 # Safety
 `ctx`, `problem`, `scale_a`, `scale_b` are NULL or valid; `a`, `b`, the scale pointers and
 `c` are NULL or point to at least the bytes the problem spans, `c` apart from the others.
 */
gemm_status_t gemm_run_block_scaled(gemm_context_t *ctx,
                                    const gemm_problem_t *problem_,
                                    const void *a,
                                    const gemm_block_scale_t *scale_a,
                                    const void *b,
                                    const gemm_block_scale_t *scale_b,
                                    void *c);

/*
 One block-scaled GEMM on device memory of GPU `device`, queued on `stream`, as
 `gemm_run_block_scaled` describes (the scale pointers are device pointers too); X and W must
 start 16-byte aligned, Y at its element size, f32 scales at 4 bytes. Checked whole before
 anything is queued: the statuses of `gemm_run_block_scaled` and of `gemm_run_device`
 (GEMM_STATUS_NOT_DEVICE_MEMORY, GEMM_STATUS_WRONG_DEVICE, GEMM_STATUS_NOT_A_GPU), MX on a
 gfx942 is GEMM_STATUS_UNSUPPORTED_ARCH; a valid call no kernel runs (K-tiled MX scales in
 another tile than the kernels') answers GEMM_STATUS_NO_KERNEL.

 # Safety
 As for `gemm_run_device`; the scale pointers are NULL or device pointers that stay allocated
 until the GEMM has run.
 */
gemm_status_t gemm_run_device_block_scaled(gemm_context_t *ctx,
                                           size_t device,
                                           void *stream,
                                           const gemm_problem_t *problem_,
                                           const void *a,
                                           const gemm_block_scale_t *scale_a,
                                           const void *b,
                                           const gemm_block_scale_t *scale_b,
                                           void *c);

/*
 One GEMM split over every device of the context by `plan` (tensor parallelism):
 GEMM_TP_COLUMN splits op(B) by columns and gathers C; the GEMM_TP_ROW_* plans split K and sum
 the f32 partial products, rounding C once. On a context whose devices are all HIP GPUs (with
 RCCL available) the shards stay on the GPUs and RCCL combines them; otherwise the devices'
 GEMMs read and write host memory and an in-process collective combines them
 (`gemm_tensor_parallel_route` says which). Buffers and dtypes as for `gemm_run`; an unknown
 `plan` is GEMM_STATUS_INVALID_VALUE. On any error C is untouched.

 # Safety
 as for `gemm_run`.
 */
gemm_status_t gemm_tensor_parallel(gemm_context_t *ctx,
                                   gemm_tp_plan_t plan,
                                   const gemm_problem_t *problem_,
                                   const void *a,
                                   const void *b,
                                   void *c);

/*
 Whether `gemm_tensor_parallel` on this context runs device-resident (every device a HIP GPU
 and RCCL available: `*device_resident` = 1) or over host memory (0). May create the context's
 RCCL communicators, which later calls reuse.

 # Safety
 `ctx` is NULL or a live handle; `device_resident` is NULL or points to a writable `int`.
 */
gemm_status_t gemm_tensor_parallel_route(const gemm_context_t *ctx, int *device_resident);

/*
 `batch_count` GEMMs of one shape whose matrices lie `stride_a`, `stride_b`, `stride_c`
 elements apart, spread over all devices. `item_status` (may be NULL) receives one status per
 item; the return value is GEMM_STATUS_SUCCESS, GEMM_STATUS_BATCH_PARTIAL_FAILURE, or the
 error that stopped the whole batch before anything ran.

 # Safety
 as for `gemm_run`, for the whole batch span of each buffer; `item_status` is NULL or has `batch_count` writable entries.
 */
gemm_status_t gemm_strided_batched(gemm_context_t *ctx,
                                   const gemm_problem_t *problem_,
                                   const void *a,
                                   size_t stride_a,
                                   const void *b,
                                   size_t stride_b,
                                   void *c,
                                   size_t stride_c,
                                   size_t batch_count,
                                   gemm_status_t *item_status);

/*
 `count` GEMMs, each with its own problem and buffers (`a[i]`, `b[i]`, `c[i]`), spread over all
 devices. An invalid item fails alone. `item_status` (may be NULL) receives one status per item.

 # Safety
 `problems`, `a`, `b`, `c` are NULL or arrays of `count` entries, each buffer valid as for `gemm_run`; no item's C overlaps another buffer; `item_status` is NULL or has `count` writable entries.
 */
gemm_status_t gemm_grouped(gemm_context_t *ctx,
                           size_t count,
                           const gemm_problem_t *problems,
                           const void *const *a,
                           const void *const *b,
                           void *const *c,
                           gemm_status_t *item_status);

/*
 One GEMM on device memory of GPU `device` of the context, queued on the caller's `stream` (a
 `hipStream_t`; NULL is the device's null stream). `a`, `b`, `c` are device pointers (from
 `hipMalloc` or any device allocation) to the first element of each matrix, laid out as the
 problem says. Returns once the kernel is queued: nothing synchronises, so the caller's own
 copies and kernels queued on the same stream before and after are ordered with it, and the
 host sees C after synchronising the stream. Every input is checked before anything is queued
 (the problem, NULL pointers, pointers outside device memory, operands on another device or
 past the end of their allocation, misalignment, unsupported dtypes): on a bad input the status
 says which and device memory is untouched. `gemm_last_kernel` names the kernel queued.

 # Safety
 `ctx` and `problem` are NULL or valid; `stream` is NULL or a live stream; `a`, `b`, `c` are
 NULL or device pointers whose memory stays allocated until the queued GEMM has run, and `c`
 does not overlap `a` or `b`.
 */
gemm_status_t gemm_run_device(gemm_context_t *ctx,
                              size_t device,
                              void *stream,
                              const gemm_problem_t *problem_,
                              const void *a,
                              const void *b,
                              void *c);

/*
 `batch_count` GEMMs of one shape on device memory of GPU `device`, queued on `stream`: item
 `i` reads A at element `i * stride_a` of `a` (likewise B) and writes C at `i * stride_c` of
 `c`. One kernel launch per item, in item order. The whole batch is checked first (as for
 `gemm_run_device`, plus overlapping outputs); on a bad input nothing is queued.

 # Safety
 as for `gemm_run_device`, for the whole batch span of each buffer.
 */
gemm_status_t gemm_strided_batched_device(gemm_context_t *ctx,
                                          size_t device,
                                          void *stream,
                                          const gemm_problem_t *problem_,
                                          const void *a,
                                          size_t stride_a,
                                          const void *b,
                                          size_t stride_b,
                                          void *c,
                                          size_t stride_c,
                                          size_t batch_count);

/*
 `count` GEMMs on device memory of GPU `device`, each with its own problem (sizes, dtypes,
 layout) and device pointers `a[i]`, `b[i]`, `c[i]`, queued on `stream`. Groups with m or n of
 0 are allowed and queue nothing. Every group is checked before any is queued: if one is bad,
 nothing is queued, `item_status` (may be NULL) gets each group's status
 (GEMM_STATUS_SUCCESS for the good ones) and the call returns
 GEMM_STATUS_BATCH_PARTIAL_FAILURE. Groups that share dtypes, layout and transposes, with
 leading dimensions of 8 elements and 16-byte aligned A/B, run in **one launch** of a grouped
 kernel: the library uploads a table of the problems to the device on `stream` (nothing
 synchronises) and `gemm_last_kernel` names that kernel. Otherwise one launch per non-empty
 group, in group order.

 # Safety
 `problems`, `a`, `b`, `c` are NULL or arrays of `count` entries, each pointer as for
 `gemm_run_device`; no group's C overlaps another group's operands; `item_status` is NULL or
 has `count` writable entries.
 */
gemm_status_t gemm_grouped_device(gemm_context_t *ctx,
                                  size_t device,
                                  void *stream,
                                  size_t count,
                                  const gemm_problem_t *problems,
                                  const void *const *a,
                                  const void *const *b,
                                  void *const *c,
                                  gemm_status_t *item_status);

/*
 Writes the name of the kernel the calling thread's last GEMM launched on a HIP GPU (a
 device-memory call, or a host-memory GEMM the thread ran itself) into `buf` (`len` bytes,
 truncated, NUL-terminated; "" if none yet), as `gemm plan` names kernels.

 # Safety
 `buf` is NULL or has `len` writable bytes.
 */
gemm_status_t gemm_last_kernel(char *buf, size_t len);

/*
 A static, NUL-terminated description of a status ("unknown status" for other values).
 */
const char *gemm_status_string(int32_t status);

/*
 The message of the last failed call on this thread ("" after a success). Valid until the next
 call on the same thread.
 */
const char *gemm_last_error_message(void);

/*
 The library's version as a static, NUL-terminated string ("0.1.0"), whatever header the caller
 was compiled with.
 */
const char *gemm_version(void);

/*
 The ABI version of the loaded library (GEMM_ABI_VERSION of the header it was built with).
 */
uint32_t gemm_abi_version(void);

/*
 Checks that the caller's header and this library agree: the ABI version and the size of every
 struct passed by pointer (`GEMM_ABI_CHECK()` passes them). GEMM_STATUS_SUCCESS, or
 GEMM_STATUS_INVALID_VALUE with a message (gemm_last_error_message) naming what differs and
 both versions.
 */
gemm_status_t gemm_abi_check(uint32_t abi_version,
                             size_t problem_size,
                             size_t epilogue_size,
                             size_t fp8_scales_size,
                             size_t device_info_size);

/*
 Fills `options` with the defaults (600 s timeout, overlap on, 4 chunks) and its size.

 # Safety
 `options` is NULL or points to a writable `gemm_tp_options_t`.
 */
gemm_status_t gemm_tp_options_init(gemm_tp_options_t *options);

/*
 Makes a unique id on GPU `device` of the context (`ncclGetUniqueId` of the RCCL it uses) and
 writes its `GEMM_TP_UNIQUE_ID_BYTES` bytes to `out`. Call it on one rank; the caller's
 launcher passes the bytes to every rank's `gemm_tp_group_create`.

 # Safety
 `ctx` is NULL or valid; `out` is NULL or has room for `GEMM_TP_UNIQUE_ID_BYTES` bytes.
 */
gemm_status_t gemm_tp_unique_id(gemm_context_t *ctx, size_t device, uint8_t *out);

/*
 Joins the communicator of `unique_id` (`GEMM_TP_UNIQUE_ID_BYTES` bytes) as `rank` of `nranks`
 on GPU `device`, with the default options; blocks until every rank has joined. The group owns
 its communicator. Errors: GEMM_STATUS_TP_RANK_OUT_OF_RANGE, GEMM_STATUS_TP_BAD_UNIQUE_ID,
 GEMM_STATUS_TP_DISAGREE (ranks joined with different `nranks`), GEMM_STATUS_TP_PEER_LOST.

 # Safety
 `ctx` is NULL or valid; `unique_id` is NULL or holds `GEMM_TP_UNIQUE_ID_BYTES` bytes; `out` is
 NULL or writable.
 */
gemm_status_t gemm_tp_group_create(gemm_context_t *ctx,
                                   size_t device,
                                   const uint8_t *unique_id,
                                   size_t nranks,
                                   size_t rank,
                                   gemm_tp_group_t **out);

/*
 `gemm_tp_group_create` with options (NULL: the defaults).

 # Safety
 As `gemm_tp_group_create`; `options` is NULL or initialised by `gemm_tp_options_init`.
 */
gemm_status_t gemm_tp_group_create_with(gemm_context_t *ctx,
                                        size_t device,
                                        const uint8_t *unique_id,
                                        size_t nranks,
                                        size_t rank,
                                        const gemm_tp_options_t *options,
                                        gemm_tp_group_t **out);

/*
 Wraps the caller's communicator `comm` (an `ncclComm_t` of the RCCL this library loads, e.g.
 from PyTorch's process group) for GPU `device`, **without owning it**: destroying the group
 leaves it alive. Its ranks and device are asked of RCCL.

 # Safety
 `ctx` is NULL or valid; `comm` is a live communicator of the same RCCL that outlives the
 group, and nothing else issues on it while a call of the group runs; `options` as for
 `gemm_tp_group_create_with`; `out` is NULL or writable.
 */
gemm_status_t gemm_tp_group_from_comm(gemm_context_t *ctx,
                                      size_t device,
                                      void *comm,
                                      const gemm_tp_options_t *options,
                                      gemm_tp_group_t **out);

/*
 Destroys a group (and its communicator, if the group owns it). NULL is a no-op.

 # Safety
 `group` is NULL or a live handle, not used afterwards or concurrently.
 */
gemm_status_t gemm_tp_group_destroy(gemm_tp_group_t *group);

/*
 Aborts the group's communicator (`ncclCommAbort`, a borrowed one too): collectives in flight
 stop and every later call returns GEMM_STATUS_TP_ABORTED. Destroy the group afterwards.

 # Safety
 `group` is NULL or a live handle.
 */
gemm_status_t gemm_tp_group_abort(gemm_tp_group_t *group);

/*
 The group's state without blocking: GEMM_STATUS_SUCCESS (usable), GEMM_STATUS_TP_PEER_LOST
 (the communicator reported an asynchronous error: the next call fails) or
 GEMM_STATUS_TP_ABORTED; `gemm_last_error_message()` says why.

 # Safety
 `group` is NULL or a live handle.
 */
gemm_status_t gemm_tp_group_status(const gemm_tp_group_t *group);

/*
 This rank and the rank count (either pointer may be NULL).

 # Safety
 `group` is NULL or a live handle; `rank`, `nranks` NULL or writable.
 */
gemm_status_t gemm_tp_group_rank(const gemm_tp_group_t *group, size_t *rank, size_t *nranks);

/*
 The rows of M that `rank` receives from a reduce-scatter of `m` rows: `*first`, `*count`.

 # Safety
 `group` is NULL or a live handle; `first`, `count` NULL or writable.
 */
gemm_status_t gemm_tp_scatter_rows(const gemm_tp_group_t *group,
                                   size_t m,
                                   size_t rank,
                                   size_t *first,
                                   size_t *count);

/*
 Column-parallel on this rank's shard: `Y_shard = alpha * op(X) * op(W_shard)` (`problem` is
 the rank's `m x n_r x k`, row-major, beta 0; Y_shard uses `ldc`), and when `y_gathered` is
 not NULL, every rank's shard all-gathered into the tight `m x N` Y there. Device memory of
 the group's GPU; queued on `stream`, overlapped as the options say; returns once the outputs
 are written. Every rank calls it with the same problem (widths may differ):
 GEMM_STATUS_TP_DISAGREE otherwise. On any failure the outputs are untouched.

 # Safety
 `group`, `problem` NULL or valid; `stream` NULL or live; pointers NULL or device memory of the
 group's GPU that stays allocated for the call.
 */
gemm_status_t gemm_tp_column_device(gemm_tp_group_t *group,
                                    void *stream,
                                    const gemm_problem_t *problem_,
                                    const void *x,
                                    const void *w,
                                    void *y_shard,
                                    void *y_gathered);

/*
 Row-parallel on this rank's shard: `Y = sum over ranks of alpha * op(X_shard) * op(W_shard)`
 (`problem`: `m x n x k_r`, row-major, beta 0), reduced in C's dtype (f32 C: in f32) by
 `reduce`: GEMM_TP_ALL_REDUCE (Y `m x n`) or GEMM_TP_REDUCE_SCATTER (Y holds this rank's
 `gemm_tp_scatter_rows`). As `gemm_tp_column_device` otherwise.

 # Safety
 As `gemm_tp_column_device`.
 */
gemm_status_t gemm_tp_row_device(gemm_tp_group_t *group,
                                 void *stream,
                                 const gemm_problem_t *problem_,
                                 const void *x,
                                 const void *w,
                                 void *y,
                                 gemm_tp_reduce_t reduce);

/*
 A Megatron MLP on this rank's shards: `H = act(X * W_up_shard)` (`up`: `m x f_r x h`), then
 `Y = sum over ranks of H * W_down_shard` (`down`: `m x h x f_r`, its A is H: `down.a_type ==
 up.c_type`, `down.trans_a == GEMM_NO_TRANS`; H lives in a group workspace) with one
 all-reduce. `activation` (not GEMM_ACTIVATION_NONE) runs fused into the up GEMM's epilogue,
 after a bias of zeros, by the catalogue's `fused` kernels: bf16 -> bf16 with `h` and this
 rank's `f_r` multiples of 8. Where a rank's shard has none, every rank refuses before any data
 moves: that rank GEMM_STATUS_UNSUPPORTED_DTYPE, the others GEMM_STATUS_TP_DISAGREE (or the
 same); the group stays usable.

 # Safety
 As `gemm_tp_column_device`.
 */
gemm_status_t gemm_tp_mlp_device(gemm_tp_group_t *group,
                                 void *stream,
                                 const gemm_problem_t *up,
                                 const gemm_problem_t *down,
                                 const void *x,
                                 const void *w_up,
                                 const void *w_down,
                                 void *y,
                                 gemm_activation_t activation);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* GEMM_H */
