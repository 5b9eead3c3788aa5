//! The four races the Mojo port of the 8-wave ping-pong met (shared/seeds/002 §5, §14,
//! §15.13), planted one at a time into a small hand-written ping-pong kernel (assembled
//! with llvm-mc-22 here). The checkers must name each one, and the longest-latency
//! schedule must turn each into a wrong number; the unplanted kernel is clean and right
//! under every scheduling mode.
//!
//! The kernel is the ping-pong skeleton with its data paths and none of its arithmetic:
//! two waves (wave 0 = group 0, wave 1 = group 1, as waves 0-3 / 4-7 of the real kernel),
//! a B tile shared by both groups in two LDS stages of 1 KiB, each group loading its half
//! (2 dwords per lane) of B[k+1] into the other stage while it reads B[k]. Each iteration
//! is a memory phase M(k) (prefetch, LDS reads, waits, `s_barrier`) and a compute phase
//! C(k) (VALU standing in for the MFMA cluster, `s_barrier`). Group 1 takes one extra
//! `s_barrier` before the loop (the stagger) and group 0 one after it (the re-align), so
//! group 0 runs one phase ahead: its M(k+1) pairs with group 1's C(k) (seed 002 §4.2,
//! §15.3). The epilogue stages each wave's accumulator through LDS (over stage 0) and
//! stores the *other* wave's, so it needs both groups aligned.
//!
//! acc(wave g, lane l) = g*2^16 + sum_k (B[k][l] + 2 B[k][64+l] + 3 B[k][128+l] + 4 B[k][192+l]),
//! stored at out[g*64 + l] by wave 1-g.

mod common;
use common::*;
use gemm_emu::{Arch, Checker, Device, Kind, LaunchReport, Mode, Schedule};
use rand::{Rng, SeedableRng};

/// K iterations (B rows of 256 dwords).
const K: usize = 6;

/// One planted bug (or none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plant {
    None,
    /// Seed 002 §14.3: B, shared by both groups, prefetched one phase early (in the compute
    /// phase, "interleave B loads with compute"): group 0 overwrites the stage group 1 is
    /// still reading.
    SharedBEarly,
    /// §15.13: `s_waitcnt vmcnt(1)` where both loads of the stage must have landed, with
    /// direct-to-LDS loads (the other group reads LDS before the DMA wrote it).
    WeakVmcntDma,
    /// The same with register-staged loads: `ds_write` of a VGPR whose load has not
    /// returned.
    WeakVmcntRegs,
    /// The `s_barrier` ending the memory phase removed: one group's LDS reads and the other
    /// group's LDS writes are no longer ordered.
    NoBarrier,
    /// The re-align barrier on the wrong side (`if group == 1` like the stagger): group 1
    /// runs two `s_barrier`s more than group 0, the epilogue barriers pair with loop
    /// barriers, and group 0 reads the staging area before group 1 wrote it.
    StaggerWrongSide,
}

/// Register staging (global -> VGPR -> ds_write) instead of LDS-DMA.
fn staged(p: Plant) -> bool {
    p == Plant::WeakVmcntRegs
}

/// The prefetch of B[k+1] (`s18` = k+1) into stage (k+1)%2: two dwords per lane of this
/// group's half. DMA: LDS `M0 + offset + 4*lane` (ISA.md §2.4); staged: two loads, a wait,
/// two `ds_write`s.
fn prefetch(p: Plant, vm_wait: &str) -> String {
    let mut s = String::from(
        "  s_and_b32 s19, s18, 1\n  s_lshl_b32 s19, s19, 10\n  s_add_u32 s19, s19, s10\n  s_lshl_b32 s20, s18, 10\n",
    );
    if staged(p) {
        s += "  buffer_load_dword v8, v4, s[12:15], s20 offen\n";
        s += "  buffer_load_dword v9, v4, s[12:15], s20 offen offset:256\n";
        s += &format!("  s_waitcnt {vm_wait}\n");
        s += "  v_add_u32_e32 v14, s19, v3\n  ds_write_b32 v14, v8\n  ds_write_b32 v14, v9 offset:256\n";
    } else {
        // One wait state between an SALU write of M0 and the LDS-DMA reading it.
        s += "  s_mov_b32 m0, s19\n  s_nop 0\n";
        s += "  buffer_load_dword v4, s[12:15], s20 offen lds\n";
        s += "  buffer_load_dword v4, s[12:15], s20 offen offset:256 lds\n";
    }
    s
}

