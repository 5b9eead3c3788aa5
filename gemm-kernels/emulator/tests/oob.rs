//! Raw-buffer bounds checking, observed directly (clang-22 HIP, `tests/hip/oob.hip`):
//! loaded values and every byte of device memory around stored-to buffers, against a
//! model written here from ISA.md §2.2-2.3 (per-dword check of `inst_offset + voffset`
//! against NUM_RECORDS, soffset outside the check, saturating, OOB loads give 0, OOB
//! stores write nothing; a sub-dword access is in range when its first byte is).

mod common;
use common::*;
use gemm_emu::{Arch, Device};
use rand::{Rng, SeedableRng};

const NREC: u32 = 164; // 41 dwords
const SOFF: u32 = 64;

fn src_byte(j: usize) -> u8 {
    (j * 37 + 11) as u8
}

#[test]
fn clang_emits_the_buffer_forms_under_test() {
    let text = hip_asm("oob", Arch::Gfx942, &[]);
    for f in [
        "buffer_load_dwordx2",
        "s[0:3], 0 offen offset:32",
        "buffer_load_ubyte",
        "buffer_load_ushort",
        "buffer_store_dwordx4",
        "buffer_store_byte",
        "buffer_store_short",
    ] {
        assert!(text.contains(f), "`{f}` missing from clang's code");
    }
    // The soffset forms use an SGPR, not the constant 0.
    assert!(text.lines().any(|l| l.contains("buffer_load_dword v") && l.contains("], s")), "no SGPR soffset load");
    assert!(text.lines().any(|l| l.contains("buffer_store_dword v") && l.contains("], s")), "no SGPR soffset store");
}

#[test]
fn oob_loads_are_checked_per_dword_and_return_zero() {
    let src: Vec<u8> = (0..512).map(src_byte).collect();
    let dword = |o: u32| u32::from_le_bytes([0, 1, 2, 3].map(|k| src[o as usize + k]));
    let inr = |o: u32| o < NREC;
    for arch in Arch::ALL {
        let co = hip("oob", arch, &[]);
        for s in schedules(&[1]) {
            let dev = Device::new(arch);
            let psrc = upload(&dev, &src);
            let pout = dev.alloc(64 * 16 * 4).unwrap();
            let args = Args::new().ptr(psrc).ptr(pout).u32(NREC).u32(SOFF);
            let r = dev.launch_with(&co, "oob_load", [1, 1, 1], [64, 1, 1], &args.0, &opts(s)).unwrap();
            assert_clean(&r);
            let out: Vec<u32> = bytemuck::cast_slice(&download(&dev, pout, 64 * 16 * 4)).to_vec();
            let mut partial = [false; 3];
            for l in 0..64u32 {
                let o = &out[16 * l as usize..16 * l as usize + 16];
                let mut want = [0u32; 16];
                // dwordx2 at voffset 8*l: each dword checked on its own.
                for d in 0..2 {
                    let off = 8 * l + 4 * d;
                    want[d as usize] = if inr(off) { dword(off) } else { 0 };
                }
                partial[0] |= inr(8 * l) && !inr(8 * l + 4);
                // dwordx4 at voffset 16*l, inst_offset 32: the immediate is in the check.
                for d in 0..4 {
                    let off = 16 * l + 32 + 4 * d;
                    want[2 + d as usize] = if inr(off) { dword(off) } else { 0 };
                }
                partial[1] |= inr(16 * l + 32) && !inr(16 * l + 44);
                // dword at voffset 4*l with soffset 64: the address moves, the check does not.
                want[6] = if inr(4 * l) { dword(SOFF + 4 * l) } else { 0 };
                partial[2] |= inr(4 * l) && !inr(SOFF + 4 * l);
                // ubyte / ushort straddling the end (NUM_RECORDS is a multiple of 4).
                let ob = NREC - 14 + l;
                want[7] = if inr(ob) { u32::from(src[ob as usize]) } else { 0 };
                let os = NREC - 14 + 2 * l;
                want[8] =
                    if inr(os) { u32::from(u16::from_le_bytes([src[os as usize], src[os as usize + 1]])) } else { 0 };
                // voffset 0xFFFFFFF8: saturating, so all four dwords are out of range.
                want[9] = 0;
                assert_eq!(o, &want, "{arch} {s:?} lane {l}");
            }
            assert_eq!(partial, [true; 3], "the shapes must include partly in-range vectors and soffset-only overflow");
        }
    }
}

