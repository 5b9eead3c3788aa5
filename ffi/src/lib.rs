//! The C ABI of the library. The header `ffi/include/gemm.h` is generated from this file by
//! cbindgen and a test fails when the two differ.
//!
//! Rules every entry follows (after rocBLAS): typed opaque handles; a status enum with explicit
//! values; enum-like inputs taken as plain integers and checked (an out-of-range value from C must
//! not become an invalid Rust enum); null pointers and bad sizes refused before any memory is
//! touched; every body run under `catch_unwind`, so no panic crosses into C.
#![allow(non_camel_case_types)]
#![deny(unsafe_op_in_unsafe_fn)]

use gemm_core::{DType, Element, GemmProblem, Layout, Operand, StridedBatch, Transpose};
use gemm_core::{Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz};
use gemm_dispatch::api::parallel::TpRoute;
use gemm_dispatch::backends::hip::DeviceSpan;
use gemm_dispatch::backends::{typed, typed_mut};
use gemm_dispatch::{bf16, f16, Activation, BiasAxis, Context, Epilogue, Error, Gpu, GpuStream, Reduce, TpPlan};
use gemm_dispatch::{Fp8Scales, ScaleError, TpError, TpGroup, TpOptions, TpStatus};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Status of every call. Values are fixed: they are part of the ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum gemm_status_t {
    GEMM_STATUS_SUCCESS = 0,
    /// A required pointer was NULL.
    GEMM_STATUS_NULL_POINTER = 1,
    /// Shapes do not fit together, or a buffer is smaller than the problem needs.
    GEMM_STATUS_INVALID_SIZE = 2,
    /// A leading dimension is smaller than its matrix needs.
    GEMM_STATUS_INVALID_LEADING_DIM = 3,
    /// A size computation overflows.
    GEMM_STATUS_SIZE_OVERFLOW = 4,
    /// The dtype combination is not supported (by the library or the device).
    GEMM_STATUS_UNSUPPORTED_DTYPE = 5,
    /// An enum-valued argument (dtype, layout, transpose) is out of range, or another argument is invalid.
    GEMM_STATUS_INVALID_VALUE = 6,
    /// A buffer is not aligned to its element size.
    GEMM_STATUS_MISALIGNED = 7,
    /// A device failed while computing.
    GEMM_STATUS_DEVICE_ERROR = 8,
    /// No device with that index.
    GEMM_STATUS_NO_SUCH_DEVICE = 9,
    /// Some items of a batch failed; their own statuses say why.
    GEMM_STATUS_BATCH_PARTIAL_FAILURE = 10,
    /// Outputs of batch items overlap.
    GEMM_STATUS_OVERLAPPING_OUTPUTS = 11,
    /// The device list could not be parsed or opened.
    GEMM_STATUS_DEVICE_SELECTION = 12,
    /// A bug in the library was caught at the boundary (a Rust panic). Please report it.
    GEMM_STATUS_INTERNAL_ERROR = 13,
    /// A device pointer or the stream belongs to another device than the one named.
    GEMM_STATUS_WRONG_DEVICE = 14,
    /// A pointer given as device memory is not inside a live device allocation.
    GEMM_STATUS_NOT_DEVICE_MEMORY = 15,
    /// The device named is not a HIP GPU (device-memory calls need one).
    GEMM_STATUS_NOT_A_GPU = 16,
    /// A tensor-parallel unique id is malformed (not made by `gemm_tp_unique_id`/RCCL, damaged)
    /// or stale (its rendezvous is gone).
    GEMM_STATUS_TP_BAD_UNIQUE_ID = 17,
    /// A tensor-parallel rank is not below the rank count.
    GEMM_STATUS_TP_RANK_OUT_OF_RANGE = 18,
    /// The ranks of a tensor-parallel group called with different problems or options.
    GEMM_STATUS_TP_DISAGREE = 19,
    /// A peer of a tensor-parallel group is gone (died, or aborted its communicator); the group
    /// was aborted.
    GEMM_STATUS_TP_PEER_LOST = 20,
    /// A tensor-parallel call did not finish within the group's timeout; the group was aborted.
    GEMM_STATUS_TP_TIMEOUT = 21,
    /// The tensor-parallel group was aborted and runs nothing more; destroy it.
    GEMM_STATUS_TP_ABORTED = 22,
    /// Another RCCL/NCCL failure.
    GEMM_STATUS_TP_COMM_ERROR = 23,
    /// A block-scaled GEMM's scale block shape is not one its kind defines (MX: 1 x 32 for both
    /// operands; block fp8: 1 x 128 or 128 x 128 per operand).
    GEMM_STATUS_BLOCK_SHAPE = 24,
    /// An MX GEMM's K is not a multiple of 32 (the MX block): refused, pad K with zeros.
    GEMM_STATUS_K_NOT_BLOCK_MULTIPLE = 25,
    /// A scale dtype does not match the element format (MX takes GEMM_SCALE_E8M0, block fp8
    /// GEMM_SCALE_F32; both operands the same).
    GEMM_STATUS_SCALE_DTYPE = 26,
    /// The device's architecture cannot run this (MX on gfx942: no scaled MFMA, no fp6/fp4;
    /// block fp8 in the other arch's fp8 flavour).
    GEMM_STATUS_UNSUPPORTED_ARCH = 27,
    /// The input is valid but the device has no kernel wired for it yet (block-scaled GEMMs on
    /// GPUs); the host computes it.
    GEMM_STATUS_NO_KERNEL = 28,
}
use gemm_status_t::*;

/// Element types (values of `gemm_problem_t.a_type` etc.).
pub type gemm_dtype_t = u32;
pub const GEMM_DTYPE_F32: gemm_dtype_t = 0;
pub const GEMM_DTYPE_F16: gemm_dtype_t = 1;
pub const GEMM_DTYPE_BF16: gemm_dtype_t = 2;
/// gfx942 fp8 (E4M3FNUZ).
pub const GEMM_DTYPE_FP8_E4M3FNUZ: gemm_dtype_t = 3;
/// gfx942 bf8 (E5M2FNUZ).
pub const GEMM_DTYPE_FP8_E5M2FNUZ: gemm_dtype_t = 4;
/// gfx950 fp8 (OCP E4M3FN).
pub const GEMM_DTYPE_FP8_E4M3: gemm_dtype_t = 5;
/// gfx950 bf8 (OCP E5M2).
pub const GEMM_DTYPE_FP8_E5M2: gemm_dtype_t = 6;
/// OCP MX fp6 E2M3, packed (four elements in three bytes, as the MFMA reads them). Block-scaled
/// GEMMs only (`gemm_run_block_scaled`); plain GEMMs answer GEMM_STATUS_UNSUPPORTED_DTYPE.
pub const GEMM_DTYPE_FP6_E2M3: gemm_dtype_t = 7;
/// OCP MX fp6 E3M2 ("bf6"), packed. Block-scaled GEMMs only.
pub const GEMM_DTYPE_FP6_E3M2: gemm_dtype_t = 8;
/// OCP MX fp4 E2M1, two per byte (the lower-indexed element in the low nibble). Block-scaled
/// GEMMs only.
pub const GEMM_DTYPE_FP4_E2M1: gemm_dtype_t = 9;

/// Storage order of A, B and C.
pub type gemm_layout_t = u32;
pub const GEMM_ROW_MAJOR: gemm_layout_t = 0;
pub const GEMM_COL_MAJOR: gemm_layout_t = 1;

/// Whether an input is used transposed.
pub type gemm_transpose_t = u32;
pub const GEMM_NO_TRANS: gemm_transpose_t = 0;
pub const GEMM_TRANS: gemm_transpose_t = 1;

/// How `gemm_tensor_parallel` splits one GEMM over the devices of a context.
pub type gemm_tp_plan_t = u32;
/// Split N (the columns of op(B)); each device computes a block of C's columns, gathered into C.
pub const GEMM_TP_COLUMN: gemm_tp_plan_t = 0;
/// Split K; the f32 partial products are summed by a reduce-scatter, C rounded once.
pub const GEMM_TP_ROW_REDUCE_SCATTER: gemm_tp_plan_t = 1;
/// Split K; the f32 partial products are summed by an all-reduce, C rounded once.
pub const GEMM_TP_ROW_ALL_REDUCE: gemm_tp_plan_t = 2;

/// Device kinds in `gemm_device_info_t.kind`.
pub const GEMM_DEVICE_HOST: u32 = 0;
pub const GEMM_DEVICE_HIP: u32 = 1;
pub const GEMM_DEVICE_EMU: u32 = 2;
pub const GEMM_DEVICE_OTHER: u32 = 3;

/// The precision f32 inputs are multiplied at (`gemm_problem_t.math`): full f32
/// (`GEMM_MATH_DEFAULT`, 0: what a zero-initialised problem asks for), or, where the caller allows
/// it, xf32 (`GEMM_MATH_ALLOW_XF32`: gfx942's xf32 MFMAs round each f32 input to 10 mantissa bits
/// and run 4x the f32 rate; cuBLAS's `CUBLAS_COMPUTE_32F_FAST_TF32`). Other dtypes ignore it.
pub type gemm_math_t = u32;
pub const GEMM_MATH_DEFAULT: gemm_math_t = 0;
pub const GEMM_MATH_ALLOW_XF32: gemm_math_t = 1;

/// One GEMM: C = alpha * op(A) * op(B) + beta * C, with op(A) m x k, op(B) k x n, C m x n, all
/// stored in `layout` with leading dimensions (in elements). beta == 0 never reads C. `math`
/// (last, so positional initialisers that stop at `beta` get the default) allows reduced
/// precision for f32 inputs.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gemm_problem_t {
    pub layout: gemm_layout_t,
    pub trans_a: gemm_transpose_t,
    pub trans_b: gemm_transpose_t,
    pub a_type: gemm_dtype_t,
    pub b_type: gemm_dtype_t,
    pub c_type: gemm_dtype_t,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub lda: usize,
    pub ldb: usize,
    pub ldc: usize,
    pub alpha: f32,
    pub beta: f32,
    pub math: gemm_math_t,
}

/// The bias of a fused epilogue (gemm_epilogue_t): none, one f32 per row of C (m), or one per
/// column (n), in the problem's own terms whatever its layout.
pub type gemm_bias_t = u32;
pub const GEMM_BIAS_NONE: gemm_bias_t = 0;
pub const GEMM_BIAS_PER_ROW: gemm_bias_t = 1;
pub const GEMM_BIAS_PER_COLUMN: gemm_bias_t = 2;

/// The activation of a fused epilogue, applied after the bias.
pub type gemm_activation_t = u32;
pub const GEMM_ACTIVATION_NONE: gemm_activation_t = 0;
/// max(x, 0)
pub const GEMM_ACTIVATION_RELU: gemm_activation_t = 1;
/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
pub const GEMM_ACTIVATION_GELU_TANH: gemm_activation_t = 2;
/// x / (1 + exp(-x))
pub const GEMM_ACTIVATION_SILU: gemm_activation_t = 3;

/// A fused epilogue: C = clamp(act(alpha * op(A) * op(B) + beta * C + bias)), rounded once to
/// C's dtype. `clamp` 0 or 1; with 1, the result is clamped to [clamp_lo, clamp_hi].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gemm_epilogue_t {
    pub bias: gemm_bias_t,
    pub activation: gemm_activation_t,
    pub clamp: u32,
    pub clamp_lo: f32,
    pub clamp_hi: f32,
}

/// The scales of an fp8 GEMM (gemm_run_scaled, gemm_run_device_scaled), as hipBLASLt's scale
/// modes:
/// D[i,j] = scale_d * (alpha * scale_a * scale_b * (row[i] * col[j] * acc[i,j]) + beta * C[i,j]),
/// acc the f32 sum of the decoded fp8 products, evaluated in f32 in that order (w = row*col;
/// x = w*acc; s = (scale_a*scale_b)*alpha; x = s*x, a zero operand giving +0; x = fma(beta, C, x)
/// only when beta != 0; D = scale_d*x), then rounded once to C's dtype (f32, bf16 or f16). `row`
/// is NULL (all ones) or `row_len` == m floats, one per row of op(A); `col` NULL or `col_len` == n
/// floats, one per column of op(B); rows and columns are the problem's own whatever its layout.
/// Host memory for gemm_run_scaled, device memory of the GEMM's GPU for gemm_run_device_scaled.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gemm_fp8_scales_t {
    pub scale_a: f32,
    pub scale_b: f32,
    pub scale_d: f32,
    pub row: *const f32,
    pub row_len: usize,
    pub col: *const f32,
    pub col_len: usize,
}