fn kernel(arch: Arch, p: Plant) -> String {
    // Wave state: s9 = group, s10 = group*512 (byte offset of the group's half),
    // v3 = 4*lane, v4 = s10 + 4*lane (the lane's byte in a B row), v10 = acc,
    // s16 = k, s8 = K, s[12:15] = buffer resource of B (rows of 1 KiB).
    let vm = if matches!(p, Plant::WeakVmcntDma | Plant::WeakVmcntRegs) { "vmcnt(1)" } else { "vmcnt(0)" };
    let mut t = String::new();
    t += &format!(
        "  .amdgcn_target \"amdgcn-amd-amdhsa--{a}\"\n  .text\n  .globl k\n  .p2align 8\n  .type k,@function\nk:\n",
        a = arch.name()
    );
    t +=
        "  s_load_dwordx2 s[4:5], s[0:1], 0x0\n  s_load_dwordx2 s[6:7], s[0:1], 0x8\n  s_load_dword s8, s[0:1], 0x10\n";
    t += "  v_lshrrev_b32_e32 v1, 6, v0\n  v_and_b32_e32 v2, 63, v0\n  v_readfirstlane_b32 s9, v1\n";
    t += "  v_lshlrev_b32_e32 v3, 2, v2\n  s_lshl_b32 s10, s9, 9\n  v_add_u32_e32 v4, s10, v3\n";
    t += "  s_lshl_b32 s11, s9, 16\n  v_mov_b32_e32 v10, s11\n  s_waitcnt lgkmcnt(0)\n";
    t += "  s_mov_b32 s12, s4\n  s_and_b32 s13, s5, 0xffff\n  s_lshl_b32 s14, s8, 10\n  s_mov_b32 s15, 0x20000\n";
    // Prologue: B[0] (and for the early-prefetch variant B[1]) into its stage.
    t += "  s_mov_b32 s18, 0\n";
    t += &prefetch(p, "vmcnt(0)");
    if p == Plant::SharedBEarly {
        t += "  s_mov_b32 s18, 1\n";
        t += &prefetch(p, "vmcnt(0)");
    }
    t += "  s_waitcnt vmcnt(0) lgkmcnt(0)\n  s_barrier\n";
    // The stagger: group 1 waits one barrier.
    t += "  s_mov_b32 s16, 0\n";
    t += "  s_cmp_eq_u32 s9, 1\n  s_cbranch_scc0 .Lloop\n  s_barrier\n";
    t += ".Lloop:\n";
    // M(k): prefetch B[k+1] into the other stage (not in the early variant), read B[k].
    if p != Plant::SharedBEarly {
        t += "  s_add_u32 s18, s16, 1\n  s_cmp_lt_u32 s18, s8\n  s_cbranch_scc0 .Lnopf\n";
        t += &prefetch(p, vm);
        t += ".Lnopf:\n";
    }
    t += "  s_and_b32 s17, s16, 1\n  s_lshl_b32 s17, s17, 10\n  v_add_u32_e32 v5, s17, v3\n";
    t += "  ds_read_b32 v6, v5\n  ds_read_b32 v7, v5 offset:256\n  ds_read_b32 v12, v5 offset:512\n";
    t += "  ds_read_b32 v13, v5 offset:768\n  s_waitcnt lgkmcnt(0)\n";
    if !staged(p) {
        t += &format!("  s_waitcnt {vm}\n");
    }
    if p == Plant::SharedBEarly {
        t += "  s_add_u32 s18, s16, 2\n";
    }
    if p != Plant::NoBarrier {
        t += "  s_barrier\n";
    }
    // C(k): the early variant prefetches B[k+2] into the stage just read, then computes.
    if p == Plant::SharedBEarly {
        t += "  s_cmp_lt_u32 s18, s8\n  s_cbranch_scc0 .Lnopf\n";
        t += &prefetch(p, "vmcnt(0)");
        t += "  s_waitcnt vmcnt(0)\n.Lnopf:\n";
    }
    t += "  v_add_u32_e32 v10, v10, v6\n  v_mad_u32_u24 v10, v7, 2, v10\n  v_mad_u32_u24 v10, v12, 3, v10\n";
    t += "  v_mad_u32_u24 v10, v13, 4, v10\n  s_barrier\n";
    t += "  s_add_u32 s16, s16, 1\n  s_cmp_lt_u32 s16, s8\n  s_cbranch_scc1 .Lloop\n";
    // Epilogue: re-align (group 0 waits one barrier), then exchange accumulators via LDS.
    let realign = if p == Plant::StaggerWrongSide { 1 } else { 0 };
    t += &format!("  s_cmp_eq_u32 s9, {realign}\n  s_cbranch_scc0 .Lepi\n  s_barrier\n.Lepi:\n");
    t += "  v_lshlrev_b32_e32 v11, 2, v0\n  ds_write_b32 v11, v10\n  s_waitcnt lgkmcnt(0)\n  s_barrier\n";
    t += "  v_xor_b32_e32 v11, 0x100, v11\n  ds_read_b32 v6, v11\n  v_mov_b32_e32 v7, 0\n  s_waitcnt lgkmcnt(0)\n";
    t += "  global_store_dword v11, v6, s[6:7]\n  s_endpgm\n";
    t += "  .section .rodata,\"a\",@progbits\n  .p2align 6, 0x0\n  .amdhsa_kernel k\n";
    t += "    .amdhsa_group_segment_fixed_size 2048\n    .amdhsa_kernarg_size 24\n";
    t += "    .amdhsa_user_sgpr_count 2\n    .amdhsa_user_sgpr_kernarg_segment_ptr 1\n";
    t += "    .amdhsa_next_free_vgpr 16\n    .amdhsa_next_free_sgpr 24\n    .amdhsa_accum_offset 16\n";
    t += "  .end_amdhsa_kernel\n";
    t
}

