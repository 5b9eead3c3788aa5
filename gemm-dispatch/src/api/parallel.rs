//! Tensor-parallel GEMM over the devices of a [`Context`]: one GEMM split across every device,
//! the per-device GEMMs run concurrently (one thread per device, through the devices' own
//! backends), then a [`Collective`] combines the pieces.
//!
//! * [`TpPlan::Column`]: B is split by columns (of `op(B)`); device `d` computes
//!   `C[:, cols_d] = alpha * op(A) * op(B)[:, cols_d] + beta * C[:, cols_d]` with all of A, and the
//!   column blocks are all-gathered into C.
//! * [`TpPlan::Row`]: K is split; device `d` gets `op(A)[:, ks_d]` and `op(B)[ks_d, :]` and
//!   computes the partial product `alpha * op(A)[:, ks_d] * op(B)[ks_d, :]` **in f32**, whatever
//!   C's dtype. The partials are summed in f32 by a reduce-scatter (each device then owns a
//!   block of C's entries) or an all-reduce (each owns all of them), and each entry is finished
//!   as `sum + beta * C` in f32 and rounded **once** to C's dtype. Reducing bf16/f16 partials
//!   instead would round once per device and per reduction step.
//!
//! Splits are as even as possible (the first `len % devices` parts are one longer); devices
//! whose part is empty (`n` or `k` smaller than the device count) compute nothing. Shards are
//! packed into tight buffers in the problem's own layout and transposes, as a distributed
//! program would hold them; collectives move equal-sized (padded) blocks, as RCCL requires.
//!
//! Errors: the problem is validated before anything runs; a failing device fails the whole
//! call with an error that names it (and any other failing device); C is written only after
//! every device and the collective have succeeded, so on any error C is untouched.
//!
//! Two paths run these plans. [`Context::gemm_tensor_parallel`] takes the **device-resident**
//! one ([`device`]) when every device of the context is a HIP device and RCCL is available
//! (given at discovery, or `GEMM_RCCL_LIBRARY` / `librccl`): shards go from the caller's slices
//! to the GPUs, GEMMs and RCCL collectives run there, and only the result comes back. Otherwise
//! (host or emulated devices, a mix, RCCL missing) it takes the **host** path: each device's
//! GEMM reads and writes host memory through its backend and the in-process
//! [`HostCollective`] combines the pieces. [`Context::tensor_parallel_route`] says which one a
//! context takes and why; [`Context::gemm_tensor_parallel_with`] always takes the host path
//! with the given collective.

pub mod device;
pub mod group;
pub use device::TpRoute;
pub use group::{TpGroup, TpOptions, TpStatus};

use crate::api::context::Context;
use crate::backends::collective::{Collective, CollectiveType, HostCollective};
use crate::error::{Error, Result};
use gemm_core::{DType, Element, GemmProblem, Layout, Operand};
use std::ops::Range;

/// How a row-parallel GEMM sums its partial products.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduce {
    /// Reduce-scatter: device `d` receives the sums of block `d` of C's entries.
    ReduceScatter,
    /// All-reduce: every device receives every sum.
    AllReduce,
}

/// How a tensor-parallel GEMM is split over the devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TpPlan {
    /// Split N (B's columns); gather C's column blocks.
    Column,
    /// Split K (A's columns, B's rows); sum f32 partial products.
    Row { reduce: Reduce },
}

/// `len` split into `parts` contiguous ranges, the first `len % parts` one longer than the rest.
pub fn split(len: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    let (base, extra) = (len / parts, len % parts);
    let mut start = 0;
    (0..parts)
        .map(|i| {
            let size = base + usize::from(i < extra);
            let r = start..start + size;
            start += size;
            r
        })
        .collect()
}

/// Index of entry `(i, j)` of a strided view `(rows, cols, row_stride, col_stride)`.
fn at(s: (usize, usize, usize, usize), i: usize, j: usize) -> usize {
    i * s.2 + j * s.3
}

/// Copies the `rows x cols` block at `(r0, c0)` of the op-view `src_s` of `src` into the whole
/// op-view `dst_s` of `dst`.
fn pack<T: Copy>(
    src: &[T],
    src_s: (usize, usize, usize, usize),
    r0: usize,
    c0: usize,
    dst: &mut [T],
    dst_s: (usize, usize, usize, usize),
) {
    let (rows, cols, _, _) = dst_s;
    for j in 0..cols {
        for i in 0..rows {
            dst[at(dst_s, i, j)] = src[at(src_s, r0 + i, c0 + j)];
        }
    }
}

