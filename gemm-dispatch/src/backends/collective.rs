//! Collectives over the ranks (devices) of a tensor-parallel GEMM: all-gather, reduce-scatter
//! and all-reduce (sum) on f32, bf16 and f16 buffers.
//!
//! [`Collective`] is the contract; each rank owns one buffer of the implementation's
//! [`Collective::Buffer`] type, and one call moves the data of every rank (as `ncclGroupStart`
//! / `ncclGroupEnd` around one call per rank does). Two implementations:
//!
//! * [`HostCollective`]: in-process, on host byte buffers. It serves every device whose GEMMs
//!   take host memory (the host backend, emulated GPUs, test doubles). Reductions add the
//!   ranks' values in f32, in rank order, and round once to the buffer's type, so the result
//!   is deterministic.
//! * [`RcclCollective`]: RCCL (or NCCL) through `gemm-rocm`, on HIP device buffers, one
//!   communicator and one stream per device. Here it runs against the emulated HIP runtime and
//!   RCCL of `libgemm_emu_hip.so` (the device-resident tensor-parallel tests); real rings and
//!   their speed only on AMD hardware. RCCL reduces 16-bit types in the 16-bit type on each hop
//!   of its ring, which is why the row-parallel GEMM reduces f32 partials (see
//!   [`crate::api::parallel`]).

use crate::error::{Error, Result};
use gemm_core::DType;

/// Element types a collective moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollectiveType {
    F32,
    Bf16,
    F16,
}

impl CollectiveType {
    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            CollectiveType::F32 => 4,
            CollectiveType::Bf16 | CollectiveType::F16 => 2,
        }
    }

    /// The collective type of a GEMM dtype (`None` for fp8, which no GEMM writes).
    pub fn from_dtype(d: DType) -> Option<Self> {
        match d {
            DType::F32 => Some(CollectiveType::F32),
            DType::Bf16 => Some(CollectiveType::Bf16),
            DType::F16 => Some(CollectiveType::F16),
            _ => None,
        }
    }

    /// Element `i` of `bytes`, widened to f32 (exact).
    fn load(self, bytes: &[u8], i: usize) -> f32 {
        let s = self.size();
        let b = &bytes[i * s..(i + 1) * s];
        match self {
            CollectiveType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            CollectiveType::Bf16 => half::bf16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32(),
            CollectiveType::F16 => half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32(),
        }
    }

    /// Stores `v` as element `i` of `bytes`, rounded to nearest even.
    fn store(self, bytes: &mut [u8], i: usize, v: f32) {
        let s = self.size();
        let b = &mut bytes[i * s..(i + 1) * s];
        match self {
            CollectiveType::F32 => b.copy_from_slice(&v.to_le_bytes()),
            CollectiveType::Bf16 => b.copy_from_slice(&half::bf16::from_f32(v).to_bits().to_le_bytes()),
            CollectiveType::F16 => b.copy_from_slice(&half::f16::from_f32(v).to_bits().to_le_bytes()),
        }
    }

    fn nccl(self) -> gemm_rocm::nccl::DataType {
        match self {
            CollectiveType::F32 => gemm_rocm::nccl::DataType::F32,
            CollectiveType::Bf16 => gemm_rocm::nccl::DataType::Bf16,
            CollectiveType::F16 => gemm_rocm::nccl::DataType::F16,
        }
    }
}

/// All-gather, reduce-scatter and all-reduce (sum) over `ranks()` ranks. Buffers are indexed
/// by rank; counts are in elements of `dtype`. A call either completes for every rank or
/// returns an error; buffers are checked (count and size) before any is touched.
pub trait Collective {
    /// One rank's buffer.
    type Buffer;

    /// Number of ranks.
    fn ranks(&self) -> usize;

    /// Every rank contributes `send_count` elements; every rank's `recv` receives
    /// `ranks * send_count`, rank `i`'s contribution at element `i * send_count`.
    fn all_gather(
        &self,
        send: &[Self::Buffer],
        recv: &mut [Self::Buffer],
        send_count: usize,
        dtype: CollectiveType,
    ) -> Result<()>;

    /// Every rank's `send` holds `ranks * recv_count` elements; rank `i` receives block `i` of
    /// their elementwise sum.
    fn reduce_scatter(
        &self,
        send: &[Self::Buffer],
        recv: &mut [Self::Buffer],
        recv_count: usize,
        dtype: CollectiveType,
    ) -> Result<()>;

    /// Every rank receives the elementwise sum of the ranks' `count` elements.
    fn all_reduce(
        &self,
        send: &[Self::Buffer],
        recv: &mut [Self::Buffer],
        count: usize,
        dtype: CollectiveType,
    ) -> Result<()>;
}

fn invalid(why: String) -> Error {
    Error::Invalid(gemm_core::Error::InvalidArgument(why))
}

/// The in-process collective on host byte buffers (little-endian elements, any alignment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostCollective {
    ranks: usize,
}

