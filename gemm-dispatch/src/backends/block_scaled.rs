//! Block-scaled GEMMs on the devices (issue 26; the problem and its rules:
//! [`gemm_core::block_scaled`]).
//!
//! * [`BlockScaledJob`]: what a GPU kernel receives, every field it needs (device addresses of
//!   the operands, Y and both scale tensors, the shape, leading dimensions, block shapes,
//!   formats, scalars, Y's dtype), built from a problem that was validated and checked against
//!   the device's architecture and buffers.
//! * [`run_block_scaled`]: **the one function that queues the kernel of a job** on an emulated or
//!   HIP GPU (both reach it: [`crate::backends::emu::EmuBackend`] for host memory, the HIP
//!   backend for host memory and [`crate::Gpu::gemm_block_scaled`] for device memory): the MX
//!   kernels on gfx950 (X and W each MXFP8, MXFP6 or MXFP4, [`crate::plan::block_scaled::plan_mx`]) and the
//!   block-scaled fp8 kernels on both archs (DeepSeek-V3's 1x128 / 128x128 scales,
//!   [`crate::plan::block_scaled::plan_fp8_blocks`]); a job no kernel runs (K-tiled MX scales
//!   in another tile, other block shapes, scale rows not a multiple of 4 bytes for MX) answers
//!   [`Error::NoKernel`] with the reason (a context does not pass it on; `Context::host` computes
//!   it).
//! * [`host_block_scaled`]: the host CPU's computation of the same numbers (the host backend's
//!   [`crate::Backend::gemm_block_scaled`]).
//!
//! **The host path's arithmetic**: each operand's elements are decoded *without* their scales
//! to f32 (exact: every fp8/fp6/fp4 value is an f32); for each K group (32 elements for MX, 128
//! for block fp8, the last one partial) the crate's host f32 GEMM forms the group's partial
//! sums `P_g[i,j] = sum_{l in g} a[i,l] * b[j,l]`; the scales are applied to those partial sums
//! in f64, `acc[i,j] += (sa[i,g] * sb[j,g]) * P_g[i,j]` (a product of two E8M0 scales or two f32
//! scales is exact in f64), and `Y = alpha * acc + beta * Y` is formed in f64 and rounded once to
//! f32, then to Y's dtype. So the only rounding beyond the final one is the f32 summation inside a
//! group (at most `block_k - 1` additions), which bounds the difference from the exact
//! references (`gemm_core::mx::mx_gemm`, `gemm_core::block_fp8::block_fp8_gemm`). Scaling the
//! partial sums rather than dequantising the operands keeps E8M0's range (2^-127..2^127 times
//! the element) from overflowing or flushing f32, and is what the GPU kernels do between K
//! groups. NaN scales (E8M0 0xFF) and NaN/Inf elements propagate as IEEE 754 says.

use crate::error::{Error, Result};
use gemm_core::block_scaled::{BlockScaleError, BlockScaledProblem, BlockSpans, ScaleDesc, ScaleType};
use gemm_core::fp8::Fp8Format;
use gemm_core::mx::E8M0;
use gemm_core::{bf16, f16, Arch, DType, GemmProblem, Transpose};

/// One block-scaled GEMM as a GPU kernel receives it: `Y = alpha * (sa . X) * (sb . W)^T +
/// beta * Y` in the Linear layer's row-major terms ([`gemm_core::block_scaled`]): X (`a`) is
/// `m x k`, W (`b`) is `n x k`, both K-contiguous and packed; Y (`c`) is `m x n`. Built by
/// [`BlockScaledJob::new`] from a problem already validated, checked against the device's
/// architecture and against the buffers these addresses point at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockScaledJob {
    /// Device address of X's first byte (16-byte aligned).
    pub a: u64,
    /// Device address of W's first byte (16-byte aligned).
    pub b: u64,
    /// Device address of Y's first element (aligned to its dtype).
    pub c: u64,
    /// Device address of X's first scale.
    pub scale_a: u64,
    /// Device address of W's first scale.
    pub scale_b: u64,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// Leading dimension of X in **elements** (bytes: `lda * bits(a_type) / 8`, a multiple of 16).
    pub lda: usize,
    /// Leading dimension of W in elements.
    pub ldb: usize,
    /// Leading dimension of Y in elements.
    pub ldc: usize,
    /// Leading dimension of X's scales in scale elements (`>= ceil(k / block_k)`).
    pub ld_scale_a: usize,
    /// Leading dimension of W's scales in scale elements.
    pub ld_scale_b: usize,
    /// The layouts of X's and W's scales (`ScaleDesc::layout`: what the leading dimensions mean).
    pub layout_a: gemm_core::ScaleLayout,
    pub layout_b: gemm_core::ScaleLayout,
    /// Rows of X one scale covers (1 for MX and for block fp8 activations; 1 or 128 in general).
    pub block_rows_a: usize,
    /// Rows of W one scale covers (1 for MX, 128 for DeepSeek-V3 weights).
    pub block_rows_b: usize,
    /// Elements along K one scale covers: 32 (MX) or 128 (block fp8), both operands.
    pub block_k: usize,
    /// X's element format.
    pub a_type: DType,
    /// W's element format.
    pub b_type: DType,
    /// The scales' dtype: E8M0 (MX) or f32 (block fp8), both operands.
    pub scale_type: ScaleType,
    /// Y's dtype: f32, bf16 or f16.
    pub c_type: DType,
    pub alpha: f32,
    pub beta: f32,
}