/// What a device is.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gemm_device_info_t {
    /// NUL-terminated short name, e.g. "host:0".
    pub name: [c_char; 64],
    /// NUL-terminated description (CPU or GPU model), truncated to fit.
    pub description: [c_char; 256],
    /// GEMM_DEVICE_HOST, GEMM_DEVICE_HIP, GEMM_DEVICE_EMU or GEMM_DEVICE_OTHER.
    pub kind: u32,
    /// Threads (host) or compute units (GPU).
    pub compute_units: u32,
    /// Device memory in bytes (0 for the host).
    pub memory_bytes: u64,
}

/// An opaque set of devices.
pub struct gemm_context_t {
    ctx: Context,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(msg: &str) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

fn status_of(e: &Error) -> gemm_status_t {
    use gemm_core::Error as C;
    match e {
        Error::Invalid(inner) => match inner {
            C::UnknownDType(_) | C::UnknownDTypeName(_) | C::UnknownArch(_) | C::InvalidArgument(_) => {
                GEMM_STATUS_INVALID_VALUE
            }
            C::LeadingDimension { .. } => GEMM_STATUS_INVALID_LEADING_DIM,
            C::BufferTooSmall { .. } | C::ShapeMismatch(_) | C::UnsupportedLayout(_) => GEMM_STATUS_INVALID_SIZE,
            C::Overflow(_) => GEMM_STATUS_SIZE_OVERFLOW,
            C::DTypeMismatch { .. } | C::UnsupportedDTypes { .. } | C::SubByteDType { .. } => {
                GEMM_STATUS_UNSUPPORTED_DTYPE
            }
            C::OverlappingOutputs { .. } => GEMM_STATUS_OVERLAPPING_OUTPUTS,
        },
        Error::Misaligned { .. } => GEMM_STATUS_MISALIGNED,
        Error::Device { .. } | Error::NotRun(_) | Error::KernelCheck { .. } => GEMM_STATUS_DEVICE_ERROR,
        Error::Unsupported { .. } => GEMM_STATUS_UNSUPPORTED_DTYPE,
        Error::NoSuchDevice { .. } => GEMM_STATUS_NO_SUCH_DEVICE,
        Error::DeviceSpec { .. } => GEMM_STATUS_DEVICE_SELECTION,
        Error::WrongDevice { .. } => GEMM_STATUS_WRONG_DEVICE,
        Error::NotDeviceMemory { .. } => GEMM_STATUS_NOT_DEVICE_MEMORY,
        Error::NotAGpu { .. } => GEMM_STATUS_NOT_A_GPU,
        Error::Tp(e) => match e {
            TpError::UniqueId(_) => GEMM_STATUS_TP_BAD_UNIQUE_ID,
            TpError::RankOutOfRange { .. } => GEMM_STATUS_TP_RANK_OUT_OF_RANGE,
            TpError::Disagree(_) => GEMM_STATUS_TP_DISAGREE,
            TpError::PeerLost(_) => GEMM_STATUS_TP_PEER_LOST,
            TpError::Timeout { .. } => GEMM_STATUS_TP_TIMEOUT,
            TpError::Aborted(_) => GEMM_STATUS_TP_ABORTED,
            TpError::Comm(_) => GEMM_STATUS_TP_COMM_ERROR,
        },
        Error::BlockScale(e) => {
            use gemm_dispatch::BlockScaleError as B;
            match e {
                B::Format { .. } | B::OutputType(_) => GEMM_STATUS_UNSUPPORTED_DTYPE,
                B::ScaleDType { .. } | B::ScaleSlice { .. } => GEMM_STATUS_SCALE_DTYPE,
                B::BlockShape { .. } | B::ScaleTile { .. } => GEMM_STATUS_BLOCK_SHAPE,
                B::KNotMultiple { .. } => GEMM_STATUS_K_NOT_BLOCK_MULTIPLE,
                B::LeadingDimension { .. } | B::ScaleLeadingDimension { .. } => GEMM_STATUS_INVALID_LEADING_DIM,
                B::MisalignedRows { .. } | B::MisalignedAddress { .. } => GEMM_STATUS_MISALIGNED,
                B::BufferTooSmall { .. } => GEMM_STATUS_INVALID_SIZE,
                B::UnsupportedArch { .. } => GEMM_STATUS_UNSUPPORTED_ARCH,
                B::Overflow(_) => GEMM_STATUS_SIZE_OVERFLOW,
            }
        }
        Error::NoKernel { .. } => GEMM_STATUS_NO_KERNEL,
        Error::Scale(e) => match e {
            ScaleError::NotFp8 { .. } | ScaleError::OutputType(_) => GEMM_STATUS_UNSUPPORTED_DTYPE,
            ScaleError::VectorLength { .. } => GEMM_STATUS_INVALID_SIZE,
            ScaleError::VectorAlignment { .. } => GEMM_STATUS_MISALIGNED,
        },
    }
}

/// Runs `f`, turning errors into statuses (remembering the message) and panics into
/// GEMM_STATUS_INTERNAL_ERROR.
fn guard(f: impl FnOnce() -> Result<(), (gemm_status_t, String)>) -> gemm_status_t {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => {
            set_last_error("");
            GEMM_STATUS_SUCCESS
        }
        Ok(Err((status, msg))) => {
            set_last_error(&msg);
            status
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(&format!("internal error: {what}"));
            GEMM_STATUS_INTERNAL_ERROR
        }
    }
}

fn err(e: Error) -> (gemm_status_t, String) {
    (status_of(&e), e.to_string())
}

fn null(what: &str) -> (gemm_status_t, String) {
    (GEMM_STATUS_NULL_POINTER, format!("{what} is NULL"))
}

fn invalid(what: String) -> (gemm_status_t, String) {
    (GEMM_STATUS_INVALID_VALUE, what)
}

/// The Rust problem for a C problem, refusing out-of-range enum values.
fn problem(p: &gemm_problem_t) -> Result<GemmProblem, (gemm_status_t, String)> {
    let layout = match p.layout {
        GEMM_ROW_MAJOR => Layout::RowMajor,
        GEMM_COL_MAJOR => Layout::ColMajor,
        v => return Err(invalid(format!("layout {v} is neither GEMM_ROW_MAJOR nor GEMM_COL_MAJOR"))),
    };
    let trans = |v: u32, which: &str| match v {
        GEMM_NO_TRANS => Ok(Transpose::No),
        GEMM_TRANS => Ok(Transpose::Yes),
        v => Err(invalid(format!("{which} = {v} is neither GEMM_NO_TRANS nor GEMM_TRANS"))),
    };
    let dtype = |v: u32| DType::from_raw(v).map_err(|e| err(e.into()));
    Ok(GemmProblem {
        m: p.m,
        n: p.n,
        k: p.k,
        layout,
        trans_a: trans(p.trans_a, "trans_a")?,
        trans_b: trans(p.trans_b, "trans_b")?,
        lda: p.lda,
        ldb: p.ldb,
        ldc: p.ldc,
        alpha: p.alpha,
        beta: p.beta,
        a_type: dtype(p.a_type)?,
        b_type: dtype(p.b_type)?,
        c_type: dtype(p.c_type)?,
        allow_xf32: match p.math {
            GEMM_MATH_DEFAULT => false,
            GEMM_MATH_ALLOW_XF32 => true,
            v => return Err(invalid(format!("math = {v} is neither GEMM_MATH_DEFAULT nor GEMM_MATH_ALLOW_XF32"))),
        },
    })
}

/// The Rust problem behind a C problem pointer (NULL is an error).
fn read_problem(ptr: *const gemm_problem_t) -> Result<GemmProblem, (gemm_status_t, String)> {
    if ptr.is_null() {
        return Err(null("problem"));
    }
    // SAFETY: non-null pointer to a gemm_problem_t, plain old data (the entries' contract).
    problem(unsafe { &*ptr })
}

/// A byte slice of `len` bytes at `ptr`; NULL is accepted only for an empty span.
///
/// # Safety
/// `ptr` must be NULL or point to `len` readable bytes that stay valid and unmodified (except
/// through the returned slice) for `'a`.
unsafe fn bytes<'a>(ptr: *const c_void, len: usize, what: &str) -> Result<&'a [u8], (gemm_status_t, String)> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-null, and the caller guarantees `len` readable bytes for 'a.
    Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) })
}

/// Mutable version of [`bytes`].
///
/// # Safety
/// `ptr` must be NULL or point to `len` writable bytes that nothing else accesses for `'a`.
unsafe fn bytes_mut<'a>(ptr: *mut c_void, len: usize, what: &str) -> Result<&'a mut [u8], (gemm_status_t, String)> {
    if len == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-null, and the caller guarantees exclusive access to `len` writable bytes for 'a.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u8>(), len) })
}

/// Byte length of `elems` elements of `d`; sizes were validated so this cannot overflow, but is
/// checked anyway.
fn byte_len(elems: usize, d: DType) -> Result<usize, (gemm_status_t, String)> {
    elems.checked_mul(d.size_bytes()).ok_or_else(|| (GEMM_STATUS_SIZE_OVERFLOW, "buffer size in bytes".into()))
}

/// A, B and C as bytes.
type Buffers<'a> = (&'a [u8], &'a [u8], &'a mut [u8]);

/// The three buffers of a validated problem as byte slices of exactly its spans.
///
/// # Safety
/// As for [`bytes`] and [`bytes_mut`], for the spans' byte lengths.
unsafe fn buffers<'a>(
    p: &GemmProblem,
    spans: gemm_core::problem::Spans,
    a: *const c_void,
    b: *const c_void,
    c: *mut c_void,
    names: [&str; 3],
) -> Result<Buffers<'a>, (gemm_status_t, String)> {
    let (la, lb, lc) = (byte_len(spans.a, p.a_type)?, byte_len(spans.b, p.b_type)?, byte_len(spans.c, p.c_type)?);
    // SAFETY: forwarded from this function's contract.
    unsafe { Ok((bytes(a, la, names[0])?, bytes(b, lb, names[1])?, bytes_mut(c, lc, names[2])?)) }
}

fn context<'a>(ctx: *const gemm_context_t) -> Result<&'a Context, (gemm_status_t, String)> {
    if ctx.is_null() {
        return Err(null("ctx"));
    }
    // SAFETY: a non-null gemm_context_t* comes from gemm_context_create and stays valid until
    // gemm_context_destroy, which the caller must not call concurrently with other uses.
    Ok(unsafe { &(*ctx).ctx })
}

/// Creates a context. `devices` is a device list such as "host" or "host,host,host", or NULL for
/// the default (the GEMM_DEVICES environment variable, else the best devices present).
///
/// # Safety
/// `devices` is NULL or a NUL-terminated string; `out` is NULL or points to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn gemm_context_create(devices: *const c_char, out: *mut *mut gemm_context_t) -> gemm_status_t {
    guard(|| {
        if out.is_null() {
            return Err(null("out"));
        }
        let ctx = if devices.is_null() {
            Context::from_env()
        } else {
            // SAFETY: non-null; the caller passes a NUL-terminated string.
            let spec = unsafe { CStr::from_ptr(devices) };
            let spec = spec.to_str().map_err(|_| invalid("devices is not UTF-8".into()))?;
            Context::from_spec(spec)
        }
        .map_err(err)?;
        let handle = Box::into_raw(Box::new(gemm_context_t { ctx }));
        // SAFETY: `out` is non-null and points to writable storage for one pointer (caller's contract).
        unsafe { out.write(handle) };
        Ok(())
    })
}

/// Destroys a context made by gemm_context_create. NULL is accepted and ignored.
///
/// # Safety
/// `ctx` is NULL or a handle from `gemm_context_create` not yet destroyed and not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn gemm_context_destroy(ctx: *mut gemm_context_t) -> gemm_status_t {
    guard(|| {
        if !ctx.is_null() {
            // SAFETY: a non-null pointer came from Box::into_raw in gemm_context_create and is
            // destroyed once (caller's contract).
            drop(unsafe { Box::from_raw(ctx) });
        }
        Ok(())
    })
}

/// Number of devices in the context.
///
/// # Safety
/// `ctx` is NULL or a live handle; `out` is NULL or points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn gemm_device_count(ctx: *const gemm_context_t, out: *mut usize) -> gemm_status_t {
    guard(|| {
        let ctx = context(ctx)?;
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: non-null pointer to a writable size_t (caller's contract).
        unsafe { out.write(ctx.device_count()) };
        Ok(())
    })
}

