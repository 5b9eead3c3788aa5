//! The private segment (scratch): LLVM's own scratch code (a dynamically indexed private
//! array, clang-22 -O3) gives the CPU's result under every mode; hand-written
//! `scratch_*` forms (vaddr, saddr, offsets, x2/x4) keep every lane's bytes apart; an
//! access past the lane's `private_segment_fixed_size` is a `PrivateSegment` fault.
//! Expectations are computed here, never taken from the emulator.

mod common;
use common::*;
use gemm_emu::{Arch, Device, EmuError, FaultKind, LaunchOptions};

#[test]
fn clang_private_array_in_scratch_matches_cpu() {
    for arch in Arch::ALL {
        let co = hip("scratch", arch, &[]);
        let parsed = gemm_codeobject::CodeObject::parse(&co).unwrap();
        let kd = &parsed.kernel("scratch").unwrap().descriptor;
        assert!(kd.private_segment_fixed_size >= 384, "{arch}: clang did not put the array in scratch");
        let (wgs, n) = (3usize, 200i32);
        let input: Vec<i32> = (0..64 * wgs as i32).map(|i| i * 7 - 300).collect();
        let want: Vec<i32> = (0..64 * wgs)
            .map(|t| {
                let buf: Vec<i32> = (0..96).map(|i| input[t].wrapping_mul(i) + t as i32).collect();
                (0..n).fold(0i32, |acc, i| acc.wrapping_add(buf[((i * 37 + t as i32) % 96) as usize] ^ i))
            })
            .collect();
        for s in schedules(&[11]) {
            let dev = Device::new(arch);
            let pin = upload(&dev, bytemuck::cast_slice(&input));
            let pout = dev.alloc(4 * input.len() as u64).unwrap();
            let args = Args::new().ptr(pin).ptr(pout).u32(n as u32);
            let r = dev.launch_with(&co, "scratch", [wgs as u32, 1, 1], [64, 1, 1], &args.0, &opts(s)).unwrap();
            assert_clean(&r);
            let got: Vec<i32> = bytemuck::cast_slice(&download(&dev, pout, 4 * input.len())).to_vec();
            assert_eq!(got, want, "{arch} {}", s.mode.name());
        }
    }
}

fn kernel(arch: Arch, private: u32, body: &str) -> String {
    format!(
        r#"  .amdgcn_target "amdgcn-amd-amdhsa--{a}"
  .amdhsa_code_object_version 5
  .text
  .globl k
  .p2align 8
  .type k,@function
k:
  s_load_dwordx4 s[0:3], s[0:1], 0x0
  v_lshlrev_b32_e32 v10, 4, v0
  s_waitcnt lgkmcnt(0)
  global_load_dwordx4 v[0:3], v10, s[0:1]
  s_waitcnt vmcnt(0)
{body}
  s_waitcnt vmcnt(0)
  global_store_dwordx4 v10, v[4:7], s[2:3]
  s_endpgm
  .section .rodata,"a",@progbits
  .p2align 6, 0x0
  .amdhsa_kernel k
    .amdhsa_kernarg_size 16
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_private_segment_fixed_size {private}
    .amdhsa_enable_private_segment 1
    .amdhsa_next_free_vgpr 16
    .amdhsa_next_free_sgpr 16
    .amdhsa_accum_offset 16
  .end_amdhsa_kernel
"#,
        a = arch.name()
    )
}

fn launch(arch: Arch, tag: &str, private: u32, body: &str, inp: &[[u32; 4]]) -> Result<Vec<[u32; 4]>, EmuError> {
    launch_with(arch, tag, private, body, inp, &LaunchOptions::default())
}

fn launch_with(
    arch: Arch,
    tag: &str,
    private: u32,
    body: &str,
    inp: &[[u32; 4]],
    o: &LaunchOptions,
) -> Result<Vec<[u32; 4]>, EmuError> {
    let co = assemble(&kernel(arch, private, body), arch, tag);
    let dev = Device::new(arch);
    let pin = upload(&dev, bytemuck::cast_slice(inp));
    let pout = dev.alloc(1024).unwrap();
    let args = Args::new().ptr(pin).ptr(pout);
    let r = dev.launch_with(&co, "k", [1, 1, 1], [64, 1, 1], &args.0, o)?;
    assert_clean(&r);
    let out: Vec<u32> = bytemuck::cast_slice(&download(&dev, pout, 1024)).to_vec();
    Ok(out.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect())
}

