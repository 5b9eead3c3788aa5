//! The RCCL half of libgemm_emu_hip.so, driven through gemm-rocm's dlopen binding.

mod common;

use std::ffi::c_void;

use common::*;
use gemm_rocm::hip::{DeviceBuffer, Stream};
use gemm_rocm::nccl::{sys, Communicator};

/// Element codecs for the three float types.
#[derive(Clone, Copy, Debug)]
enum T {
    F32,
    Bf16,
    F16,
}

impl T {
    fn raw(self) -> i32 {
        match self {
            T::F32 => sys::datatype::FLOAT32,
            T::Bf16 => sys::datatype::BFLOAT16,
            T::F16 => sys::datatype::FLOAT16,
        }
    }
    fn size(self) -> usize {
        if matches!(self, T::F32) {
            4
        } else {
            2
        }
    }
    fn encode(self, v: &[f32]) -> Vec<u8> {
        v.iter()
            .flat_map(|&x| match self {
                T::F32 => x.to_le_bytes().to_vec(),
                T::Bf16 => half::bf16::from_f32(x).to_le_bytes().to_vec(),
                T::F16 => half::f16::from_f32(x).to_le_bytes().to_vec(),
            })
            .collect()
    }
    fn decode(self, b: &[u8]) -> Vec<f32> {
        b.chunks(self.size())
            .map(|c| match self {
                T::F32 => f32::from_le_bytes(c.try_into().unwrap()),
                T::Bf16 => half::bf16::from_le_bytes([c[0], c[1]]).to_f32(),
                T::F16 => half::f16::from_le_bytes([c[0], c[1]]).to_f32(),
            })
            .collect()
    }
}

fn value(rank: usize, i: usize) -> f32 {
    ((rank * 31 + i * 7) % 13) as f32 - 6.0
}

struct Rank {
    comm: Communicator,
    stream: Stream,
    send: DeviceBuffer,
    recv: DeviceBuffer,
}

fn ranks(comms: Vec<Communicator>, send_elems: usize, recv_elems: usize, t: T) -> Vec<Rank> {
    let hip = hip();
    comms
        .into_iter()
        .enumerate()
        .map(|(r, comm)| {
            let d = hip.device(comm.device().unwrap() as usize).unwrap();
            let mut send = d.alloc(send_elems * t.size()).unwrap();
            let vals: Vec<f32> = (0..send_elems).map(|i| value(r, i)).collect();
            send.write(0, &t.encode(&vals)).unwrap();
            let recv = d.alloc(recv_elems * t.size()).unwrap();
            Rank { stream: d.create_stream().unwrap(), comm, send, recv }
        })
        .collect()
}

type Collective =
    unsafe extern "C" fn(*const c_void, *mut c_void, usize, i32, i32, sys::ncclComm_t, *mut c_void) -> i32;

/// Raw calls (the communicator handle is private in gemm-rocm; take it from its Debug form).
fn raw_comm(c: &Communicator) -> sys::ncclComm_t {
    let dbg = format!("{c:?}");
    let hex = dbg.split("0x").nth(1).unwrap().trim_end_matches([' ', '}', ')']);
    usize::from_str_radix(hex, 16).unwrap() as sys::ncclComm_t
}

