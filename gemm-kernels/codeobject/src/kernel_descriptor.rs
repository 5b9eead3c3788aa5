//! The 64-byte AMDHSA kernel descriptor, and how LLVM 22 fills it from register and LDS use.
//!
//! Layout: AMDGPUUsage "Kernel Descriptor for GFX6-GFX12" table and
//! `llvm/include/llvm/Support/AMDHSAKernelDescriptor.h` (ISA.md 5.3). The loader finds the
//! descriptor through the `<name>.kd` symbol; its address goes into the AQL dispatch packet
//! and the command processor reads the register-count granules, the RSRC words and the
//! enabled user/system SGPRs from it to set up each wave.
//!
//! The granule formulas are the ones LLVM 22 actually applies (ISA.md 5.3, confirmed by the
//! `llvm-mc-22` + `ld.lld-22` comparisons in `tests/llvm_oracle.rs`):
//! * VGPRs (gfx90a/gfx940/gfx950, unified file): `ceil(max(1, total)/8) - 1` where
//!   `total = accum_offset + agprs` when AGPRs are used, else the ArchVGPR count.
//! * SGPRs (GFX9): `ceil(max(1, next_free_sgpr + extra)/8) - 1`; `extra` = 6 on targets with
//!   architected flat scratch (VCC, XNACK mask, flat scratch, always reserved). The
//!   documented `2*max(0, ceil(n/16)-1)` is not what LLVM emits.

use crate::target::Target;
use std::fmt;

/// Size of a kernel descriptor in bytes; also the `st_size` of every `.kd` symbol.
pub const KERNEL_DESCRIPTOR_SIZE: usize = 64;
/// Kernel descriptors are 64-byte aligned (AMDGPUUsage "Kernel Descriptor").
pub const KERNEL_DESCRIPTOR_ALIGN: u64 = 64;
/// Kernel code entries are 256-byte aligned (AMDGPUUsage: `kernel_code_entry_byte_offset`
/// "must be 256 byte aligned").
pub const KERNEL_CODE_ALIGN: u64 = 256;

/// COMPUTE_PGM_RSRC1: `GRANULATED_WORKITEM_VGPR_COUNT` etc. (AMDGPUUsage "compute_pgm_rsrc1
/// for GFX6-GFX12").
pub mod rsrc1 {
    /// Bits 5:0, VGPR blocks minus one.
    pub const GRANULATED_WORKITEM_VGPR_COUNT: (u32, u32) = (0, 6);
    /// Bits 9:6, SGPR blocks minus one.
    pub const GRANULATED_WAVEFRONT_SGPR_COUNT: (u32, u32) = (6, 4);
    /// Bits 11:10, must be 0 (CP sets it).
    pub const PRIORITY: (u32, u32) = (10, 2);
    /// Bits 13:12.
    pub const FLOAT_ROUND_MODE_32: (u32, u32) = (12, 2);
    /// Bits 15:14.
    pub const FLOAT_ROUND_MODE_16_64: (u32, u32) = (14, 2);
    /// Bits 17:16.
    pub const FLOAT_DENORM_MODE_32: (u32, u32) = (16, 2);
    /// Bits 19:18.
    pub const FLOAT_DENORM_MODE_16_64: (u32, u32) = (18, 2);
    /// Bit 20, must be 0.
    pub const PRIV: (u32, u32) = (20, 1);
    /// Bit 21, GFX6-GFX11 DX10 clamp.
    pub const ENABLE_DX10_CLAMP: (u32, u32) = (21, 1);
    /// Bit 22, must be 0.
    pub const DEBUG_MODE: (u32, u32) = (22, 1);
    /// Bit 23, GFX6-GFX11 IEEE mode.
    pub const ENABLE_IEEE_MODE: (u32, u32) = (23, 1);
    /// Bit 24, must be 0.
    pub const BULKY: (u32, u32) = (24, 1);
    /// Bit 25, must be 0.
    pub const CDBG_USER: (u32, u32) = (25, 1);
    /// Bit 26, GFX9+ FP16 overflow clamp.
    pub const FP16_OVFL: (u32, u32) = (26, 1);
}

/// COMPUTE_PGM_RSRC2 (AMDGPUUsage "compute_pgm_rsrc2 for GFX6-GFX12").
pub mod rsrc2 {
    /// Bit 0: scratch wave offset SGPR / private segment enabled.
    pub const ENABLE_PRIVATE_SEGMENT: (u32, u32) = (0, 1);
    /// Bits 5:1: number of user SGPRs the CP initialises.
    pub const USER_SGPR_COUNT: (u32, u32) = (1, 5);
    /// Bit 6: set by the CP, must be 0 in the descriptor.
    pub const ENABLE_TRAP_HANDLER: (u32, u32) = (6, 1);
    /// Bit 7.
    pub const ENABLE_SGPR_WORKGROUP_ID_X: (u32, u32) = (7, 1);
    /// Bit 8.
    pub const ENABLE_SGPR_WORKGROUP_ID_Y: (u32, u32) = (8, 1);
    /// Bit 9.
    pub const ENABLE_SGPR_WORKGROUP_ID_Z: (u32, u32) = (9, 1);
    /// Bit 10.
    pub const ENABLE_SGPR_WORKGROUP_INFO: (u32, u32) = (10, 1);
    /// Bits 12:11: 0 = X, 1 = X,Y, 2 = X,Y,Z work-item IDs.
    pub const ENABLE_VGPR_WORKITEM_ID: (u32, u32) = (11, 2);
    /// Bit 13.
    pub const ENABLE_EXCEPTION_ADDRESS_WATCH: (u32, u32) = (13, 1);
    /// Bit 14.
    pub const ENABLE_EXCEPTION_MEMORY: (u32, u32) = (14, 1);
    /// Bits 23:15: must be 0, the CP derives it from the dispatch packet.
    pub const GRANULATED_LDS_SIZE: (u32, u32) = (15, 9);
    /// Bits 30:24: IEEE invalid, denorm source, div-by-zero, overflow, underflow,
    /// inexact, integer div-by-zero.
    pub const ENABLE_EXCEPTION: (u32, u32) = (24, 7);
}

