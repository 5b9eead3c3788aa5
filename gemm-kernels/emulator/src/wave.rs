//! One 64-lane wave: SGPRs (with VCC, M0, EXEC at their operand codes, ISA.md §4.5),
//! SCC, ArchVGPRs and AccVGPRs, and operand reads/writes through the decoded `Operand`.

use crate::error::FaultKind;
use gemm_isa::{Operand, Reg, RegFile, Special, Ty};

pub const LANES: usize = 64;
/// Addressable SGPRs s0..s101 (ISA.md §4.5).
pub const NUM_SGPRS: u16 = 102;
/// FLAT_SCRATCH_LO (FLAT_SCRATCH_HI follows), ISA.md §4.5.
pub const FLAT_SCRATCH_LO: usize = 102;
pub const VCC: usize = 106;
pub const M0: usize = 124;
pub const EXEC: usize = 126;
/// High half of the flat address of LDS (`src_shared_base`). A choice: the aperture sits
/// at 0x0001_0000_0000_0000, far from device allocations (README "Choices").
pub const SHARED_BASE_HI: u32 = 0x0001_0000;
pub const PRIVATE_BASE_HI: u32 = 0x0002_0000;

type R<T> = Result<T, FaultKind>;

/// Per-lane values of one source operand (32- or 64-bit).
pub type Lanes = [u64; LANES];

/// Scheduling state of a wave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaveState {
    Running,
    AtBarrier,
    Ended,
}

#[derive(Debug)]
pub struct Wave {
    /// Index of the wave in its workgroup.
    pub id: usize,
    /// Scalar registers by operand code 0..127 (s0..s101, flat_scratch, xnack_mask, vcc,
    /// ttmp0..15, m0, exec).
    pub s: [u32; 128],
    pub scc: bool,
    pub v: Vec<u32>,
    pub a: Vec<u32>,
    pub nv: u16,
    pub na: u16,
    pub pc: u64,
    pub state: WaveState,
    /// Lanes that exist (the last wave of a workgroup may be partial).
    pub live: u64,
    /// The wave's private segment (scratch), when the kernel has one.
    pub scratch: Option<Scratch>,
}

/// A wave's private segment in device memory (`launch.rs` sets it up).
///
/// Lane `l`'s bytes are `base + l * lane_bytes ..` (lane-major). The hardware interleaves
/// the lanes' dwords (AMDGPUUsage "Private Segment"), which `scratch_*` instructions
/// cannot observe: each lane only addresses its own segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scratch {
    pub base: u64,
    /// Private segment bytes per work-item (`private_segment_fixed_size` rounded up to a
    /// dword, as the CP does).
    pub lane_bytes: u32,
}

impl Wave {
    pub fn new(id: usize, nv: u16, na: u16, live: u64) -> Wave {
        let mut w = Wave {
            id,
            s: [0; 128],
            scc: false,
            v: vec![0; nv as usize * LANES],
            a: vec![0; na as usize * LANES],
            nv,
            na,
            pc: 0,
            state: WaveState::Running,
            live,
            scratch: None,
        };
        w.set_exec(live);
        w
    }

    pub fn exec(&self) -> u64 {
        u64::from(self.s[EXEC]) | (u64::from(self.s[EXEC + 1]) << 32)
    }
    pub fn set_exec(&mut self, e: u64) {
        self.s[EXEC] = e as u32;
        self.s[EXEC + 1] = (e >> 32) as u32;
    }
    pub fn vcc(&self) -> u64 {
        u64::from(self.s[VCC]) | (u64::from(self.s[VCC + 1]) << 32)
    }
    pub fn m0(&self) -> u32 {
        self.s[M0]
    }

    /// Operand code of the first scalar register of `r`.
    fn scode(r: &Reg) -> R<usize> {
        match r.file {
            RegFile::Sgpr => {
                if r.index + r.count as u16 > NUM_SGPRS {
                    return Err(FaultKind::Register(format!("s{}+{} beyond s101", r.index, r.count)));
                }
                Ok(r.index as usize)
            }
            RegFile::Ttmp => Ok(108 + r.index as usize),
            _ => Err(FaultKind::Register(format!("{r} is not a scalar register"))),
        }
    }

    /// Reads dword `k` of a scalar operand of type `ty` (constants expand per `ty`).
    pub fn sread(&self, op: &Operand, ty: Ty, k: usize) -> R<u32> {
        Ok(match op {
            Operand::Reg(r) => {
                let c = Self::scode(r)? + k;
                *self.s.get(c).ok_or_else(|| FaultKind::Register(format!("{r}")))?
            }
            Operand::Special(sp) => match sp {
                Special::Scc => self.scc as u32,
                Special::Vccz => (self.vcc() == 0) as u32,
                Special::Execz => (self.exec() == 0) as u32,
                Special::SrcSharedBase => SHARED_BASE_HI,
                Special::SrcSharedLimit => SHARED_BASE_HI | 0xFFFF,
                Special::SrcPrivateBase => PRIVATE_BASE_HI,
                Special::SrcPrivateLimit => PRIVATE_BASE_HI | 0xFFFF,
                Special::SrcPopsExitingWaveId => 0,
                s => self.s[s.code() as usize + k],
            },
            Operand::Off => 0,
            c => {
                let bits = c.const_bits(ty).unwrap_or(0);
                if k == 0 {
                    bits as u32
                } else {
                    (bits >> 32) as u32
                }
            }
        })
    }