fn copy_str(dst: &mut [c_char], s: &str) {
    let n = s.len().min(dst.len() - 1);
    for (d, b) in dst.iter_mut().zip(s.bytes().take(n)) {
        *d = b as c_char;
    }
    dst[n] = 0;
}

/// Describes device `index` of the context.
///
/// # Safety
/// `ctx` is NULL or a live handle; `out` is NULL or points to a writable `gemm_device_info_t`.
#[no_mangle]
pub unsafe extern "C" fn gemm_device_info(
    ctx: *const gemm_context_t,
    index: usize,
    out: *mut gemm_device_info_t,
) -> gemm_status_t {
    guard(|| {
        let ctx = context(ctx)?;
        if out.is_null() {
            return Err(null("out"));
        }
        let devices = ctx.devices();
        let d = devices.get(index).ok_or_else(|| err(Error::NoSuchDevice { index, count: devices.len() }))?;
        let mut info = gemm_device_info_t {
            name: [0; 64],
            description: [0; 256],
            kind: match d.kind {
                gemm_dispatch::DeviceKind::Host => GEMM_DEVICE_HOST,
                gemm_dispatch::DeviceKind::Hip { .. } => GEMM_DEVICE_HIP,
                gemm_dispatch::DeviceKind::Emu { .. } => GEMM_DEVICE_EMU,
                gemm_dispatch::DeviceKind::Other(_) => GEMM_DEVICE_OTHER,
            },
            compute_units: u32::try_from(d.compute_units).unwrap_or(u32::MAX),
            memory_bytes: d.memory_bytes,
        };
        copy_str(&mut info.name, &d.name);
        copy_str(&mut info.description, &d.description);
        // SAFETY: non-null pointer to a writable gemm_device_info_t (caller's contract).
        unsafe { out.write(info) };
        Ok(())
    })
}

/// One GEMM on the best device of the context. `a`, `b`, `c` point to the first element of each
/// matrix, with as many elements as the problem's shape and leading dimensions need.
///
/// # Safety
/// `ctx` and `problem` are NULL or valid; `a`, `b` are NULL or readable and `c` NULL or writable for the elements the problem's shape and leading dimensions address; `c` does not overlap `a` or `b`.
#[no_mangle]
pub unsafe extern "C" fn gemm_run(
    ctx: *mut gemm_context_t,
    problem_: *const gemm_problem_t,
    a: *const c_void,
    b: *const c_void,
    c: *mut c_void,
) -> gemm_status_t {
    guard(|| {
        let ctx = context(ctx)?;
        let p = read_problem(problem_)?;
        let spans = p.validate().map_err(|e| err(e.into()))?;
        // SAFETY: the caller provides buffers of at least the validated spans (gemm_run's contract).
        let (a, b, c) = unsafe { buffers(&p, spans, a, b, c, ["a", "b", "c"])? };
        ctx.gemm_bytes(&p, a, b, c).map_err(err)
    })
}

/// The Rust epilogue for a C one, and the bias vector's length it needs for `p`.
fn read_epilogue(ptr: *const gemm_epilogue_t) -> Result<Epilogue, (gemm_status_t, String)> {
    if ptr.is_null() {
        return Err(null("epilogue"));
    }
    // SAFETY: non-null, points at a gemm_epilogue_t (caller's contract).
    let e = unsafe { *ptr };
    let bias = match e.bias {
        GEMM_BIAS_NONE => None,
        GEMM_BIAS_PER_ROW => Some(BiasAxis::PerRow),
        GEMM_BIAS_PER_COLUMN => Some(BiasAxis::PerColumn),
        v => return Err(invalid(format!("bias {v} is not GEMM_BIAS_NONE, _PER_ROW or _PER_COLUMN"))),
    };
    let activation = match e.activation {
        GEMM_ACTIVATION_NONE => Activation::None,
        GEMM_ACTIVATION_RELU => Activation::Relu,
        GEMM_ACTIVATION_GELU_TANH => Activation::GeluTanh,
        GEMM_ACTIVATION_SILU => Activation::Silu,
        v => return Err(invalid(format!("activation {v} is not a GEMM_ACTIVATION_* value"))),
    };
    let clamp = match e.clamp {
        0 => None,
        1 => Some((e.clamp_lo, e.clamp_hi)),
        v => return Err(invalid(format!("clamp {v} is not 0 or 1"))),
    };
    Ok(Epilogue { bias, activation, clamp })
}

/// One GEMM on host memory with a fused epilogue (`epilogue`; `bias` the f32 vector its bias
/// needs, m or n elements, NULL without a bias), computed on the host CPU with the GPU kernels'
/// formulas and one rounding to C's dtype (f32, f16 or bf16). Bad input (a missing or unneeded
/// bias vector, clamp bounds that are not an interval, unknown enum values): its status, C
/// untouched.
///
/// # Safety
/// As for `gemm_run`; `epilogue` is NULL or valid; `bias` is NULL or readable for the elements
/// the epilogue's bias needs.
#[no_mangle]
pub unsafe extern "C" fn gemm_run_epilogue(
    ctx: *mut gemm_context_t,
    problem_: *const gemm_problem_t,
    a: *const c_void,
    b: *const c_void,
    c: *mut c_void,
    epilogue: *const gemm_epilogue_t,
    bias: *const f32,
) -> gemm_status_t {
    guard(|| {
        let ctx = context(ctx)?;
        let p = read_problem(problem_)?;
        let ep = read_epilogue(epilogue)?;
        let spans = p.validate().map_err(|e| err(e.into()))?;
        // SAFETY: the caller provides buffers of at least the validated spans.
        let (a, b, c) = unsafe { buffers(&p, spans, a, b, c, ["a", "b", "c"])? };
        let bias = if bias.is_null() {
            None
        } else {
            // SAFETY: non-null and readable for the elements the epilogue needs (caller's contract).
            Some(unsafe { std::slice::from_raw_parts(bias, ep.bias_len(&p)) })
        };
        ctx.gemm_epilogue_bytes(&p, a, b, c, &ep, bias).map_err(err)
    })
}

/// One GEMM with a fused epilogue on device memory of GPU `device`, queued on `stream`, as
/// `gemm_run_device`; `bias` is a device pointer to the f32 vector the epilogue's bias needs (NULL
/// without a bias). It runs in one kernel of the catalogue's fused family (bf16 -> bf16, a column
/// bias in the kernel's column-major terms, i.e. a per-row bias of a row-major problem, with
/// ReLU, GELU or SiLU); other epilogues are GEMM_STATUS_UNSUPPORTED_DTYPE on GPUs (gemm_run_epilogue
/// computes every one on the host). `gemm_last_kernel` names the kernel.
///
/// # Safety
/// As for `gemm_run_device`; `epilogue` is NULL or valid; `bias` is NULL or a device pointer that
/// stays allocated until the GEMM has run.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn gemm_run_device_epilogue(
    ctx: *mut gemm_context_t,
    device: usize,
    stream: *mut c_void,
    problem_: *const gemm_problem_t,
    a: *const c_void,
    b: *const c_void,
    c: *mut c_void,
    epilogue: *const gemm_epilogue_t,
    bias: *const f32,
) -> gemm_status_t {
    guard(|| {
        // SAFETY: `stream` is NULL or live (caller's contract).
        let (gpu, stream) = unsafe { gpu_and_stream(ctx, device, stream)? };
        let p = read_problem(problem_)?;
        let ep = read_epilogue(epilogue)?;
        let spans = p.validate().map_err(|e| err(e.into()))?;
        let sa = device_span(&gpu, "a", a, spans.a)?;
        let sb = device_span(&gpu, "b", b, spans.b)?;
        let sc = device_span(&gpu, "c", c, spans.c)?;
        let sbias = if bias.is_null() { None } else { Some(device_span(&gpu, "bias", bias.cast(), ep.bias_len(&p))?) };
        // SAFETY: the spans come from the runtime's record of the allocations; the caller keeps
        // them allocated until the GEMM has run and C apart from A, B and the bias.
        unsafe { gpu.gemm_epilogue_raw("gemm_run_device_epilogue", &stream, &p, [sa, sb, sc], &ep, sbias) }
            .map(|_| ())
            .map_err(err)
    })
}

/// The Rust scales of a C `gemm_fp8_scales_t`, and its two vectors as (pointer, length) (`None`:
/// NULL, no vector). A NULL struct, or a NULL vector with a non-zero length, is
/// GEMM_STATUS_NULL_POINTER.
#[allow(clippy::type_complexity)]
fn read_scales(
    ptr: *const gemm_fp8_scales_t,
) -> Result<(Fp8Scales, Option<(*const f32, usize)>, Option<(*const f32, usize)>), (gemm_status_t, String)> {
    if ptr.is_null() {
        return Err(null("scales"));
    }
    // SAFETY: non-null, points at a gemm_fp8_scales_t (caller's contract).
    let s = unsafe { *ptr };
    let vec = |p: *const f32, len: usize, what: &str| match (p.is_null(), len) {
        (true, 0) => Ok(None),
        (true, _) => Err((GEMM_STATUS_NULL_POINTER, format!("scales->{what} is NULL but {what}_len is {len}"))),
        (false, _) => Ok(Some((p, len))),
    };
    Ok((
        Fp8Scales { a: s.scale_a, b: s.scale_b, d: s.scale_d },
        vec(s.row, s.row_len, "row")?,
        vec(s.col, s.col_len, "col")?,
    ))
}

/// One fp8 GEMM with scales (`gemm_fp8_scales_t`: per tensor, and optional per-row / per-column
/// vectors in host memory) on host memory, computed on the host CPU with the GPU kernels' f32
/// steps and one rounding to C's dtype. Bad input: scales for a non-fp8 problem or an fp8 C
/// (GEMM_STATUS_UNSUPPORTED_DTYPE), a vector whose length is not m / n
/// (GEMM_STATUS_INVALID_SIZE), a NULL vector with a length (GEMM_STATUS_NULL_POINTER); C
/// untouched.
///
/// # Safety
/// As for `gemm_run`; `scales` is NULL or valid, and its non-NULL vectors are readable for their
/// lengths.
#[no_mangle]
pub unsafe extern "C" fn gemm_run_scaled(
    ctx: *mut gemm_context_t,
    problem_: *const gemm_problem_t,
    a: *const c_void,
    b: *const c_void,
    c: *mut c_void,
    scales: *const gemm_fp8_scales_t,
) -> gemm_status_t {
    guard(|| {
        let ctx = context(ctx)?;
        let p = read_problem(problem_)?;
        let (sc, row, col) = read_scales(scales)?;
        sc.check(&p, row.map(|r| r.1), col.map(|v| v.1)).map_err(|e| err(e.into()))?;
        let spans = p.validate().map_err(|e| err(e.into()))?;
        // SAFETY: the caller provides buffers of at least the validated spans.
        let (a, b, c) = unsafe { buffers(&p, spans, a, b, c, ["a", "b", "c"])? };
        // SAFETY: non-NULL vectors are readable for their lengths (caller's contract).
        let slice = |v: Option<(*const f32, usize)>| v.map(|(p, n)| unsafe { std::slice::from_raw_parts(p, n) });
        ctx.gemm_scaled_bytes(&p, a, b, c, &sc, slice(row), slice(col)).map_err(err)
    })
}

/// One fp8 GEMM with scales on device memory of GPU `device`, queued on `stream`, as
/// `gemm_run_device`; the scale vectors of `scales` are device pointers on that GPU (NULL: none).
/// It runs in the catalogue's fp8 kernel for the problem (`gemm_last_kernel` names it); the
/// statuses of `gemm_run_scaled`, plus those of `gemm_run_device` for the operands and for the
/// vectors (outside device memory, on another GPU, not 4-byte aligned). Nothing is queued on bad
/// input.
///
/// # Safety
/// As for `gemm_run_device`; `scales` is NULL or valid, and its non-NULL vectors are device
/// pointers that stay allocated until the GEMM has run.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn gemm_run_device_scaled(
    ctx: *mut gemm_context_t,
    device: usize,
    stream: *mut c_void,
    problem_: *const gemm_problem_t,
    a: *const c_void,
    b: *const c_void,
    c: *mut c_void,
    scales: *const gemm_fp8_scales_t,
) -> gemm_status_t {
    guard(|| {
        // SAFETY: `stream` is NULL or live (caller's contract).
        let (gpu, stream) = unsafe { gpu_and_stream(ctx, device, stream)? };
        let p = read_problem(problem_)?;
        let (sc, row, col) = read_scales(scales)?;
        sc.check(&p, row.map(|r| r.1), col.map(|v| v.1)).map_err(|e| err(e.into()))?;
        let spans = p.validate().map_err(|e| err(e.into()))?;
        let sa = device_span(&gpu, "a", a, spans.a)?;
        let sb = device_span(&gpu, "b", b, spans.b)?;
        let sc_ = device_span(&gpu, "c", c, spans.c)?;
        let vec = |v: Option<(*const f32, usize)>, what: &str| {
            v.map(|(ptr, n)| device_span(&gpu, what, ptr.cast(), n)).transpose()
        };
        let (srow, scol) = (vec(row, "scales->row")?, vec(col, "scales->col")?);
        // SAFETY: the spans come from the runtime's record of the allocations; the caller keeps
        // them allocated until the GEMM has run and C apart from A, B and the vectors.
        unsafe { gpu.gemm_scaled_raw("gemm_run_device_scaled", &stream, &p, [sa, sb, sc_], &sc, srow, scol) }
            .map(|_| ())
            .map_err(err)
    })
}

