//! The timing model's mechanisms, each pinned on a small kernel assembled with the
//! project's own assembler (`gemm_isa::asm`) and code-object writer (`gemm_codeobject`),
//! with the cycle count computed by hand in a comment. Rules the counts follow
//! (`src/timing/cu.rs`, parameters in `src/timing/params.rs`):
//!
//! * the CU has 4 SIMDs; SIMD `s` gets an issue slot at clocks `t ≡ s (mod 4)`; a wave
//!   issues at most one instruction per slot; waves are placed round robin on the SIMDs
//!   the test allows (`simds`), wave 0 first;
//! * a workgroup starts at clock 0; a wave ends when it has issued `s_endpgm` (end = that
//!   slot + 4) and everything it started has finished (an MFMA: issue + passes·4);
//! * `v_mfma_f32_32x32x8_bf16` is 8 passes (32 clocks), `v_mfma_f32_16x16x16_bf16` 4 (16);
//! * LDS on gfx942: 32 banks, 128 B/clk, an access finishes `service + 64` clocks after
//!   its service starts; service = bank-conflict degree per phase, summed over phases.

use gemm_codeobject::{write_code_object, KernelSpec, Target};
use gemm_emu::timing::{alternation, HitRates, Model, ModelOptions, Prediction, Reason, Workload};
use gemm_emu::{Arch, Device};

/// A one-kernel code object named `k` with `vgprs`/`agprs` registers and `lds` bytes.
fn code_object(arch: Arch, body: &str, vgprs: u32, agprs: u32, lds: u32) -> Vec<u8> {
    let code = gemm_isa::asm::assemble(body, arch).unwrap_or_else(|e| panic!("assembling:\n{body}\n{e}"));
    let mut k = KernelSpec::new("k", code);
    k.registers.vgprs = vgprs;
    k.registers.agprs = agprs;
    k.registers.sgprs = 16;
    k.group_segment_fixed_size = lds;
    write_code_object(&Target::new(arch), &[k]).expect("code object")
}

/// Times one workgroup of `waves` waves on a CU whose waves all go to `simds` SIMDs.
fn time(arch: Arch, body: &str, waves: u32, simds: usize, agprs: u32, lds: u32) -> Prediction {
    let co = code_object(arch, body, 32, agprs, lds);
    let dev = Device::new(arch);
    let w = Workload {
        code_object: &co,
        kernel: "k",
        grid: [1, 1, 1],
        block: [64 * waves, 1, 1],
        kernarg: &[],
        dynamic_lds: 0,
        flops: 1.0,
    };
    let o = ModelOptions {
        hit_rates: Some(HitRates::default()),
        at_peak_clock: false,
        simds: Some(simds),
        resident: Some(1),
        ..Default::default()
    };
    Model::new(arch).predict(dev.memory(), &w, &o).unwrap_or_else(|e| panic!("{e}"))
}

/// A one-kernel code object named `k` whose kernarg holds one pointer (`s[0:1]` points at
/// it), with `private` bytes of scratch per lane (0: none).
fn pointer_kernel(arch: Arch, body: &str, vgprs: u32, private: u32) -> Vec<u8> {
    let code = gemm_isa::asm::assemble(body, arch).unwrap_or_else(|e| panic!("assembling:\n{body}\n{e}"));
    let mut k = KernelSpec::new("k", code);
    k.registers.vgprs = vgprs;
    k.registers.sgprs = 16;
    k.kernarg_size = 8;
    k.user_sgprs.kernarg_segment_ptr = true;
    if private > 0 {
        k.private_segment_fixed_size = private;
        k.system_sgprs.private_segment = true;
    }
    write_code_object(&Target::new(arch), &[k]).expect("code object")
}

/// Times one wave of [`pointer_kernel`] `co` on one SIMD at 1207 MHz, its pointer `buf`,
/// with the fraction `l2` of its lines hitting in the L2 and none in the MALL.
fn time_one_wave(arch: Arch, co: &[u8], dev: &Device, buf: u64, l2: f64) -> Prediction {
    let args = buf.to_le_bytes();
    let w = Workload {
        code_object: co,
        kernel: "k",
        grid: [1, 1, 1],
        block: [64, 1, 1],
        kernarg: &args,
        dynamic_lds: 0,
        flops: 1.0,
    };
    let o = ModelOptions {
        hit_rates: Some(HitRates { l2, mall: 0.0 }),
        clock_mhz: Some(1207.0),
        at_peak_clock: false,
        simds: Some(1),
        resident: Some(1),
        ..Default::default()
    };
    Model::new(arch).predict(dev.memory(), &w, &o).unwrap_or_else(|e| panic!("{e}"))
}