/// The shard problem `m x n x k` in `p`'s layout and transposes with tight leading dimensions.
fn shard_problem(p: &GemmProblem, m: usize, n: usize, k: usize) -> GemmProblem {
    GemmProblem::new(m, n, k)
        .with_layout(p.layout)
        .with_transposes(p.trans_a, p.trans_b)
        .with_scalars(p.alpha, p.beta)
        .with_dtypes(p.a_type, p.b_type, p.c_type)
}

/// The error of a failed tensor-parallel call: the first failing shard's error, keeping its
/// kind (so a device failure stays a device failure) and naming the others.
fn shard_failure(names: &[String], failures: Vec<(usize, Error)>, devices: usize) -> Error {
    let others: Vec<String> =
        failures.iter().skip(1).map(|(r, e)| format!("shard {r} on {}: {e}", names[*r])).collect();
    let also = if others.is_empty() { String::new() } else { format!(" (also failed: {})", others.join("; ")) };
    let (r, first) = failures.into_iter().next().expect("at least one failure");
    let context = format!("tensor-parallel shard {r} of {devices}");
    match first {
        Error::Device { device, message } => Error::Device { device, message: format!("{context}: {message}{also}") },
        Error::Unsupported { device, why } => Error::Unsupported { device, why: format!("{context}: {why}{also}") },
        e => Error::Device { device: names[r].clone(), message: format!("{context}: {e}{also}") },
    }
}

/// Runs `work` of every device `d` in `active` concurrently (one scoped thread each; inline when
/// there is only one) and returns the values in the order given, or the failure of the first
/// failing device naming the others. A panicking or unstartable worker is that device's failure.
/// Both tensor-parallel paths (host and device-resident) run their ranks through this.
pub(crate) fn run_shards<T, W>(names: &[String], active: Vec<(usize, W)>, devices: usize) -> Result<Vec<T>>
where
    T: Send,
    W: FnOnce() -> Result<T> + Send,
{
    let results: Vec<(usize, Result<T>)> = if active.len() <= 1 {
        active.into_iter().map(|(d, work)| (d, work())).collect()
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = active
                .into_iter()
                .map(|(d, work)| (d, std::thread::Builder::new().name(format!("gemm-tp-{d}")).spawn_scoped(s, work)))
                .collect();
            handles
                .into_iter()
                .map(|(d, h)| {
                    let result = match h {
                        Ok(h) => h.join().unwrap_or_else(|_| {
                            Err(Error::Device { device: names[d].clone(), message: "the backend panicked".into() })
                        }),
                        Err(e) => Err(Error::Device {
                            device: names[d].clone(),
                            message: format!("cannot start a thread: {e}"),
                        }),
                    };
                    (d, result)
                })
                .collect()
        })
    };
    let mut values = Vec::with_capacity(results.len());
    let mut failures = Vec::new();
    for (d, result) in results {
        match result {
            Ok(v) => values.push(v),
            Err(e) => failures.push((d, e)),
        }
    }
    if failures.is_empty() {
        Ok(values)
    } else {
        failures.sort_by_key(|(d, _)| *d);
        Err(shard_failure(names, failures, devices))
    }
}

/// The row plans' epilogue for the C entries `first..first + sums.len()` (flat indices of the
/// m x n result in the problem's layout): `sum + beta * C` in f32, rounded once to C's dtype.
/// Shared by the host and the device-resident paths.
pub(crate) fn finish_sums<C: Element>(p: &GemmProblem, c: &mut [C], first: usize, sums: &[f32]) {
    let c_s = p.strides(Operand::C);
    for (k, &sum) in sums.iter().enumerate() {
        let e = first + k;
        let (i, j) = match p.layout {
            Layout::RowMajor => (e / p.n, e % p.n),
            Layout::ColMajor => (e % p.m, e / p.m),
        };
        let idx = at(c_s, i, j);
        let v = if p.beta != 0.0 { sum + p.beta * c[idx].to_f32() } else { sum };
        c[idx] = C::from_f32(v);
    }
}

/// Elements of `T` from little-endian bytes of any alignment.
fn from_bytes<T: bytemuck::Pod>(bytes: &[u8]) -> Vec<T> {
    let n = bytes.len() / std::mem::size_of::<T>();
    let mut out = vec![T::zeroed(); n];
    bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(&bytes[..n * std::mem::size_of::<T>()]);
    out
}

fn collective_type(d: DType) -> Result<CollectiveType> {
    CollectiveType::from_dtype(d).ok_or_else(|| {
        Error::Invalid(gemm_core::Error::InvalidArgument(format!("collectives do not move {d} buffers")))
    })
}