/// COMPUTE_PGM_RSRC3 for gfx90a/gfx940/gfx950 (AMDGPUUsage "compute_pgm_rsrc3 for GFX90A,
/// GFX942").
pub mod rsrc3 {
    /// Bits 5:0: `accum_offset / 4 - 1`, the first AccVGPR in the unified register file.
    pub const ACCUM_OFFSET: (u32, u32) = (0, 6);
    /// Bit 16: threadgroup split mode.
    pub const TG_SPLIT: (u32, u32) = (16, 1);
}

/// `kernel_code_properties` bits (AMDGPUUsage "Kernel Descriptor" offsets 448-463).
pub mod code_properties {
    /// Bit 0 (4 SGPRs). Must be 0 with architected flat scratch.
    pub const ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER: u16 = 1 << 0;
    /// Bit 1 (2 SGPRs).
    pub const ENABLE_SGPR_DISPATCH_PTR: u16 = 1 << 1;
    /// Bit 2 (2 SGPRs).
    pub const ENABLE_SGPR_QUEUE_PTR: u16 = 1 << 2;
    /// Bit 3 (2 SGPRs).
    pub const ENABLE_SGPR_KERNARG_SEGMENT_PTR: u16 = 1 << 3;
    /// Bit 4 (2 SGPRs).
    pub const ENABLE_SGPR_DISPATCH_ID: u16 = 1 << 4;
    /// Bit 5 (2 SGPRs). Must be 0 with architected flat scratch.
    pub const ENABLE_SGPR_FLAT_SCRATCH_INIT: u16 = 1 << 5;
    /// Bit 6 (1 SGPR).
    pub const ENABLE_SGPR_PRIVATE_SEGMENT_SIZE: u16 = 1 << 6;
    /// Bit 10: wave32 (GFX10+ only; 0 on GFX9).
    pub const ENABLE_WAVEFRONT_SIZE32: u16 = 1 << 10;
    /// Bit 11.
    pub const USES_DYNAMIC_STACK: u16 = 1 << 11;
}

fn field(word: u32, (shift, width): (u32, u32)) -> u32 {
    (word >> shift) & ((1u32 << width) - 1)
}

fn set_field(word: &mut u32, (shift, width): (u32, u32), value: u32) {
    let mask = ((1u32 << width) - 1) << shift;
    *word = (*word & !mask) | ((value << shift) & mask);
}

/// LLVM's `getNumExtraSGPRs` for GFX9: SGPRs reserved after the numbered ones for VCC
/// (2), the XNACK mask (4 with XNACK) and flat scratch (6). With architected flat scratch
/// (gfx940+) the 6 is always counted, whatever the kernel uses; `llvm-mc-22` agrees even
/// with `.amdhsa_reserve_vcc 0`.
pub fn extra_sgprs(target: &Target, uses_vcc: bool, uses_flat_scratch: bool) -> u32 {
    let xnack = !matches!(target.xnack, crate::target::FeatureSetting::Off);
    let mut extra = 0;
    if uses_vcc {
        extra = 2;
    }
    if xnack {
        extra = 4;
    }
    if uses_flat_scratch || target.arch.has_architected_flat_scratch() {
        extra = 6;
    }
    extra
}

/// `GRANULATED_WORKITEM_VGPR_COUNT` for a unified VGPR total on gfx90a/gfx940/gfx950:
/// allocation granule 8, encoded as blocks minus one.
pub fn vgpr_granule(total_vgprs: u32) -> u32 {
    total_vgprs.max(1).div_ceil(8) - 1
}

/// `GRANULATED_WAVEFRONT_SGPR_COUNT` for GFX9 as LLVM 22 emits it (granule 8, blocks minus
/// one), from the SGPR count including the extra SGPRs.
pub fn sgpr_granule(total_sgprs: u32) -> u32 {
    total_sgprs.max(1).div_ceil(8) - 1
}