fn repeat(line: &str, n: usize) -> String {
    (0..n)
        .map(|i| line.replace("{i}", &(16 * i).to_string()).replace("{j}", &(16 * i + 15).to_string()) + "\n")
        .collect()
}

/// Wave end clocks, by wave index.
fn ends(p: &Prediction) -> Vec<u64> {
    let mut v: Vec<(usize, u64)> = p.waves.iter().map(|w| (w.wave, w.end)).collect();
    v.sort();
    v.into_iter().map(|x| x.1).collect()
}

#[test]
fn dependent_mfma_chain_through_the_accumulator_runs_at_the_pipe_rate() {
    // 8 MFMAs accumulating into the same a[0:15]: back-to-back accumulation needs no wait
    // states, so MFMA i issues when the pipe frees, at 32·i (the wave's slots at 4, 8, ...
    // find the result not ready: MFMA dependency). s_endpgm issues at 32·7 + 4 = 228; the
    // wave ends when the last MFMA finishes: 32·8 = 256.
    let body = repeat("v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], a[0:15]", 8) + "s_endpgm\n";
    let p = time(Arch::Gfx942, &body, 1, 1, 16, 0);
    assert_eq!(p.sim_cycles, 256, "{p}");
    assert_eq!(p.waves[0].mfmas, 8);
    // Waiting for its own result costs the wave 7 gaps of 28 clocks (slot 4..32 of each MFMA).
    assert_eq!(p.stalls.get(Reason::MfmaDependency), 7 * 28, "{p}");
    assert_eq!(p.mfma_busy[0], 1.0);
}

#[test]
fn dependent_mfma_chain_through_a_source_waits_for_the_result() {
    // 16x16x16 (4 passes, 16 clocks) whose result v[0:3] is the next MFMA's A operand.
    // LLVM asks for passes + 3 = 7 wait states before a read of an XDL result (the kernel
    // has them: s_nop 6 = 7 wait states); the model lets the reader issue (7 + 1)·4 = 32
    // clocks after the producer. MFMA i at 32·i; the s_nop after MFMA i issues at 32·i + 4
    // and holds the wave 7·4 = 28 clocks, to 32·i + 32. Last MFMA (i = 3) at 96, ends 112.
    let step = "v_mfma_f32_16x16x16_bf16 v[0:3], v[0:1], v[4:5], 0\ns_nop 6\n";
    let body = step.repeat(3) + "v_mfma_f32_16x16x16_bf16 v[0:3], v[0:1], v[4:5], 0\ns_endpgm\n";
    let p = time(Arch::Gfx942, &body, 1, 1, 0, 0);
    assert_eq!(p.sim_cycles, 112, "{p}");
    // Four MFMAs that do not read the result (A from v[8:9]), without s_nops: pipe bound,
    // 16 clocks apart, the last at 48, end 64.
    let free = "v_mfma_f32_16x16x16_bf16 v[0:3], v[8:9], v[4:5], 0\n".repeat(4) + "s_endpgm\n";
    assert_eq!(time(Arch::Gfx942, &free, 1, 1, 0, 0).sim_cycles, 64);
}

#[test]
fn independent_mfmas_from_one_two_and_four_waves_share_one_simds_pipe() {
    // Each wave: 4 independent 32x32x8 MFMAs into four accumulators.
    let body = repeat("v_mfma_f32_32x32x8_bf16 a[{i}:{j}], v[0:1], v[2:3], 0", 4) + "s_endpgm\n";
    // One wave: pipe bound, 0, 32, 64, 96; ends 128.
    let one = time(Arch::Gfx942, &body, 1, 1, 64, 0);
    assert_eq!(ends(&one), vec![128]);
    // Two waves on one SIMD: when the pipe frees both are ready and the older wins every
    // time, so wave 0 runs 0..96 (ends 128) and wave 1 runs 128..224 (ends 256).
    let two = time(Arch::Gfx942, &body, 2, 1, 64, 0);
    assert_eq!(ends(&two), vec![128, 256]);
    assert_eq!(two.sim_cycles, 256);
    // Four waves: 128 clocks each, back to back: 128, 256, 384, 512.
    let four = time(Arch::Gfx942, &body, 4, 1, 64, 0);
    assert_eq!(ends(&four), vec![128, 256, 384, 512]);
    assert_eq!(four.mfma_busy[0], 1.0);
    // Four waves on four SIMDs run in parallel, each from its SIMD's first slot (clock s):
    // wave s ends at s + 128.
    let spread = time(Arch::Gfx942, &body, 4, 4, 64, 0);
    assert_eq!(ends(&spread), vec![128, 129, 130, 131]);
}