impl BlockScaledJob {
    /// The job of `p` with its buffers at these device addresses (`[a, b, c, scale_a, scale_b]`).
    pub fn new(p: &BlockScaledProblem, [a, b, c, scale_a, scale_b]: [u64; 5]) -> Self {
        BlockScaledJob {
            a,
            b,
            c,
            scale_a,
            scale_b,
            m: p.m,
            n: p.n,
            k: p.k,
            lda: p.lda,
            ldb: p.ldb,
            ldc: p.ldc,
            ld_scale_a: p.scale_a.ld,
            ld_scale_b: p.scale_b.ld,
            layout_a: p.scale_a.layout,
            layout_b: p.scale_b.layout,
            block_rows_a: p.scale_a.block.rows,
            block_rows_b: p.scale_b.block.rows,
            block_k: p.scale_a.block.k,
            a_type: p.a_type,
            b_type: p.b_type,
            scale_type: p.scale_a.dtype,
            c_type: p.c_type,
            alpha: p.alpha,
            beta: p.beta,
        }
    }

    /// The problem this job runs (the inverse of [`Self::new`], addresses aside).
    pub fn problem(&self) -> BlockScaledProblem {
        let desc = |rows, ld, layout| ScaleDesc {
            dtype: self.scale_type,
            block: gemm_core::BlockShape { rows, k: self.block_k },
            ld,
            layout,
        };
        BlockScaledProblem {
            m: self.m,
            n: self.n,
            k: self.k,
            a_type: self.a_type,
            b_type: self.b_type,
            c_type: self.c_type,
            lda: self.lda,
            ldb: self.ldb,
            ldc: self.ldc,
            alpha: self.alpha,
            beta: self.beta,
            scale_a: desc(self.block_rows_a, self.ld_scale_a, self.layout_a),
            scale_b: desc(self.block_rows_b, self.ld_scale_b, self.layout_b),
        }
    }
}

/// What [`run_block_scaled`] needs of the GPU that runs a job: its architecture and compute
/// units (to choose the kernel and grid) and a way to queue a catalogue kernel with argument
/// bytes. The emulated backend queues into the emulator (checkers on); the HIP backend onto the
/// caller's stream.
pub trait KernelLauncher {
    /// The device's name, for errors.
    fn device_name(&self) -> String;
    /// Its architecture.
    fn arch(&self) -> Arch;
    /// Its compute units.
    fn compute_units(&self) -> u32;
    /// Queues `entry` on `grid` x `block` with kernel-argument bytes `args`.
    ///
    /// # Safety
    /// `args` follow `entry`'s kernel-argument layout and every address in them lies in live
    /// memory of this device that stays allocated until the kernel has run.
    unsafe fn launch(
        &self,
        entry: &'static gemm_kernels::KernelEntry,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[u8],
    ) -> Result<()>;
}

