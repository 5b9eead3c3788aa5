//! The exported RCCL/NCCL functions, with the C signatures of `nccl.h` (streams and
//! communicators are opaque pointers). Every export runs under `catch_unwind`; null pointers
//! are `ncclInvalidArgument`.
//!
//! The safety contract of each export is that of the NCCL function it implements.
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_void};
use std::panic::AssertUnwindSafe;

use crate::config::NCCL_VERSION_CODE;
use crate::error::{nccl_error_string, NcclError};
use crate::nccl::{self, Kind, RedOp, UNIQUE_ID_BYTES};
use crate::runtime::registry;

/// `typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;`, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct NcclUniqueId {
    /// Opaque bytes.
    pub internal: [u8; UNIQUE_ID_BYTES],
}

fn guard(call: &str, f: impl FnOnce() -> Result<(), NcclError>) -> c_int {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            if std::env::var_os("GEMM_EMU_HIP_TRACE").is_some_and(|v| v != "0") {
                eprintln!("gemm-emu-hip: {call}: {e}");
            }
            e.code()
        }
        Err(_) => {
            eprintln!("gemm-emu-hip: {call} panicked");
            NcclError::Internal(String::new()).code()
        }
    }
}

/// # Safety
/// `p` is null or valid for writing one `T`.
unsafe fn out<T>(p: *mut T, v: T) -> Result<(), NcclError> {
    if p.is_null() {
        return Err(NcclError::invalid("null output pointer"));
    }
    // SAFETY: non-null and valid by the caller's contract.
    unsafe { p.write(v) };
    Ok(())
}

fn comm_of(comm: *mut c_void) -> Result<std::sync::Arc<nccl::Comm>, NcclError> {
    if comm.is_null() {
        return Err(NcclError::invalid("null communicator"));
    }
    registry::comm(comm as usize).map_err(|_| NcclError::invalid(format!("communicator {comm:p}")))
}

#[no_mangle]
pub unsafe extern "C" fn ncclGetVersion(version: *mut c_int) -> c_int {
    // SAFETY: `version` is null or points at an int.
    guard("ncclGetVersion", || unsafe { out(version, NCCL_VERSION_CODE) })
}