fn run_all_three(ranks_n: usize, t: T, count: usize) {
    let nccl = nccl();
    let api = nccl.api();
    let devices: Vec<i32> = (0..ranks_n as i32).collect();
    // AllReduce.
    let rs = ranks(nccl.init_all(&devices).unwrap(), count, count, t);
    let all_reduce: Collective = api.ncclAllReduce().unwrap();
    nccl.group(|| {
        for r in &rs {
            // SAFETY: buffers of `count` elements on the communicator's device; stream live.
            let code = unsafe {
                all_reduce(
                    r.send.as_ptr(),
                    r.recv.as_ptr().cast_mut(),
                    count,
                    t.raw(),
                    0,
                    raw_comm(&r.comm),
                    r.stream.as_raw().cast(),
                )
            };
            assert_eq!(code, 0);
        }
        Ok(())
    })
    .unwrap();
    for r in &rs {
        r.stream.synchronize().unwrap();
        let mut b = vec![0u8; count * t.size()];
        r.recv.read(0, &mut b).unwrap();
        let want: Vec<f32> = (0..count).map(|i| (0..ranks_n).map(|k| value(k, i)).sum()).collect();
        assert_eq!(t.decode(&b), t.decode(&t.encode(&want)), "all-reduce {t:?}");
    }
    drop(rs);
    // AllGather.
    let rs = ranks(nccl.init_all(&devices).unwrap(), count, count * ranks_n, t);
    for r in &rs {
        // SAFETY: as above; the receive buffer holds nranks * count elements.
        let code = unsafe {
            (api.ncclAllGather().unwrap())(
                r.send.as_ptr(),
                r.recv.as_ptr().cast_mut(),
                count,
                t.raw(),
                raw_comm(&r.comm),
                r.stream.as_raw().cast(),
            )
        };
        assert_eq!(code, 0, "outside a group, from one thread: parts are asynchronous");
    }
    for r in &rs {
        r.stream.synchronize().unwrap();
        let mut b = vec![0u8; count * ranks_n * t.size()];
        r.recv.read(0, &mut b).unwrap();
        let want: Vec<f32> = (0..ranks_n).flat_map(|k| (0..count).map(move |i| value(k, i))).collect();
        assert_eq!(t.decode(&b), t.decode(&t.encode(&want)), "all-gather {t:?}");
    }
    drop(rs);
    // ReduceScatter.
    let rs = ranks(nccl.init_all(&devices).unwrap(), count * ranks_n, count, t);
    let reduce_scatter: Collective = api.ncclReduceScatter().unwrap();
    nccl.group(|| {
        for r in &rs {
            // SAFETY: send holds nranks * count elements, recv count.
            let code = unsafe {
                reduce_scatter(
                    r.send.as_ptr(),
                    r.recv.as_ptr().cast_mut(),
                    count,
                    t.raw(),
                    0,
                    raw_comm(&r.comm),
                    r.stream.as_raw().cast(),
                )
            };
            assert_eq!(code, 0);
        }
        Ok(())
    })
    .unwrap();
    for (rank, r) in rs.iter().enumerate() {
        r.stream.synchronize().unwrap();
        let mut b = vec![0u8; count * t.size()];
        r.recv.read(0, &mut b).unwrap();
        let want: Vec<f32> = (0..count).map(|i| (0..ranks_n).map(|k| value(k, rank * count + i)).sum()).collect();
        assert_eq!(t.decode(&b), t.decode(&t.encode(&want)), "reduce-scatter {t:?} rank {rank}");
    }
    let before = counter(0, "collectives");
    assert!(before >= 3);
}

#[test]
fn collectives_over_two_and_three_ranks_in_all_float_types() {
    let _s = serial();
    configure("devices=gfx942,gfx942,gfx950;jitter_us=100;seed=2");
    for t in [T::F32, T::Bf16, T::F16] {
        run_all_three(2, t, 37);
        run_all_three(3, t, 64);
    }
}

#[test]
fn communicator_queries_and_argument_checks() {
    let _s = serial();
    configure("devices=gfx942,gfx942");
    let nccl = nccl();
    assert!(nccl.version().unwrap().major >= 2);
    let comms = nccl.init_all(&[1, 0]).unwrap();
    assert_eq!(comms[0].count().unwrap(), 2);
    assert_eq!(comms[0].device().unwrap(), 1);
    assert_eq!(comms[1].device().unwrap(), 0);
    let api = nccl.api();
    let mut rank = -1;
    // SAFETY: live communicator, valid out-pointer.
    unsafe {
        assert_eq!((api.ncclCommUserRank().unwrap())(raw_comm(&comms[1]), &mut rank), 0);
        let mut err = -1;
        assert_eq!((api.ncclCommGetAsyncError().unwrap())(raw_comm(&comms[1]), &mut err), 0);
        assert_eq!(err, 0);
    }
    assert_eq!(rank, 1);
    assert!(nccl.init_all(&[0, 0]).is_err(), "duplicate devices");
    assert!(nccl.init_all(&[0, 7]).is_err(), "no such device");
    let hip = hip();
    let d1 = hip.device(1).unwrap();
    let buf = d1.alloc(64).unwrap();
    let ar: Collective = api.ncclAllReduce().unwrap();
    // SAFETY: arguments are checked before anything is queued.
    unsafe {
        assert_eq!(
            ar(buf.as_ptr(), buf.as_ptr().cast_mut(), 16, 42, 0, raw_comm(&comms[0]), std::ptr::null_mut()),
            4,
            "unknown datatype"
        );
        assert_eq!(
            ar(buf.as_ptr(), buf.as_ptr().cast_mut(), 16, 7, 9, raw_comm(&comms[0]), std::ptr::null_mut()),
            4,
            "unknown op"
        );
        assert_eq!(
            ar(buf.as_ptr(), buf.as_ptr().cast_mut(), 17, 7, 0, raw_comm(&comms[0]), std::ptr::null_mut()),
            4,
            "past the buffer"
        );
        assert_eq!(
            ar(buf.as_ptr(), buf.as_ptr().cast_mut(), 16, 7, 0, std::ptr::null_mut(), std::ptr::null_mut()),
            4,
            "null comm"
        );
        assert_eq!(
            ar(buf.as_ptr(), buf.as_ptr().cast_mut(), 4, 7, 0, raw_comm(&comms[1]), std::ptr::null_mut()),
            4,
            "buffer on another device"
        );
        assert_eq!((api.ncclGroupEnd().unwrap())(), 5, "ncclGroupEnd without start: ncclInvalidUsage");
    }
}

