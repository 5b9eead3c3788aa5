//! RCCL (or NVIDIA NCCL, which RCCL mirrors call for call), loaded at run time.
//!
//! [`sys`] has the `nccl.h` prototypes in a lazily resolved table, [`result`] maps
//! `ncclResult_t` to [`NcclError`], and this module offers [`Nccl`] (the library),
//! [`UniqueId`], [`Communicator`] and the collectives the tensor-parallel layer needs:
//! all-gather, reduce-scatter and all-reduce. The raw collectives take device pointers and a
//! stream as opaque pointers, so the same binding drives RCCL on HIP and NCCL on CUDA; the
//! `*_hip` variants take this crate's HIP buffers and streams and check sizes first.

pub mod result;
pub mod sys;

use std::ffi::{c_int, c_void, OsString};
use std::path::Path;
use std::sync::Arc;

pub use result::NcclError;

use crate::error::{Error, Result};
use crate::hip::{DeviceBuffer, Stream};
use crate::loader::{LibrarySpec, LoadError};
use sys::NcclApi;

/// Where RCCL is looked for. `GEMM_RCCL_LIBRARY` replaces the list (and may name
/// `libnccl.so.2`: the API is the same).
pub const RCCL_LIBRARY: LibrarySpec = LibrarySpec {
    name: "RCCL (librccl)",
    env_var: "GEMM_RCCL_LIBRARY",
    candidates: &["librccl.so", "librccl.so.1", "/opt/rocm/lib/librccl.so", "/opt/rocm/lib/librccl.so.1"],
};

/// Where NVIDIA NCCL is looked for (same override variable as RCCL).
pub const NCCL_LIBRARY: LibrarySpec =
    LibrarySpec { name: "NCCL (libnccl)", env_var: "GEMM_RCCL_LIBRARY", candidates: &["libnccl.so.2", "libnccl.so"] };

/// Element types of the collectives (`ncclDataType_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `ncclFloat32`.
    F32,
    /// `ncclFloat16`.
    F16,
    /// `ncclBfloat16`.
    Bf16,
    /// `ncclFloat64`.
    F64,
    /// `ncclInt32`.
    I32,
    /// `ncclInt8`.
    I8,
    /// `ncclUint8`.
    U8,
}

impl DataType {
    /// The `ncclDataType_t` value.
    pub fn raw(self) -> sys::ncclDataType_t {
        use sys::datatype::*;
        match self {
            Self::F32 => FLOAT32,
            Self::F16 => FLOAT16,
            Self::Bf16 => BFLOAT16,
            Self::F64 => FLOAT64,
            Self::I32 => INT32,
            Self::I8 => INT8,
            Self::U8 => UINT8,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Self::F64 => 8,
            Self::F32 | Self::I32 => 4,
            Self::F16 | Self::Bf16 => 2,
            Self::I8 | Self::U8 => 1,
        }
    }
}

/// Reductions (`ncclRedOp_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RedOp {
    /// `ncclSum`.
    Sum,
    /// `ncclProd`.
    Prod,
    /// `ncclMax`.
    Max,
    /// `ncclMin`.
    Min,
    /// `ncclAvg` (NCCL >= 2.10).
    Avg,
}

impl RedOp {
    /// The `ncclRedOp_t` value.
    pub fn raw(self) -> sys::ncclRedOp_t {
        use sys::redop::*;
        match self {
            Self::Sum => SUM,
            Self::Prod => PROD,
            Self::Max => MAX,
            Self::Min => MIN,
            Self::Avg => AVG,
        }
    }
}

/// `NCCL_VERSION_CODE` decoded: `X*10000 + Y*100 + Z` since 2.9, `X*1000 + Y*100 + Z` before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct NcclVersion {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Patch.
    pub patch: u32,
}

impl NcclVersion {
    /// Decodes the value `ncclGetVersion` reports.
    pub fn from_code(code: i32) -> Self {
        let c = code.max(0) as u32;
        if c >= 10_000 {
            Self { major: c / 10_000, minor: (c / 100) % 100, patch: c % 100 }
        } else {
            Self { major: c / 1000, minor: (c / 100) % 10, patch: c % 100 }
        }
    }
}

impl std::fmt::Display for NcclVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The 128-byte `ncclUniqueId` that ties the ranks of one communicator together; rank 0
/// creates it and every rank passes the same bytes to [`Nccl::init_rank`].
#[derive(Clone, Copy)]
pub struct UniqueId(sys::ncclUniqueId);