/// The dtype of a block-scaled GEMM's scale tensor (`gemm_block_scale_t.dtype`).
pub type gemm_scale_dtype_t = u32;
/// OCP MX E8M0: one byte per scale, the power of two `2^(code - 127)`, 0xFF is NaN (MX).
pub const GEMM_SCALE_E8M0: gemm_scale_dtype_t = 0;
/// IEEE binary32 (block-scaled fp8).
pub const GEMM_SCALE_F32: gemm_scale_dtype_t = 1;

/// One operand's scale tensor of a block-scaled GEMM. Versioned (ABI rule): set `size` with
/// `gemm_block_scale_init`, then the fields. The tensor holds `ceil(rows / block_rows)` scale
/// rows (rows: M for X, N for W) of `ceil(K / block_k)` scales, laid out as `layout` says
/// (row-major by default, `ld` scales apart); scale `(r / block_rows, l / block_k)` multiplies
/// element `(r, l)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gemm_block_scale_t {
    /// `sizeof(gemm_block_scale_t)`, set by `gemm_block_scale_init`.
    pub size: usize,
    /// The first scale: host memory for `gemm_run_block_scaled`, device memory for
    /// `gemm_run_device_block_scaled`. NULL only when the tensor is empty (K, or the operand's
    /// rows, 0).
    pub scales: *const c_void,
    /// GEMM_SCALE_E8M0 (MX) or GEMM_SCALE_F32 (block fp8).
    pub dtype: gemm_scale_dtype_t,
    /// Rows of the operand one scale covers: 1 (MX; block fp8 activations) or 128 (block fp8
    /// weights).
    pub block_rows: usize,
    /// Elements along K one scale covers: 32 (MX) or 128 (block fp8).
    pub block_k: usize,
    /// The layout's leading dimension: GEMM_SCALES_ROW_MAJOR, scales between the starts of two
    /// scale rows (at least `ceil(K / block_k)`); GEMM_SCALES_COL_MAJOR and GEMM_SCALES_K_TILED,
    /// the scale rows the tensor is laid out for (at least `ceil(rows / block_rows)`).
    pub ld: usize,
    /// GEMM_SCALES_ROW_MAJOR (the default), GEMM_SCALES_COL_MAJOR or GEMM_SCALES_K_TILED.
    pub layout: gemm_scale_layout_t,
    /// GEMM_SCALES_K_TILED: the K groups of one tile (the MX kernels read 8 for fp4 x fp4, 4
    /// for every other pair); otherwise unused.
    pub tile: usize,
}

/// How a scale tensor of R scale rows and G K groups is laid out
/// (`gemm_block_scale_t.layout`): where scale `(rb, g)` lives.
pub type gemm_scale_layout_t = u32;
/// `rb * ld + g` (each scale row contiguous along K).
pub const GEMM_SCALES_ROW_MAJOR: gemm_scale_layout_t = 0;
/// `rb + g * ld` (each K group contiguous along the rows: the DeepSeek GEMM challenge's
/// activation scales; the block fp8 kernels read them with one line per 32 rows).
pub const GEMM_SCALES_COL_MAJOR: gemm_scale_layout_t = 1;
/// `(g / tile) * tile * ld + rb * tile + g % tile` (`tile` groups of every row together, tile
/// after tile: the MX kernels read them with one line per 32 rows).
pub const GEMM_SCALES_K_TILED: gemm_scale_layout_t = 2;

/// Fills `scale` with its size and an MX default (NULL scales, GEMM_SCALE_E8M0, 1 x 32 blocks,
/// ld 0, row-major): set `scales`, `ld` and, for block fp8, `dtype` and the block shape.
///
/// # Safety
/// `scale` is NULL or points to a writable `gemm_block_scale_t`.
#[no_mangle]
pub unsafe extern "C" fn gemm_block_scale_init(scale: *mut gemm_block_scale_t) -> gemm_status_t {
    guard(|| {
        if scale.is_null() {
            return Err(null("scale"));
        }
        let s = gemm_block_scale_t {
            size: std::mem::size_of::<gemm_block_scale_t>(),
            scales: std::ptr::null(),
            dtype: GEMM_SCALE_E8M0,
            block_rows: 1,
            block_k: 32,
            ld: 0,
            layout: GEMM_SCALES_ROW_MAJOR,
            tile: 0,
        };
        // SAFETY: non-null, writable (this function's contract).
        unsafe { scale.write(s) };
        Ok(())
    })
}

/// The Rust problem of a block-scaled call and its two scale pointers. The C problem must be
/// the Linear layer: GEMM_ROW_MAJOR, A (X) not transposed, B (W) transposed (stored N x K).
fn block_problem(
    problem_: *const gemm_problem_t,
    scale_a: *const gemm_block_scale_t,
    scale_b: *const gemm_block_scale_t,
) -> Result<(gemm_dispatch::BlockScaledProblem, [*const c_void; 2]), (gemm_status_t, String)> {
    if problem_.is_null() {
        return Err(null("problem"));
    }
    // SAFETY: non-null pointer to a gemm_problem_t, plain old data (the entries' contract).
    let p = unsafe { *problem_ };
    if (p.layout, p.trans_a, p.trans_b) != (GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_TRANS) {
        return Err(invalid(format!(
            "block-scaled GEMMs are the Linear layer Y = X * W^T: layout GEMM_ROW_MAJOR, trans_a \
             GEMM_NO_TRANS, trans_b GEMM_TRANS (got layout {}, trans_a {}, trans_b {})",
            p.layout, p.trans_a, p.trans_b
        )));
    }
    if p.math != GEMM_MATH_DEFAULT {
        return Err(invalid(format!("math = {}: block-scaled GEMMs take GEMM_MATH_DEFAULT", p.math)));
    }
    let dtype = |v: u32| DType::from_raw(v).map_err(|e| err(e.into()));
    let mut descs = [None; 2];
    let mut ptrs = [std::ptr::null(); 2];
    for (i, (ptr, what)) in [(scale_a, "scale_a"), (scale_b, "scale_b")].into_iter().enumerate() {
        if ptr.is_null() {
            return Err(null(what));
        }
        // SAFETY: non-null pointer to at least the `size` field (the caller's contract).
        let size = unsafe { (*ptr).size };
        if size != std::mem::size_of::<gemm_block_scale_t>() {
            return Err(invalid(format!(
                "{what}->size is {size}, this library's gemm_block_scale_t is {}: call gemm_block_scale_init",
                std::mem::size_of::<gemm_block_scale_t>()
            )));
        }
        // SAFETY: as above; the whole struct is there.
        let s = unsafe { *ptr };
        let dtype = gemm_dispatch::ScaleType::from_raw(s.dtype).ok_or_else(|| {
            invalid(format!("{what}->dtype = {} is neither GEMM_SCALE_E8M0 nor GEMM_SCALE_F32", s.dtype))
        })?;
        let block = gemm_dispatch::BlockShape { rows: s.block_rows, k: s.block_k };
        let layout = match s.layout {
            GEMM_SCALES_ROW_MAJOR => gemm_dispatch::ScaleLayout::RowMajor,
            GEMM_SCALES_COL_MAJOR => gemm_dispatch::ScaleLayout::ColMajor,
            GEMM_SCALES_K_TILED => gemm_dispatch::ScaleLayout::KTiled { tile: s.tile },
            other => return Err(invalid(format!("{what}->layout = {other} is not a GEMM_SCALES_* value"))),
        };
        descs[i] = Some(gemm_dispatch::ScaleDesc { dtype, block, ld: s.ld, layout });
        ptrs[i] = s.scales;
    }
    let (Some(sa), Some(sb)) = (descs[0], descs[1]) else {
        return Err(invalid("scale descriptors".into()));
    };
    let bp = gemm_dispatch::BlockScaledProblem {
        m: p.m,
        n: p.n,
        k: p.k,
        a_type: dtype(p.a_type)?,
        b_type: dtype(p.b_type)?,
        c_type: dtype(p.c_type)?,
        lda: p.lda,
        ldb: p.ldb,
        ldc: p.ldc,
        alpha: p.alpha,
        beta: p.beta,
        scale_a: sa,
        scale_b: sb,
    };
    Ok((bp, ptrs))
}

/// One block-scaled GEMM on host memory: the Linear layer `Y = alpha * (sa . X) * (sb . W)^T +
/// beta * Y` with MX operands (any of fp8_e4m3, fp8_e5m2, fp6_e2m3, fp6_e3m2, fp4_e2m1 per
/// operand; E8M0 scales per 1 x 32; K a multiple of 32) or DeepSeek-V3 block fp8 (fp8 of one
/// flavour; f32 scales per 1 x 128 or 128 x 128). `problem` must be GEMM_ROW_MAJOR with
/// trans_a GEMM_NO_TRANS and trans_b GEMM_TRANS: `a` is X (M x K), `b` is W (N x K), both
/// packed along K (fp4 two per byte, fp6 four per three bytes), `lda`/`ldb` in elements with
/// every row 16-byte aligned (`ld * bits` a multiple of 128); `c` is Y (M x N, f32, bf16 or
/// f16, `ldc >= N`; not read when beta is 0). Runs on the context's first device that can (the
/// host computes it; see the Rust `Context::gemm_block_scaled`). Statuses: NULL pointers
/// (GEMM_STATUS_NULL_POINTER), a scale struct whose size is not this library's or an enum out
/// of range (GEMM_STATUS_INVALID_VALUE), GEMM_STATUS_BLOCK_SHAPE,
/// GEMM_STATUS_K_NOT_BLOCK_MULTIPLE, GEMM_STATUS_SCALE_DTYPE, GEMM_STATUS_INVALID_LEADING_DIM
/// (operand or scale ld), GEMM_STATUS_MISALIGNED (rows), GEMM_STATUS_UNSUPPORTED_DTYPE,
/// GEMM_STATUS_SIZE_OVERFLOW, GEMM_STATUS_UNSUPPORTED_ARCH / GEMM_STATUS_NO_KERNEL (from a GPU
/// with no host device after it); Y untouched on any of them.
///
/// # Safety
/// `ctx`, `problem`, `scale_a`, `scale_b` are NULL or valid; `a`, `b`, the scale pointers and
/// `c` are NULL or point to at least the bytes the problem spans, `c` apart from the others.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn gemm_run_block_scaled(
    ctx: *mut gemm_context_t,
    problem_: *const gemm_problem_t,
    a: *const c_void,
    scale_a: *const gemm_block_scale_t,
    b: *const c_void,
    scale_b: *const gemm_block_scale_t,
    c: *mut c_void,
) -> gemm_status_t {
    guard(|| {
        let ctx = context(ctx)?;
        let (p, [pa, pb]) = block_problem(problem_, scale_a, scale_b)?;
        let spans = p.validate().map_err(|e| err(e.into()))?;
        // SAFETY: the caller provides buffers of at least the validated spans (NULL only for
        // empty ones, which `bytes` checks).
        let bufs = unsafe {
            [
                bytes(a, spans.a, "a")?,
                bytes(pa, spans.scale_a, "scale_a->scales")?,
                bytes(b, spans.b, "b")?,
                bytes(pb, spans.scale_b, "scale_b->scales")?,
            ]
        };
        // SAFETY: as above, C exclusive for the call.
        let c = unsafe { bytes_mut(c, spans.c, "c")? };
        ctx.gemm_block_scaled_bytes(&p, bufs, c).map_err(err)
    })
}