/// Register use of a kernel, counted the way LLVM counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct RegisterUsage {
    /// ArchVGPRs used: highest `v` index + 1 (LLVM's `num_vgpr`).
    pub vgprs: u32,
    /// AccVGPRs used: highest `a` index + 1 (LLVM's `num_agpr`).
    pub agprs: u32,
    /// Where the AccVGPRs start in the unified file. `None` takes LLVM's choice,
    /// `align(max(1, vgprs), 4)`. A multiple of 4 in 4..=256.
    pub accum_offset: Option<u32>,
    /// SGPRs used: highest `s` index + 1 (`.amdhsa_next_free_sgpr`), not counting
    /// VCC/XNACK/flat scratch.
    pub sgprs: u32,
    /// Whether the code reads or writes VCC (`.amdhsa_reserve_vcc`). Counted as LLVM does;
    /// it does not change the totals on gfx942/gfx950.
    pub uses_vcc: bool,
    /// Whether the code uses FLAT_SCRATCH. Same remark.
    pub uses_flat_scratch: bool,
}

impl RegisterUsage {
    /// The first AccVGPR's index in the unified file (`.amdhsa_accum_offset`).
    pub fn accum_offset(&self) -> u32 {
        self.accum_offset.unwrap_or_else(|| self.vgprs.max(1).next_multiple_of(4))
    }

    /// Unified VGPR count (`.amdhsa_next_free_vgpr` and the metadata `.vgpr_count`): with
    /// AGPRs, they sit after the ArchVGPRs at `accum_offset`.
    pub fn total_vgprs(&self) -> u32 {
        if self.agprs > 0 {
            self.accum_offset().saturating_add(self.agprs)
        } else {
            self.vgprs
        }
    }

    /// SGPRs including the extra ones (metadata `.sgpr_count`).
    pub fn total_sgprs(&self, target: &Target) -> u32 {
        self.sgprs.saturating_add(extra_sgprs(target, self.uses_vcc, self.uses_flat_scratch))
    }
}

/// The user SGPRs the command processor preloads, in the order they occupy s0, s1, ...
/// (AMDGPUUsage "Initial Kernel Execution State"). The private segment buffer and flat
/// scratch init do not exist with architected flat scratch and are not offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct UserSgprs {
    /// `.amdhsa_user_sgpr_dispatch_ptr`: 2 SGPRs, the AQL packet address.
    pub dispatch_ptr: bool,
    /// `.amdhsa_user_sgpr_queue_ptr`: 2 SGPRs.
    pub queue_ptr: bool,
    /// `.amdhsa_user_sgpr_kernarg_segment_ptr`: 2 SGPRs, the kernel-argument address.
    pub kernarg_segment_ptr: bool,
    /// `.amdhsa_user_sgpr_dispatch_id`: 2 SGPRs.
    pub dispatch_id: bool,
    /// `.amdhsa_user_sgpr_kernarg_preload_length`: kernarg dwords preloaded into SGPRs
    /// after the pointers above.
    pub kernarg_preload_length: u32,
    /// `.amdhsa_user_sgpr_kernarg_preload_offset`: first preloaded kernarg dword.
    pub kernarg_preload_offset: u32,
    /// `.amdhsa_user_sgpr_private_segment_size`: 1 SGPR.
    pub private_segment_size: bool,
}

impl UserSgprs {
    /// `USER_SGPR_COUNT` as LLVM derives it from the enabled user SGPRs.
    pub fn count(&self) -> u32 {
        let pairs = [self.dispatch_ptr, self.queue_ptr, self.kernarg_segment_ptr, self.dispatch_id]
            .iter()
            .filter(|&&b| b)
            .count() as u32;
        (2 * pairs).saturating_add(self.kernarg_preload_length).saturating_add(u32::from(self.private_segment_size))
    }
}

/// Which work-item ID VGPRs are enabled (`.amdhsa_system_vgpr_workitem_id`). On
/// gfx90a+/gfx940+ the IDs arrive packed in v0 (x bits 9:0, y 19:10, z 29:20).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum WorkitemIds {
    /// X only.
    #[default]
    X = 0,
    /// X and Y.
    Xy = 1,
    /// X, Y and Z.
    Xyz = 2,
}

/// System SGPRs that follow the user SGPRs (AMDGPUUsage "Initial Kernel Execution State").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SystemSgprs {
    /// `.amdhsa_system_sgpr_workgroup_id_x` (assembler default 1).
    pub workgroup_id_x: bool,
    /// `.amdhsa_system_sgpr_workgroup_id_y`.
    pub workgroup_id_y: bool,
    /// `.amdhsa_system_sgpr_workgroup_id_z`.
    pub workgroup_id_z: bool,
    /// `.amdhsa_system_sgpr_workgroup_info`.
    pub workgroup_info: bool,
    /// `.amdhsa_enable_private_segment` (architected flat scratch spelling of the
    /// private segment wave offset): must be set when the kernel uses scratch.
    pub private_segment: bool,
}

impl Default for SystemSgprs {
    /// The assembler's defaults: only the workgroup ID X.
    fn default() -> Self {
        SystemSgprs {
            workgroup_id_x: true,
            workgroup_id_y: false,
            workgroup_id_z: false,
            workgroup_info: false,
            private_segment: false,
        }
    }
}