/// B (K rows of 256 dwords, small values so the u24 multiply-adds are exact).
fn b_data(seed: u64) -> Vec<u32> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..K * 256).map(|_| rng.gen_range(0..4096)).collect()
}

fn expected(b: &[u32]) -> Vec<u32> {
    let mut out = vec![0u32; 128];
    for g in 0..2 {
        for l in 0..64 {
            let mut acc = (g as u32) << 16;
            for k in 0..K {
                let r = &b[k * 256..];
                acc += r[l] + 2 * r[64 + l] + 3 * r[128 + l] + 4 * r[192 + l];
            }
            out[g * 64 + l] = acc;
        }
    }
    out
}

/// Runs the kernel; returns the report and whether `out` is right (printing how many of
/// the 128 outputs are wrong, for the record: `cargo test --test planted -- --nocapture`).
fn run(co: &[u8], arch: Arch, s: Schedule) -> (LaunchReport, bool) {
    let dev = Device::new(arch);
    let b = b_data(s.seed);
    let pb = upload(&dev, bytemuck::cast_slice(&b));
    let pout = dev.alloc(4 * 128).unwrap();
    let args = Args::new().ptr(pb).ptr(pout).u32(K as u32);
    let r = dev.launch_with(co, "k", [1, 1, 1], [128, 1, 1], &args.0, &opts(s)).unwrap();
    let out: Vec<u32> = bytemuck::cast_slice(&download(&dev, pout, 4 * 128)).to_vec();
    let want = expected(&b);
    let wrong = out.iter().zip(&want).filter(|(o, w)| o != w).count();
    eprintln!("{arch} {:?}: {wrong}/128 outputs wrong, {} findings", s.mode, r.reports.len());
    for x in &r.reports {
        eprintln!("  {x}");
    }
    (r, wrong == 0)
}

