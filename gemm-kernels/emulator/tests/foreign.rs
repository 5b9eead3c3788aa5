//! Kernels compiled by clang-22 from tests/hip/, run under every scheduling mode and
//! several seeds, compared with CPU answers.

mod common;
use common::*;
use gemm_emu::{Arch, Device};
use rand::{Rng, SeedableRng};

#[test]
fn vector_add_matches_cpu_on_both_archs() {
    for arch in Arch::ALL {
        let co = hip("vadd", arch, &[]);
        for s in schedules(&[1, 2]) {
            let dev = Device::new(arch);
            let n = 1000usize; // not a multiple of 256: the last workgroup is partly idle
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(s.seed);
            let a: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let b: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let (pa, pb) = (upload(&dev, &bytes_f32(&a)), upload(&dev, &bytes_f32(&b)));
            let pc = dev.alloc(4 * n as u64).unwrap();
            let args = Args::new().ptr(pa).ptr(pb).ptr(pc).u32(n as u32);
            let r = dev.launch_with(&co, "vadd", [4, 1, 1], [256, 1, 1], &args.0, &opts(s)).unwrap();
            assert_clean(&r);
            let c = f32s(&download(&dev, pc, 4 * n));
            for i in 0..n {
                assert_eq!(c[i], a[i] + b[i], "{arch} {s:?} element {i}");
            }
            assert!(r.counts.vmem_load >= 2 && r.counts.vmem_store >= 1, "{}", r.counts);
        }
    }
}