#[test]
fn lds_bank_conflicts_serialise_by_their_degree() {
    // v1 = lane · 4k bytes (stride k dwords); 8 ds_read_b32 from v1, wait, end.
    // 32 banks, 32 lanes per phase, 2 phases: each read needs 2k clocks of the LDS pipe.
    // Clock 0: v_lshlrev; reads issue at 4, 8, ..., 32 (one slot each); s_waitcnt at 36.
    // Read i starts at max(4 + 4i, end of read i-1) and lands 2k + 64 later.
    //   k = 1, 2: the pipe keeps up (2k ≤ 4): last read starts 32, lands 32 + 2k + 64
    //     (98 / 100); s_endpgm issues at the next slot (100) and the wave ends at 104.
    //   k ≥ 4: reads start 8k apart... read i starts 4 + 2k·i, the last (i = 7) lands at
    //     4 + 16k + 64 = 68 + 16k, a multiple of 4, so s_endpgm issues there: end 72 + 16k.
    for (k, end) in [(1u32, 104u64), (2, 104), (4, 136), (8, 200), (16, 328), (32, 584)] {
        let shift = 2 + k.trailing_zeros();
        let body = format!(
            "v_lshlrev_b32_e32 v1, {shift}, v0\n{}s_waitcnt lgkmcnt(0)\ns_endpgm\n",
            "ds_read_b32 v2, v1\n".repeat(8)
        );
        let p = time(Arch::Gfx942, &body, 1, 1, 0, 65536);
        assert_eq!(p.sim_cycles, end, "stride {k} dwords\n{p}");
        // Conflict cost: (2k - 2) clocks beyond the conflict-free 2, per read.
        assert_eq!(p.lds_conflict_cycles, 8 * (2 * u64::from(k) - 2), "stride {k}");
    }
}

#[test]
fn lds_on_gfx950_has_64_banks() {
    // Stride 1 dword: one phase of 64 lanes over 64 banks, 1 clock; stride 2: 2 clocks
    // (lanes l and l+32 share a bank). The pipe keeps up either way: the last of the 8
    // reads starts at 32 and lands at 32 + {1,2} + 64; s_endpgm at the next slot (100), end 104.
    for (shift, conflict) in [(2u32, 0u64), (3, 8)] {
        let body = format!(
            "v_lshlrev_b32_e32 v1, {shift}, v0\n{}s_waitcnt lgkmcnt(0)\ns_endpgm\n",
            "ds_read_b32 v2, v1\n".repeat(8)
        );
        let p = time(Arch::Gfx950, &body, 1, 1, 0, 65536);
        assert_eq!(p.sim_cycles, 104, "{p}");
        assert_eq!(p.lds_conflict_cycles, conflict);
    }
}

#[test]
fn setprio_beats_age_for_the_mfma_pipe() {
    // Two waves on one SIMD, each with 4 independent 32x32x8 MFMAs; the younger wave 1
    // raises its priority (s_setprio: a sequencer instruction, no functional unit) before
    // its MFMAs, and from then on wins the pipe every time it frees, although older.
    let mfmas = repeat("v_mfma_f32_32x32x8_bf16 a[{i}:{j}], v[0:1], v[2:3], 0", 4);
    // Only wave 1 (first lane 64) raises its priority: s_setprio is skipped by wave 0.
    let body =
        format!("v_readfirstlane_b32 s0, v0\ns_cmp_eq_u32 s0, 0\ns_cbranch_scc1 1\ns_setprio 3\n{mfmas}s_endpgm\n");
    let p = time(Arch::Gfx942, &body, 2, 1, 64, 0);
    // Prologue: v_readfirstlane (VALU) at 0 for wave 0 and, VALU busy, at 4 for wave 1;
    // s_cmp (SALU) 4 / 8; s_cbranch 8 / 12; wave 1's s_setprio at 16; wave 0's first MFMA
    // at 12 (pipe busy to 44). Wave 1 then wins every free pipe: 44, 76, 108, 140, ends 172;
    // wave 0's other three at 172, 204, 236, ends 268.
    assert_eq!(ends(&p), vec![268, 172], "{p}");
    // Without the priority, age decides: wave 0 runs first (12..108, end 140), wave 1 after
    // (140..236, end 268).
    let plain = format!("v_readfirstlane_b32 s0, v0\ns_cmp_eq_u32 s0, 0\ns_cbranch_scc1 1\ns_nop 0\n{mfmas}s_endpgm\n");
    assert_eq!(ends(&time(Arch::Gfx942, &plain, 2, 1, 64, 0)), vec![140, 268]);
}