fn build(arch: Arch, p: Plant) -> Vec<u8> {
    assemble(&kernel(arch, p), arch, &format!("planted-{p:?}"))
}

const LL: Schedule = Schedule { mode: Mode::LongestLatency, seed: 5 };

/// A finding of `checker`/`kind` at an instruction starting with `at` against one starting
/// with `vs` (either way round).
fn finding(r: &LaunchReport, checker: Checker, kinds: &[Kind], at: &str, vs: &str) -> bool {
    r.by_checker(checker).into_iter().any(|x| {
        let o = x.other.as_ref().map(|o| o.2.as_str()).unwrap_or("");
        kinds.contains(&x.kind)
            && ((x.inst.starts_with(at) && o.starts_with(vs)) || (x.inst.starts_with(vs) && o.starts_with(at)))
    })
}

#[test]
fn unplanted_ping_pong_is_clean_and_right_under_every_mode() {
    for arch in Arch::ALL {
        for p in [Plant::None, Plant::WeakVmcntRegs] {
            // The register-staged kernel with the right wait is the `None` of that variant.
            let co = if p == Plant::None {
                build(arch, p)
            } else {
                assemble(
                    &kernel(arch, p).replace("s_waitcnt vmcnt(1)", "s_waitcnt vmcnt(0)"),
                    arch,
                    "planted-staged-ok",
                )
            };
            for s in schedules(&[1, 2]) {
                let (r, ok) = run(&co, arch, s);
                assert_clean(&r);
                assert!(ok, "{arch} {p:?} {s:?}: wrong result");
                assert_eq!(r.counts.barrier, 2 * (2 + 2 * K as u64 + 1), "{arch}: both groups run 2K+3 barriers");
            }
        }
    }
}

#[test]
fn shared_b_overwritten_early_is_a_race_and_wrong() {
    for arch in Arch::ALL {
        let co = build(arch, Plant::SharedBEarly);
        let (r, ok) = run(&co, arch, LL);
        // Group 0's DMA into the stage group 1 is reading, named on both sides.
        assert!(
            finding(
                &r,
                Checker::Race,
                &[Kind::ReadAfterWrite, Kind::WriteAfterRead],
                "ds_read_b32",
                "buffer_load_dword"
            ),
            "{arch}: race detector silent\n{r}"
        );
        assert!(!ok, "{arch}: longest-latency schedule still gave the right result\n{r}");
        for mode in Mode::ALL {
            let (r2, _) = run(&co, arch, Schedule { mode, seed: 3 });
            assert!(!r2.by_checker(Checker::Race).is_empty(), "{arch}: missed under {mode:?}\n{r2}");
        }
    }
}

#[test]
fn weak_vmcnt_on_lds_dma_is_a_race_and_wrong() {
    for arch in Arch::ALL {
        let co = build(arch, Plant::WeakVmcntDma);
        let (r, ok) = run(&co, arch, LL);
        assert!(
            finding(
                &r,
                Checker::Race,
                &[Kind::ReadAfterWrite, Kind::WriteAfterRead],
                "ds_read_b32",
                "buffer_load_dword"
            ),
            "{arch}: race detector silent\n{r}"
        );
        assert!(!ok, "{arch}: longest-latency schedule still gave the right result\n{r}");
    }
}