/// Queues the kernel that runs `job` on `device` and returns its name: the plan chooses the
/// catalogue entry for `job`'s formats on `device.arch()` and packs its arguments from the
/// job's fields, then `device.launch(...)`. A job the kernels do not run answers
/// [`Error::NoKernel`] with the reason, nothing queued (the callers checked the job whole
/// before, so that is the only thing left to say).
///
/// # Safety
/// `job` was built by [`BlockScaledJob::new`] from a problem that passed
/// [`BlockScaledProblem::validate`] and [`BlockScaledProblem::check_arch`] for `device.arch()`,
/// and its five addresses point at device memory of `device` spanning at least the bytes that
/// validation returned ([`BlockSpans`]), X and W 16-byte aligned, Y aligned to its dtype, the f32
/// scales to 4 bytes; that memory stays allocated until the kernel has run, and nothing else
/// writes what it reads or touches Y meanwhile.
pub unsafe fn run_block_scaled(device: &dyn KernelLauncher, job: &BlockScaledJob) -> Result<&'static str> {
    use crate::plan::block_scaled::{plan_fp8_blocks, plan_mx, Fp8BlockProblem, MxProblem, MxScaleLayout};
    let arch = device.arch();
    let refuse = |reason: String| Error::NoKernel { device: device.device_name(), reason };
    let launch = match job.scale_type {
        ScaleType::E8M0 => {
            let (Some(x), Some(w)) = (job.a_type.mx_format(), job.b_type.mx_format()) else {
                return Err(refuse(format!("{} x {} are not MX element formats", job.a_type, job.b_type)));
            };
            // The kernels read a K tile of scales per row: row-major, or K-tiled in their tile.
            let t = crate::plan::block_scaled::mx_scale_tile(x, w);
            let mx_layout = |l: gemm_core::ScaleLayout, what: &str| {
                match l {
                gemm_core::ScaleLayout::RowMajor => Ok(MxScaleLayout::RowMajor),
                gemm_core::ScaleLayout::KTiled { tile } if tile == t => Ok(MxScaleLayout::KTiled),
                other => Err(refuse(format!(
                    "{what}'s MX scales are {other:?}: the kernels take them row-major or K-tiled in tiles of {t} blocks"
                ))),
            }
            };
            let (sx_layout, sw_layout) = (mx_layout(job.layout_a, "X")?, mx_layout(job.layout_b, "W")?);
            let p = MxProblem {
                m: job.m,
                n: job.n,
                k: job.k,
                x,
                w,
                c_type: job.c_type,
                ldx: job.lda,
                ldw: job.ldb,
                ldy: job.ldc,
                ldsx: job.ld_scale_a,
                ldsw: job.ld_scale_b,
                sx_layout,
                sw_layout,
                alpha: job.alpha,
                beta: job.beta,
            };
            let plan = plan_mx(arch, device.compute_units(), &p).map_err(refuse)?;
            plan.launch(job.a, job.b, job.c, job.scale_a, job.scale_b).map_err(refuse)?
        }
        ScaleType::F32 => {
            if (job.block_rows_a, job.block_rows_b) != (1, 128) || job.a_type != job.b_type {
                return Err(refuse(format!(
                    "the GPU kernels take DeepSeek-V3's layout: X ({}) scaled per row and 128 K values, W ({}) per 128 x 128 block, one fp8 flavour; this job has X blocks of {} rows, W blocks of {}",
                    job.a_type, job.b_type, job.block_rows_a, job.block_rows_b
                )));
            }
            let col = |l: gemm_core::ScaleLayout, what: &str| match l {
                gemm_core::ScaleLayout::RowMajor => Ok(false),
                gemm_core::ScaleLayout::ColMajor => Ok(true),
                other => Err(refuse(format!(
                    "{what}'s block fp8 scales are {other:?}: the kernels take them row- or column-major"
                ))),
            };
            let (sx_col_major, sw_col_major) = (col(job.layout_a, "X")?, col(job.layout_b, "W")?);
            let p = Fp8BlockProblem {
                m: job.m,
                n: job.n,
                k: job.k,
                dtype: job.a_type,
                c_type: job.c_type,
                ldx: job.lda,
                ldw: job.ldb,
                ldy: job.ldc,
                ldsx: job.ld_scale_a,
                ldsw: job.ld_scale_b,
                sx_col_major,
                sw_col_major,
                alpha: job.alpha,
                beta: job.beta,
            };
            let plan = plan_fp8_blocks(arch, &p).map_err(refuse)?;
            plan.launch(job.a, job.b, job.c, job.scale_a, job.scale_b).map_err(refuse)?
        }
    };
    // SAFETY: the plan packed the job's addresses into the entry's argument layout; the caller
    // guarantees (this function's contract) that they span what the kernel reads.
    unsafe { device.launch(launch.entry, launch.grid, launch.block, &launch.args) }?;
    Ok(launch.entry.name)
}

/// Host-memory scales of one operand: the slice says the dtype (E8M0 for MX, f32 for block fp8),
/// the problem's [`ScaleDesc`] the block shape and leading dimension.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScaleSlice<'a> {
    E8M0(&'a [E8M0]),
    F32(&'a [f32]),
}

impl<'a> ScaleSlice<'a> {
    /// The dtype the slice holds.
    pub fn dtype(&self) -> ScaleType {
        match self {
            ScaleSlice::E8M0(_) => ScaleType::E8M0,
            ScaleSlice::F32(_) => ScaleType::F32,
        }
    }
    /// Its bytes (f32 in the machine's byte order, little-endian on every target we run).
    pub fn bytes(&self) -> &'a [u8] {
        match *self {
            ScaleSlice::E8M0(s) => bytemuck::cast_slice(s),
            ScaleSlice::F32(s) => bytemuck::cast_slice(s),
        }
    }
}