#[test]
fn scratch_forms_address_each_lanes_own_segment() {
    // Every lane writes its four input dwords at the same private offsets through
    // different address forms and reads them back permuted: lanes that shared bytes would
    // see another lane's data. Offsets: vaddr v13 = 8, saddr s4 = 16, instruction offsets.
    let inp: Vec<[u32; 4]> = (0..64u32).map(|l| [l * 4 + 1, l * 4 + 2, 0xA000_0000 | l, !l]).collect();
    let body = "  v_mov_b32_e32 v13, 8\n  s_mov_b32 s4, 16\n  scratch_store_dword off, v0, off\n  scratch_store_dwordx2 v13, v[2:3], off offset:-4\n  scratch_store_dword off, v1, s4 offset:4\n  scratch_store_dwordx4 v13, v[0:3], s4 offset:32\n  s_waitcnt vmcnt(0)\n  scratch_load_dword v4, off, s4 offset:4\n  scratch_load_dword v5, v13, s4 offset:32\n  scratch_load_dwordx2 v[6:7], off, off offset:4\n  s_waitcnt vmcnt(0)";
    for arch in Arch::ALL {
        let out = launch(arch, "scratch-forms", 128, body, &inp).unwrap();
        for (l, (i, o)) in inp.iter().zip(&out).enumerate() {
            // Private bytes: [0] v0, [4..12] v2 v3, [20] v1, [56..72] v0..v3.
            assert_eq!(*o, [i[1], i[0], i[2], i[3]], "{arch} lane {l}");
        }
    }
}

#[test]
fn scratch_access_past_the_private_segment_faults() {
    let inp = vec![[0u32; 4]; 64];
    for arch in Arch::ALL {
        let err =
            launch(arch, "scratch-oob", 64, "  scratch_load_dwordx2 v[4:5], off, off offset:60", &inp).unwrap_err();
        match err {
            EmuError::Fault(f) => {
                assert!(
                    matches!(
                        f.kind,
                        FaultKind::PrivateSegment { offset: 60, len: 8, write: false, private_bytes: 64, .. }
                    ),
                    "{arch}: {f}"
                );
            }
            e => panic!("{arch}: expected a private-segment fault, got {e}"),
        }
    }
}

#[test]
fn vmcnt_counts_loads_and_stores_in_one_in_order_stream() {
    // Triton's spill code: a scratch load, then younger stores, then `s_waitcnt vmcnt(2)`
    // before the loaded register is used. gfx9 has one VM_CNT for loads and stores and
    // LLVM (SIInsertWaitcnts: one VMEM_ACCESS event without vscnt) counts it down in issue
    // order, so the wait covers the load under every schedule.
    let inp: Vec<[u32; 4]> = (0..64u32).map(|l| [l ^ 0x5A5A, l + 7, l * 3, 0]).collect();
    let body = "  scratch_store_dword off, v0, off\n  s_waitcnt vmcnt(0)\n  scratch_load_dword v4, off, off\n  scratch_store_dword off, v1, off offset:4\n  scratch_store_dword off, v2, off offset:8\n  s_waitcnt vmcnt(2)\n  v_mov_b32_e32 v5, v4\n  v_mov_b32_e32 v6, 0\n  v_mov_b32_e32 v7, 0";
    for arch in Arch::ALL {
        for s in schedules(&[3, 4]) {
            let out = launch_with(arch, "vmcnt-order", 16, body, &inp, &opts(s)).unwrap();
            for (l, (i, o)) in inp.iter().zip(&out).enumerate() {
                assert_eq!(o[1], i[0], "{arch} {} lane {l}", s.mode.name());
            }
        }
    }
}
