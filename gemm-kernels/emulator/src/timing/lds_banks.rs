//! LDS bank conflicts from the actual addresses of one DS instruction.
//!
//! The LDS of a CU has `banks` banks of 4 bytes (32 on gfx942, 64 on gfx950) and serves
//! `banks * 4` bytes per clock (ARCH.md: 128 / 256 B/clk). A wave64 access is served in
//! phases: each phase takes as many lanes as fill the bank width at the access size
//! (b32: 32 lanes on gfx942; b64: 16; b128: 8 — "ds_read_b128 in phases"). Within a phase
//! every bank serves one distinct dword per clock; lanes that read the same dword share it
//! (broadcast). A phase costs as many clocks as its busiest bank has distinct dwords
//! (CDNA3 ISA §11.3.1: an LDS instruction takes from two cycles, conflict-free wave64 b32,
//! to 64 cycles, fully conflicting). This is the model; which lanes the hardware groups
//! into a phase for b64/b128 is not documented, and lane order (0..63) is assumed.

use crate::scheduler::Access;

/// Service clocks of one DS access pattern, and the clocks it would take without
/// conflicts (the difference is the bank-conflict cost).
pub fn service_clocks(acc: &[Access], banks: u32) -> (u64, u64) {
    if acc.is_empty() {
        return (1, 1);
    }
    let size = acc.iter().map(|a| a.size as u32).max().unwrap_or(4).max(4);
    let lanes_per_phase = ((banks * 4) / size).max(1) as usize;
    let mut total = 0u64;
    let mut ideal = 0u64;
    let mut per_bank: Vec<Vec<u32>> = vec![Vec::new(); banks as usize];
    for phase in acc.chunks(lanes_per_phase) {
        for b in per_bank.iter_mut() {
            b.clear();
        }
        let mut dwords = 0u64;
        for a in phase {
            let first = (a.addr / 4) as u32;
            for d in 0..(a.size as u32).div_ceil(4) {
                let dw = first.wrapping_add(d);
                let bank = &mut per_bank[(dw % banks) as usize];
                if !bank.contains(&dw) {
                    bank.push(dw);
                }
                dwords += 1;
            }
        }
        total += per_bank.iter().map(|b| b.len() as u64).max().unwrap_or(1).max(1);
        ideal += dwords.div_ceil(u64::from(banks)).max(1);
    }
    (total, ideal.min(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(stride_dwords: u64, size: u8) -> Vec<Access> {
        (0..64).map(|l| Access::new(l, l as u64 * stride_dwords * 4, size)).collect()
    }

    #[test]
    fn b32_strides_give_k_way_conflicts() {
        // 32 banks: two phases of 32 lanes; stride k dwords puts 32/k distinct banks in use,
        // k dwords on each: k clocks per phase.
        for k in [1u64, 2, 4, 8, 16, 32] {
            assert_eq!(service_clocks(&lanes(k, 4), 32), (2 * k, 2), "stride {k}");
        }
        // 64 banks (gfx950): one phase of 64 lanes... bank width 256 B = 64 dwords.
        assert_eq!(service_clocks(&lanes(1, 4), 64), (1, 1));
        assert_eq!(service_clocks(&lanes(2, 4), 64), (2, 1));
    }

    #[test]
    fn broadcast_is_free_and_b128_runs_in_phases() {
        let same: Vec<Access> = (0..64).map(|l| Access::new(l, 64, 4)).collect();
        assert_eq!(service_clocks(&same, 32).0, 2);
        // b128 contiguous: 8 lanes x 16 B = 128 B per phase, 8 phases, no conflict.
        assert_eq!(service_clocks(&lanes(4, 16), 32), (8, 8));
        // b128 with a 256-byte row stride: every lane of a phase on banks 0-3: 8-way.
        assert_eq!(service_clocks(&lanes(64, 16), 32), (64, 8));
    }
}