    /// Reads a scalar operand as 32 or 64 bits (per `ty.dwords()`).
    pub fn sread_ty(&self, op: &Operand, ty: Ty) -> R<u64> {
        if ty.dwords() == 2 {
            if let Operand::Reg(_) | Operand::Special(_) = op {
                return Ok(u64::from(self.sread(op, ty, 0)?) | (u64::from(self.sread(op, ty, 1)?) << 32));
            }
            return Ok(op.const_bits(ty).unwrap_or(0));
        }
        Ok(u64::from(self.sread(op, ty, 0)?))
    }

    /// Writes dword `k` of a scalar destination.
    pub fn swrite(&mut self, op: &Operand, k: usize, val: u32) -> R<()> {
        match op {
            Operand::Reg(r) => {
                let c = Self::scode(r)? + k;
                if c >= 128 {
                    return Err(FaultKind::Register(format!("{r}")));
                }
                self.s[c] = val;
            }
            Operand::Special(sp) if sp.writable() => self.s[sp.code() as usize + k] = val,
            o => return Err(FaultKind::Register(format!("cannot write {o}"))),
        }
        Ok(())
    }

    pub fn swrite_ty(&mut self, op: &Operand, ty: Ty, val: u64) -> R<()> {
        self.swrite(op, 0, val as u32)?;
        if ty.dwords() == 2 {
            self.swrite(op, 1, (val >> 32) as u32)?;
        }
        Ok(())
    }

    fn vfile(&self, file: RegFile) -> (&Vec<u32>, u16) {
        if file == RegFile::Agpr {
            (&self.a, self.na)
        } else {
            (&self.v, self.nv)
        }
    }

    /// Reads VGPR/AGPR `index` of `lane`.
    pub fn vget(&self, file: RegFile, index: u16, lane: usize) -> R<u32> {
        let (f, n) = self.vfile(file);
        if index >= n {
            return Err(FaultKind::Register(format!(
                "{}{index} beyond the kernel's {n} {} (kernel descriptor)",
                if file == RegFile::Agpr { "a" } else { "v" },
                if file == RegFile::Agpr { "AGPRs" } else { "VGPRs" }
            )));
        }
        Ok(f[index as usize * LANES + lane])
    }

    pub fn vset(&mut self, file: RegFile, index: u16, lane: usize, val: u32) -> R<()> {
        let n = if file == RegFile::Agpr { self.na } else { self.nv };
        if index >= n {
            return Err(FaultKind::Register(format!(
                "{}{index} beyond the kernel's {n} registers (kernel descriptor)",
                if file == RegFile::Agpr { "a" } else { "v" }
            )));
        }
        let f = if file == RegFile::Agpr { &mut self.a } else { &mut self.v };
        f[index as usize * LANES + lane] = val;
        Ok(())
    }

    /// Per-lane values of a vector-ALU source (VGPR/AGPR per lane, scalars broadcast).
    pub fn vread(&self, op: &Operand, ty: Ty) -> R<Lanes> {
        let mut out = [0u64; LANES];
        match op {
            Operand::Reg(r) if matches!(r.file, RegFile::Vgpr | RegFile::Agpr) => {
                for (l, o) in out.iter_mut().enumerate() {
                    let lo = self.vget(r.file, r.index, l)?;
                    *o = if ty.dwords() == 2 {
                        u64::from(lo) | (u64::from(self.vget(r.file, r.index + 1, l)?) << 32)
                    } else {
                        u64::from(lo)
                    };
                }
            }
            _ => out = [self.sread_ty(op, ty)?; LANES],
        }
        Ok(out)
    }

    /// Reads register `k` of a VGPR/AGPR tuple for every lane.
    pub fn vtuple(&self, r: &Reg, k: u16) -> R<[u32; LANES]> {
        let mut out = [0u32; LANES];
        for (l, o) in out.iter_mut().enumerate() {
            *o = self.vget(r.file, r.index + k, l)?;
        }
        Ok(out)
    }

    /// Writes per-lane results under `mask` to a VGPR/AGPR destination (`ty.dwords()` wide).
    pub fn vwrite(&mut self, op: &Operand, dwords: u8, mask: u64, vals: &Lanes) -> R<()> {
        let r = match op {
            Operand::Reg(r) if matches!(r.file, RegFile::Vgpr | RegFile::Agpr) => *r,
            o => return Err(FaultKind::Register(format!("{o} is not a vector register"))),
        };
        for (l, v) in vals.iter().enumerate() {
            if mask >> l & 1 == 1 {
                self.vset(r.file, r.index, l, *v as u32)?;
                if dwords == 2 {
                    self.vset(r.file, r.index + 1, l, (*v >> 32) as u32)?;
                }
            }
        }
        Ok(())
    }
}