/// A row-parallel shard: its problem, its A and B pieces and its f32 partial product.
type RowShard<A, B> = (GemmProblem, Vec<A>, Vec<B>, Vec<f32>);

impl Context {
    /// One GEMM split over every device of the context by `plan`: device-resident with RCCL when
    /// every device is a HIP device and RCCL is available, else with the in-process
    /// [`HostCollective`] (the devices' GEMMs read and write host memory); see the [module
    /// docs](crate::api::parallel) for the plans and the choice. Row-parallel partial sums are f32
    /// and C is rounded once, whatever its dtype.
    ///
    /// ```
    /// use gemm_dispatch::{Context, GemmProblem, Reduce, TpPlan};
    /// let ctx = Context::host(2);
    /// let p = GemmProblem::new(2, 2, 2);
    /// let mut c = [0f32; 4];
    /// ctx.gemm_tensor_parallel(TpPlan::Row { reduce: Reduce::ReduceScatter }, &p, &[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], &mut c).unwrap();
    /// assert_eq!(c, [19.0, 22.0, 43.0, 50.0]);
    /// ```
    pub fn gemm_tensor_parallel<A: Element, B: Element, C: Element>(
        &self,
        plan: TpPlan,
        p: &GemmProblem,
        a: &[A],
        b: &[B],
        c: &mut [C],
    ) -> Result<()> {
        p.views(a, b, &mut *c)?;
        if let Ok(ranks) = device::hip_ranks(self) {
            if p.m == 0 || p.n == 0 {
                return Ok(());
            }
            // Without a collective (RCCL missing, communicators refused) the host path serves.
            if let Ok(result) = device::with_collective(&ranks, |k| device::run(&ranks, k, plan, p, a, b, c)) {
                return result;
            }
        }
        self.gemm_tensor_parallel_with(&HostCollective::new(self.device_count()), plan, p, a, b, c)
    }

    /// [`Context::gemm_tensor_parallel`] with a given collective on host buffers (one rank per
    /// device of the context).
    pub fn gemm_tensor_parallel_with<A: Element, B: Element, C: Element, K>(
        &self,
        collective: &K,
        plan: TpPlan,
        p: &GemmProblem,
        a: &[A],
        b: &[B],
        c: &mut [C],
    ) -> Result<()>
    where
        K: Collective<Buffer = Vec<u8>> + ?Sized,
    {
        p.views(a, b, &mut *c)?;
        if collective.ranks() != self.device_count() {
            return Err(Error::Invalid(gemm_core::Error::InvalidArgument(format!(
                "a collective of {} ranks for {} devices",
                collective.ranks(),
                self.device_count()
            ))));
        }
        if p.m == 0 || p.n == 0 {
            return Ok(());
        }
        match plan {
            TpPlan::Column => self.column_parallel(collective, p, a, b, c),
            TpPlan::Row { reduce } => self.row_parallel(collective, reduce, p, a, b, c),
        }
    }

    fn column_parallel<A: Element, B: Element, C: Element, K>(
        &self,
        collective: &K,
        p: &GemmProblem,
        a: &[A],
        b: &[B],
        c: &mut [C],
    ) -> Result<()>
    where
        K: Collective<Buffer = Vec<u8>> + ?Sized,
    {
        let devices = self.device_count();
        let names = self.device_names().to_vec();
        let parts = split(p.n, devices);
        // Every shard's C block is padded to the largest one: collectives move equal blocks.
        let block = p.m * parts[0].len();
        let (b_s, c_s) = (p.strides(Operand::B), p.strides(Operand::C));
        let mut shards: Vec<(GemmProblem, Vec<B>, Vec<C>)> = Vec::with_capacity(devices);
        for cols in &parts {
            // A is replicated: the shard problem keeps A's leading dimension and reads the
            // caller's A as it is.
            let sp = shard_problem(p, p.m, cols.len(), p.k);
            let sp = sp.with_leading_dims(p.lda, sp.ldb, sp.ldc);
            let spans = sp.validate()?;
            let mut sb = vec![B::default(); spans.b];
            pack(b, b_s, 0, cols.start, &mut sb, sp.strides(Operand::B));
            let mut sc = vec![C::from_f32(0.0); block];
            if p.beta != 0.0 {
                pack(c, c_s, 0, cols.start, &mut sc, sp.strides(Operand::C));
            }
            shards.push((sp, sb, sc));
        }
        let active: Vec<_> = shards
            .iter_mut()
            .enumerate()
            .filter(|(_, (sp, _, _))| sp.n > 0)
            .map(|(d, (sp, sb, sc))| {
                let sp = *sp;
                let (sb, sc) = (&*sb, &mut *sc);
                (d, move || self.gemm_on(d, &sp, a, sb, sc))
            })
            .collect();
        run_shards(&names, active, devices)?;

        let dtype = collective_type(p.c_type)?;
        let send: Vec<Vec<u8>> = shards.iter().map(|(_, _, sc)| bytemuck::cast_slice(sc).to_vec()).collect();
        let mut recv = vec![vec![0u8; block * devices * p.c_type.size_bytes()]; devices];
        collective.all_gather(&send, &mut recv, block, dtype)?;

        // Every rank now holds C; rank 0's copy is written to the caller's C.
        let gathered: Vec<C> = from_bytes(&recv[0][..block * devices * p.c_type.size_bytes()]);
        for (d, cols) in parts.iter().enumerate() {
            let s = shards[d].0.strides(Operand::C);
            let piece = &gathered[d * block..(d + 1) * block];
            for j in 0..cols.len() {
                for i in 0..p.m {
                    c[at(c_s, i, cols.start + j)] = piece[at(s, i, j)];
                }
            }
        }
        Ok(())
    }