/// Floating-point mode bits of COMPUTE_PGM_RSRC1 (AMDGPUUsage "Floating Point Rounding
/// Mode Enumeration Values" and "Floating Point Denorm Mode Enumeration Values").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatMode {
    /// 0 = round to nearest even, 1 = +inf, 2 = -inf, 3 = toward zero.
    pub round_mode_32: u8,
    /// Same for f16/f64.
    pub round_mode_16_64: u8,
    /// 0 = flush source and destination denormals, 1 = flush destination only,
    /// 2 = flush source only, 3 = no flush.
    pub denorm_mode_32: u8,
    /// Same for f16/f64.
    pub denorm_mode_16_64: u8,
    /// `.amdhsa_dx10_clamp`.
    pub dx10_clamp: bool,
    /// `.amdhsa_ieee_mode`.
    pub ieee_mode: bool,
    /// `.amdhsa_fp16_overflow`.
    pub fp16_overflow: bool,
}

impl FloatMode {
    /// What `llc-22` emits for a kernel with default attributes: f32 denormals kept
    /// (`.amdhsa_float_denorm_mode_32 3`), see `llc22-gfx950-min-kernel.s`.
    pub const LLC_DEFAULT: FloatMode = FloatMode {
        round_mode_32: 0,
        round_mode_16_64: 0,
        denorm_mode_32: 3,
        denorm_mode_16_64: 3,
        dx10_clamp: true,
        ieee_mode: true,
        fp16_overflow: false,
    };
}

impl Default for FloatMode {
    /// The assembler's defaults for `.amdhsa_float_*`: note `denorm_mode_32` 0 (flush).
    fn default() -> Self {
        FloatMode { denorm_mode_32: 0, ..FloatMode::LLC_DEFAULT }
    }
}

/// Everything that determines a kernel descriptor except the entry offset.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DescriptorConfig {
    /// Static LDS bytes (`.amdhsa_group_segment_fixed_size`).
    pub group_segment_fixed_size: u32,
    /// Scratch bytes per work-item (`.amdhsa_private_segment_fixed_size`).
    pub private_segment_fixed_size: u32,
    /// Kernel-argument segment bytes (`.amdhsa_kernarg_size`).
    pub kernarg_size: u32,
    /// Register use.
    pub registers: RegisterUsage,
    /// Enabled user SGPRs.
    pub user_sgprs: UserSgprs,
    /// Enabled system SGPRs.
    pub system_sgprs: SystemSgprs,
    /// Enabled work-item ID components.
    pub workitem_ids: WorkitemIds,
    /// Floating-point modes.
    pub float_mode: FloatMode,
    /// RSRC2 bits 30:24 (`.amdhsa_exception_fp_ieee_invalid_op` = bit 0 ...
    /// `.amdhsa_exception_int_div_zero` = bit 6).
    pub exceptions: u8,
    /// `.amdhsa_tg_split`.
    pub tg_split: bool,
    /// `.amdhsa_uses_dynamic_stack`.
    pub uses_dynamic_stack: bool,
}

/// Why a descriptor could not be built: the same limits `llvm-mc-22` enforces.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DescriptorError {
    /// More than 256 ArchVGPRs or AccVGPRs, or more than 512 in all.
    #[error("{what} = {value} exceeds the limit {limit}")]
    TooManyVgprs {
        /// Which count.
        what: &'static str,
        /// Its value.
        value: u32,
        /// The limit.
        limit: u32,
    },
    /// `.amdhsa_next_free_sgpr` above the addressable SGPRs.
    #[error("next free SGPR {0} exceeds the 102 addressable SGPRs")]
    TooManySgprs(u32),
    /// accum_offset not a multiple of 4 in 4..=256, below the ArchVGPR count, or beyond
    /// the allocation.
    #[error("accum_offset {accum_offset} invalid for {vgprs} ArchVGPRs and {total} total VGPRs (must be a multiple of 4 in 4..=256, >= align(vgprs, 4), <= align(total, 4))")]
    BadAccumOffset {
        /// The offset.
        accum_offset: u32,
        /// ArchVGPRs.
        vgprs: u32,
        /// Unified total.
        total: u32,
    },
    /// More user SGPRs than the hardware loads.
    #[error("{0} user SGPRs enabled; at most 16")]
    TooManyUserSgprs(u32),
    /// Kernarg preload length/offset out of field range.
    #[error("kernarg preload length {length} / offset {offset} out of range (7 and 9 bits)")]
    BadKernargPreload {
        /// Length in dwords.
        length: u32,
        /// Offset in dwords.
        offset: u32,
    },
    /// A float-mode field above 3, or exception bits above bit 6.
    #[error("{0} out of range")]
    FieldOutOfRange(&'static str),
    /// Scratch in use but the private segment is not enabled.
    #[error("private_segment_fixed_size {0} > 0 or a dynamic stack needs the private segment enabled")]
    PrivateSegmentNotEnabled(u32),
}