impl HostCollective {
    /// A collective of `ranks` ranks (at least 1).
    pub fn new(ranks: usize) -> Self {
        Self { ranks: ranks.max(1) }
    }

    /// Checks rank counts and that every buffer holds `elems` elements (`send`) / `out_elems`.
    fn check(
        &self,
        what: &str,
        send: &[Vec<u8>],
        recv: &[Vec<u8>],
        send_elems: Option<usize>,
        recv_elems: Option<usize>,
        dtype: CollectiveType,
    ) -> Result<(usize, usize)> {
        if send.len() != self.ranks || recv.len() != self.ranks {
            return Err(invalid(format!(
                "{what}: {} send and {} receive buffers for {} ranks",
                send.len(),
                recv.len(),
                self.ranks
            )));
        }
        let bytes = |elems: Option<usize>| {
            elems
                .and_then(|e| e.checked_mul(dtype.size()))
                .ok_or_else(|| invalid(format!("{what}: element count overflows")))
        };
        let (sb, rb) = (bytes(send_elems)?, bytes(recv_elems)?);
        for (r, (s, d)) in send.iter().zip(recv).enumerate() {
            if s.len() < sb || d.len() < rb {
                return Err(invalid(format!(
                    "{what}: rank {r} has {} send / {} receive bytes, {sb} / {rb} needed ({dtype:?})",
                    s.len(),
                    d.len()
                )));
            }
        }
        Ok((sb, rb))
    }

    /// The f32 sum over ranks of element `i`, in rank order, rounded once on store.
    fn sum(send: &[Vec<u8>], i: usize, dtype: CollectiveType) -> f32 {
        send.iter().fold(0.0f32, |acc, s| acc + dtype.load(s, i))
    }
}

impl Collective for HostCollective {
    type Buffer = Vec<u8>;

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn all_gather(
        &self,
        send: &[Vec<u8>],
        recv: &mut [Vec<u8>],
        send_count: usize,
        dtype: CollectiveType,
    ) -> Result<()> {
        let (sb, _) =
            self.check("all_gather", send, recv, Some(send_count), send_count.checked_mul(self.ranks), dtype)?;
        for out in recv.iter_mut() {
            for (r, s) in send.iter().enumerate() {
                out[r * sb..(r + 1) * sb].copy_from_slice(&s[..sb]);
            }
        }
        Ok(())
    }

    fn reduce_scatter(
        &self,
        send: &[Vec<u8>],
        recv: &mut [Vec<u8>],
        recv_count: usize,
        dtype: CollectiveType,
    ) -> Result<()> {
        self.check("reduce_scatter", send, recv, recv_count.checked_mul(self.ranks), Some(recv_count), dtype)?;
        for (r, out) in recv.iter_mut().enumerate() {
            for e in 0..recv_count {
                dtype.store(out, e, Self::sum(send, r * recv_count + e, dtype));
            }
        }
        Ok(())
    }

    fn all_reduce(&self, send: &[Vec<u8>], recv: &mut [Vec<u8>], count: usize, dtype: CollectiveType) -> Result<()> {
        self.check("all_reduce", send, recv, Some(count), Some(count), dtype)?;
        let Some((first, rest)) = recv.split_first_mut() else { return Ok(()) };
        for e in 0..count {
            dtype.store(first, e, Self::sum(send, e, dtype));
        }
        let bytes = count * dtype.size();
        for out in rest {
            out[..bytes].copy_from_slice(&first[..bytes]);
        }
        Ok(())
    }
}

/// RCCL/NCCL collectives on HIP device buffers: one communicator (`ncclCommInitAll`) and one
/// stream per device, rank `i` on `devices[i]`. Each call issues one collective per rank inside
/// `ncclGroupStart`/`ncclGroupEnd` and waits for every rank's stream, so buffers are safe to
/// reuse when it returns.
///
/// Work queued on [`Self::stream`]`(r)` before a call is ordered before rank `r`'s collective,
/// which is how the device-resident tensor-parallel GEMM orders its GEMMs before it.
pub struct RcclCollective {
    nccl: gemm_rocm::nccl::Nccl,
    comms: Vec<gemm_rocm::nccl::Communicator>,
    streams: Vec<gemm_rocm::hip::Stream>,
}

impl std::fmt::Debug for RcclCollective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RcclCollective").field("ranks", &self.comms.len()).finish()
    }
}

fn rccl_error(rank: Option<usize>, e: gemm_rocm::Error) -> Error {
    Error::Device {
        device: match rank {
            Some(r) => format!("rccl rank {r}"),
            None => "rccl".into(),
        },
        message: e.to_string(),
    }
}

impl RcclCollective {
    /// Loads RCCL (`GEMM_RCCL_LIBRARY` overrides the search) and creates one communicator per
    /// device, in order.
    pub fn new(devices: &[gemm_rocm::hip::Device]) -> Result<Self> {
        let nccl = gemm_rocm::nccl::Nccl::load().map_err(|e| rccl_error(None, e.into()))?;
        Self::with_library(nccl, devices)
    }