/// The host-memory buffers of a block-scaled GEMM, as bytes: X, W, their scales, and Y.
pub struct BlockScaledBuffers<'a> {
    pub a: &'a [u8],
    pub b: &'a [u8],
    pub scale_a: &'a [u8],
    pub scale_b: &'a [u8],
    pub c: &'a mut [u8],
}

/// Validates `p` and the buffers' byte lengths (each at least the span validation returns), and
/// that Y's bytes are whole elements; returns the spans. Nothing is touched.
pub fn check_buffers(p: &BlockScaledProblem, bufs: &BlockScaledBuffers<'_>) -> Result<BlockSpans> {
    let spans = p.validate()?;
    let checks = [
        ("A (X)", bufs.a.len(), spans.a),
        ("B (W)", bufs.b.len(), spans.b),
        ("the scales of A", bufs.scale_a.len(), spans.scale_a),
        ("the scales of B", bufs.scale_b.len(), spans.scale_b),
        ("C (Y)", bufs.c.len(), spans.c),
    ];
    for (what, len, required) in checks {
        if len < required {
            return Err(BlockScaleError::BufferTooSmall { what: what.into(), len, required }.into());
        }
    }
    Ok(spans)
}

/// A lookup table from element code to its unscaled f32 value, for every code of `dtype`'s
/// width.
fn decode_table(dtype: DType) -> Vec<f32> {
    let codes = 1usize << dtype.bits();
    match (dtype.mx_format(), dtype) {
        (Some(f), _) => (0..codes).map(|c| f.decode(c as u8)).collect(),
        (None, DType::Fp8E4M3Fnuz) => (0..codes).map(|c| Fp8Format::E4M3FNUZ.decode(c as u8)).collect(),
        (None, _) => (0..codes).map(|c| Fp8Format::E5M2FNUZ.decode(c as u8)).collect(),
    }
}

/// `rows x k` elements of a packed operand (`ld` elements between rows), decoded without their
/// scales into a tight row-major f32 matrix.
fn decode_operand(dtype: DType, bytes: &[u8], rows: usize, k: usize, ld: usize) -> Vec<f32> {
    let table = decode_table(dtype);
    let bits = dtype.bits() as usize;
    let mask = (1u16 << bits) - 1;
    let ld_bytes = ld * bits / 8; // exact: validation made ld * bits a multiple of 128
    let mut out = Vec::with_capacity(rows * k);
    for r in 0..rows {
        let row = &bytes[r * ld_bytes..];
        if bits == 8 {
            out.extend(row[..k].iter().map(|&c| table[usize::from(c)]));
            continue;
        }
        // The bit stream of `gemm_core::mx::pack`: element l at bits [bits*l, bits*(l+1)).
        out.extend((0..k).map(|l| {
            let pos = l * bits;
            let lo = u16::from(row[pos / 8]);
            let hi = row.get(pos / 8 + 1).map_or(0, |b| u16::from(*b));
            table[usize::from(((hi << 8 | lo) >> (pos % 8)) & mask)]
        }));
    }
    out
}