#[test]
fn oob_stores_write_nothing_and_leave_the_surroundings_alone() {
    const REGION: usize = 1024;
    const PRE: u32 = 256;
    const STORE_SOFF: u32 = 400;
    const PRE_B: u32 = 840;
    const NREC_B: u32 = 5;
    const PRE_S: u32 = 900;
    const NREC_S: u32 = 6;
    let mut want = vec![0xA5u8; REGION];
    let mut put = |at: u32, bytes: &[u8]| want[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
    for l in 0..64u32 {
        for d in 0..4 {
            let off = 16 * l + 4 * d;
            if off < NREC {
                put(PRE + off, &(16 * l + d + 1).to_le_bytes());
            }
        }
        if 4 * l < NREC {
            put(PRE + STORE_SOFF + 4 * l, &(0x5000 + l).to_le_bytes());
        }
        if l < NREC_B {
            // (lanes 0..8 store; NREC_B = 5 < 8 keeps 5, 6, 7 out)
            put(PRE_B + l, &[(0x40 + l) as u8]);
        }
        if l < 8 && 2 * l < NREC_S {
            put(PRE_S + 2 * l, &((0x7100 + l) as u16).to_le_bytes());
        }
    }
    // The partly in-range dwordx4 of lane 10 writes its first dword only.
    assert_eq!(&want[(PRE + 160) as usize..(PRE + 168) as usize], &[11 * 16 - 15, 0, 0, 0, 0xA5, 0xA5, 0xA5, 0xA5][..]);
    for arch in Arch::ALL {
        let co = hip("oob", arch, &[]);
        for s in schedules(&[2]) {
            let dev = Device::new(arch);
            let preg = upload(&dev, &[0xA5u8; REGION]);
            let args =
                Args::new().ptr(preg).u32(PRE).u32(NREC).u32(STORE_SOFF).u32(PRE_B).u32(NREC_B).u32(PRE_S).u32(NREC_S);
            let r = dev.launch_with(&co, "oob_store", [1, 1, 1], [64, 1, 1], &args.0, &opts(s)).unwrap();
            assert_clean(&r);
            let got = download(&dev, preg, REGION);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{arch} {s:?}: byte {i} of the region (buffer at {PRE}, {NREC} records)");
            }
        }
    }
}

#[test]
fn gemm_edge_tile_loads_zeros_and_drops_stores_beyond_the_matrix() {
    let (m, n, k, lda, ldb, ldc) = (45usize, 27usize, 13usize, 16usize, 29usize, 31usize);
    const SENT: u32 = 0x7FC0_DEAD;
    const TAIL: usize = 64;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut a = vec![0f32; m * lda];
    let mut b = vec![1.0e6f32; k * ldb]; // padding columns: huge, never to be read
    for i in 0..m {
        for p in 0..k {
            a[i * lda + p] = rng.gen_range(-4i32..=4) as f32;
        }
        for p in k..lda {
            a[i * lda + p] = 1.0e6;
        }
    }
    for p in 0..k {
        for j in 0..n {
            b[p * ldb + j] = rng.gen_range(-4i32..=4) as f32;
        }
    }
    let mut want_c = vec![f32::from_bits(SENT); m * ldc + TAIL];
    for i in 0..m {
        for j in 0..n {
            want_c[i * ldc + j] = (0..k).map(|p| a[i * lda + p] * b[p * ldb + j]).sum();
        }
    }
    let tiles = m.div_ceil(32);
    let mut want_rows = vec![0f32; 32 * tiles];
    for (i, w) in want_rows.iter_mut().enumerate().take(m) {
        *w = (0..k).map(|p| a[i * lda + p]).sum();
    }
    for arch in Arch::ALL {
        let co = hip("oob", arch, &[]);
        for s in schedules(&[3]) {
            let dev = Device::new(arch);
            let pa = upload(&dev, &bytes_f32(&a));
            let pb = upload(&dev, &bytes_f32(&b));
            let pc = upload(&dev, &bytes_f32(&vec![f32::from_bits(SENT); m * ldc + TAIL]));
            let prow = upload(&dev, &bytes_f32(&vec![-1.0; 32 * tiles]));
            let args = Args::new()
                .ptr(pa)
                .ptr(pb)
                .ptr(pc)
                .ptr(prow)
                .u32(m as u32)
                .u32(n as u32)
                .u32(k as u32)
                .u32(lda as u32)
                .u32(ldb as u32)
                .u32(ldc as u32);
            let grid = [tiles as u32, n.div_ceil(32) as u32, 1];
            let r = dev.launch_with(&co, "edge_gemm", grid, [256, 1, 1], &args.0, &opts(s)).unwrap();
            assert_clean(&r);
            let c = f32s(&download(&dev, pc, 4 * (m * ldc + TAIL)));
            for (i, (g, w)) in c.iter().zip(&want_c).enumerate() {
                assert_eq!(g.to_bits(), w.to_bits(), "{arch} {s:?}: C[{}][{}] (flat {i})", i / ldc, i % ldc);
            }
            assert_eq!(f32s(&download(&dev, prow, 4 * 32 * tiles)), want_rows, "{arch} {s:?}: A rows as loaded");
        }
    }
}
