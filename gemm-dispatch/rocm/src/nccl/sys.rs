//! Raw RCCL/NCCL symbols, as declared in `nccl.h` (NVIDIA `src/nccl.h.in`; RCCL's
//! `src/nccl.h.in` declares the same prototypes and enum values, with `hipStream_t` where NCCL
//! has `cudaStream_t`). Streams and buffers are `*mut c_void` here so that one binding serves
//! both runtimes.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_void};

use crate::loader::symbol_table;

/// `ncclResult_t` (a C enum: `int`).
pub type ncclResult_t = c_int;
/// `ncclDataType_t` (a C enum: `int`).
pub type ncclDataType_t = c_int;
/// `ncclRedOp_t` (a C enum: `int`).
pub type ncclRedOp_t = c_int;

/// `struct ncclComm`, the target of `ncclComm_t`.
#[repr(C)]
pub struct ncclComm {
    _private: [u8; 0],
    _not_send_sync: core::marker::PhantomData<*mut u8>,
}
/// `ncclComm_t`.
pub type ncclComm_t = *mut ncclComm;

/// `NCCL_UNIQUE_ID_BYTES`.
pub const NCCL_UNIQUE_ID_BYTES: usize = 128;

/// `typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;` — passed by value
/// to `ncclCommInitRank`, so its size and alignment must be the C struct's.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ncclUniqueId {
    /// Opaque bytes.
    pub internal: [c_char; NCCL_UNIQUE_ID_BYTES],
}

/// `ncclSuccess`.
pub const NCCL_SUCCESS: ncclResult_t = 0;
/// `ncclInProgress` (NCCL >= 2.14 non-blocking communicators).
pub const NCCL_IN_PROGRESS: ncclResult_t = 7;

/// `ncclResult_t` names (`nccl.h`; RCCL has the same values). 8 is `ncclTimeout` in recent NCCL
/// (2.28's header, which our NCCL run used); older headers end at `ncclInProgress` = 7 and use 8
/// only as the count `ncclNumResults`, which no call returns.
pub const NCCL_RESULT_NAMES: &[(ncclResult_t, &str)] = &[
    (0, "ncclSuccess"),
    (1, "ncclUnhandledCudaError"),
    (2, "ncclSystemError"),
    (3, "ncclInternalError"),
    (4, "ncclInvalidArgument"),
    (5, "ncclInvalidUsage"),
    (6, "ncclRemoteError"),
    (7, "ncclInProgress"),
    (8, "ncclTimeout"),
];

/// The header name of an `ncclResult_t`.
pub fn result_name(code: ncclResult_t) -> Option<&'static str> {
    NCCL_RESULT_NAMES.iter().find(|&&(c, _)| c == code).map(|&(_, n)| n)
}

/// `ncclDataType_t` values.
pub mod datatype {
    use std::ffi::c_int;
    /// `ncclInt8`.
    pub const INT8: c_int = 0;
    /// `ncclUint8`.
    pub const UINT8: c_int = 1;
    /// `ncclInt32`.
    pub const INT32: c_int = 2;
    /// `ncclUint32`.
    pub const UINT32: c_int = 3;
    /// `ncclInt64`.
    pub const INT64: c_int = 4;
    /// `ncclUint64`.
    pub const UINT64: c_int = 5;
    /// `ncclFloat16` / `ncclHalf`.
    pub const FLOAT16: c_int = 6;
    /// `ncclFloat32` / `ncclFloat`.
    pub const FLOAT32: c_int = 7;
    /// `ncclFloat64` / `ncclDouble`.
    pub const FLOAT64: c_int = 8;
    /// `ncclBfloat16` (NCCL >= 2.10; RCCL with `RCCL_BFLOAT16`).
    pub const BFLOAT16: c_int = 9;
}

/// `ncclRedOp_t` values.
pub mod redop {
    use std::ffi::c_int;
    /// `ncclSum`.
    pub const SUM: c_int = 0;
    /// `ncclProd`.
    pub const PROD: c_int = 1;
    /// `ncclMax`.
    pub const MAX: c_int = 2;
    /// `ncclMin`.
    pub const MIN: c_int = 3;
    /// `ncclAvg` (NCCL >= 2.10).
    pub const AVG: c_int = 4;
}