/// One block-scaled GEMM on device memory of GPU `device`, queued on `stream`, as
/// `gemm_run_block_scaled` describes (the scale pointers are device pointers too); X and W must
/// start 16-byte aligned, Y at its element size, f32 scales at 4 bytes. Checked whole before
/// anything is queued: the statuses of `gemm_run_block_scaled` and of `gemm_run_device`
/// (GEMM_STATUS_NOT_DEVICE_MEMORY, GEMM_STATUS_WRONG_DEVICE, GEMM_STATUS_NOT_A_GPU), MX on a
/// gfx942 is GEMM_STATUS_UNSUPPORTED_ARCH; a valid call no kernel runs (K-tiled MX scales in
/// another tile than the kernels') answers GEMM_STATUS_NO_KERNEL.
///
/// # Safety
/// As for `gemm_run_device`; the scale pointers are NULL or device pointers that stay allocated
/// until the GEMM has run.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn gemm_run_device_block_scaled(
    ctx: *mut gemm_context_t,
    device: usize,
    stream: *mut c_void,
    problem_: *const gemm_problem_t,
    a: *const c_void,
    scale_a: *const gemm_block_scale_t,
    b: *const c_void,
    scale_b: *const gemm_block_scale_t,
    c: *mut c_void,
) -> gemm_status_t {
    guard(|| {
        // SAFETY: `stream` is NULL or live (caller's contract).
        let (gpu, stream) = unsafe { gpu_and_stream(ctx, device, stream)? };
        let (p, [pa, pb]) = block_problem(problem_, scale_a, scale_b)?;
        let spans = p.validate().map_err(|e| err(e.into()))?;
        let spans = [
            device_span(&gpu, "a", a, spans.a)?,
            device_span(&gpu, "scale_a->scales", pa, spans.scale_a)?,
            device_span(&gpu, "b", b, spans.b)?,
            device_span(&gpu, "scale_b->scales", pb, spans.scale_b)?,
            device_span(&gpu, "c", c, spans.c)?,
        ];
        // SAFETY: the spans come from the runtime's record of the allocations; the caller keeps
        // them allocated until the GEMM has run and Y apart from the inputs.
        unsafe { gpu.gemm_block_scaled_raw(&stream, &p, spans) }.map(|_| ()).map_err(err)
    })
}

/// The Rust plan for a C plan value.
fn tp_plan(plan: gemm_tp_plan_t) -> Result<TpPlan, (gemm_status_t, String)> {
    match plan {
        GEMM_TP_COLUMN => Ok(TpPlan::Column),
        GEMM_TP_ROW_REDUCE_SCATTER => Ok(TpPlan::Row { reduce: Reduce::ReduceScatter }),
        GEMM_TP_ROW_ALL_REDUCE => Ok(TpPlan::Row { reduce: Reduce::AllReduce }),
        v => Err(invalid(format!(
            "plan {v} is not GEMM_TP_COLUMN, GEMM_TP_ROW_REDUCE_SCATTER or GEMM_TP_ROW_ALL_REDUCE"
        ))),
    }
}

/// [`Context::gemm_tensor_parallel`] on byte buffers viewed as the element types `A`, `B`, `C`
/// (misaligned buffers are refused).
fn tp_typed<A: Element, B: Element, C: Element>(
    ctx: &Context,
    plan: TpPlan,
    p: &GemmProblem,
    (a, b, c): Buffers<'_>,
) -> Result<(), Error> {
    let a = typed::<A>(a, Operand::A, p.a_type)?;
    let b = typed::<B>(b, Operand::B, p.b_type)?;
    let c = typed_mut::<C>(c, Operand::C, p.c_type)?;
    ctx.gemm_tensor_parallel(plan, p, a, b, c)
}

/// [`tp_typed`] for the element types of a validated problem's dtypes (every combination
/// `check_dtypes` accepts).
fn tp_dispatch(ctx: &Context, plan: TpPlan, p: &GemmProblem, bufs: Buffers<'_>) -> Result<(), Error> {
    use DType as D;
    macro_rules! outputs {
        ($a:ty, $b:ty) => {
            match p.c_type {
                D::F32 => tp_typed::<$a, $b, f32>(ctx, plan, p, bufs),
                D::F16 => tp_typed::<$a, $b, f16>(ctx, plan, p, bufs),
                D::Bf16 => tp_typed::<$a, $b, bf16>(ctx, plan, p, bufs),
                _ => unsupported(p),
            }
        };
    }
    macro_rules! fp8 {
        ($a:ty, $e4:ident, $e5:ident) => {
            match p.b_type {
                D::$e4 => outputs!($a, $e4),
                D::$e5 => outputs!($a, $e5),
                _ => unsupported(p),
            }
        };
    }
    match (p.a_type, p.b_type, p.c_type) {
        (D::F32, D::F32, D::F32) => tp_typed::<f32, f32, f32>(ctx, plan, p, bufs),
        (D::F16, D::F16, D::F32) => tp_typed::<f16, f16, f32>(ctx, plan, p, bufs),
        (D::F16, D::F16, D::F16) => tp_typed::<f16, f16, f16>(ctx, plan, p, bufs),
        (D::Bf16, D::Bf16, D::F32) => tp_typed::<bf16, bf16, f32>(ctx, plan, p, bufs),
        (D::Bf16, D::Bf16, D::Bf16) => tp_typed::<bf16, bf16, bf16>(ctx, plan, p, bufs),
        (D::Fp8E4M3Fnuz, _, _) => fp8!(Fp8E4M3Fnuz, Fp8E4M3Fnuz, Fp8E5M2Fnuz),
        (D::Fp8E5M2Fnuz, _, _) => fp8!(Fp8E5M2Fnuz, Fp8E4M3Fnuz, Fp8E5M2Fnuz),
        (D::Fp8E4M3, _, _) => fp8!(Fp8E4M3, Fp8E4M3, Fp8E5M2),
        (D::Fp8E5M2, _, _) => fp8!(Fp8E5M2, Fp8E4M3, Fp8E5M2),
        _ => unsupported(p),
    }
}

/// A dtype combination [`tp_dispatch`] has no element types for; `validate` refuses these first.
fn unsupported(p: &GemmProblem) -> Result<(), Error> {
    Err(Error::Invalid(gemm_core::Error::UnsupportedDTypes {
        a: p.a_type,
        b: p.b_type,
        c: p.c_type,
        why: "not a tensor-parallel dtype combination",
    }))
}

/// One GEMM split over every device of the context by `plan` (tensor parallelism):
/// GEMM_TP_COLUMN splits op(B) by columns and gathers C; the GEMM_TP_ROW_* plans split K and sum
/// the f32 partial products, rounding C once. On a context whose devices are all HIP GPUs (with
/// RCCL available) the shards stay on the GPUs and RCCL combines them; otherwise the devices'
/// GEMMs read and write host memory and an in-process collective combines them
/// (`gemm_tensor_parallel_route` says which). Buffers and dtypes as for `gemm_run`; an unknown
/// `plan` is GEMM_STATUS_INVALID_VALUE. On any error C is untouched.
///
/// # Safety
/// as for `gemm_run`.
#[no_mangle]
pub unsafe extern "C" fn gemm_tensor_parallel(
    ctx: *mut gemm_context_t,
    plan: gemm_tp_plan_t,
    problem_: *const gemm_problem_t,
    a: *const c_void,
    b: *const c_void,
    c: *mut c_void,
) -> gemm_status_t {
    guard(|| {
        let ctx = context(ctx)?;
        let plan = tp_plan(plan)?;
        let p = read_problem(problem_)?;
        let spans = p.validate().map_err(|e| err(e.into()))?;
        // SAFETY: the caller provides buffers of at least the validated spans (as for gemm_run).
        let bufs = unsafe { buffers(&p, spans, a, b, c, ["a", "b", "c"])? };
        tp_dispatch(ctx, plan, &p, bufs).map_err(err)
    })
}

/// Whether `gemm_tensor_parallel` on this context runs device-resident (every device a HIP GPU
/// and RCCL available: `*device_resident` = 1) or over host memory (0). May create the context's
/// RCCL communicators, which later calls reuse.
///
/// # Safety
/// `ctx` is NULL or a live handle; `device_resident` is NULL or points to a writable `int`.
#[no_mangle]
pub unsafe extern "C" fn gemm_tensor_parallel_route(
    ctx: *const gemm_context_t,
    device_resident: *mut c_int,
) -> gemm_status_t {
    guard(|| {
        let ctx = context(ctx)?;
        if device_resident.is_null() {
            return Err(null("device_resident"));
        }
        let on_device = matches!(ctx.tensor_parallel_route(), TpRoute::Device);
        // SAFETY: non-null pointer to a writable int (caller's contract).
        unsafe { device_resident.write(c_int::from(on_device)) };
        Ok(())
    })
}

fn write_statuses(out: *mut gemm_status_t, statuses: &[gemm_status_t]) {
    if !out.is_null() {
        // SAFETY: a non-null item_status points to `count` writable entries (caller's contract).
        let dst = unsafe { std::slice::from_raw_parts_mut(out, statuses.len()) };
        dst.copy_from_slice(statuses);
    }
}

/// `batch_count` GEMMs of one shape whose matrices lie `stride_a`, `stride_b`, `stride_c`
/// elements apart, spread over all devices. `item_status` (may be NULL) receives one status per
/// item; the return value is GEMM_STATUS_SUCCESS, GEMM_STATUS_BATCH_PARTIAL_FAILURE, or the
/// error that stopped the whole batch before anything ran.
///
/// # Safety
/// as for `gemm_run`, for the whole batch span of each buffer; `item_status` is NULL or has `batch_count` writable entries.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn gemm_strided_batched(
    ctx: *mut gemm_context_t,
    problem_: *const gemm_problem_t,
    a: *const c_void,
    stride_a: usize,
    b: *const c_void,
    stride_b: usize,
    c: *mut c_void,
    stride_c: usize,
    batch_count: usize,
    item_status: *mut gemm_status_t,
) -> gemm_status_t {
    guard(|| {
        let ctx = context(ctx)?;
        let p = read_problem(problem_)?;
        let batch = StridedBatch { problem: p, count: batch_count, stride_a, stride_b, stride_c };
        let spans = batch.validate().map_err(|e| err(e.into()))?;
        // SAFETY: the caller provides buffers of at least the validated batch spans.
        let (a, b, c) = unsafe { buffers(&p, spans, a, b, c, ["a", "b", "c"])? };
        let report = ctx.gemm_strided_batched_bytes(&batch, a, b, c).map_err(err)?;
        finish_batch(&report, item_status)
    })
}

fn finish_batch(
    report: &gemm_dispatch::BatchReport,
    item_status: *mut gemm_status_t,
) -> Result<(), (gemm_status_t, String)> {
    let statuses: Vec<gemm_status_t> =
        report.items.iter().map(|o| o.result.as_ref().map_or_else(status_of, |_| GEMM_STATUS_SUCCESS)).collect();
    write_statuses(item_status, &statuses);
    match report.failures().next() {
        None => Ok(()),
        Some((i, e)) => Err((
            GEMM_STATUS_BATCH_PARTIAL_FAILURE,
            format!("{} of {} items failed; first: item {i}: {e}", report.failures().count(), report.items.len()),
        )),
    }
}