#[test]
fn weak_vmcnt_on_register_staged_loads_is_a_wait_finding_and_wrong() {
    for arch in Arch::ALL {
        let co = build(arch, Plant::WeakVmcntRegs);
        let (r, ok) = run(&co, arch, LL);
        let w = r.by_checker(Checker::Wait);
        assert!(
            w.iter().any(|x| x.kind == Kind::RegisterBeforeWait
                && x.inst.starts_with("ds_write_b32")
                && x.addr == Some(9)
                && x.other.as_ref().is_some_and(|o| o.2.starts_with("buffer_load_dword v9"))),
            "{arch}: ds_write of v9 before its load was waited not reported\n{r}"
        );
        assert!(!ok, "{arch}: longest-latency schedule still gave the right result\n{r}");
    }
}

#[test]
fn removed_barrier_is_a_race_and_wrong() {
    for arch in Arch::ALL {
        let co = build(arch, Plant::NoBarrier);
        let (r, ok) = run(&co, arch, LL);
        assert!(
            finding(
                &r,
                Checker::Race,
                &[Kind::ReadAfterWrite, Kind::WriteAfterRead],
                "ds_read_b32",
                "buffer_load_dword"
            ),
            "{arch}: race detector silent\n{r}"
        );
        assert!(!ok, "{arch}: longest-latency schedule still gave the right result\n{r}");
    }
}