/// A kernel descriptor, field by field; reserved bytes are kept so that reading and
/// writing an arbitrary descriptor round-trips exactly.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KernelDescriptor {
    /// Offset 0: static LDS bytes.
    pub group_segment_fixed_size: u32,
    /// Offset 4: scratch bytes per work-item.
    pub private_segment_fixed_size: u32,
    /// Offset 8: kernarg segment bytes.
    pub kernarg_size: u32,
    /// Offset 12: reserved, 0.
    pub reserved0: [u8; 4],
    /// Offset 16: entry address minus the descriptor's address.
    pub kernel_code_entry_byte_offset: i64,
    /// Offset 24: reserved, 0.
    pub reserved1: [u8; 20],
    /// Offset 44.
    pub compute_pgm_rsrc3: u32,
    /// Offset 48.
    pub compute_pgm_rsrc1: u32,
    /// Offset 52.
    pub compute_pgm_rsrc2: u32,
    /// Offset 56.
    pub kernel_code_properties: u16,
    /// Offset 58: preload length (bits 6:0) and offset (bits 15:7), in dwords.
    pub kernarg_preload: u16,
    /// Offset 60: reserved, 0.
    pub reserved2: [u8; 4],
}

impl KernelDescriptor {
    /// Builds the descriptor LLVM 22 produces for the equivalent `.amdhsa_kernel` block.
    pub fn build(
        target: &Target,
        cfg: &DescriptorConfig,
        kernel_code_entry_byte_offset: i64,
    ) -> Result<KernelDescriptor, DescriptorError> {
        let r = &cfg.registers;
        if r.vgprs > 256 {
            return Err(DescriptorError::TooManyVgprs { what: "ArchVGPRs", value: r.vgprs, limit: 256 });
        }
        if r.agprs > 256 {
            return Err(DescriptorError::TooManyVgprs { what: "AccVGPRs", value: r.agprs, limit: 256 });
        }
        let total = r.total_vgprs();
        if total > target.arch.total_vgprs() {
            return Err(DescriptorError::TooManyVgprs {
                what: "unified VGPRs",
                value: total,
                limit: target.arch.total_vgprs(),
            });
        }
        let accum = r.accum_offset();
        if accum % 4 != 0
            || !(4..=256).contains(&accum)
            || accum < r.vgprs.next_multiple_of(4)
            || accum > total.max(1).next_multiple_of(4)
        {
            return Err(DescriptorError::BadAccumOffset { accum_offset: accum, vgprs: r.vgprs, total });
        }
        if r.sgprs > target.arch.addressable_sgprs() {
            return Err(DescriptorError::TooManySgprs(r.sgprs));
        }
        let u = &cfg.user_sgprs;
        let user_count = u.count();
        if user_count > target.arch.max_user_sgprs() {
            return Err(DescriptorError::TooManyUserSgprs(user_count));
        }
        if u.kernarg_preload_length > 0x7f || u.kernarg_preload_offset > 0x1ff {
            return Err(DescriptorError::BadKernargPreload {
                length: u.kernarg_preload_length,
                offset: u.kernarg_preload_offset,
            });
        }
        let fm = &cfg.float_mode;
        for (name, v) in [
            ("float_round_mode_32", fm.round_mode_32),
            ("float_round_mode_16_64", fm.round_mode_16_64),
            ("float_denorm_mode_32", fm.denorm_mode_32),
            ("float_denorm_mode_16_64", fm.denorm_mode_16_64),
        ] {
            if v > 3 {
                return Err(DescriptorError::FieldOutOfRange(name));
            }
        }
        if cfg.exceptions > 0x7f {
            return Err(DescriptorError::FieldOutOfRange("exceptions"));
        }
        let s = &cfg.system_sgprs;
        if (cfg.private_segment_fixed_size > 0 || cfg.uses_dynamic_stack) && !s.private_segment {
            return Err(DescriptorError::PrivateSegmentNotEnabled(cfg.private_segment_fixed_size));
        }

        let mut rsrc1 = 0u32;
        set_field(&mut rsrc1, rsrc1::GRANULATED_WORKITEM_VGPR_COUNT, vgpr_granule(total));
        set_field(&mut rsrc1, rsrc1::GRANULATED_WAVEFRONT_SGPR_COUNT, sgpr_granule(r.total_sgprs(target)));
        set_field(&mut rsrc1, rsrc1::FLOAT_ROUND_MODE_32, fm.round_mode_32.into());
        set_field(&mut rsrc1, rsrc1::FLOAT_ROUND_MODE_16_64, fm.round_mode_16_64.into());
        set_field(&mut rsrc1, rsrc1::FLOAT_DENORM_MODE_32, fm.denorm_mode_32.into());
        set_field(&mut rsrc1, rsrc1::FLOAT_DENORM_MODE_16_64, fm.denorm_mode_16_64.into());
        set_field(&mut rsrc1, rsrc1::ENABLE_DX10_CLAMP, fm.dx10_clamp.into());
        set_field(&mut rsrc1, rsrc1::ENABLE_IEEE_MODE, fm.ieee_mode.into());
        set_field(&mut rsrc1, rsrc1::FP16_OVFL, fm.fp16_overflow.into());

        let mut rsrc2 = 0u32;
        set_field(&mut rsrc2, rsrc2::ENABLE_PRIVATE_SEGMENT, s.private_segment.into());
        set_field(&mut rsrc2, rsrc2::USER_SGPR_COUNT, user_count);
        set_field(&mut rsrc2, rsrc2::ENABLE_SGPR_WORKGROUP_ID_X, s.workgroup_id_x.into());
        set_field(&mut rsrc2, rsrc2::ENABLE_SGPR_WORKGROUP_ID_Y, s.workgroup_id_y.into());
        set_field(&mut rsrc2, rsrc2::ENABLE_SGPR_WORKGROUP_ID_Z, s.workgroup_id_z.into());
        set_field(&mut rsrc2, rsrc2::ENABLE_SGPR_WORKGROUP_INFO, s.workgroup_info.into());
        set_field(&mut rsrc2, rsrc2::ENABLE_VGPR_WORKITEM_ID, cfg.workitem_ids as u32);
        set_field(&mut rsrc2, rsrc2::ENABLE_EXCEPTION, cfg.exceptions.into());

        let mut rsrc3 = 0u32;
        set_field(&mut rsrc3, rsrc3::ACCUM_OFFSET, accum / 4 - 1);
        set_field(&mut rsrc3, rsrc3::TG_SPLIT, cfg.tg_split.into());

        let mut props = 0u16;
        for (on, bit) in [
            (u.dispatch_ptr, code_properties::ENABLE_SGPR_DISPATCH_PTR),
            (u.queue_ptr, code_properties::ENABLE_SGPR_QUEUE_PTR),
            (u.kernarg_segment_ptr, code_properties::ENABLE_SGPR_KERNARG_SEGMENT_PTR),
            (u.dispatch_id, code_properties::ENABLE_SGPR_DISPATCH_ID),
            (u.private_segment_size, code_properties::ENABLE_SGPR_PRIVATE_SEGMENT_SIZE),
            (cfg.uses_dynamic_stack, code_properties::USES_DYNAMIC_STACK),
        ] {
            if on {
                props |= bit;
            }
        }
        let preload = (u.kernarg_preload_length | (u.kernarg_preload_offset << 7)) as u16;

        Ok(KernelDescriptor {
            group_segment_fixed_size: cfg.group_segment_fixed_size,
            private_segment_fixed_size: cfg.private_segment_fixed_size,
            kernarg_size: cfg.kernarg_size,
            kernel_code_entry_byte_offset,
            compute_pgm_rsrc1: rsrc1,
            compute_pgm_rsrc2: rsrc2,
            compute_pgm_rsrc3: rsrc3,
            kernel_code_properties: props,
            kernarg_preload: preload,
            ..KernelDescriptor::default()
        })
    }