symbol_table! {
    /// The RCCL/NCCL functions this crate uses, resolved on first use (`nccl.h`).
    pub struct NcclApi {
        /// `ncclResult_t ncclGetVersion(int* version)`.
        ncclGetVersion: unsafe extern "C" fn(*mut c_int) -> ncclResult_t,
        /// `ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId)`.
        ncclGetUniqueId: unsafe extern "C" fn(*mut ncclUniqueId) -> ncclResult_t,
        /// `ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank)`.
        ncclCommInitRank: unsafe extern "C" fn(*mut ncclComm_t, c_int, ncclUniqueId, c_int) -> ncclResult_t,
        /// `ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist)`.
        ncclCommInitAll: unsafe extern "C" fn(*mut ncclComm_t, c_int, *const c_int) -> ncclResult_t,
        /// `ncclResult_t ncclCommDestroy(ncclComm_t comm)`.
        ncclCommDestroy: unsafe extern "C" fn(ncclComm_t) -> ncclResult_t,
        /// `ncclResult_t ncclCommAbort(ncclComm_t comm)`: frees the communicator after stopping
        /// its operations in flight (NCCL >= 2.4, every RCCL).
        ncclCommAbort: unsafe extern "C" fn(ncclComm_t) -> ncclResult_t,
        /// `ncclResult_t ncclCommCount(const ncclComm_t comm, int* count)`.
        ncclCommCount: unsafe extern "C" fn(ncclComm_t, *mut c_int) -> ncclResult_t,
        /// `ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device)`.
        ncclCommCuDevice: unsafe extern "C" fn(ncclComm_t, *mut c_int) -> ncclResult_t,
        /// `ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank)`.
        ncclCommUserRank: unsafe extern "C" fn(ncclComm_t, *mut c_int) -> ncclResult_t,
        /// `ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError)`.
        ncclCommGetAsyncError: unsafe extern "C" fn(ncclComm_t, *mut ncclResult_t) -> ncclResult_t,
        /// `const char* ncclGetErrorString(ncclResult_t result)`.
        ncclGetErrorString: unsafe extern "C" fn(ncclResult_t) -> *const c_char,
        /// `ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
        /// ncclDataType_t, ncclRedOp_t, ncclComm_t, stream)`.
        ncclAllReduce: unsafe extern "C" fn(
            *const c_void, *mut c_void, usize, ncclDataType_t, ncclRedOp_t, ncclComm_t, *mut c_void,
        ) -> ncclResult_t,
        /// `ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff,
        /// size_t recvcount, ncclDataType_t, ncclRedOp_t, ncclComm_t, stream)`.
        ncclReduceScatter: unsafe extern "C" fn(
            *const c_void, *mut c_void, usize, ncclDataType_t, ncclRedOp_t, ncclComm_t, *mut c_void,
        ) -> ncclResult_t,
        /// `ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
        /// ncclDataType_t, ncclComm_t, stream)`.
        ncclAllGather: unsafe extern "C" fn(
            *const c_void, *mut c_void, usize, ncclDataType_t, ncclComm_t, *mut c_void,
        ) -> ncclResult_t,
        /// `ncclResult_t ncclGroupStart(void)`.
        ncclGroupStart: unsafe extern "C" fn() -> ncclResult_t,
        /// `ncclResult_t ncclGroupEnd(void)`.
        ncclGroupEnd: unsafe extern "C" fn() -> ncclResult_t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_id_is_128_bytes_like_the_c_struct() {
        assert_eq!(std::mem::size_of::<ncclUniqueId>(), 128);
        assert_eq!(std::mem::align_of::<ncclUniqueId>(), 1);
    }

    #[test]
    fn enum_values_follow_nccl_h() {
        assert_eq!(datatype::FLOAT16, 6);
        assert_eq!(datatype::FLOAT32, 7);
        assert_eq!(datatype::BFLOAT16, 9);
        assert_eq!(redop::SUM, 0);
        assert_eq!(redop::AVG, 4);
        assert_eq!(result_name(0), Some("ncclSuccess"));
        assert_eq!(result_name(4), Some("ncclInvalidArgument"));
        assert_eq!(result_name(8), Some("ncclTimeout"));
        assert_eq!(result_name(9), None);
    }

    #[test]
    fn symbol_table_is_complete() {
        let syms = NcclApi::SYMBOLS;
        for needed in [
            "ncclGetVersion",
            "ncclGetUniqueId",
            "ncclCommInitAll",
            "ncclCommInitRank",
            "ncclAllGather",
            "ncclReduceScatter",
            "ncclAllReduce",
            "ncclGroupStart",
            "ncclGroupEnd",
            "ncclCommDestroy",
            "ncclCommAbort",
            "ncclGetErrorString",
        ] {
            assert!(syms.contains(&needed), "{needed}");
        }
        let mut s = syms.to_vec();
        s.sort_unstable();
        s.dedup();
        assert_eq!(s.len(), syms.len());
    }
}
