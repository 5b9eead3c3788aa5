//! Block-scaled GEMMs on device memory (`Gpu::gemm_block_scaled`) and through the HIP backend's
//! host-memory path, on two emulated GPUs (gfx942 and gfx950, `libgemm_emu_hip.so`): every bad
//! input is refused with its typed error before anything is queued (launch counter unchanged,
//! Y as it was); MX on gfx942 is refused with the reason; a job no GPU kernel runs (MX scales
//! K-tiled in tiles of 2 groups, where the kernels read 4) reaches
//! `backends::block_scaled::run_block_scaled`, which answers `NoKernel` with the reason; block-scaled fp8 runs its kernel through the HIP load path (queued on the
//! stream, one launch, the exact values in Y).

use gemm_core::mx::{MxFormat, MxMatrix};
use gemm_core::reference::random_values;
use gemm_dispatch::backends::hip::{discover_with, HipOptions};
use gemm_dispatch::{BlockScaleError, BlockScaledProblem, Context, DType, DeviceScales, Error, ScaleSlice};
use gemm_rocm::hip::Hip;
use std::ffi::{c_char, c_int, CString};
use std::sync::OnceLock;

fn hip() -> Hip {
    static HIP: OnceLock<Hip> = OnceLock::new();
    HIP.get_or_init(|| Hip::load_from(gemm_emu_hip::library_path().expect("libgemm_emu_hip.so")).unwrap()).clone()
}

fn configure(spec: &str) {
    // SAFETY: the control API's prototype (gemm-emu-hip control.rs); the library stays loaded.
    let f: unsafe extern "C" fn(*const c_char) -> c_int =
        unsafe { hip().api().library().symbol("gemm_emu_hip_configure\0") }.unwrap();
    let s = CString::new(spec).unwrap();
    // SAFETY: a NUL-terminated string.
    assert_eq!(unsafe { f(s.as_ptr()) }, 0, "configure({spec})");
}

fn launches(device: i32) -> u64 {
    // SAFETY: as in `configure`.
    let f: unsafe extern "C" fn(c_int, *const c_char) -> u64 =
        unsafe { hip().api().library().symbol("gemm_emu_hip_counter\0") }.unwrap();
    // SAFETY: a NUL-terminated literal.
    unsafe { f(device, c"launches".as_ptr()) }
}