impl UniqueId {
    /// The opaque bytes, e.g. to send to other processes.
    pub fn to_bytes(&self) -> [u8; sys::NCCL_UNIQUE_ID_BYTES] {
        self.0.internal.map(|c| c as u8)
    }

    /// Rebuilds an id from its bytes.
    pub fn from_bytes(bytes: [u8; sys::NCCL_UNIQUE_ID_BYTES]) -> Self {
        Self(sys::ncclUniqueId { internal: bytes.map(|b| b as std::ffi::c_char) })
    }
}

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UniqueId(..{} bytes)", sys::NCCL_UNIQUE_ID_BYTES)
    }
}

/// The loaded RCCL/NCCL library. Clones share it.
#[derive(Clone)]
pub struct Nccl {
    api: Arc<NcclApi>,
}

impl std::fmt::Debug for Nccl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nccl").field("library", &self.library_path()).finish()
    }
}

impl Nccl {
    /// Loads RCCL (`GEMM_RCCL_LIBRARY`, else [`RCCL_LIBRARY`]'s candidates).
    pub fn load() -> Result<Self, LoadError> {
        Ok(Self::from_lib(RCCL_LIBRARY.open()?))
    }

    /// Loads NVIDIA NCCL (`GEMM_RCCL_LIBRARY`, else `libnccl.so.2`).
    pub fn load_nccl() -> Result<Self, LoadError> {
        Ok(Self::from_lib(NCCL_LIBRARY.open()?))
    }

    /// Loads exactly `path`.
    pub fn load_from(path: impl AsRef<Path>) -> Result<Self, LoadError> {
        let p: OsString = path.as_ref().as_os_str().to_owned();
        Ok(Self::from_lib(RCCL_LIBRARY.open_with_override(Some(p))?))
    }

    fn from_lib(lib: crate::loader::DynLib) -> Self {
        Self { api: Arc::new(NcclApi::new(lib)) }
    }

    /// The raw symbol table.
    pub fn api(&self) -> &NcclApi {
        &self.api
    }

    /// The path the library was opened from.
    pub fn library_path(&self) -> &Path {
        self.api.library().path()
    }

    /// Resolves every symbol and returns the missing ones (all are required).
    pub fn missing_symbols(&self) -> Vec<&'static str> {
        self.api.missing_symbols()
    }

    fn check(&self, call: &'static str, code: sys::ncclResult_t) -> Result<()> {
        result::check(&self.api, call, code).map_err(Error::from)
    }

    /// `ncclGetVersion`.
    pub fn version(&self) -> Result<NcclVersion> {
        let f = self.api.ncclGetVersion()?;
        let mut code: c_int = 0;
        // SAFETY: writes one int to the valid pointer.
        self.check("ncclGetVersion", unsafe { f(&mut code) })?;
        Ok(NcclVersion::from_code(code))
    }

    /// `ncclGetUniqueId`.
    pub fn unique_id(&self) -> Result<UniqueId> {
        let f = self.api.ncclGetUniqueId()?;
        let mut id = sys::ncclUniqueId { internal: [0; sys::NCCL_UNIQUE_ID_BYTES] };
        // SAFETY: writes the 128-byte struct through the valid pointer.
        self.check("ncclGetUniqueId", unsafe { f(&mut id) })?;
        Ok(UniqueId(id))
    }

    /// `ncclCommInitAll`: one communicator per listed device, all owned by this process;
    /// rank `i` is `devices[i]`.
    pub fn init_all(&self, devices: &[i32]) -> Result<Vec<Communicator>> {
        if devices.is_empty() {
            return Err(Error::InvalidArgument("ncclCommInitAll with no devices".into()));
        }
        let n = c_int::try_from(devices.len()).map_err(|_| Error::InvalidArgument("too many devices".into()))?;
        let f = self.api.ncclCommInitAll()?;
        let mut comms: Vec<sys::ncclComm_t> = vec![std::ptr::null_mut(); devices.len()];
        // SAFETY: `comms` has room for `ndev` handles and `devices` holds `ndev` ints
        // (`ncclCommInitAll(ncclComm_t*, int ndev, const int* devlist)`).
        self.check("ncclCommInitAll", unsafe { f(comms.as_mut_ptr(), n, devices.as_ptr()) })?;
        Ok(comms.into_iter().map(|raw| Communicator { api: self.api.clone(), raw, owned: true }).collect())
    }

    /// `ncclCommInitRank`: joins communicator `id` as `rank` of `nranks`. The device this rank
    /// uses must be current on the calling thread (e.g. [`crate::hip::Device::set_current`]),
    /// and the call blocks until all ranks have joined, so ranks of one process call it from
    /// different threads or inside [`Nccl::group`].
    pub fn init_rank(&self, nranks: usize, id: &UniqueId, rank: usize) -> Result<Communicator> {
        if rank >= nranks {
            return Err(Error::InvalidArgument(format!("rank {rank} of {nranks}")));
        }
        let (Ok(n), Ok(r)) = (c_int::try_from(nranks), c_int::try_from(rank)) else {
            return Err(Error::InvalidArgument("rank count out of range".into()));
        };
        let f = self.api.ncclCommInitRank()?;
        let mut raw: sys::ncclComm_t = std::ptr::null_mut();
        // SAFETY: writes one handle; the id is passed by value as the 128-byte C struct.
        self.check("ncclCommInitRank", unsafe { f(&mut raw, n, id.0, r) })?;
        Ok(Communicator { api: self.api.clone(), raw, owned: true })
    }

    /// A communicator the caller already has (from PyTorch's process group, their framework,
    /// their own `ncclCommInitRank`), **borrowed**: dropping the returned value neither destroys
    /// nor aborts it; [`Communicator::abort`] does abort it (the caller asked to).
    ///
    /// # Safety
    /// `raw` is a live `ncclComm_t` of this library (the same loaded RCCL/NCCL), and stays live
    /// for as long as the returned value is used.
    pub unsafe fn borrow_raw(&self, raw: sys::ncclComm_t) -> Result<Communicator> {
        if raw.is_null() {
            return Err(Error::InvalidArgument("null ncclComm_t".into()));
        }
        Ok(Communicator { api: self.api.clone(), raw, owned: false })
    }

    /// Runs `f` between `ncclGroupStart` and `ncclGroupEnd` (always ended, even when `f`
    /// fails): how one thread drives the collectives of several communicators.
    pub fn group<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<R> {
        let start = self.api.ncclGroupStart()?;
        let end = self.api.ncclGroupEnd()?;
        // SAFETY: no arguments.
        self.check("ncclGroupStart", unsafe { start() })?;
        let out = f();
        // SAFETY: no arguments; pairs the start above.
        let ended = self.check("ncclGroupEnd", unsafe { end() });
        let value = out?;
        ended?;
        Ok(value)
    }
}