#[no_mangle]
pub unsafe extern "C" fn ncclGetUniqueId(id: *mut NcclUniqueId) -> c_int {
    // SAFETY: `id` is null or points at an ncclUniqueId (128 bytes, alignment 1).
    guard("ncclGetUniqueId", || unsafe { out(id, NcclUniqueId { internal: nccl::unique_id()? }) })
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommInitRank(
    comm: *mut *mut c_void,
    nranks: c_int,
    id: NcclUniqueId,
    rank: c_int,
) -> c_int {
    guard("ncclCommInitRank", || {
        if comm.is_null() {
            return Err(NcclError::invalid("null output pointer"));
        }
        let h = nccl::init_rank(nranks, id.internal, rank)?;
        // SAFETY: `comm` points at a handle (checked non-null).
        unsafe { out(comm, h as *mut c_void) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommInitAll(comms: *mut *mut c_void, ndev: c_int, devlist: *const c_int) -> c_int {
    guard("ncclCommInitAll", || {
        if comms.is_null() {
            return Err(NcclError::invalid("null communicator array"));
        }
        let n = usize::try_from(ndev).map_err(|_| NcclError::invalid(format!("ndev {ndev}")))?;
        let devices: Vec<c_int> = if devlist.is_null() {
            (0..ndev).collect()
        } else {
            // SAFETY: `devlist` holds `ndev` ints (ncclCommInitAll's contract).
            unsafe { std::slice::from_raw_parts(devlist, n) }.to_vec()
        };
        let handles = nccl::init_all(&devices)?;
        for (i, h) in handles.into_iter().enumerate() {
            // SAFETY: `comms` has room for `ndev` handles.
            unsafe { comms.add(i).write(h as *mut c_void) };
        }
        Ok(())
    })
}

/// `ncclCommDestroy(NULL)` is a no-op success, as in NCCL.
#[no_mangle]
pub extern "C" fn ncclCommDestroy(comm: *mut c_void) -> c_int {
    guard("ncclCommDestroy", || {
        if comm.is_null() {
            return Ok(());
        }
        registry::remove_comm(comm as usize).map(drop).map_err(|e| NcclError::invalid(e.to_string()))
    })
}

/// `ncclCommAbort(NULL)` is a no-op success, as `ncclCommDestroy(NULL)`.
#[no_mangle]
pub extern "C" fn ncclCommAbort(comm: *mut c_void) -> c_int {
    guard("ncclCommAbort", || {
        if comm.is_null() {
            return Ok(());
        }
        let c = registry::remove_comm(comm as usize).map_err(|e| NcclError::invalid(e.to_string()))?;
        c.abort();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommCount(comm: *mut c_void, count: *mut c_int) -> c_int {
    // SAFETY: `count` is null or points at an int.
    guard("ncclCommCount", || unsafe { out(count, comm_of(comm)?.clique.nranks as c_int) })
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommCuDevice(comm: *mut c_void, device: *mut c_int) -> c_int {
    // SAFETY: as above.
    guard("ncclCommCuDevice", || unsafe { out(device, comm_of(comm)?.device as c_int) })
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommUserRank(comm: *mut c_void, rank: *mut c_int) -> c_int {
    // SAFETY: as above.
    guard("ncclCommUserRank", || unsafe { out(rank, comm_of(comm)?.rank as c_int) })
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommGetAsyncError(comm: *mut c_void, error: *mut c_int) -> c_int {
    guard("ncclCommGetAsyncError", || {
        let c = comm_of(comm)?;
        let code = c.async_error.lock().as_ref().map_or(0, NcclError::code);
        // SAFETY: `error` is null or points at an ncclResult_t.
        unsafe { out(error, code) }
    })
}

#[no_mangle]
pub extern "C" fn ncclGetErrorString(result: c_int) -> *const c_char {
    nccl_error_string(result).as_ptr()
}

#[no_mangle]
pub extern "C" fn ncclGroupStart() -> c_int {
    guard("ncclGroupStart", || {
        nccl::group_start();
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn ncclGroupEnd() -> c_int {
    guard("ncclGroupEnd", nccl::group_end)
}

#[no_mangle]
pub unsafe extern "C" fn ncclAllReduce(
    send: *const c_void,
    recv: *mut c_void,
    count: usize,
    dtype: c_int,
    op: c_int,
    comm: *mut c_void,
    stream: *mut c_void,
) -> c_int {
    guard("ncclAllReduce", || {
        let kind = Kind::AllReduce(RedOp::from_raw(op)?);
        nccl::collective(kind, send as u64, recv as u64, count, dtype, comm as usize, stream as usize)
    })
}

#[no_mangle]
pub unsafe extern "C" fn ncclReduceScatter(
    send: *const c_void,
    recv: *mut c_void,
    recvcount: usize,
    dtype: c_int,
    op: c_int,
    comm: *mut c_void,
    stream: *mut c_void,
) -> c_int {
    guard("ncclReduceScatter", || {
        let kind = Kind::ReduceScatter(RedOp::from_raw(op)?);
        nccl::collective(kind, send as u64, recv as u64, recvcount, dtype, comm as usize, stream as usize)
    })
}

#[no_mangle]
pub unsafe extern "C" fn ncclAllGather(
    send: *const c_void,
    recv: *mut c_void,
    sendcount: usize,
    dtype: c_int,
    comm: *mut c_void,
    stream: *mut c_void,
) -> c_int {
    guard("ncclAllGather", || {
        nccl::collective(Kind::AllGather, send as u64, recv as u64, sendcount, dtype, comm as usize, stream as usize)
    })
}