    /// The 64 bytes, little-endian.
    pub fn to_bytes(&self) -> [u8; KERNEL_DESCRIPTOR_SIZE] {
        let mut b = [0u8; KERNEL_DESCRIPTOR_SIZE];
        b[0..4].copy_from_slice(&self.group_segment_fixed_size.to_le_bytes());
        b[4..8].copy_from_slice(&self.private_segment_fixed_size.to_le_bytes());
        b[8..12].copy_from_slice(&self.kernarg_size.to_le_bytes());
        b[12..16].copy_from_slice(&self.reserved0);
        b[16..24].copy_from_slice(&self.kernel_code_entry_byte_offset.to_le_bytes());
        b[24..44].copy_from_slice(&self.reserved1);
        b[44..48].copy_from_slice(&self.compute_pgm_rsrc3.to_le_bytes());
        b[48..52].copy_from_slice(&self.compute_pgm_rsrc1.to_le_bytes());
        b[52..56].copy_from_slice(&self.compute_pgm_rsrc2.to_le_bytes());
        b[56..58].copy_from_slice(&self.kernel_code_properties.to_le_bytes());
        b[58..60].copy_from_slice(&self.kernarg_preload.to_le_bytes());
        b[60..64].copy_from_slice(&self.reserved2);
        b
    }