/// `count` GEMMs, each with its own problem and buffers (`a[i]`, `b[i]`, `c[i]`), spread over all
/// devices. An invalid item fails alone. `item_status` (may be NULL) receives one status per item.
///
/// # Safety
/// `problems`, `a`, `b`, `c` are NULL or arrays of `count` entries, each buffer valid as for `gemm_run`; no item's C overlaps another buffer; `item_status` is NULL or has `count` writable entries.
#[no_mangle]
pub unsafe extern "C" fn gemm_grouped(
    ctx: *mut gemm_context_t,
    count: usize,
    problems: *const gemm_problem_t,
    a: *const *const c_void,
    b: *const *const c_void,
    c: *const *mut c_void,
    item_status: *mut gemm_status_t,
) -> gemm_status_t {
    guard(|| {
        let ctx = context(ctx)?;
        if count == 0 {
            return Ok(());
        }
        if problems.is_null() || a.is_null() || b.is_null() || c.is_null() {
            return Err(null("problems, a, b or c"));
        }
        // SAFETY: non-null arrays of `count` entries each (caller's contract).
        let (problems, a, b, c) = unsafe {
            (
                std::slice::from_raw_parts(problems, count),
                std::slice::from_raw_parts(a, count),
                std::slice::from_raw_parts(b, count),
                std::slice::from_raw_parts(c, count),
            )
        };
        let mut early: Vec<Option<(gemm_status_t, String)>> = vec![None; count];
        let mut items = Vec::with_capacity(count);
        let mut positions = Vec::with_capacity(count);
        for i in 0..count {
            let prepared = problem(&problems[i]).and_then(|p| {
                let s = p.validate().map_err(|e| err(e.into()))?;
                // SAFETY: the caller provides buffers of at least each item's validated spans;
                // distinct items' C buffers must not overlap (caller's contract, as in BLAS).
                let (ai, bi, ci) = unsafe { buffers(&p, s, a[i], b[i], c[i], ["a[i]", "b[i]", "c[i]"])? };
                Ok((p, ai, bi, ci))
            });
            match prepared {
                Ok(item) => {
                    positions.push(i);
                    items.push(item);
                }
                Err(e) => early[i] = Some(e),
            }
        }
        let report = ctx.gemm_grouped_bytes(items);
        let mut statuses = vec![GEMM_STATUS_SUCCESS; count];
        let mut first: Option<String> = None;
        let mut failed = 0;
        for (pos, o) in positions.iter().zip(&report.items) {
            if let Err(e) = &o.result {
                statuses[*pos] = status_of(e);
                failed += 1;
                first.get_or_insert_with(|| format!("item {pos}: {e}"));
            }
        }
        for (i, e) in early.into_iter().enumerate() {
            if let Some((status, msg)) = e {
                statuses[i] = status;
                failed += 1;
                first.get_or_insert_with(|| format!("item {i}: {msg}"));
            }
        }
        write_statuses(item_status, &statuses);
        match first {
            None => Ok(()),
            Some(msg) => {
                Err((GEMM_STATUS_BATCH_PARTIAL_FAILURE, format!("{failed} of {count} items failed; first: {msg}")))
            }
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Device memory: the caller's device pointers and stream.

/// The GPU `device` of the context and the caller's stream on it.
///
/// # Safety
/// `stream` is NULL or a live `hipStream_t` that outlives the call.
unsafe fn gpu_and_stream(
    ctx: *const gemm_context_t,
    device: usize,
    stream: *mut c_void,
) -> Result<(Gpu, GpuStream), (gemm_status_t, String)> {
    let ctx = context(ctx)?;
    let gpu = ctx.gpu(device).map_err(err)?;
    // SAFETY: forwarded from this function's contract.
    let stream = unsafe { gpu.borrow_stream(stream) }.map_err(err)?;
    Ok((gpu, stream))
}

/// The device span at `ptr` for an operand of `elems` elements of `dtype`: the runtime says which
/// device holds it and how many bytes its allocation has from there. An empty operand needs no
/// memory (NULL is fine); otherwise NULL is GEMM_STATUS_NULL_POINTER and memory that is not a
/// live device allocation GEMM_STATUS_NOT_DEVICE_MEMORY.
fn device_span(gpu: &Gpu, what: &str, ptr: *const c_void, elems: usize) -> Result<DeviceSpan, (gemm_status_t, String)> {
    if elems == 0 {
        return Ok(DeviceSpan { device: gpu.ordinal(), address: ptr as u64, len: 0, readable: 0 });
    }
    if ptr.is_null() {
        return Err(null(what));
    }
    gpu.span_of_pointer(what, ptr).map_err(err)
}

/// One GEMM on device memory of GPU `device` of the context, queued on the caller's `stream` (a
/// `hipStream_t`; NULL is the device's null stream). `a`, `b`, `c` are device pointers (from
/// `hipMalloc` or any device allocation) to the first element of each matrix, laid out as the
/// problem says. Returns once the kernel is queued: nothing synchronises, so the caller's own
/// copies and kernels queued on the same stream before and after are ordered with it, and the
/// host sees C after synchronising the stream. Every input is checked before anything is queued
/// (the problem, NULL pointers, pointers outside device memory, operands on another device or
/// past the end of their allocation, misalignment, unsupported dtypes): on a bad input the status
/// says which and device memory is untouched. `gemm_last_kernel` names the kernel queued.
///
/// # Safety
/// `ctx` and `problem` are NULL or valid; `stream` is NULL or a live stream; `a`, `b`, `c` are
/// NULL or device pointers whose memory stays allocated until the queued GEMM has run, and `c`
/// does not overlap `a` or `b`.
#[no_mangle]
pub unsafe extern "C" fn gemm_run_device(
    ctx: *mut gemm_context_t,
    device: usize,
    stream: *mut c_void,
    problem_: *const gemm_problem_t,
    a: *const c_void,
    b: *const c_void,
    c: *mut c_void,
) -> gemm_status_t {
    guard(|| {
        // SAFETY: `stream` is NULL or live (caller's contract).
        let (gpu, stream) = unsafe { gpu_and_stream(ctx, device, stream)? };
        let p = read_problem(problem_)?;
        let spans = p.validate().map_err(|e| err(e.into()))?;
        let sa = device_span(&gpu, "a", a, spans.a)?;
        let sb = device_span(&gpu, "b", b, spans.b)?;
        let sc = device_span(&gpu, "c", c, spans.c)?;
        // SAFETY: the spans come from the runtime's own record of the allocations; the caller
        // keeps them allocated until the GEMM has run and C apart from A and B.
        unsafe { gpu.gemm_raw("gemm_run_device", &stream, &p, sa, sb, sc) }.map(|_| ()).map_err(err)
    })
}

/// `batch_count` GEMMs of one shape on device memory of GPU `device`, queued on `stream`: item
/// `i` reads A at element `i * stride_a` of `a` (likewise B) and writes C at `i * stride_c` of
/// `c`. One kernel launch per item, in item order. The whole batch is checked first (as for
/// `gemm_run_device`, plus overlapping outputs); on a bad input nothing is queued.
///
/// # Safety
/// as for `gemm_run_device`, for the whole batch span of each buffer.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn gemm_strided_batched_device(
    ctx: *mut gemm_context_t,
    device: usize,
    stream: *mut c_void,
    problem_: *const gemm_problem_t,
    a: *const c_void,
    stride_a: usize,
    b: *const c_void,
    stride_b: usize,
    c: *mut c_void,
    stride_c: usize,
    batch_count: usize,
) -> gemm_status_t {
    guard(|| {
        // SAFETY: `stream` is NULL or live (caller's contract).
        let (gpu, stream) = unsafe { gpu_and_stream(ctx, device, stream)? };
        let p = read_problem(problem_)?;
        let batch = StridedBatch { problem: p, count: batch_count, stride_a, stride_b, stride_c };
        let spans = batch.validate().map_err(|e| err(e.into()))?;
        let sa = device_span(&gpu, "a", a, spans.a)?;
        let sb = device_span(&gpu, "b", b, spans.b)?;
        let sc = device_span(&gpu, "c", c, spans.c)?;
        // SAFETY: as in gemm_run_device, for the batch spans.
        unsafe { gpu.strided_raw("gemm_strided_batched_device", &stream, &batch, sa, sb, sc) }.map(|_| ()).map_err(err)
    })
}

/// `count` GEMMs on device memory of GPU `device`, each with its own problem (sizes, dtypes,
/// layout) and device pointers `a[i]`, `b[i]`, `c[i]`, queued on `stream`. Groups with m or n of
/// 0 are allowed and queue nothing. Every group is checked before any is queued: if one is bad,
/// nothing is queued, `item_status` (may be NULL) gets each group's status
/// (GEMM_STATUS_SUCCESS for the good ones) and the call returns
/// GEMM_STATUS_BATCH_PARTIAL_FAILURE. Groups that share dtypes, layout and transposes, with
/// leading dimensions of 8 elements and 16-byte aligned A/B, run in **one launch** of a grouped
/// kernel: the library uploads a table of the problems to the device on `stream` (nothing
/// synchronises) and `gemm_last_kernel` names that kernel. Otherwise one launch per non-empty
/// group, in group order.
///
/// # Safety
/// `problems`, `a`, `b`, `c` are NULL or arrays of `count` entries, each pointer as for
/// `gemm_run_device`; no group's C overlaps another group's operands; `item_status` is NULL or
/// has `count` writable entries.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn gemm_grouped_device(
    ctx: *mut gemm_context_t,
    device: usize,
    stream: *mut c_void,
    count: usize,
    problems: *const gemm_problem_t,
    a: *const *const c_void,
    b: *const *const c_void,
    c: *const *mut c_void,
    item_status: *mut gemm_status_t,
) -> gemm_status_t {
    guard(|| {
        // SAFETY: `stream` is NULL or live (caller's contract).
        let (gpu, stream) = unsafe { gpu_and_stream(ctx, device, stream)? };
        if count == 0 {
            return Ok(());
        }
        if problems.is_null() || a.is_null() || b.is_null() || c.is_null() {
            return Err(null("problems, a, b or c"));
        }
        // SAFETY: non-null arrays of `count` entries each (caller's contract).
        let (problems, a, b, c) = unsafe {
            (
                std::slice::from_raw_parts(problems, count),
                std::slice::from_raw_parts(a, count),
                std::slice::from_raw_parts(b, count),
                std::slice::from_raw_parts(c, count),
            )
        };
        let mut statuses = vec![GEMM_STATUS_SUCCESS; count];
        let mut first: Option<String> = None;
        let mut groups = Vec::with_capacity(count);
        for i in 0..count {
            let prepared = problem(&problems[i]).and_then(|p| {
                let s = p.validate().map_err(|e| err(e.into()))?;
                let sa = device_span(&gpu, "a[i]", a[i], s.a)?;
                let sb = device_span(&gpu, "b[i]", b[i], s.b)?;
                let sc = device_span(&gpu, "c[i]", c[i].cast_const(), s.c)?;
                Ok((p, sa, sb, sc))
            });
            match prepared {
                Ok(g) => groups.push(g),
                Err((status, msg)) => {
                    statuses[i] = status;
                    first.get_or_insert_with(|| format!("group {i}: {msg}"));
                }
            }
        }
        let failed_early = statuses.iter().filter(|s| **s != GEMM_STATUS_SUCCESS).count();
        if failed_early == 0 {
            // SAFETY: the spans come from the runtime's record of the allocations; lifetimes and
            // disjoint outputs are the caller's contract.
            match unsafe { gpu.grouped_raw("gemm_grouped_device", &stream, &groups) } {
                Ok(_) => {
                    write_statuses(item_status, &statuses);
                    return Ok(());
                }
                Err(e) => {
                    for (i, g) in e.groups.iter().enumerate() {
                        if let Some(ge) = g {
                            statuses[i] = status_of(ge);
                        }
                    }
                    write_statuses(item_status, &statuses);
                    let status =
                        if e.launched_some { GEMM_STATUS_DEVICE_ERROR } else { GEMM_STATUS_BATCH_PARTIAL_FAILURE };
                    return Err((status, e.to_string()));
                }
            }
        }
        write_statuses(item_status, &statuses);
        Err((
            GEMM_STATUS_BATCH_PARTIAL_FAILURE,
            format!("{failed_early} of {count} groups refused, nothing queued; first: {}", first.unwrap_or_default()),
        ))
    })
}

/// Writes the name of the kernel the calling thread's last GEMM launched on a HIP GPU (a
/// device-memory call, or a host-memory GEMM the thread ran itself) into `buf` (`len` bytes,
/// truncated, NUL-terminated; "" if none yet), as `gemm plan` names kernels.
///
/// # Safety
/// `buf` is NULL or has `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn gemm_last_kernel(buf: *mut c_char, len: usize) -> gemm_status_t {
    guard(|| {
        if buf.is_null() {
            return Err(null("buf"));
        }
        if len == 0 {
            return Err((GEMM_STATUS_INVALID_SIZE, "len is 0".into()));
        }
        // SAFETY: non-null with `len` writable bytes (caller's contract).
        let dst = unsafe { std::slice::from_raw_parts_mut(buf, len) };
        copy_str(dst, gemm_dispatch::backends::hip::last_kernel().unwrap_or(""));
        Ok(())
    })
}

/// A static, NUL-terminated description of a status ("unknown status" for other values).
#[no_mangle]
pub extern "C" fn gemm_status_string(status: i32) -> *const c_char {
    let s: &'static CStr = match status {
        0 => c"success",
        1 => c"a required pointer is NULL",
        2 => c"shapes do not fit together or a buffer is too small",
        3 => c"a leading dimension is too small",
        4 => c"a size computation overflows",
        5 => c"unsupported dtype combination",
        6 => c"an argument is out of range",
        7 => c"a buffer is misaligned for its element type",
        8 => c"a device failed",
        9 => c"no such device",
        10 => c"some batch items failed",
        11 => c"outputs of batch items overlap",
        12 => c"the device list could not be parsed or opened",
        13 => c"internal error (a bug in the library)",
        14 => c"a device pointer or the stream is on another device",
        15 => c"a pointer is not device memory",
        16 => c"the device is not a HIP GPU",
        17 => c"a tensor-parallel unique id is malformed or stale",
        18 => c"a tensor-parallel rank is not below the rank count",
        19 => c"the ranks of a tensor-parallel group disagree on the call",
        20 => c"a peer of the tensor-parallel group is gone; the group was aborted",
        21 => c"a tensor-parallel call timed out; the group was aborted",
        22 => c"the tensor-parallel group was aborted",
        23 => c"an RCCL/NCCL failure",
        24 => c"a scale block shape the block-scaled format does not define",
        25 => c"K is not a multiple of the MX block (32)",
        26 => c"a scale dtype that does not match the element format",
        27 => c"the device's architecture cannot run this",
        28 => c"no kernel is wired for this on the device yet",
        _ => c"unknown status",
    };
    s.as_ptr()
}