#[test]
fn barrier_waits_for_the_late_wave() {
    // Four waves on four SIMDs; wave 3 (first lane 192) sleeps 2 × 64 clocks before the
    // barrier. Wave k issues at clocks k, k+4, ...: v_readfirstlane (k), s_cmp (k+4),
    // s_cbranch (k+8), then waves 0-2 reach s_barrier at k+12; wave 3 issues s_sleep at 15,
    // is held to 15 + 128 = 143 and arrives at the barrier then. Release: 143 + 4 = 147.
    // Each wave issues its MFMA at its first slot from 147: wave 3 at 147, waves 0, 1, 2
    // at 148, 149, 150; each ends 32 later: 180, 181, 182, 179.
    let body = "v_readfirstlane_b32 s0, v0\ns_cmp_eq_u32 s0, 192\ns_cbranch_scc0 1\ns_sleep 2\ns_barrier\n\
                v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], 0\ns_endpgm\n";
    let p = time(Arch::Gfx942, body, 4, 4, 16, 0);
    assert_eq!(ends(&p), vec![180, 181, 182, 179], "{p}");
    assert_eq!(p.sim_cycles, 182);
    // Barrier wait: waves 0-2 from their first slot after arriving (k + 16) to the slot
    // that issues after the release (148 + k): 132 clocks each.
    assert_eq!(p.stalls.get(Reason::Barrier), 3 * 132, "{p}");
}