    /// Parses 64 bytes. Any bit pattern is a descriptor; whether it makes sense is for
    /// the accessors' caller to judge.
    pub fn from_bytes(b: &[u8; KERNEL_DESCRIPTOR_SIZE]) -> KernelDescriptor {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        let mut entry = [0u8; 8];
        entry.copy_from_slice(&b[16..24]);
        let mut reserved0 = [0u8; 4];
        reserved0.copy_from_slice(&b[12..16]);
        let mut reserved1 = [0u8; 20];
        reserved1.copy_from_slice(&b[24..44]);
        let mut reserved2 = [0u8; 4];
        reserved2.copy_from_slice(&b[60..64]);
        KernelDescriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernarg_size: u32_at(8),
            reserved0,
            kernel_code_entry_byte_offset: i64::from_le_bytes(entry),
            reserved1,
            compute_pgm_rsrc3: u32_at(44),
            compute_pgm_rsrc1: u32_at(48),
            compute_pgm_rsrc2: u32_at(52),
            kernel_code_properties: u16_at(56),
            kernarg_preload: u16_at(58),
            reserved2,
        }
    }

    /// RSRC1 `GRANULATED_WORKITEM_VGPR_COUNT`.
    pub fn vgpr_granule(&self) -> u32 {
        field(self.compute_pgm_rsrc1, rsrc1::GRANULATED_WORKITEM_VGPR_COUNT)
    }
    /// VGPRs allocated per lane: `(granule + 1) * 8` on gfx90a/gfx940/gfx950.
    pub fn allocated_vgprs(&self) -> u32 {
        (self.vgpr_granule() + 1) * 8
    }
    /// RSRC1 `GRANULATED_WAVEFRONT_SGPR_COUNT`.
    pub fn sgpr_granule(&self) -> u32 {
        field(self.compute_pgm_rsrc1, rsrc1::GRANULATED_WAVEFRONT_SGPR_COUNT)
    }
    /// RSRC1 float modes.
    pub fn float_mode(&self) -> FloatMode {
        let r = self.compute_pgm_rsrc1;
        FloatMode {
            round_mode_32: field(r, rsrc1::FLOAT_ROUND_MODE_32) as u8,
            round_mode_16_64: field(r, rsrc1::FLOAT_ROUND_MODE_16_64) as u8,
            denorm_mode_32: field(r, rsrc1::FLOAT_DENORM_MODE_32) as u8,
            denorm_mode_16_64: field(r, rsrc1::FLOAT_DENORM_MODE_16_64) as u8,
            dx10_clamp: field(r, rsrc1::ENABLE_DX10_CLAMP) != 0,
            ieee_mode: field(r, rsrc1::ENABLE_IEEE_MODE) != 0,
            fp16_overflow: field(r, rsrc1::FP16_OVFL) != 0,
        }
    }
    /// RSRC2 `USER_SGPR_COUNT`.
    pub fn user_sgpr_count(&self) -> u32 {
        field(self.compute_pgm_rsrc2, rsrc2::USER_SGPR_COUNT)
    }
    /// RSRC2 system SGPR enables.
    pub fn system_sgprs(&self) -> SystemSgprs {
        let r = self.compute_pgm_rsrc2;
        SystemSgprs {
            workgroup_id_x: field(r, rsrc2::ENABLE_SGPR_WORKGROUP_ID_X) != 0,
            workgroup_id_y: field(r, rsrc2::ENABLE_SGPR_WORKGROUP_ID_Y) != 0,
            workgroup_id_z: field(r, rsrc2::ENABLE_SGPR_WORKGROUP_ID_Z) != 0,
            workgroup_info: field(r, rsrc2::ENABLE_SGPR_WORKGROUP_INFO) != 0,
            private_segment: field(r, rsrc2::ENABLE_PRIVATE_SEGMENT) != 0,
        }
    }
    /// RSRC2 `ENABLE_VGPR_WORKITEM_ID`; the reserved value 3 reads as `None`.
    pub fn workitem_ids(&self) -> Option<WorkitemIds> {
        match field(self.compute_pgm_rsrc2, rsrc2::ENABLE_VGPR_WORKITEM_ID) {
            0 => Some(WorkitemIds::X),
            1 => Some(WorkitemIds::Xy),
            2 => Some(WorkitemIds::Xyz),
            _ => None,
        }
    }
    /// RSRC2 exception enables (bits 30:24 shifted down).
    pub fn exceptions(&self) -> u8 {
        field(self.compute_pgm_rsrc2, rsrc2::ENABLE_EXCEPTION) as u8
    }
    /// RSRC3 `ACCUM_OFFSET` decoded to a register index: `(field + 1) * 4`.
    pub fn accum_offset(&self) -> u32 {
        (field(self.compute_pgm_rsrc3, rsrc3::ACCUM_OFFSET) + 1) * 4
    }
    /// RSRC3 `TG_SPLIT`.
    pub fn tg_split(&self) -> bool {
        field(self.compute_pgm_rsrc3, rsrc3::TG_SPLIT) != 0
    }
    /// The user SGPRs enabled in `kernel_code_properties` and `kernarg_preload`.
    pub fn user_sgprs(&self) -> UserSgprs {
        let p = self.kernel_code_properties;
        UserSgprs {
            dispatch_ptr: p & code_properties::ENABLE_SGPR_DISPATCH_PTR != 0,
            queue_ptr: p & code_properties::ENABLE_SGPR_QUEUE_PTR != 0,
            kernarg_segment_ptr: p & code_properties::ENABLE_SGPR_KERNARG_SEGMENT_PTR != 0,
            dispatch_id: p & code_properties::ENABLE_SGPR_DISPATCH_ID != 0,
            private_segment_size: p & code_properties::ENABLE_SGPR_PRIVATE_SEGMENT_SIZE != 0,
            kernarg_preload_length: u32::from(self.kernarg_preload & 0x7f),
            kernarg_preload_offset: u32::from(self.kernarg_preload >> 7),
        }
    }
    /// `kernel_code_properties.USES_DYNAMIC_STACK`.
    pub fn uses_dynamic_stack(&self) -> bool {
        self.kernel_code_properties & code_properties::USES_DYNAMIC_STACK != 0
    }
    /// `kernel_code_properties.ENABLE_WAVEFRONT_SIZE32`.
    pub fn wave32(&self) -> bool {
        self.kernel_code_properties & code_properties::ENABLE_WAVEFRONT_SIZE32 != 0
    }
}