/// One rank's communicator. One this crate created is destroyed (`ncclCommDestroy`) on drop (a
/// failure is logged); a borrowed one ([`Nccl::borrow_raw`]) is left to its owner.
pub struct Communicator {
    api: Arc<NcclApi>,
    raw: sys::ncclComm_t,
    owned: bool,
}

// SAFETY: an `ncclComm_t` may be used from any thread, one at a time (`nccl.h`: collectives of
// one communicator must not be issued concurrently); `Communicator` is not `Sync`.
unsafe impl Send for Communicator {}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Communicator").field("raw", &self.raw).finish()
    }
}

fn need(what: &str, have: usize, elems: usize, dtype: DataType) -> Result<()> {
    let bytes = elems
        .checked_mul(dtype.size())
        .ok_or_else(|| Error::InvalidArgument(format!("{what}: element count overflows")))?;
    if have < bytes {
        return Err(Error::InvalidArgument(format!(
            "{what}: buffer of {have} bytes, {bytes} needed ({elems} x {dtype:?})"
        )));
    }
    Ok(())
}

impl Communicator {
    fn check(&self, call: &'static str, code: sys::ncclResult_t) -> Result<()> {
        result::check(&self.api, call, code).map_err(Error::from)
    }

    fn query(&self, call: &'static str, f: unsafe extern "C" fn(sys::ncclComm_t, *mut c_int) -> c_int) -> Result<i32> {
        let mut out: c_int = 0;
        // SAFETY: `f` is one of the `(const ncclComm_t, int*)` queries; the handle is live.
        self.check(call, unsafe { f(self.raw, &mut out) })?;
        Ok(out)
    }

    /// Number of ranks (`ncclCommCount`).
    pub fn count(&self) -> Result<usize> {
        self.query("ncclCommCount", self.api.ncclCommCount()?).map(|n| n.max(0) as usize)
    }

    /// This rank's device ordinal (`ncclCommCuDevice`).
    pub fn device(&self) -> Result<i32> {
        self.query("ncclCommCuDevice", self.api.ncclCommCuDevice()?)
    }

    /// This rank (`ncclCommUserRank`).
    pub fn rank(&self) -> Result<usize> {
        self.query("ncclCommUserRank", self.api.ncclCommUserRank()?).map(|r| r.max(0) as usize)
    }