/// Times a grid of `wgs` one-wave workgroups, 4 resident per CU.
fn time_grid(body: &str, wgs: u32) -> Prediction {
    let co = code_object(Arch::Gfx942, body, 32, 16, 0);
    let dev = Device::new(Arch::Gfx942);
    let w = Workload {
        code_object: &co,
        kernel: "k",
        grid: [wgs, 1, 1],
        block: [64, 1, 1],
        kernarg: &[],
        dynamic_lds: 0,
        flops: 1.0,
    };
    let o = ModelOptions {
        hit_rates: Some(HitRates::default()),
        at_peak_clock: false,
        resident: Some(4),
        max_rounds: 3,
        ..Default::default()
    };
    Model::new(Arch::Gfx942).predict(dev.memory(), &w, &o).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn grid_extrapolates_steady_rounds_and_times_the_partial_last_round() {
    // One wave per workgroup: 8 chained 32x32x8 MFMAs, 256 clocks. Workgroups go to XCD
    // `i mod 8`, then to its 38 CUs in turn: CU 0 of XCD 0 gets every 304th workgroup.
    // Four resident, one per SIMD (waves are placed round robin), so slot s runs a
    // workgroup from its SIMD's first turn, clock s: it ends at s + 256, the slot frees
    // 200 clocks later (workgroup launch, params.rs) and the next one starts at s + 456.
    let body = repeat("v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], a[0:15]", 8) + "s_endpgm\n";
    // 12160 workgroups = 8 XCDs x 38 CUs x 40: CU 0 runs 40 = 10 rounds. Three rounds are
    // simulated (last ends 3 + 2·456 + 256 = 1171); the second round's workgroups (refills
    // that ended while all slots were still refilled) live 256 clocks, plus the 200 of the
    // launch, over 4 slots: a period of 114 per workgroup; 28 more at that rate:
    // 1171 + 28·114 = 4363, which is also what simulating all 10 rounds gives
    // (3 + 9·456 + 256).
    let p = time_grid(&body, 12160);
    assert_eq!((p.cu_wgs, p.simulated_wgs, p.extrapolated_wgs, p.tail_wgs), (40, 12, 28, 0), "{p}");
    assert_eq!(p.cycles, 4363.0, "{p}");
    // 12465 workgroups: XCD 0 gets 1559, CU 0 gets 42: the 28 extrapolated ones end at
    // 4363 as above, and the last 2 form a partial round, simulated alone (ends 256, 257
    // on SIMDs 0 and 1) after a launch: 4363 + 200 + 257 = 4820.
    let q = time_grid(&body, 12465);
    assert_eq!((q.cu_wgs, q.simulated_wgs, q.extrapolated_wgs, q.tail_wgs), (42, 14, 28, 2), "{q}");
    assert_eq!(q.cycles, 4820.0, "{q}");
}

#[test]
fn two_waves_alternate_mfma_and_lds_clusters_under_setprio() {
    // Two waves on one SIMD run: [setprio 1; 2 MFMAs; setprio 0; ds_read; wait] twice.
    // Hand schedule (slots every 4 clocks; order = priority, then age):
    //   0 W0 v_lshlrev (W1 loses the VALU: issue conflict); 4 W0 setprio 1, W1 v_lshlrev;
    //   8 W0 MFMA1 (pipe to 40), W1 setprio 1; 40 W0 MFMA2 (to 72); 44 W0 setprio 0;
    //  48 W0 ds_read (lands 48 + 2 + 64 = 114); 52 W0 waits; 72 W1 MFMA1; 104 W1 MFMA2
    //  (to 136); 108 W1 setprio 0; 112 W1 ds_read (lands 178); 116 W0 setprio 1;
    // 136 W0 MFMA3; 168 W0 MFMA4 (to 200); 176 W0 ds_read (lands 242); 180 W1 setprio 1;
    // 200 W1 MFMA3; 232 W1 MFMA4 (to 264); 240 W1 ds_read (lands 306);
    // 244 W0 s_endpgm: ends 248; 308 W1 s_endpgm: ends 312.
    // While one wave waits for its LDS data the other has the matrix pipe: it is busy
    // without a gap from 8 to 264 (8 MFMAs x 32 clocks).
    let cluster = "s_setprio 1\nv_mfma_f32_32x32x8_bf16 a[0:15], v[4:5], v[6:7], a[0:15]\n\
                   v_mfma_f32_32x32x8_bf16 a[16:31], v[4:5], v[6:7], a[16:31]\ns_setprio 0\n\
                   ds_read_b32 v2, v1\ns_waitcnt lgkmcnt(0)\n";
    let body = format!("v_lshlrev_b32_e32 v1, 2, v0\n{cluster}{cluster}s_endpgm\n");
    let p = time(Arch::Gfx942, &body, 2, 1, 32, 65536);
    assert_eq!(ends(&p), vec![248, 312], "{p}");
    assert_eq!(p.sim_cycles, 312);
    assert!((p.mfma_busy[0] - 256.0 / 312.0).abs() < 1e-9, "{p}");
    // W1 lost arbitration twice: the VALU at clock 0, and the freed pipe at 40 (same
    // priority as W0, younger); each loss costs its 4-clock slot.
    assert_eq!(p.stalls.get(Reason::IssueConflict), 8, "{:?}", p.waves);
}

/// [`time`] with a trace, for the alternation analysis.
fn time_traced(arch: Arch, body: &str, waves: u32, simds: usize) -> Prediction {
    let co = code_object(arch, body, 32, 32, 65536);
    let dev = Device::new(arch);
    let w = Workload {
        code_object: &co,
        kernel: "k",
        grid: [1, 1, 1],
        block: [64 * waves, 1, 1],
        kernarg: &[],
        dynamic_lds: 0,
        flops: 1.0,
    };
    let o = ModelOptions {
        hit_rates: Some(HitRates::default()),
        at_peak_clock: false,
        simds: Some(simds),
        resident: Some(1),
        trace_spans: 10_000,
        ..Default::default()
    };
    Model::new(arch).predict(dev.memory(), &w, &o).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn alternation_of_two_waves_under_setprio_from_the_trace() {
    // The kernel of `two_waves_alternate_mfma_and_lds_clusters_under_setprio`, whose hand
    // schedule gives MFMA clusters W0 [8,72), W1 [72,136), W0 [136,200), W1 [200,264) and
    // ds_reads in flight W0 [48,114) and [176,242), W1 [112,178) and [240,306).
    // Clusters alternate ABAB: 3 handovers of 3. Partner memory in flight under the
    // clusters: W0's first none, W1's first [72,114) = 42, W0's second [136,178) = 42,
    // W1's second [200,242) = 42: 126 of 256 cluster clocks. No overlap of clusters.
    let cluster = "s_setprio 1\nv_mfma_f32_32x32x8_bf16 a[0:15], v[4:5], v[6:7], a[0:15]\n\
                   v_mfma_f32_32x32x8_bf16 a[16:31], v[4:5], v[6:7], a[16:31]\ns_setprio 0\n\
                   ds_read_b32 v2, v1\ns_waitcnt lgkmcnt(0)\n";
    let body = format!("v_lshlrev_b32_e32 v1, 2, v0\n{cluster}{cluster}s_endpgm\n");
    let p = time_traced(Arch::Gfx942, &body, 2, 1);
    let a = alternation::analyse(&p);
    assert_eq!(a.pairs.len(), 1, "{a}");
    let x = &a.pairs[0];
    assert_eq!((x.clusters, x.mfma_clocks, x.handovers), ([2, 2], [128, 128], 3), "{x}");
    assert_eq!(x.handover_ratio, 1.0);
    assert!((x.mem_under_mfma - 126.0 / 256.0).abs() < 1e-12, "{x}");
    assert_eq!(x.both_mfma, 0.0, "{x}");
    assert!(x.alternates(), "{x}");
    // Without the trace there is nothing to analyse.
    let mut q = p.clone();
    q.spans.clear();
    assert!(alternation::analyse(&q).pairs.is_empty());
}

#[test]
fn two_waves_without_clusters_do_not_alternate() {
    // Both waves run four MFMAs back to back with no memory: the older wave keeps the pipe
    // (same priority, age decides), so each wave has one cluster and there is one handover,
    // which proves nothing, and no memory is hidden under the clusters.
    let body =
        format!("{}s_endpgm\n", repeat("v_mfma_f32_32x32x8_bf16 a[{i}:{j}], v[4:5], v[6:7], a[{i}:{j}]", 2).repeat(2));
    let p = time_traced(Arch::Gfx942, &body, 2, 1);
    let a = alternation::analyse(&p);
    assert_eq!(a.pairs.len(), 1, "{a}");
    let x = &a.pairs[0];
    assert_eq!((x.clusters, x.handovers), ([1, 1], 1), "{x}");
    assert_eq!(x.mem_under_mfma, 0.0, "{x}");
    assert!(!x.alternates(), "{x}");
}

#[test]
fn scalar_and_vector_loads_take_their_levels_latency() {
    // One wave loads a pointer (s_load, scalar-load latency 85 ns), then one dword per lane
    // (256 bytes = two 128-byte lines) and waits. At 1207 MHz (asked for: without MFMAs the
    // model's own clock would be the peak): scalar load 85 ns = 103
    // clocks, L2 85 ns = 103, HBM 353 ns = 426 (params.rs).
    // 0 s_load (lands 103); 4 v_lshlrev; 8 s_waitcnt; 104 (first slot after 103)
    // global_load: the address unit takes 64 lanes / 16 per clock = 4 clocks (108), then
    // each line goes to its level: from HBM the two lines leave the L2-fabric link (1024
    // B/clk, one busy CU) at 108.125 and 108.25 and arrive 426 later (534.25); the L1
    // returns 256 bytes at 128 B/clk: 536.25, rounded up 537. s_endpgm at the next slot,
    // 540: the wave ends at 544. From L2 (2048 B/clk): lines at 108.0625 and 108.125, + 103
    // = 211.125, + 2 = 213.125 -> 214; s_endpgm at 216, end 220.
    let arch = Arch::Gfx942;
    let body = "s_load_dwordx2 s[2:3], s[0:1], 0x0\nv_lshlrev_b32_e32 v1, 2, v0\ns_waitcnt lgkmcnt(0)\n\
                global_load_dword v2, v1, s[2:3]\ns_waitcnt vmcnt(0)\ns_endpgm\n";
    let co = pointer_kernel(arch, body, 8, 0);
    for (l2, end) in [(0.0, 544u64), (1.0, 220)] {
        let dev = Device::new(arch);
        let buf = dev.alloc(256).unwrap();
        let p = time_one_wave(arch, &co, &dev, buf, l2);
        assert_eq!(p.sim_cycles, end, "L2 hit fraction {l2}\n{p}");
    }
}

#[test]
fn one_resident_workgroup_at_a_time_runs_them_all_in_turn() {
    // Occupancy forced to 1: CU 0 runs its 3 workgroups (of 3 x 304 = 912) one after the
    // other: the first on SIMD 0 ends at 256, the slot frees at 456, the second starts there
    // on SIMD 1 (its first turn is 457) and ends at 713, the third starts at 913 on SIMD 2
    // (first turn 914) and ends at 1170.
    let body = repeat("v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], a[0:15]", 8) + "s_endpgm\n";
    let co = code_object(Arch::Gfx942, &body, 32, 16, 0);
    let dev = Device::new(Arch::Gfx942);
    let w = Workload {
        code_object: &co,
        kernel: "k",
        grid: [912, 1, 1],
        block: [64, 1, 1],
        kernarg: &[],
        dynamic_lds: 0,
        flops: 1.0,
    };
    let o = ModelOptions {
        hit_rates: Some(HitRates::default()),
        at_peak_clock: false,
        resident: Some(1),
        ..Default::default()
    };
    let p = Model::new(Arch::Gfx942).predict(dev.memory(), &w, &o).unwrap();
    assert_eq!((p.cu_wgs, p.simulated_wgs), (3, 3), "{p}");
    assert_eq!(p.cycles, 1170.0, "{p}");
}

#[test]
fn uncoalesced_lanes_cost_a_tag_lookup_each() {
    // As `scalar_and_vector_loads_take_their_levels_latency` (gfx942 at 1207 MHz, L2 hits
    // only: 103 clocks), but lane `l` loads from byte `128·l`: 64 lanes in 64 different
    // lines. The load issues at 104; the address unit is done at 108, the tag RAM looks up
    // one line per clock (params.rs) and the line changes at every lane: 64 lookups, done at
    // 168. The 64 lines then leave for L2 at 2048 B/clk (128 B = 1/16 clock each), the last
    // at 172, and arrive at 275; the L1 returns 256 bytes at 128 B/clk: 277. s_endpgm at the
    // next slot, 280: the wave ends at 284. With every lane in one line (lane `l` reads byte
    // `4·(l mod 32)`, 1 lookup) the address unit binds: 108 + 1/16 + 103 = 211.06, + 2 =
    // 213.06 -> 214, s_endpgm 216, end 220 (as the coalesced load of the test above).
    let arch = Arch::Gfx942;
    for (shift, end) in
        [("v_lshlrev_b32_e32 v1, 7, v0", 284u64), ("v_and_b32_e32 v1, 31, v0\nv_lshlrev_b32_e32 v1, 2, v1", 220)]
    {
        let body = format!(
            "s_load_dwordx2 s[2:3], s[0:1], 0x0\n{shift}\ns_waitcnt lgkmcnt(0)\n\
             global_load_dword v2, v1, s[2:3]\ns_waitcnt vmcnt(0)\ns_endpgm\n"
        );
        let co = pointer_kernel(arch, &body, 8, 0);
        let dev = Device::new(arch);
        let buf = dev.alloc(128 * 64).unwrap();
        let p = time_one_wave(arch, &co, &dev, buf, 1.0);
        assert_eq!(p.sim_cycles, end, "{shift}\n{p}");
    }
}

#[test]
fn the_simd_pairs_lds_fifo_and_bus_bound_a_burst_of_b128_reads() {
    // gfx950, one wave: v1 = lane · 16 bytes, 12 conflict-free ds_read_b128, wait, end
    // (params.rs, gfx950-gluon-tutorials docs/lds_throughput.md). Each read is 1024 bytes:
    // 4 clocks of the CU's LDS (256 B/clk), 8 clocks of the SIMD pair's data bus
    // (128 B/clk), then 64 clocks of latency. Reads 0..7 issue at 4, 8, ..., 32; the bus
    // serves read i from 4 + 8i, so it completes at 12 + 8i + 64 = 76 + 8i. The pair's
    // FIFO holds 8 requests: read 8 waits for read 0 to complete (76) and issues at 76, read
    // 9 at 84, read 10 at 92, read 11 at 100; the bus keeps its 8-clock pace, so read 11
    // completes at 76 + 88 = 164 + 8 = 172 (bus 100..108, + 64). s_endpgm issues at 172 and
    // the wave ends at 176. Without the FIFO the reads would issue at 4..48, the bus alone
    // would bind and the wave would end at 168.
    let body = format!(
        "v_lshlrev_b32_e32 v1, 4, v0\n{}s_waitcnt lgkmcnt(0)\ns_endpgm\n",
        "ds_read_b128 v[2:5], v1\n".repeat(12)
    );
    let p = time(Arch::Gfx950, &body, 1, 1, 0, 65536);
    assert_eq!(p.sim_cycles, 176, "{p}");
    assert_eq!(p.lds_conflict_cycles, 0);
}

#[test]
fn a_spill_slot_reloaded_then_overwritten_gives_the_reload_the_old_value() {
    // Spill code as LLVM writes it (Triton's 256x256x128 fp8 kernel spills 710 VGPRs): a
    // slot is reloaded and, with no wait between, the slot is reused for another spill.
    // The store must not overtake the reload: gfx9 has one in-order VM_CNT stream for
    // loads and stores (`Order::stream`; AMDGPUUsage, "Memory Model GFX942": completion is
    // reported to the wave in execution order). Here every line comes from HBM (hit rates
    // given, L2 0%): the reload takes 426 clocks at 1207 MHz, the store 103 to the L2
    // (params.rs). With separate streams for loads and stores (the bug, issue 10) the store
    // completed first and the reload read the new value (-1) instead of the spilled lane + 1
    // — in the Triton kernel, a wrong pointer and a fault at 128·N in `gemm compare`.
    let arch = Arch::Gfx942;
    let body = "s_load_dwordx2 s[2:3], s[0:1], 0x0\nv_lshlrev_b32_e32 v10, 2, v0\nv_add_u32_e32 v1, 1, v0\n\
                v_mov_b32_e32 v3, -1\nscratch_store_dword off, v1, off\nscratch_load_dword v2, off, off\n\
                scratch_store_dword off, v3, off\ns_waitcnt vmcnt(0) lgkmcnt(0)\n\
                global_store_dword v10, v2, s[2:3]\ns_waitcnt vmcnt(0)\ns_endpgm\n";
    let co = pointer_kernel(arch, body, 16, 16);
    let dev = Device::new(arch);
    let out = dev.alloc(256).unwrap();
    time_one_wave(arch, &co, &dev, out, 0.0);
    let mut got = [0u8; 256];
    dev.memory().read(out, &mut got).unwrap();
    let got: Vec<u32> = got.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let want: Vec<u32> = (1..=64).collect();
    assert_eq!(got, want);
}

#[test]
fn scaled_f8f6f4_mfmas_take_half_the_passes_without_an_fp8_operand() {
    // gfx950: 8 `v_mfma_scale_f32_32x32x64_f8f6f4` accumulating into a[0:15] run back to back
    // at the pipe rate (as the bf16 chain above): 16 passes (64 clocks) each with an fp8 or bf8
    // operand, 8 (32 clocks) with fp6/bf6/fp4 on both sides (PARAMETERS.md, mfma.rs
    // Shape::of_inst). 16x16x128: 8 and 4 passes. The unscaled forms cost the same.
    for (mfma, a, b, mods, clocks) in [
        ("v_mfma_scale_f32_32x32x64_f8f6f4 a[0:15]", "v[0:7]", "v[8:15]", "", 64),
        ("v_mfma_scale_f32_32x32x64_f8f6f4 a[0:15]", "v[0:7]", "v[8:11]", " blgp:4", 64),
        ("v_mfma_scale_f32_32x32x64_f8f6f4 a[0:15]", "v[0:3]", "v[8:13]", " cbsz:4 blgp:3", 32),
        ("v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3]", "v[0:5]", "v[8:15]", " cbsz:2 blgp:1", 32),
        ("v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3]", "v[0:5]", "v[8:13]", " cbsz:2 blgp:2", 16),
        ("v_mfma_f32_16x16x128_f8f6f4 a[0:3]", "v[0:3]", "v[8:11]", " cbsz:4 blgp:4", 16),
    ] {
        let acc = mfma.split(' ').nth(1).unwrap();
        let scales = if mfma.contains("scale") { ", v16, v17" } else { "" };
        let line = format!("{mfma}, {a}, {b}, {acc}{scales}{mods}");
        let body = repeat(&line, 8) + "s_endpgm\n";
        let p = time(Arch::Gfx950, &body, 1, 1, 16, 0);
        assert_eq!(p.sim_cycles, 8 * clocks, "{line}: {p}");
        assert_eq!(p.waves[0].mfmas, 8);
        assert_eq!(p.mfma_busy[0], 1.0, "{line}");
    }
}