impl fmt::Debug for KernelDescriptor {
    /// Raw words plus their decoded fields, so that a failed comparison says which field
    /// differs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelDescriptor")
            .field("group_segment_fixed_size", &self.group_segment_fixed_size)
            .field("private_segment_fixed_size", &self.private_segment_fixed_size)
            .field("kernarg_size", &self.kernarg_size)
            .field("kernel_code_entry_byte_offset", &self.kernel_code_entry_byte_offset)
            .field("compute_pgm_rsrc1", &format_args!("{:#010x}", self.compute_pgm_rsrc1))
            .field("compute_pgm_rsrc2", &format_args!("{:#010x}", self.compute_pgm_rsrc2))
            .field("compute_pgm_rsrc3", &format_args!("{:#010x}", self.compute_pgm_rsrc3))
            .field("kernel_code_properties", &format_args!("{:#06x}", self.kernel_code_properties))
            .field("kernarg_preload", &format_args!("{:#06x}", self.kernarg_preload))
            .field("vgpr_granule", &self.vgpr_granule())
            .field("sgpr_granule", &self.sgpr_granule())
            .field("accum_offset", &self.accum_offset())
            .field("user_sgpr_count", &self.user_sgpr_count())
            .field("user_sgprs", &self.user_sgprs())
            .field("system_sgprs", &self.system_sgprs())
            .field("workitem_ids", &self.workitem_ids())
            .field("float_mode", &self.float_mode())
            .field("exceptions", &self.exceptions())
            .field("tg_split", &self.tg_split())
            .field("uses_dynamic_stack", &self.uses_dynamic_stack())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Arch;

    #[test]
    fn granules_match_isa_md_tables() {
        // ISA.md 5.3, VGPR totals -> granule.
        for (total, g) in [(0, 0), (1, 0), (8, 0), (9, 1), (128, 15), (256, 31), (264, 32), (300, 37), (512, 63)] {
            assert_eq!(vgpr_granule(total), g, "vgprs {total}");
        }
        // next_free_sgpr -> granule, with the 6 extra SGPRs.
        let t = Target::new(Arch::Gfx942);
        for (n, g) in [(0, 0), (2, 0), (3, 1), (8, 1), (10, 1), (11, 2), (16, 2), (24, 3), (40, 5), (96, 12), (102, 13)]
        {
            let r = RegisterUsage { sgprs: n, ..Default::default() };
            assert_eq!(sgpr_granule(r.total_sgprs(&t)), g, "sgprs {n}");
        }
    }

    #[test]
    fn matches_the_llvm_linked_reference_descriptor() {
        // shared/reference/codeobject-v5-gfx942-readelf.txt, .rodata: llc output for axpy.
        let want: [u8; 64] = [
            0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x18, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
            0x40, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, //
            0x40, 0x00, 0xaf, 0x00, 0x90, 0x13, 0x00, 0x00, 0x1e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ];
        // vgpr_count 6, sgpr_count 15 => next_free_sgpr 9; rsrc2 0x1390 = 8 user SGPRs
        // (dispatch, queue, kernarg, dispatch id), workgroup ids x,y,z, work-item ids x,y,z.
        let cfg = DescriptorConfig {
            group_segment_fixed_size: 4096,
            kernarg_size: 280,
            registers: RegisterUsage { vgprs: 6, sgprs: 9, uses_vcc: true, ..Default::default() },
            user_sgprs: UserSgprs {
                dispatch_ptr: true,
                queue_ptr: true,
                kernarg_segment_ptr: true,
                dispatch_id: true,
                ..Default::default()
            },
            system_sgprs: SystemSgprs { workgroup_id_y: true, workgroup_id_z: true, ..SystemSgprs::default() },
            workitem_ids: WorkitemIds::Xyz,
            float_mode: FloatMode::LLC_DEFAULT,
            ..Default::default()
        };
        let kd = KernelDescriptor::build(&Target::new(Arch::Gfx942), &cfg, 0x1040).unwrap();
        assert_eq!(kd.to_bytes(), want, "{kd:?}");
        assert_eq!(KernelDescriptor::from_bytes(&want), kd);
    }

    #[test]
    fn limits_are_enforced() {
        let t = Target::new(Arch::Gfx950);
        let mut cfg = DescriptorConfig::default();
        cfg.registers.sgprs = 103;
        assert_eq!(KernelDescriptor::build(&t, &cfg, 0), Err(DescriptorError::TooManySgprs(103)));
        cfg.registers = RegisterUsage { vgprs: 8, accum_offset: Some(12), ..Default::default() };
        assert!(matches!(KernelDescriptor::build(&t, &cfg, 0), Err(DescriptorError::BadAccumOffset { .. })));
        cfg.registers = RegisterUsage { vgprs: 256, agprs: 257, ..Default::default() };
        assert!(matches!(KernelDescriptor::build(&t, &cfg, 0), Err(DescriptorError::TooManyVgprs { .. })));
        cfg.registers = RegisterUsage::default();
        cfg.user_sgprs.kernarg_preload_length = 15;
        cfg.user_sgprs.kernarg_segment_ptr = true;
        assert_eq!(KernelDescriptor::build(&t, &cfg, 0), Err(DescriptorError::TooManyUserSgprs(17)));
        cfg.user_sgprs = UserSgprs::default();
        cfg.private_segment_fixed_size = 16;
        assert!(matches!(KernelDescriptor::build(&t, &cfg, 0), Err(DescriptorError::PrivateSegmentNotEnabled(16))));
    }
}