    /// An error the communicator met asynchronously, if any (`ncclCommGetAsyncError`).
    pub fn async_error(&self) -> Result<()> {
        let f = self.api.ncclCommGetAsyncError()?;
        let mut status: sys::ncclResult_t = 0;
        // SAFETY: writes one `ncclResult_t`; the handle is live.
        self.check("ncclCommGetAsyncError", unsafe { f(self.raw, &mut status) })?;
        self.check("ncclCommGetAsyncError (async)", status)
    }

    /// The raw handle.
    pub fn as_raw(&self) -> sys::ncclComm_t {
        self.raw
    }

    /// Whether dropping this value destroys the communicator (it was created here, not
    /// borrowed).
    pub fn is_owned(&self) -> bool {
        self.owned
    }

    /// `ncclCommAbort`: stops the communicator's operations in flight and frees it, borrowed or
    /// not — how a rank gets out of a collective whose peer is gone (NCCL waits forever for it).
    /// The handle is dead afterwards, whatever the result.
    pub fn abort(mut self) -> Result<()> {
        let raw = std::mem::replace(&mut self.raw, std::ptr::null_mut());
        let f = self.api.ncclCommAbort()?;
        // SAFETY: a live handle, aborted once (the value no longer holds it).
        self.check("ncclCommAbort", unsafe { f(raw) })
    }

    /// `ncclAllReduce` of `count` elements.
    ///
    /// # Safety
    /// `send` and `recv` must be device pointers on this rank's device with room for `count`
    /// elements of `dtype` (they may be equal: in place), `stream` a live stream of that
    /// device (`hipStream_t` or `cudaStream_t`), and the memory must stay allocated until the
    /// operation has completed on the stream.
    pub unsafe fn all_reduce(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        count: usize,
        dtype: DataType,
        op: RedOp,
        stream: *mut c_void,
    ) -> Result<()> {
        let f = self.api.ncclAllReduce()?;
        // SAFETY: forwarded from the caller's contract; the communicator handle is live.
        self.check("ncclAllReduce", unsafe { f(send, recv, count, dtype.raw(), op.raw(), self.raw, stream) })
    }

    /// `ncclAllGather`: every rank contributes `send_count` elements; `recv` receives
    /// `nranks * send_count`, rank `i`'s at offset `i * send_count`.
    ///
    /// # Safety
    /// As [`Self::all_reduce`], with `send` holding `send_count` and `recv`
    /// `nranks * send_count` elements.
    pub unsafe fn all_gather(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        send_count: usize,
        dtype: DataType,
        stream: *mut c_void,
    ) -> Result<()> {
        let f = self.api.ncclAllGather()?;
        // SAFETY: forwarded from the caller's contract.
        self.check("ncclAllGather", unsafe { f(send, recv, send_count, dtype.raw(), self.raw, stream) })
    }

    /// `ncclReduceScatter`: `send` holds `nranks * recv_count` elements; rank `i` receives
    /// block `i` of the reduction.
    ///
    /// # Safety
    /// As [`Self::all_reduce`], with `send` holding `nranks * recv_count` and `recv`
    /// `recv_count` elements.
    pub unsafe fn reduce_scatter(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        recv_count: usize,
        dtype: DataType,
        op: RedOp,
        stream: *mut c_void,
    ) -> Result<()> {
        let f = self.api.ncclReduceScatter()?;
        // SAFETY: forwarded from the caller's contract.
        self.check("ncclReduceScatter", unsafe { f(send, recv, recv_count, dtype.raw(), op.raw(), self.raw, stream) })
    }

    fn same_device(&self, what: &str, buffers: &[&DeviceBuffer], stream: &Stream) -> Result<()> {
        let dev = self.device()?;
        for b in buffers.iter().map(|b| b.device()).chain([stream.device()]) {
            if b != dev {
                return Err(Error::InvalidArgument(format!(
                    "{what}: communicator on device {dev}, buffer or stream on device {b}"
                )));
            }
        }
        Ok(())
    }

    /// [`Self::all_reduce`] on HIP buffers, sizes and devices checked.
    pub fn all_reduce_hip(
        &self,
        send: &DeviceBuffer,
        recv: &mut DeviceBuffer,
        count: usize,
        dtype: DataType,
        op: RedOp,
        stream: &Stream,
    ) -> Result<()> {
        need("all_reduce send", send.len(), count, dtype)?;
        need("all_reduce recv", recv.len(), count, dtype)?;
        self.same_device("all_reduce", &[send, recv], stream)?;
        // SAFETY: sizes and devices checked above; the buffers are freed only after the
        // device is idle (`hipFree` synchronises), and the stream is live.
        unsafe { self.all_reduce(send.as_ptr(), recv.as_mut_ptr(), count, dtype, op, stream.as_raw().cast()) }
    }