#[test]
fn init_rank_from_threads_and_in_a_group() {
    let _s = serial();
    configure("devices=gfx942,gfx950,gfx942");
    let nccl = nccl();
    let hip = hip();
    let id = nccl.unique_id().unwrap();
    let count = 20;
    std::thread::scope(|s| {
        for r in 0..3usize {
            let (nccl, hip) = (nccl.clone(), hip.clone());
            s.spawn(move || {
                hip.set_device(r as i32).unwrap();
                let comm = nccl.init_rank(3, &id, r).unwrap();
                assert_eq!(comm.device().unwrap(), r as i32);
                let rs = ranks(vec![comm], count, count, T::F32);
                let r0 = &rs[0];
                // SAFETY: buffers of `count` f32 on this rank's device.
                let code = unsafe {
                    (nccl.api().ncclAllReduce().unwrap())(
                        r0.send.as_ptr(),
                        r0.recv.as_ptr().cast_mut(),
                        count,
                        sys::datatype::FLOAT32,
                        0,
                        raw_comm(&r0.comm),
                        r0.stream.as_raw().cast(),
                    )
                };
                assert_eq!(code, 0);
                r0.stream.synchronize().unwrap();
                let mut b = vec![0u8; count * 4];
                r0.recv.read(0, &mut b).unwrap();
                // ranks() filled this rank's buffer as rank 0; every rank did the same.
                let want: Vec<f32> = (0..count).map(|i| 3.0 * value(0, i)).collect();
                assert_eq!(T::F32.decode(&b), want);
            });
        }
    });
    // Several ranks from one thread inside a group.
    let id = nccl.unique_id().unwrap();
    let comms = nccl
        .group(|| {
            (0..2usize)
                .map(|r| {
                    hip.set_device(r as i32).unwrap();
                    nccl.init_rank(2, &id, r)
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap();
    hip.set_device(0).unwrap();
    assert_eq!(comms[1].device().unwrap(), 1);
}

#[test]
fn missing_ranks_time_out_instead_of_hanging() {
    let _s = serial();
    configure("devices=gfx942,gfx942;collective_timeout_ms=200");
    let nccl = nccl();
    let comms = nccl.init_all(&[0, 1]).unwrap();
    let rs = ranks(comms, 8, 8, T::F32);
    let r0 = &rs[0];
    let started = std::time::Instant::now();
    // Only rank 0 calls.
    // SAFETY: valid buffers and stream.
    let code = unsafe {
        (nccl.api().ncclAllReduce().unwrap())(
            r0.send.as_ptr(),
            r0.recv.as_ptr().cast_mut(),
            8,
            7,
            0,
            raw_comm(&r0.comm),
            r0.stream.as_raw().cast(),
        )
    };
    assert_eq!(code, 0);
    assert_eq!(code_of(r0.stream.synchronize()), 702, "hipErrorLaunchTimeOut");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let mut err = -1;
    // SAFETY: live communicator.
    unsafe { (nccl.api().ncclCommGetAsyncError().unwrap())(raw_comm(&r0.comm), &mut err) };
    assert_eq!(err, 6, "ncclRemoteError");
    // A lone ncclCommInitRank times out too.
    let id = nccl.unique_id().unwrap();
    assert!(nccl.init_rank(2, &id, 0).is_err());
}

fn code_of(r: gemm_rocm::Result<()>) -> i32 {
    code(r)
}
