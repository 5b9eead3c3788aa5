//! Errors and faults. A kernel that misbehaves (stray address, register outside its
//! allocation, an instruction the emulator does not model) produces a [`Fault`] naming
//! the kernel, PC, instruction, workgroup and wave, never a host panic.

use std::fmt;

/// What went wrong inside a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// An access outside every allocation (or crossing an allocation's end).
    Memory { addr: u64, len: u64, write: bool },
    /// A register outside the kernel's allocation (kernel descriptor register counts).
    Register(String),
    /// An instruction or form the emulator does not model.
    Unsupported(String),
    /// The bytes at the PC do not decode.
    Decode(String),
    /// No wave can make progress (e.g. a barrier that some waves never reach).
    Deadlock(String),
    /// The per-launch instruction budget ran out (likely an endless loop).
    InstructionLimit(u64),
    /// `s_trap` or `s_sethalt`.
    Trap,
    /// A `scratch_*` access outside the lane's private segment (the kernel descriptor's
    /// `private_segment_fixed_size`): on hardware it would land in another wave's or
    /// lane's scratch.
    PrivateSegment { lane: u8, offset: u64, len: u32, write: bool, private_bytes: u32 },
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultKind::Memory { addr, len, write } => {
                write!(
                    f,
                    "{} of {len} bytes at {addr:#x} outside every allocation",
                    if *write { "write" } else { "read" }
                )
            }
            FaultKind::Register(s) => write!(f, "register fault: {s}"),
            FaultKind::Unsupported(s) => write!(f, "unsupported: {s}"),
            FaultKind::Decode(s) => write!(f, "decode error: {s}"),
            FaultKind::Deadlock(s) => write!(f, "deadlock: {s}"),
            FaultKind::InstructionLimit(n) => write!(f, "instruction limit of {n} reached"),
            FaultKind::Trap => write!(f, "s_trap"),
            FaultKind::PrivateSegment { lane, offset, len, write, private_bytes } => write!(
                f,
                "scratch {} of {len} bytes at private offset {offset:#x} (lane {lane}) outside the \
                 {private_bytes}-byte private segment",
                if *write { "write" } else { "read" }
            ),
        }
    }
}

/// A fault with its location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kernel: String,
    /// Byte offset of the instruction from the kernel entry.
    pub pc: u64,
    /// The instruction, printed in LLVM syntax.
    pub inst: String,
    pub workgroup: [u32; 3],
    pub wave: usize,
    pub kind: FaultKind,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: pc {:#x} `{}` workgroup {:?} wave {}: {}",
            self.kernel, self.pc, self.inst, self.workgroup, self.wave, self.kind
        )
    }
}

/// Errors of the emulator's API.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    #[error("cannot read code object: {0}")]
    CodeObject(#[from] gemm_codeobject::ReadError),
    #[error("kernel `{0}` is not in the code object")]
    NoKernel(String),
    #[error("code object is for {found}, the device is {device}")]
    ArchMismatch { found: String, device: String },
    #[error("invalid launch: {0}")]
    InvalidLaunch(String),
    #[error("device memory: {0}")]
    Memory(#[from] MemError),
    #[error("kernel fault: {0}")]
    Fault(Box<Fault>),
}

/// Host-side memory API errors.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    #[error("address {addr:#x} (+{len}) is not inside one allocation")]
    OutOfRange { addr: u64, len: u64 },
    #[error("no allocation starts at {0:#x}")]
    NotAllocated(u64),
    #[error("allocation of {0} bytes is too large")]
    TooLarge(u64),
    #[error("a lock was poisoned by a panicking thread")]
    Poisoned,
}