    fn row_parallel<A: Element, B: Element, C: Element, K>(
        &self,
        collective: &K,
        reduce: Reduce,
        p: &GemmProblem,
        a: &[A],
        b: &[B],
        c: &mut [C],
    ) -> Result<()>
    where
        K: Collective<Buffer = Vec<u8>> + ?Sized,
    {
        let devices = self.device_count();
        let names = self.device_names().to_vec();
        let parts = split(p.k, devices);
        let entries = p.m * p.n;
        let chunk = entries.div_ceil(devices);
        let padded = chunk * devices;
        let (a_s, b_s) = (p.strides(Operand::A), p.strides(Operand::B));
        // Partial products: alpha * op(A)[:, ks] * op(B)[ks, :] in f32, C not read (beta = 0).
        let mut shards: Vec<RowShard<A, B>> = Vec::with_capacity(devices);
        for ks in &parts {
            let sp = shard_problem(p, p.m, p.n, ks.len()).with_scalars(p.alpha, 0.0).with_dtypes(
                p.a_type,
                p.b_type,
                DType::F32,
            );
            let spans = sp.validate()?;
            let mut sa = vec![A::default(); spans.a];
            pack(a, a_s, 0, ks.start, &mut sa, sp.strides(Operand::A));
            let mut sb = vec![B::default(); spans.b];
            pack(b, b_s, ks.start, 0, &mut sb, sp.strides(Operand::B));
            shards.push((sp, sa, sb, vec![0f32; padded]));
        }
        // A device with no K contributes zeros (its partial stays 0) and runs nothing.
        let active: Vec<_> = shards
            .iter_mut()
            .enumerate()
            .filter(|(_, (sp, _, _, _))| sp.k > 0)
            .map(|(d, (sp, sa, sb, partial))| {
                let sp = *sp;
                let (sa, sb, partial) = (&*sa, &*sb, &mut *partial);
                (d, move || self.gemm_on(d, &sp, sa, sb, partial))
            })
            .collect();
        run_shards(&names, active, devices)?;

        let send: Vec<Vec<u8>> = shards.iter().map(|s| bytemuck::cast_slice(&s.3).to_vec()).collect();
        // Which entries (flat indices of the partials' tight C) each rank finishes, from which
        // of its received elements.
        let (recv_elems, owned): (usize, Vec<Range<usize>>) = match reduce {
            Reduce::ReduceScatter => {
                (chunk, (0..devices).map(|d| (d * chunk).min(entries)..((d + 1) * chunk).min(entries)).collect())
            }
            Reduce::AllReduce => (padded, split(entries, devices)),
        };
        let mut recv = vec![vec![0u8; recv_elems * 4]; devices];
        match reduce {
            Reduce::ReduceScatter => collective.reduce_scatter(&send, &mut recv, chunk, CollectiveType::F32)?,
            Reduce::AllReduce => collective.all_reduce(&send, &mut recv, padded, CollectiveType::F32)?,
        }

        // Epilogue: each entry once, sum + beta * C in f32, one rounding to C's dtype.
        for (d, range) in owned.into_iter().enumerate().filter(|(_, r)| !r.is_empty()) {
            let sums: Vec<f32> = from_bytes(&recv[d][..recv_elems * 4]);
            let first = match reduce {
                Reduce::ReduceScatter => d * chunk,
                Reduce::AllReduce => 0,
            };
            finish_sums(p, c, range.start, &sums[range.start - first..range.end - first]);
        }
        Ok(())
    }
}