    /// [`Self::all_gather`] on HIP buffers, sizes and devices checked.
    pub fn all_gather_hip(
        &self,
        send: &DeviceBuffer,
        recv: &mut DeviceBuffer,
        send_count: usize,
        dtype: DataType,
        stream: &Stream,
    ) -> Result<()> {
        let total = send_count
            .checked_mul(self.count()?)
            .ok_or_else(|| Error::InvalidArgument("all_gather: size overflows".into()))?;
        need("all_gather send", send.len(), send_count, dtype)?;
        need("all_gather recv", recv.len(), total, dtype)?;
        self.same_device("all_gather", &[send, recv], stream)?;
        // SAFETY: as in `all_reduce_hip`.
        unsafe { self.all_gather(send.as_ptr(), recv.as_mut_ptr(), send_count, dtype, stream.as_raw().cast()) }
    }

    /// [`Self::reduce_scatter`] on HIP buffers, sizes and devices checked.
    pub fn reduce_scatter_hip(
        &self,
        send: &DeviceBuffer,
        recv: &mut DeviceBuffer,
        recv_count: usize,
        dtype: DataType,
        op: RedOp,
        stream: &Stream,
    ) -> Result<()> {
        let total = recv_count
            .checked_mul(self.count()?)
            .ok_or_else(|| Error::InvalidArgument("reduce_scatter: size overflows".into()))?;
        need("reduce_scatter send", send.len(), total, dtype)?;
        need("reduce_scatter recv", recv.len(), recv_count, dtype)?;
        self.same_device("reduce_scatter", &[send, recv], stream)?;
        // SAFETY: as in `all_reduce_hip`.
        unsafe { self.reduce_scatter(send.as_ptr(), recv.as_mut_ptr(), recv_count, dtype, op, stream.as_raw().cast()) }
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        if self.raw.is_null() || !self.owned {
            return;
        }
        match self.api.ncclCommDestroy() {
            Ok(f) => {
                // SAFETY: destroyed once, here.
                let code = unsafe { f(self.raw) };
                if let Err(e) = result::check(&self.api, "ncclCommDestroy", code) {
                    eprintln!("gemm-rocm: {e}");
                }
            }
            Err(e) => eprintln!("gemm-rocm: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_decode_in_both_encodings() {
        assert_eq!(NcclVersion::from_code(22_105), NcclVersion { major: 2, minor: 21, patch: 5 });
        assert_eq!(NcclVersion::from_code(2804), NcclVersion { major: 2, minor: 8, patch: 4 });
        assert_eq!(NcclVersion::from_code(22_803).to_string(), "2.28.3");
    }

    #[test]
    fn datatypes_map_to_nccl_values_and_sizes() {
        assert_eq!((DataType::F32.raw(), DataType::F32.size()), (7, 4));
        assert_eq!((DataType::F16.raw(), DataType::F16.size()), (6, 2));
        assert_eq!((DataType::Bf16.raw(), DataType::Bf16.size()), (9, 2));
        assert_eq!(RedOp::Sum.raw(), 0);
        assert_eq!(RedOp::Max.raw(), 2);
    }

    #[test]
    fn unique_id_bytes_round_trip() {
        let mut b = [0u8; 128];
        for (i, x) in b.iter_mut().enumerate() {
            *x = (i * 7 + 200) as u8;
        }
        assert_eq!(UniqueId::from_bytes(b).to_bytes(), b);
    }

    #[test]
    fn buffer_sizes_are_checked() {
        assert!(need("t", 16, 4, DataType::F32).is_ok());
        assert!(need("t", 15, 4, DataType::F32).is_err());
        assert!(need("t", 8, 4, DataType::Bf16).is_ok());
        assert!(need("t", usize::MAX, usize::MAX, DataType::F32).is_err());
    }

    #[test]
    fn missing_rccl_names_every_path() {
        let err = RCCL_LIBRARY.open_with_override(None);
        // Either RCCL is installed here (then it opened) or every candidate is named.
        if let Err(LoadError::LibraryNotFound { tried, .. }) = err {
            let names: Vec<_> = tried.iter().map(|a| a.candidate.as_str()).collect();
            assert_eq!(names, RCCL_LIBRARY.candidates);
        }
    }
}
