//! The device address space: allocations at distinct addresses with unmapped guard gaps
//! between them, so a stray access is a reported fault (never a host crash), plus the
//! buffer resource descriptor (V#) of ISA.md §2.1 and the raw-buffer range check of §2.3.

use crate::error::MemError;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

/// First device address handed out. Low addresses stay unmapped so null-ish pointers fault.
const BASE: u64 = 0x1_0000_0000;
/// Unmapped bytes between allocations: an access running past the end of one buffer
/// faults instead of silently landing in its neighbour.
const GUARD: u64 = 0x10_0000;
/// Largest single allocation (16 GiB).
const MAX_ALLOC: u64 = 1 << 34;

/// One allocation.
#[derive(Debug)]
pub struct Allocation {
    pub base: u64,
    pub data: RwLock<Vec<u8>>,
}

impl Allocation {
    pub fn len(&self) -> u64 {
        self.data.read().map(|d| d.len() as u64).unwrap_or(0)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The device's global memory.
#[derive(Debug, Default)]
pub struct DeviceMemory {
    allocs: RwLock<BTreeMap<u64, Arc<Allocation>>>,
    next: Mutex<u64>,
}

impl DeviceMemory {
    pub fn new() -> Self {
        Self::with_base(BASE)
    }

    /// Hands out addresses from `base` (rounded up to 256 bytes, at least the default base)
    /// instead of the default: several emulated devices of one process (the emulated HIP
    /// runtime) then never share an address, so a pointer names its device.
    pub fn with_base(base: u64) -> Self {
        DeviceMemory { allocs: RwLock::new(BTreeMap::new()), next: Mutex::new(base.max(BASE).div_ceil(256) * 256) }
    }

    /// Allocates `size` zeroed bytes, 256-byte aligned; returns the device address.
    pub fn alloc(&self, size: u64) -> Result<u64, MemError> {
        if size > MAX_ALLOC {
            return Err(MemError::TooLarge(size));
        }
        let mut next = self.next.lock().map_err(|_| MemError::Poisoned)?;
        let base = *next;
        *next = (base + size.max(1) + GUARD).div_ceil(256) * 256;
        let a = Arc::new(Allocation { base, data: RwLock::new(vec![0; size as usize]) });
        self.allocs.write().map_err(|_| MemError::Poisoned)?.insert(base, a);
        Ok(base)
    }

    /// Frees the allocation starting at `addr`.
    pub fn free(&self, addr: u64) -> Result<(), MemError> {
        self.allocs
            .write()
            .map_err(|_| MemError::Poisoned)?
            .remove(&addr)
            .map(|_| ())
            .ok_or(MemError::NotAllocated(addr))
    }

    /// A consistent view of the allocations for a launch.
    pub fn view(&self) -> Result<MemView, MemError> {
        let m = self.allocs.read().map_err(|_| MemError::Poisoned)?;
        Ok(MemView { allocs: m.values().cloned().collect() })
    }

    /// Copies host bytes to the device.
    pub fn write(&self, addr: u64, bytes: &[u8]) -> Result<(), MemError> {
        self.view()?.write(addr, bytes).ok_or(MemError::OutOfRange { addr, len: bytes.len() as u64 })
    }

    /// Copies device bytes to the host.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemError> {
        self.view()?.read(addr, out).ok_or(MemError::OutOfRange { addr, len: out.len() as u64 })
    }
}

/// The allocations, sorted by base, as seen by one launch.
#[derive(Clone, Debug)]
pub struct MemView {
    allocs: Vec<Arc<Allocation>>,
}

impl MemView {
    fn find(&self, addr: u64, len: u64) -> Option<&Arc<Allocation>> {
        let i = self.allocs.partition_point(|a| a.base <= addr);
        let a = self.allocs.get(i.checked_sub(1)?)?;
        let end = addr.checked_add(len)?;
        (end <= a.base + a.len()).then_some(a)
    }

    /// Reads `out.len()` bytes; `None` when the range is not inside one allocation.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Option<()> {
        let a = self.find(addr, out.len() as u64)?;
        let d = a.data.read().ok()?;
        let off = (addr - a.base) as usize;
        out.copy_from_slice(&d[off..off + out.len()]);
        Some(())
    }

    /// Writes bytes; `None` when the range is not inside one allocation.
    pub fn write(&self, addr: u64, bytes: &[u8]) -> Option<()> {
        let a = self.find(addr, bytes.len() as u64)?;
        let mut d = a.data.write().ok()?;
        let off = (addr - a.base) as usize;
        d[off..off + bytes.len()].copy_from_slice(bytes);
        Some(())
    }

    /// Read-modify-write of `len` bytes under the allocation's lock (atomics).
    pub fn update(&self, addr: u64, len: usize, f: impl FnOnce(&mut [u8])) -> Option<()> {
        let a = self.find(addr, len as u64)?;
        let mut d = a.data.write().ok()?;
        let off = (addr - a.base) as usize;
        f(&mut d[off..off + len]);
        Some(())
    }
}

/// A 128-bit buffer resource descriptor (V#), ISA.md §2.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferRsrc {
    pub base: u64,
    pub stride: u32,
    pub num_records: u32,
    pub add_tid: bool,
    pub swizzle: bool,
}

impl BufferRsrc {
    pub fn from_words(w: [u32; 4]) -> Self {
        BufferRsrc {
            base: u64::from(w[0]) | (u64::from(w[1] & 0xFFFF) << 32),
            stride: (w[1] >> 16) & 0x3FFF,
            num_records: w[2],
            add_tid: w[3] & (1 << 23) != 0,
            swizzle: w[1] & (1 << 31) != 0,
        }
    }

    /// The standard raw buffer (`{base_lo, base_hi, size, 0x00020000}`, ISA.md §2.1).
    pub fn raw(base: u64, size: u32) -> [u32; 4] {
        [base as u32, (base >> 32) as u32 & 0xFFFF, size, 0x0002_0000]
    }

    /// Whether the 32-bit component at byte `offset` (inst_offset + voffset + 4*component,
    /// soffset excluded) is in range. Raw buffers (stride 0 or no index) check each
    /// component on its own: out of range iff `offset >= NUM_RECORDS` (ISA.md §2.3,
    /// AMDGPUUsage "Relaxed Buffer OOB Mode": saturating, unsigned). Structured buffers:
    /// out of range iff `index >= NUM_RECORDS` or `offset >= STRIDE` (GCN doc; unverified
    /// on CDNA3, see the README's choices). A sub-dword access is in range when its first
    /// byte is.
    pub fn in_range(&self, structured: bool, index: u32, offset: u32) -> bool {
        if structured && self.stride != 0 {
            return index < self.num_records && offset < self.stride;
        }
        offset < self.num_records
    }
}