/// The message of the last failed call on this thread ("" after a success). Valid until the next
/// call on the same thread.
#[no_mangle]
pub extern "C" fn gemm_last_error_message() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// The library's version, `GEMM_VERSION_MAJOR.GEMM_VERSION_MINOR.GEMM_VERSION_PATCH` (the crates'
/// version; a test keeps these in step with Cargo.toml). Compare the header's with the loaded
/// library's `gemm_version()`.
pub const GEMM_VERSION_MAJOR: u32 = 0;
pub const GEMM_VERSION_MINOR: u32 = 1;
pub const GEMM_VERSION_PATCH: u32 = 0;
/// The version as one number for `#if`: MAJOR * 10000 + MINOR * 100 + PATCH.
pub const GEMM_VERSION: u32 = 100;

/// The ABI version this header describes. How the ABI grows:
/// * a struct passed by pointer (gemm_problem_t, gemm_epilogue_t, gemm_fp8_scales_t,
///   gemm_device_info_t) is **frozen once released**: its fields, order and size never change.
///   New fields come in a new versioned struct (`gemm_problem_v2_t`, say) whose first member is
///   `size_t size`, set by its init function, taken by new entry points; the old struct and the
///   functions that take it keep working unchanged. New functions and new constants may be added
///   at any time and do not change the ABI version;
/// * anything else (a field removed or reordered, a signature changed, a status value renumbered)
///   increments GEMM_ABI_VERSION.
///
/// A program calls `GEMM_ABI_CHECK()` once (or compares `gemm_abi_version()` with
/// GEMM_ABI_VERSION) so that a header and a library that disagree give a status and a message
/// instead of structs read with the wrong layout.
pub const GEMM_ABI_VERSION: u32 = 1;

/// The library's version as a static, NUL-terminated string ("0.1.0"), whatever header the caller
/// was compiled with.
#[no_mangle]
pub extern "C" fn gemm_version() -> *const c_char {
    static VERSION: &CStr = match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(s) => s,
        Err(_) => c"unknown",
    };
    VERSION.as_ptr()
}

/// The ABI version of the loaded library (GEMM_ABI_VERSION of the header it was built with).
#[no_mangle]
pub extern "C" fn gemm_abi_version() -> u32 {
    GEMM_ABI_VERSION
}

/// Checks that the caller's header and this library agree: the ABI version and the size of every
/// struct passed by pointer (`GEMM_ABI_CHECK()` passes them). GEMM_STATUS_SUCCESS, or
/// GEMM_STATUS_INVALID_VALUE with a message (gemm_last_error_message) naming what differs and
/// both versions.
#[no_mangle]
pub extern "C" fn gemm_abi_check(
    abi_version: u32,
    problem_size: usize,
    epilogue_size: usize,
    fp8_scales_size: usize,
    device_info_size: usize,
) -> gemm_status_t {
    guard(|| {
        let mut wrong = Vec::new();
        if abi_version != GEMM_ABI_VERSION {
            wrong.push(format!("ABI version {abi_version} (this library: {GEMM_ABI_VERSION})"));
        }
        for (name, theirs, ours) in [
            ("gemm_problem_t", problem_size, std::mem::size_of::<gemm_problem_t>()),
            ("gemm_epilogue_t", epilogue_size, std::mem::size_of::<gemm_epilogue_t>()),
            ("gemm_fp8_scales_t", fp8_scales_size, std::mem::size_of::<gemm_fp8_scales_t>()),
            ("gemm_device_info_t", device_info_size, std::mem::size_of::<gemm_device_info_t>()),
        ] {
            if theirs != ours {
                wrong.push(format!("sizeof({name}) {theirs} (this library: {ours})"));
            }
        }
        if wrong.is_empty() {
            return Ok(());
        }
        Err(invalid(format!(
            "the program was compiled against another gemm.h than this library ({}) was built with: {}; rebuild it against this library's header",
            env!("CARGO_PKG_VERSION"),
            wrong.join(", ")
        )))
    })
}

#[cfg(test)]
mod version_tests {
    use super::*;

    #[test]
    fn version_constants_follow_cargo() {
        let v = |s: &str| s.parse::<u32>().unwrap();
        assert_eq!(GEMM_VERSION_MAJOR, v(env!("CARGO_PKG_VERSION_MAJOR")));
        assert_eq!(GEMM_VERSION_MINOR, v(env!("CARGO_PKG_VERSION_MINOR")));
        assert_eq!(GEMM_VERSION_PATCH, v(env!("CARGO_PKG_VERSION_PATCH")));
        assert_eq!(GEMM_VERSION, GEMM_VERSION_MAJOR * 10000 + GEMM_VERSION_MINOR * 100 + GEMM_VERSION_PATCH);
        // SAFETY: gemm_version returns a static NUL-terminated string.
        let s = unsafe { CStr::from_ptr(gemm_version()) };
        assert_eq!(s.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
        assert_eq!(gemm_abi_version(), GEMM_ABI_VERSION);
    }

    #[test]
    fn abi_check_names_what_differs() {
        let sizes = (
            std::mem::size_of::<gemm_problem_t>(),
            std::mem::size_of::<gemm_epilogue_t>(),
            std::mem::size_of::<gemm_fp8_scales_t>(),
            std::mem::size_of::<gemm_device_info_t>(),
        );
        assert_eq!(gemm_abi_check(GEMM_ABI_VERSION, sizes.0, sizes.1, sizes.2, sizes.3), GEMM_STATUS_SUCCESS);
        let message = || unsafe { CStr::from_ptr(gemm_last_error_message()) }.to_string_lossy().into_owned();
        assert_eq!(message(), "");
        // A header from before `math` was appended: a shorter gemm_problem_t.
        let s = gemm_abi_check(GEMM_ABI_VERSION, sizes.0 - 8, sizes.1, sizes.2, sizes.3);
        assert_eq!(s, GEMM_STATUS_INVALID_VALUE);
        let m = message();
        assert!(m.contains("sizeof(gemm_problem_t)") && m.contains("rebuild"), "{m}");
        assert!(!m.contains("gemm_epilogue_t"), "{m}");
        let s = gemm_abi_check(GEMM_ABI_VERSION + 1, sizes.0, sizes.1, sizes.2 + 1, sizes.3);
        assert_eq!(s, GEMM_STATUS_INVALID_VALUE);
        let m = message();
        assert!(m.contains("ABI version 2 (this library: 1)") && m.contains("gemm_fp8_scales_t"), "{m}");
    }
}

/// Bytes of a tensor-parallel unique id (`NCCL_UNIQUE_ID_BYTES`).
pub const GEMM_TP_UNIQUE_ID_BYTES: usize = 128;

/// How a row-parallel call (`gemm_tp_row_device`) sums the ranks' partial products.
pub type gemm_tp_reduce_t = u32;
/// All-reduce: every rank receives all of Y.
pub const GEMM_TP_ALL_REDUCE: gemm_tp_reduce_t = 0;
/// Reduce-scatter: rank r receives the rows `gemm_tp_scatter_rows` names.
pub const GEMM_TP_REDUCE_SCATTER: gemm_tp_reduce_t = 1;

/// Options of a tensor-parallel group. Versioned (ABI rule): set `size` with
/// `gemm_tp_options_init`, then change fields.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gemm_tp_options_t {
    /// `sizeof(gemm_tp_options_t)`, set by `gemm_tp_options_init`.
    pub size: usize,
    /// How long a call may wait for its collectives before the group aborts (milliseconds).
    pub timeout_ms: u64,
    /// Non-zero: overlap each chunk's collective with the next chunk's GEMM.
    pub overlap: u32,
    /// Chunks of rows when overlapping (at least 1).
    pub chunks: u32,
}

/// One rank of a tensor-parallel group (opaque).
pub struct gemm_tp_group_t {
    group: TpGroup,
}

/// Fills `options` with the defaults (600 s timeout, overlap on, 4 chunks) and its size.
///
/// # Safety
/// `options` is NULL or points to a writable `gemm_tp_options_t`.
#[no_mangle]
pub unsafe extern "C" fn gemm_tp_options_init(options: *mut gemm_tp_options_t) -> gemm_status_t {
    guard(|| {
        if options.is_null() {
            return Err(null("options"));
        }
        let d = TpOptions::default();
        let o = gemm_tp_options_t {
            size: std::mem::size_of::<gemm_tp_options_t>(),
            timeout_ms: d.timeout.as_millis() as u64,
            overlap: u32::from(d.overlap),
            chunks: d.chunks as u32,
        };
        // SAFETY: non-null, writable (this function's contract).
        unsafe { options.write(o) };
        Ok(())
    })
}

fn tp_options(options: *const gemm_tp_options_t) -> Result<TpOptions, (gemm_status_t, String)> {
    if options.is_null() {
        return Ok(TpOptions::default());
    }
    // SAFETY: non-null pointer to at least the `size` field (the caller's contract).
    let size = unsafe { (*options).size };
    if size != std::mem::size_of::<gemm_tp_options_t>() {
        return Err(invalid(format!(
            "gemm_tp_options_t.size is {size}, this library's is {}: call gemm_tp_options_init",
            std::mem::size_of::<gemm_tp_options_t>()
        )));
    }
    // SAFETY: as above; the whole struct is there.
    let o = unsafe { *options };
    Ok(TpOptions {
        timeout: std::time::Duration::from_millis(o.timeout_ms),
        overlap: o.overlap != 0,
        chunks: o.chunks as usize,
    })
}

/// Makes a unique id on GPU `device` of the context (`ncclGetUniqueId` of the RCCL it uses) and
/// writes its `GEMM_TP_UNIQUE_ID_BYTES` bytes to `out`. Call it on one rank; the caller's
/// launcher passes the bytes to every rank's `gemm_tp_group_create`.
///
/// # Safety
/// `ctx` is NULL or valid; `out` is NULL or has room for `GEMM_TP_UNIQUE_ID_BYTES` bytes.
#[no_mangle]
pub unsafe extern "C" fn gemm_tp_unique_id(ctx: *mut gemm_context_t, device: usize, out: *mut u8) -> gemm_status_t {
    guard(|| {
        let ctx = context(ctx)?;
        if out.is_null() {
            return Err(null("out"));
        }
        let id = ctx.tp_unique_id(device).map_err(err)?;
        // SAFETY: `out` has room for the id (this function's contract).
        unsafe { std::ptr::copy_nonoverlapping(id.as_ptr(), out, id.len()) };
        Ok(())
    })
}

fn publish(out: *mut *mut gemm_tp_group_t, group: TpGroup) -> Result<(), (gemm_status_t, String)> {
    let h = Box::into_raw(Box::new(gemm_tp_group_t { group }));
    // SAFETY: `out` was checked non-null by the caller and points to writable storage.
    unsafe { out.write(h) };
    Ok(())
}

/// Joins the communicator of `unique_id` (`GEMM_TP_UNIQUE_ID_BYTES` bytes) as `rank` of `nranks`
/// on GPU `device`, with the default options; blocks until every rank has joined. The group owns
/// its communicator. Errors: GEMM_STATUS_TP_RANK_OUT_OF_RANGE, GEMM_STATUS_TP_BAD_UNIQUE_ID,
/// GEMM_STATUS_TP_DISAGREE (ranks joined with different `nranks`), GEMM_STATUS_TP_PEER_LOST.
///
/// # Safety
/// `ctx` is NULL or valid; `unique_id` is NULL or holds `GEMM_TP_UNIQUE_ID_BYTES` bytes; `out` is
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gemm_tp_group_create(
    ctx: *mut gemm_context_t,
    device: usize,
    unique_id: *const u8,
    nranks: usize,
    rank: usize,
    out: *mut *mut gemm_tp_group_t,
) -> gemm_status_t {
    // SAFETY: forwarded.
    unsafe { gemm_tp_group_create_with(ctx, device, unique_id, nranks, rank, std::ptr::null(), out) }
}