    /// As [`Self::new`] with an already loaded library.
    pub fn with_library(nccl: gemm_rocm::nccl::Nccl, devices: &[gemm_rocm::hip::Device]) -> Result<Self> {
        let ordinals: Vec<i32> = devices.iter().map(|d| d.ordinal()).collect();
        let comms = nccl.init_all(&ordinals).map_err(|e| rccl_error(None, e))?;
        let streams = devices
            .iter()
            .enumerate()
            .map(|(r, d)| d.create_stream().map_err(|e| rccl_error(Some(r), e)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { nccl, comms, streams })
    }

    /// The stream of rank `r`: work queued on it before a collective is ordered before it.
    pub fn stream(&self, rank: usize) -> Option<&gemm_rocm::hip::Stream> {
        self.streams.get(rank)
    }

    fn check_ranks(&self, what: &str, send: usize, recv: usize) -> Result<()> {
        if send != self.comms.len() || recv != self.comms.len() {
            return Err(invalid(format!(
                "{what}: {send} send and {recv} receive buffers for {} ranks",
                self.comms.len()
            )));
        }
        Ok(())
    }

    /// Runs `issue(rank)` for every rank inside one NCCL group, then waits for every stream.
    fn grouped(&self, mut issue: impl FnMut(usize) -> gemm_rocm::Result<()>) -> Result<()> {
        let mut failed = None;
        let grouped = self.nccl.group(|| {
            for r in 0..self.comms.len() {
                if let Err(e) = issue(r) {
                    failed = Some(r);
                    return Err(e);
                }
            }
            Ok(())
        });
        grouped.map_err(|e| rccl_error(failed, e))?;
        for (r, s) in self.streams.iter().enumerate() {
            s.synchronize().map_err(|e| rccl_error(Some(r), e))?;
        }
        for (r, c) in self.comms.iter().enumerate() {
            c.async_error().map_err(|e| rccl_error(Some(r), e))?;
        }
        Ok(())
    }
}

impl Collective for RcclCollective {
    type Buffer = gemm_rocm::hip::DeviceBuffer;

    fn ranks(&self) -> usize {
        self.comms.len()
    }

    fn all_gather(
        &self,
        send: &[Self::Buffer],
        recv: &mut [Self::Buffer],
        send_count: usize,
        dtype: CollectiveType,
    ) -> Result<()> {
        self.check_ranks("all_gather", send.len(), recv.len())?;
        self.grouped(|r| {
            self.comms[r].all_gather_hip(&send[r], &mut recv[r], send_count, dtype.nccl(), &self.streams[r])
        })
    }

    fn reduce_scatter(
        &self,
        send: &[Self::Buffer],
        recv: &mut [Self::Buffer],
        recv_count: usize,
        dtype: CollectiveType,
    ) -> Result<()> {
        self.check_ranks("reduce_scatter", send.len(), recv.len())?;
        self.grouped(|r| {
            self.comms[r].reduce_scatter_hip(
                &send[r],
                &mut recv[r],
                recv_count,
                dtype.nccl(),
                gemm_rocm::nccl::RedOp::Sum,
                &self.streams[r],
            )
        })
    }

    fn all_reduce(
        &self,
        send: &[Self::Buffer],
        recv: &mut [Self::Buffer],
        count: usize,
        dtype: CollectiveType,
    ) -> Result<()> {
        self.check_ranks("all_reduce", send.len(), recv.len())?;
        self.grouped(|r| {
            self.comms[r].all_reduce_hip(
                &send[r],
                &mut recv[r],
                count,
                dtype.nccl(),
                gemm_rocm::nccl::RedOp::Sum,
                &self.streams[r],
            )
        })
    }
}

/// The communicators of one set of ranks, kept by the rank-0 backend between calls.
pub struct TpCollective {
    /// The HIP ordinals of the ranks, in rank order.
    pub(crate) ranks: Vec<i32>,
    pub(crate) collective: RcclCollective,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_round_trip_through_bytes() {
        for t in [CollectiveType::F32, CollectiveType::Bf16, CollectiveType::F16] {
            let mut b = vec![0u8; 3 * t.size()];
            t.store(&mut b, 1, 1.5);
            t.store(&mut b, 2, -0.25);
            assert_eq!((t.load(&b, 0), t.load(&b, 1), t.load(&b, 2)), (0.0, 1.5, -0.25));
        }
        // Rounding to nearest even on store: 1 + 2^-8 is a tie in bf16.
        let mut b = vec![0u8; 2];
        CollectiveType::Bf16.store(&mut b, 0, 1.0 + 1.0 / 256.0);
        assert_eq!(CollectiveType::Bf16.load(&b, 0), 1.0);
        assert_eq!(CollectiveType::from_dtype(DType::Fp8E4M3), None);
        assert_eq!(CollectiveType::from_dtype(DType::Bf16), Some(CollectiveType::Bf16));
    }
}