/// Scale `(r / block_rows, g)` of one operand as an f64 (exact).
fn scale_at(desc: &ScaleDesc, bytes: &[u8], r: usize, g: usize) -> f64 {
    let at = desc.index(r / desc.block.rows, g);
    match desc.dtype {
        ScaleType::E8M0 => f64::from(E8M0(bytes[at]).to_f32()),
        ScaleType::F32 => {
            let b = &bytes[at * 4..at * 4 + 4];
            f64::from(f32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
        }
    }
}

/// Reads element `at` of Y (f32, f16 or bf16) as f32.
fn read_y(c_type: DType, c: &[u8], at: usize) -> f32 {
    match c_type {
        DType::F32 => {
            let b = &c[at * 4..at * 4 + 4];
            f32::from_ne_bytes([b[0], b[1], b[2], b[3]])
        }
        DType::F16 => f16::from_ne_bytes([c[at * 2], c[at * 2 + 1]]).to_f32(),
        _ => bf16::from_ne_bytes([c[at * 2], c[at * 2 + 1]]).to_f32(),
    }
}

/// Writes `y`, rounded once (to nearest even) to Y's dtype, into element `at` of Y.
fn write_y(c_type: DType, c: &mut [u8], at: usize, y: f32) {
    match c_type {
        DType::F32 => c[at * 4..at * 4 + 4].copy_from_slice(&y.to_ne_bytes()),
        DType::F16 => c[at * 2..at * 2 + 2].copy_from_slice(&f16::from_f32(y).to_ne_bytes()),
        _ => c[at * 2..at * 2 + 2].copy_from_slice(&bf16::from_f32(y).to_ne_bytes()),
    }
}

/// The host CPU's block-scaled GEMM (module documentation: per-K-group f32 partial sums from the
/// host f32 GEMM on `threads` threads, scales applied in f64, one rounding). Checks everything
/// first ([`check_buffers`]); bad input is an error with Y untouched; `beta == 0` never reads
/// Y; `alpha == 0` or `k == 0` reads neither operand nor scales (`Y = beta * Y`, as BLAS);
/// elements of Y outside the `m x n` block (its padding) are never touched.
pub fn host_block_scaled(p: &BlockScaledProblem, bufs: BlockScaledBuffers<'_>, threads: usize) -> Result<()> {
    check_buffers(p, &bufs)?;
    let (m, n, k) = (p.m, p.n, p.k);
    if m == 0 || n == 0 {
        return Ok(());
    }
    let mut acc = vec![0f64; m * n];
    if k > 0 && p.alpha != 0.0 {
        let xa = decode_operand(p.a_type, bufs.a, m, k, p.lda);
        let wb = decode_operand(p.b_type, bufs.b, n, k, p.ldb);
        let bk = p.scale_a.block.k;
        let mut part = vec![0f32; m * n];
        let mut sa = vec![0f64; m];
        let mut sb = vec![0f64; n];
        for g in 0..k.div_ceil(bk) {
            let kg = bk.min(k - g * bk);
            // P_g = X[:, group] * W[:, group]^T: row-major X (ld k) times W stored n x k.
            let q =
                GemmProblem::new(m, n, kg).with_transposes(Transpose::No, Transpose::Yes).with_leading_dims(k, k, n);
            let (xs, ws) = (&xa[g * bk..], &wb[g * bk..]);
            let (xv, wv, pv) = q.views(xs, ws, &mut part)?;
            gemm_host::gemm(1.0, xv, wv, 0.0, pv, threads.max(1))?;
            for (i, s) in sa.iter_mut().enumerate() {
                *s = scale_at(&p.scale_a, bufs.scale_a, i, g);
            }
            for (j, s) in sb.iter_mut().enumerate() {
                *s = scale_at(&p.scale_b, bufs.scale_b, j, g);
            }
            for i in 0..m {
                let (row, prow) = (&mut acc[i * n..][..n], &part[i * n..][..n]);
                for j in 0..n {
                    row[j] += (sa[i] * sb[j]) * f64::from(prow[j]);
                }
            }
        }
    }
    let (alpha, beta) = (f64::from(p.alpha), f64::from(p.beta));
    for i in 0..m {
        for j in 0..n {
            let at = i * p.ldc + j;
            let mut y = alpha * acc[i * n + j];
            if p.beta != 0.0 {
                y += beta * f64::from(read_y(p.c_type, bufs.c, at));
            }
            write_y(p.c_type, bufs.c, at, y as f32);
        }
    }
    Ok(())
}

/// Checks a block-scaled problem for a GPU of `arch` (validation, then the architecture:
/// [`BlockScaledProblem::check_arch`]); the typed errors of [`BlockScaleError`].
pub fn check_for_arch(p: &BlockScaledProblem, arch: Arch) -> Result<BlockSpans> {
    let spans = p.validate()?;
    p.check_arch(arch)?;
    Ok(spans)
}

/// Whether a device's refusal of a block-scaled GEMM lets another device of a context try it:
/// the general rule ([`Error::is_retryable`]) plus an architecture that cannot run it (MX on a
/// gfx942 before a gfx950 or the host).
pub fn next_device_may_run(e: &Error) -> bool {
    e.is_retryable() || matches!(e, Error::BlockScale(BlockScaleError::UnsupportedArch { .. }))
}

/// The checks a GPU makes of a host-memory block-scaled GEMM before it uploads anything: the
/// buffers ([`check_buffers`]) and the architecture ([`BlockScaledProblem::check_arch`]).
/// `None` for an empty problem (M or N zero: nothing to do).
pub(crate) fn check_gpu_host_call(
    arch: Arch,
    p: &BlockScaledProblem,
    bufs: &BlockScaledBuffers<'_>,
) -> Result<Option<BlockSpans>> {
    let spans = check_buffers(p, bufs)?;
    p.check_arch(arch)?;
    Ok((p.m > 0 && p.n > 0).then_some(spans))
}