/// `gemm_tp_group_create` with options (NULL: the defaults).
///
/// # Safety
/// As `gemm_tp_group_create`; `options` is NULL or initialised by `gemm_tp_options_init`.
#[no_mangle]
pub unsafe extern "C" fn gemm_tp_group_create_with(
    ctx: *mut gemm_context_t,
    device: usize,
    unique_id: *const u8,
    nranks: usize,
    rank: usize,
    options: *const gemm_tp_options_t,
    out: *mut *mut gemm_tp_group_t,
) -> gemm_status_t {
    guard(|| {
        let ctx = context(ctx)?;
        if unique_id.is_null() {
            return Err(null("unique_id"));
        }
        if out.is_null() {
            return Err(null("out"));
        }
        let options = tp_options(options)?;
        // SAFETY: `unique_id` holds GEMM_TP_UNIQUE_ID_BYTES bytes (this function's contract).
        let id = unsafe { std::slice::from_raw_parts(unique_id, GEMM_TP_UNIQUE_ID_BYTES) };
        publish(out, TpGroup::create(ctx, device, id, nranks, rank, options).map_err(err)?)
    })
}

/// Wraps the caller's communicator `comm` (an `ncclComm_t` of the RCCL this library loads, e.g.
/// from PyTorch's process group) for GPU `device`, **without owning it**: destroying the group
/// leaves it alive. Its ranks and device are asked of RCCL.
///
/// # Safety
/// `ctx` is NULL or valid; `comm` is a live communicator of the same RCCL that outlives the
/// group, and nothing else issues on it while a call of the group runs; `options` as for
/// `gemm_tp_group_create_with`; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gemm_tp_group_from_comm(
    ctx: *mut gemm_context_t,
    device: usize,
    comm: *mut c_void,
    options: *const gemm_tp_options_t,
    out: *mut *mut gemm_tp_group_t,
) -> gemm_status_t {
    guard(|| {
        let ctx = context(ctx)?;
        if comm.is_null() {
            return Err(null("comm"));
        }
        if out.is_null() {
            return Err(null("out"));
        }
        let options = tp_options(options)?;
        // SAFETY: this function's contract.
        publish(out, unsafe { TpGroup::from_comm(ctx, device, comm, options) }.map_err(err)?)
    })
}

fn tp_group<'a>(g: *const gemm_tp_group_t) -> Result<&'a TpGroup, (gemm_status_t, String)> {
    if g.is_null() {
        return Err(null("group"));
    }
    // SAFETY: a non-null handle comes from gemm_tp_group_create* and stays valid until
    // gemm_tp_group_destroy.
    Ok(unsafe { &(*g).group })
}

/// Destroys a group (and its communicator, if the group owns it). NULL is a no-op.
///
/// # Safety
/// `group` is NULL or a live handle, not used afterwards or concurrently.
#[no_mangle]
pub unsafe extern "C" fn gemm_tp_group_destroy(group: *mut gemm_tp_group_t) -> gemm_status_t {
    guard(|| {
        if !group.is_null() {
            // SAFETY: made by Box::into_raw in `publish`, destroyed once (contract).
            drop(unsafe { Box::from_raw(group) });
        }
        Ok(())
    })
}

/// Aborts the group's communicator (`ncclCommAbort`, a borrowed one too): collectives in flight
/// stop and every later call returns GEMM_STATUS_TP_ABORTED. Destroy the group afterwards.
///
/// # Safety
/// `group` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn gemm_tp_group_abort(group: *mut gemm_tp_group_t) -> gemm_status_t {
    guard(|| tp_group(group)?.abort().map_err(err))
}

/// The group's state without blocking: GEMM_STATUS_SUCCESS (usable), GEMM_STATUS_TP_PEER_LOST
/// (the communicator reported an asynchronous error: the next call fails) or
/// GEMM_STATUS_TP_ABORTED; `gemm_last_error_message()` says why.
///
/// # Safety
/// `group` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn gemm_tp_group_status(group: *const gemm_tp_group_t) -> gemm_status_t {
    guard(|| match tp_group(group)?.status() {
        TpStatus::Ok => Ok(()),
        TpStatus::Failed(why) => Err((GEMM_STATUS_TP_PEER_LOST, why)),
        TpStatus::Aborted(why) => Err((GEMM_STATUS_TP_ABORTED, why)),
    })
}

/// This rank and the rank count (either pointer may be NULL).
///
/// # Safety
/// `group` is NULL or a live handle; `rank`, `nranks` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gemm_tp_group_rank(
    group: *const gemm_tp_group_t,
    rank: *mut usize,
    nranks: *mut usize,
) -> gemm_status_t {
    guard(|| {
        let g = tp_group(group)?;
        // SAFETY: NULL or writable (contract).
        unsafe {
            if !rank.is_null() {
                rank.write(g.rank());
            }
            if !nranks.is_null() {
                nranks.write(g.nranks());
            }
        }
        Ok(())
    })
}

/// The rows of M that `rank` receives from a reduce-scatter of `m` rows: `*first`, `*count`.
///
/// # Safety
/// `group` is NULL or a live handle; `first`, `count` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gemm_tp_scatter_rows(
    group: *const gemm_tp_group_t,
    m: usize,
    rank: usize,
    first: *mut usize,
    count: *mut usize,
) -> gemm_status_t {
    guard(|| {
        let g = tp_group(group)?;
        if first.is_null() || count.is_null() {
            return Err(null("first or count"));
        }
        let r = g.scatter_rows(m, rank);
        // SAFETY: non-null and writable (contract).
        unsafe {
            first.write(r.start);
            count.write(r.len());
        }
        Ok(())
    })
}

/// The group's GPU and the caller's stream (NULL: the null stream).
///
/// # Safety
/// `stream` is NULL or a live stream of the group's GPU.
unsafe fn tp_gpu_stream(g: &TpGroup, stream: *mut c_void) -> Result<(Gpu, GpuStream), (gemm_status_t, String)> {
    let gpu = g.gpu().clone();
    // SAFETY: forwarded.
    let s = unsafe { gpu.borrow_stream(stream) }.map_err(err)?;
    Ok((gpu, s))
}

/// Column-parallel on this rank's shard: `Y_shard = alpha * op(X) * op(W_shard)` (`problem` is
/// the rank's `m x n_r x k`, row-major, beta 0; Y_shard uses `ldc`), and when `y_gathered` is
/// not NULL, every rank's shard all-gathered into the tight `m x N` Y there. Device memory of
/// the group's GPU; queued on `stream`, overlapped as the options say; returns once the outputs
/// are written. Every rank calls it with the same problem (widths may differ):
/// GEMM_STATUS_TP_DISAGREE otherwise. On any failure the outputs are untouched.
///
/// # Safety
/// `group`, `problem` NULL or valid; `stream` NULL or live; pointers NULL or device memory of the
/// group's GPU that stays allocated for the call.
#[no_mangle]
pub unsafe extern "C" fn gemm_tp_column_device(
    group: *mut gemm_tp_group_t,
    stream: *mut c_void,
    problem_: *const gemm_problem_t,
    x: *const c_void,
    w: *const c_void,
    y_shard: *mut c_void,
    y_gathered: *mut c_void,
) -> gemm_status_t {
    guard(|| {
        let g = tp_group(group)?;
        // SAFETY: the caller's contract.
        let (gpu, s) = unsafe { tp_gpu_stream(g, stream)? };
        let p = read_problem(problem_)?;
        let spans = p.validate().map_err(|e| err(e.into()))?;
        let sx = device_span(&gpu, "x", x, spans.a)?;
        let sw = device_span(&gpu, "w", w, spans.b)?;
        let sy = device_span(&gpu, "y_shard", y_shard, spans.c)?;
        let gathered = if y_gathered.is_null() { None } else { Some(device_span(&gpu, "y_gathered", y_gathered, 1)?) };
        // SAFETY: spans from the runtime's record of the allocations; the caller keeps them.
        unsafe { g.column_raw(&s, &p, sx, sw, sy, gathered) }.map_err(err)
    })
}

/// Row-parallel on this rank's shard: `Y = sum over ranks of alpha * op(X_shard) * op(W_shard)`
/// (`problem`: `m x n x k_r`, row-major, beta 0), reduced in C's dtype (f32 C: in f32) by
/// `reduce`: GEMM_TP_ALL_REDUCE (Y `m x n`) or GEMM_TP_REDUCE_SCATTER (Y holds this rank's
/// `gemm_tp_scatter_rows`). As `gemm_tp_column_device` otherwise.
///
/// # Safety
/// As `gemm_tp_column_device`.
#[no_mangle]
pub unsafe extern "C" fn gemm_tp_row_device(
    group: *mut gemm_tp_group_t,
    stream: *mut c_void,
    problem_: *const gemm_problem_t,
    x: *const c_void,
    w: *const c_void,
    y: *mut c_void,
    reduce: gemm_tp_reduce_t,
) -> gemm_status_t {
    guard(|| {
        let g = tp_group(group)?;
        let reduce = match reduce {
            GEMM_TP_ALL_REDUCE => Reduce::AllReduce,
            GEMM_TP_REDUCE_SCATTER => Reduce::ReduceScatter,
            v => return Err(invalid(format!("reduce = {v} is neither GEMM_TP_ALL_REDUCE nor GEMM_TP_REDUCE_SCATTER"))),
        };
        // SAFETY: the caller's contract.
        let (gpu, s) = unsafe { tp_gpu_stream(g, stream)? };
        let p = read_problem(problem_)?;
        let spans = p.validate().map_err(|e| err(e.into()))?;
        let sx = device_span(&gpu, "x", x, spans.a)?;
        let sw = device_span(&gpu, "w", w, spans.b)?;
        let sy = device_span(&gpu, "y", y, 1)?;
        // SAFETY: as in gemm_tp_column_device.
        unsafe { g.row_raw(&s, &p, sx, sw, sy, reduce) }.map_err(err)
    })
}

/// A Megatron MLP on this rank's shards: `H = act(X * W_up_shard)` (`up`: `m x f_r x h`), then
/// `Y = sum over ranks of H * W_down_shard` (`down`: `m x h x f_r`, its A is H: `down.a_type ==
/// up.c_type`, `down.trans_a == GEMM_NO_TRANS`; H lives in a group workspace) with one
/// all-reduce. `activation` (not GEMM_ACTIVATION_NONE) runs fused into the up GEMM's epilogue,
/// after a bias of zeros, by the catalogue's `fused` kernels: bf16 -> bf16 with `h` and this
/// rank's `f_r` multiples of 8. Where a rank's shard has none, every rank refuses before any data
/// moves: that rank GEMM_STATUS_UNSUPPORTED_DTYPE, the others GEMM_STATUS_TP_DISAGREE (or the
/// same); the group stays usable.
///
/// # Safety
/// As `gemm_tp_column_device`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn gemm_tp_mlp_device(
    group: *mut gemm_tp_group_t,
    stream: *mut c_void,
    up: *const gemm_problem_t,
    down: *const gemm_problem_t,
    x: *const c_void,
    w_up: *const c_void,
    w_down: *const c_void,
    y: *mut c_void,
    activation: gemm_activation_t,
) -> gemm_status_t {
    guard(|| {
        let g = tp_group(group)?;
        let activation = match activation {
            GEMM_ACTIVATION_NONE => Activation::None,
            GEMM_ACTIVATION_RELU => Activation::Relu,
            GEMM_ACTIVATION_GELU_TANH => Activation::GeluTanh,
            GEMM_ACTIVATION_SILU => Activation::Silu,
            v => return Err(invalid(format!("activation = {v} is not a gemm_activation_t"))),
        };
        // SAFETY: the caller's contract.
        let (gpu, s) = unsafe { tp_gpu_stream(g, stream)? };
        let (pu, pd) = (read_problem(up)?, read_problem(down)?);
        let (su, sd) = (pu.validate().map_err(|e| err(e.into()))?, pd.validate().map_err(|e| err(e.into()))?);
        let spans = [
            device_span(&gpu, "x", x, su.a)?,
            device_span(&gpu, "w_up", w_up, su.b)?,
            device_span(&gpu, "w_down", w_down, sd.b)?,
            device_span(&gpu, "y", y, 1)?,
        ];
        // SAFETY: as in gemm_tp_column_device.
        unsafe { g.mlp_raw(&s, &pu, &pd, spans, activation) }.map_err(err)
    })
}