#[test]
fn device_calls_are_checked_whole_and_reach_the_kernel_seam() {
    configure("devices=gfx942,gfx950");
    let found = discover_with(hip(), &HipOptions::default());
    assert!(found.notes.is_empty(), "{:?}", found.notes);
    let ctx = Context::from_backends(found.devices).unwrap();
    let (m, n, k) = (3, 5, 64);
    let x = MxMatrix::quantize(MxFormat::E2M1, m, k, &random_values::<f32>(m * k, 1)).unwrap();
    let w = MxMatrix::quantize(MxFormat::E4M3, n, k, &random_values::<f32>(n * k, 2)).unwrap();
    // K-tiled scales in tiles of 2 groups (K = 64 has two: scale (r, g) at r * 2 + g, the tight
    // row-major bytes), which no kernel reads.
    let kt2 = gemm_dispatch::ScaleLayout::KTiled { tile: 2 };
    let p = BlockScaledProblem::mx(m, n, k, DType::Fp4E2M1, DType::Fp8E4M3)
        .with_scalars(1.0, 0.5)
        .with_scale_lds(m, n)
        .with_scale_layouts(kt2, kt2);
    let (xb, wb) = (x.packed(), w.packed());
    let y0: Vec<f32> = (0..m * n).map(|v| v as f32 * 0.25).collect();

    for (index, arch) in [(0usize, "gfx942"), (1, "gfx950")] {
        let gpu = ctx.gpu(index).unwrap();
        assert_eq!(gpu.arch().name(), arch);
        let stream = gpu.create_stream().unwrap();
        let dx = gpu.upload(&xb).unwrap();
        let dw = gpu.upload(&wb).unwrap();
        let dsx = gpu.upload(x.scales()).unwrap();
        let dsw = gpu.upload(w.scales()).unwrap();
        let mut dy = gpu.upload(&y0).unwrap();
        let before = launches(index as i32);
        let sx = || DeviceScales::E8M0(dsx.as_slice());
        let sw = || DeviceScales::E8M0(dsw.as_slice());
        let e = gpu
            .gemm_block_scaled(&stream, &p, dx.as_slice(), sx(), dw.as_slice(), sw(), dy.as_mut_slice())
            .unwrap_err();
        if arch == "gfx942" {
            assert!(matches!(e, Error::BlockScale(BlockScaleError::UnsupportedArch { .. })), "{e}");
            assert!(e.to_string().contains("no scaled MFMA"), "{e}");
        } else {
            assert!(matches!(&e, Error::NoKernel { device, .. } if device == "hip:1"), "{e}");
            assert!(e.to_string().contains("tiles of 4"), "{e}");
            // Bad inputs on the arch that could run it: typed, before the seam.
            let e = gpu
                .gemm_block_scaled(
                    &stream,
                    &p,
                    dx.slice(1..dx.len()).unwrap(),
                    sx(),
                    dw.as_slice(),
                    sw(),
                    dy.as_mut_slice(),
                )
                .unwrap_err();
            assert!(matches!(e, Error::BlockScale(BlockScaleError::BufferTooSmall { .. })), "{e}");
            let mut big = gpu.alloc::<u8>(xb.len() + 1).unwrap();
            big.write(1, &xb).unwrap();
            let e = gpu
                .gemm_block_scaled(
                    &stream,
                    &p,
                    big.slice(1..big.len()).unwrap(),
                    sx(),
                    dw.as_slice(),
                    sw(),
                    dy.as_mut_slice(),
                )
                .unwrap_err();
            assert!(matches!(e, Error::BlockScale(BlockScaleError::MisalignedAddress { align: 16, .. })), "{e}");
            let f = gpu.upload(&[1f32; 16]).unwrap();
            let e = gpu
                .gemm_block_scaled(
                    &stream,
                    &p,
                    dx.as_slice(),
                    DeviceScales::F32(f.as_slice()),
                    dw.as_slice(),
                    sw(),
                    dy.as_mut_slice(),
                )
                .unwrap_err();
            assert!(matches!(e, Error::BlockScale(BlockScaleError::ScaleSlice { .. })), "{e}");
            let other = ctx.gpu(0).unwrap().upload(w.scales()).unwrap();
            let e = gpu
                .gemm_block_scaled(
                    &stream,
                    &p,
                    dx.as_slice(),
                    sx(),
                    dw.as_slice(),
                    DeviceScales::E8M0(other.as_slice()),
                    dy.as_mut_slice(),
                )
                .unwrap_err();
            assert!(matches!(e, Error::WrongDevice { .. }), "{e}");
            let k48 = BlockScaledProblem::mx(m, n, 48, DType::Fp4E2M1, DType::Fp8E4M3).with_leading_dims(64, 64, n);
            let e = gpu
                .gemm_block_scaled(&stream, &k48, dx.as_slice(), sx(), dw.as_slice(), sw(), dy.as_mut_slice())
                .unwrap_err();
            assert!(matches!(e, Error::BlockScale(BlockScaleError::KNotMultiple { .. })), "{e}");
        }
        stream.synchronize().unwrap();
        assert_eq!(launches(index as i32), before, "{arch}: nothing was queued");
        assert_eq!(dy.to_vec().unwrap(), y0, "{arch}: Y untouched");
    }

    // Block fp8 in gfx942's FNUZ flavour runs its kernel on the stream: 0x38 is 0.5 in e4m3fnuz,
    // unit scales, so every Y is 64 * 0.25 = 16 exactly.
    let gpu = ctx.gpu(0).unwrap();
    let stream = gpu.create_stream().unwrap();
    let p8 = BlockScaledProblem::block_fp8(m, n, k, DType::Fp8E4M3Fnuz, DType::Fp8E4M3Fnuz, 1, 128);
    let (da, db) = (gpu.upload(&vec![0x38u8; m * k]).unwrap(), gpu.upload(&vec![0x38u8; n * k]).unwrap());
    let (sa, sb) = (gpu.upload(&vec![1f32; m]).unwrap(), gpu.upload(&[1f32]).unwrap());
    let mut dy = gpu.upload(&y0).unwrap();
    let before = launches(0);
    gpu.gemm_block_scaled(
        &stream,
        &p8,
        da.as_slice(),
        DeviceScales::F32(sa.as_slice()),
        db.as_slice(),
        DeviceScales::F32(sb.as_slice()),
        dy.as_mut_slice(),
    )
    .unwrap();
    stream.synchronize().unwrap();
    assert_eq!(launches(0), before + 1, "one kernel queued");
    assert_eq!(dy.to_vec().unwrap(), vec![16f32; m * n]);

    // Host memory through the HIP backends: gfx942 passes MX on, gfx950 stages the buffers and
    // answers from the seam; Y untouched. With a host device after them, the host computes it.
    let mut y = y0.clone();
    let call = |ctx: &Context, y: &mut [f32]| {
        ctx.gemm_block_scaled(&p, &xb, ScaleSlice::E8M0(x.scales()), &wb, ScaleSlice::E8M0(w.scales()), y)
    };
    let e = call(&ctx, &mut y).unwrap_err();
    assert!(matches!(&e, Error::NoKernel { device, .. } if device == "hip:1"), "{e}");
    assert_eq!(y, y0);
    let found = discover_with(hip(), &HipOptions::default());
    let mut devices = found.devices;
    devices.push(std::sync::Arc::new(gemm_dispatch::backends::host::HostBackend::new(0, 1)));
    let mixed = Context::from_backends(devices).unwrap();
    let e = call(&mixed, &mut y).unwrap_err();
    assert!(matches!(e, Error::NoKernel { .. }), "NoKernel is not passed on: {e}");
    let host_only = Context::host(1);
    call(&host_only, &mut y).unwrap();
    assert_ne!(y, y0);
}