#[test]
fn stagger_barrier_on_the_wrong_side_is_a_barrier_mismatch_a_race_and_wrong() {
    for arch in Arch::ALL {
        let co = build(arch, Plant::StaggerWrongSide);
        for s in schedules(&[1]) {
            let (r, ok) = run(&co, arch, s);
            let b = r.by_checker(Checker::Barrier);
            assert!(
                b.iter().any(|x| x.kind == Kind::BarrierMismatch && x.inst == "s_barrier" && x.wave == 1),
                "{arch} {s:?}: barrier mismatch not reported\n{r}"
            );
            assert!(
                finding(
                    &r,
                    Checker::Race,
                    &[Kind::ReadAfterWrite, Kind::WriteAfterRead],
                    "ds_read_b32",
                    "ds_write_b32"
                ),
                "{arch} {s:?}: epilogue exchange race not reported\n{r}"
            );
            assert!(!ok, "{arch} {s:?}: still the right result\n{r}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Explicit phase sync (seed 002 §6): a counter in LDS, signalled with `ds_add_u32` and
// waited for by spinning on a plain `ds_read_b32` (what an atomic load is in the ISA).
// Wave 0 loads 64 dwords, computes a while (`s_sleep` standing in for an MFMA cluster) and
// publishes them (ds_write, `s_waitcnt lgkmcnt(0)`, then the signal: 64 lanes
// add 1); wave 1 spins until the counter reaches THRESHOLD, then reads the data and stores
// it. THRESHOLD 64 is right; 0 lets the waiter through before the data is published (the
// phase counted one too low); 65 is never reached (one too high: the waiter would spin
// for ever and must end as a typed fault, never a hang).

/// The producer/consumer kernel with the given wait threshold.
fn phase_sync_kernel(arch: Arch, threshold: u32) -> String {
    format!(
        r#"  .amdgcn_target "amdgcn-amd-amdhsa--{a}"
  .text
  .globl k
  .p2align 8
  .type k,@function
k:
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_load_dwordx2 s[6:7], s[0:1], 0x8
  v_lshrrev_b32_e32 v1, 6, v0
  v_and_b32_e32 v2, 63, v0
  v_readfirstlane_b32 s9, v1
  v_lshlrev_b32_e32 v3, 2, v2
  v_mov_b32_e32 v21, 0x200
  v_mov_b32_e32 v22, 0
  v_mov_b32_e32 v23, 1
  s_cmp_eq_u32 s9, 0
  s_cbranch_scc0 .Linit_done
  ds_write_b32 v21, v22
  s_waitcnt lgkmcnt(0)
.Linit_done:
  s_barrier
  s_waitcnt lgkmcnt(0)
  s_cmp_eq_u32 s9, 0
  s_cbranch_scc0 .Lconsumer
  global_load_dword v6, v3, s[4:5]
  s_waitcnt vmcnt(0)
  s_sleep 2
  ds_write_b32 v3, v6
  s_waitcnt lgkmcnt(0)
  ds_add_u32 v21, v23
  s_endpgm
.Lconsumer:
  ds_read_b32 v20, v21
  s_waitcnt lgkmcnt(0)
  v_readfirstlane_b32 s22, v20
  s_cmp_lt_u32 s22, {threshold}
  s_cbranch_scc0 .Lgo
  s_sleep 1
  s_branch .Lconsumer
.Lgo:
  ds_read_b32 v6, v3
  s_waitcnt lgkmcnt(0)
  global_store_dword v3, v6, s[6:7]
  s_endpgm
  .section .rodata,"a",@progbits
  .p2align 6, 0x0
  .amdhsa_kernel k
    .amdhsa_group_segment_fixed_size 1024
    .amdhsa_kernarg_size 16
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_next_free_vgpr 24
    .amdhsa_next_free_sgpr 24
    .amdhsa_accum_offset 24
  .end_amdhsa_kernel
"#,
        a = arch.name()
    )
}

fn run_phase_sync(co: &[u8], arch: Arch, s: Schedule, limit: u64) -> Result<(LaunchReport, bool), gemm_emu::EmuError> {
    let dev = Device::new(arch);
    let data: Vec<u32> = (0..64).map(|i| 0x5000 + 3 * i).collect();
    let pin = upload(&dev, bytemuck::cast_slice(&data));
    let pout = dev.alloc(256).unwrap();
    dev.copy_in(pout, &[0u8; 256]).unwrap();
    let args = Args::new().ptr(pin).ptr(pout);
    let o = gemm_emu::LaunchOptions { max_instructions_per_wave: limit, ..opts(s) };
    let r = dev.launch_with(co, "k", [1, 1, 1], [128, 1, 1], &args.0, &o)?;
    let out: Vec<u32> = bytemuck::cast_slice(&download(&dev, pout, 256)).to_vec();
    Ok((r, out == data))
}

#[test]
fn phase_sync_through_an_lds_counter_is_clean_and_right_under_every_mode() {
    // The atomic releases what wave 0 waited for, the spin read acquires it: no race on the
    // data, none between the signal and the spin reads.
    for arch in Arch::ALL {
        let co = assemble(&phase_sync_kernel(arch, 64), arch, "phase-sync-ok");
        for s in schedules(&[1, 2]) {
            let (r, ok) = run_phase_sync(&co, arch, s, 100_000).unwrap();
            assert_clean(&r);
            assert!(ok, "{arch} {s:?}: wrong data");
        }
    }
}

#[test]
fn phase_counted_one_too_low_is_a_race_and_wrong() {
    for arch in Arch::ALL {
        let co = assemble(&phase_sync_kernel(arch, 0), arch, "phase-sync-low");
        let (r, ok) = run_phase_sync(&co, arch, LL, 100_000).unwrap();
        eprintln!("{r}");
        assert!(
            finding(
                &r,
                Checker::Race,
                &[Kind::ReadAfterWrite, Kind::WriteAfterRead],
                "ds_read_b32 v6",
                "ds_write_b32 v3"
            ),
            "{arch}: race detector silent\n{r}"
        );
        assert!(!ok, "{arch}: longest-latency schedule still gave the right result");
    }
}

#[test]
fn phase_counted_one_too_high_ends_as_a_typed_fault_not_a_hang() {
    for arch in Arch::ALL {
        let co = assemble(&phase_sync_kernel(arch, 65), arch, "phase-sync-high");
        for mode in Mode::ALL {
            let e = run_phase_sync(&co, arch, Schedule { mode, seed: 1 }, 20_000).unwrap_err();
            match e {
                gemm_emu::EmuError::Fault(f) => {
                    assert_eq!(f.kind, gemm_emu::FaultKind::InstructionLimit(20_000), "{f}");
                    assert_eq!(f.wave, 1, "{f}");
                }
                e => panic!("{arch} {mode:?}: {e}"),
            }
        }
    }
}
