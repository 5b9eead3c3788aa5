//! What a device says about itself: `hipDeviceGetName`, `hipDeviceGetAttribute` and
//! `hipGetDeviceProperties*`, per architecture and per ABI generation.

use gemm_emu::Arch;

use crate::error::HipError;

/// Marketing name (`hipDeviceGetName`).
pub fn name(arch: Arch) -> &'static str {
    match arch {
        Arch::Gfx942 => "AMD Instinct MI300X (emulated)",
        Arch::Gfx950 => "AMD Instinct MI355X (emulated)",
    }
}

/// `gcnArchName`: the full target ID as ROCm reports it.
pub fn arch_name(arch: Arch) -> &'static str {
    match arch {
        Arch::Gfx942 => "gfx942:sramecc+:xnack-",
        Arch::Gfx950 => "gfx950:sramecc+:xnack-",
    }
}

struct Facts {
    cus: i32,
    clock_khz: i32,
    memory_clock_khz: i32,
    lds: i32,
    minor: i32,
    gcn_arch: i32,
}

/// The device facts of `arch`, with `cus` compute units where the machine's spec sets them
/// (`Config::cus`).
fn facts(arch: Arch, cus: Option<i32>) -> Facts {
    let f = match arch {
        Arch::Gfx942 => {
            Facts { cus: 304, clock_khz: 2_100_000, memory_clock_khz: 1_300_000, lds: 65536, minor: 4, gcn_arch: 942 }
        }
        Arch::Gfx950 => {
            Facts { cus: 256, clock_khz: 2_400_000, memory_clock_khz: 2_000_000, lds: 163_840, minor: 5, gcn_arch: 950 }
        }
    };
    Facts { cus: cus.unwrap_or(f.cus), ..f }
}

/// `hipDeviceGetAttribute(attr)` for device `ordinal` of `arch`. Values are
/// `hipDeviceAttribute_t` of `hip_runtime_api.h`; where ROCm 6 turned a ROCm 5 attribute into
/// `hipDeviceAttributeUnusedN` (10003 `GcnArch`) or added one (10015, 10017, 10018) the
/// answer follows the configured generation. Anything else is `hipErrorInvalidValue`.
pub fn attribute(arch: Arch, ordinal: usize, attr: i32, rocm5: bool, cus: Option<i32>) -> Result<i32, HipError> {
    let f = facts(arch, cus);
    Ok(match attr {
        5 => f.clock_khz,                   // ClockRate
        19 => 4 << 20,                      // L2CacheSize (per XCD)
        23 => 9,                            // ComputeCapabilityMajor
        26..=28 => 1024,                    // MaxBlockDimX/Y/Z
        29 => i32::MAX,                     // MaxGridDimX
        30 | 31 => 65536,                   // MaxGridDimY/Z
        56 => 1024,                         // MaxThreadsPerBlock
        59 => 8192,                         // MemoryBusWidth
        60 => f.memory_clock_khz,           // MemoryClockRate
        61 => f.minor,                      // ComputeCapabilityMinor
        63 => f.cus,                        // MultiprocessorCount
        67 => 0x0c + 0x10 * ordinal as i32, // PciBusId
        68 | 69 => 0,                       // PciDeviceId, PciDomainID
        71 => 65536,                        // MaxRegistersPerBlock
        74 => f.lds,                        // MaxSharedMemoryPerBlock
        87 => 64,                           // WarpSize
        10000 => 100_000,                   // ClockInstructionRate (kHz)
        10002 => f.lds,                     // MaxSharedMemoryPerMultiprocessor
        10003 if rocm5 => f.gcn_arch,       // GcnArch (ROCm 5 only)
        10011 => 1,                         // IsLargeBar
        10012 => 1,                         // AsicRevision
        10015 if !rocm5 => f.cus,           // PhysicalMultiProcessorCount (ROCm 6)
        10017 if !rocm5 => 100_000,         // WallClockRate (ROCm 6)
        10018 if !rocm5 => 8,               // NumberOfXccs (ROCm 6)
        _ => {
            return Err(HipError::invalid(format!(
                "hipDeviceAttribute_t {attr} is not modelled for a ROCm {} runtime",
                if rocm5 { 5 } else { 6 }
            )))
        }
    })
}

/// `sizeof(hipDeviceProp_tR0000)` (ROCm 5's `hipDeviceProp_t`).
pub const R0000_SIZE: usize = 792;
/// `sizeof(hipDeviceProp_tR0600)`.
pub const R0600_SIZE: usize = 1472;

fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
    buf[at..at + bytes.len()].copy_from_slice(bytes);
}

fn put_str(buf: &mut [u8], at: usize, s: &str) {
    let n = s.len().min(255);
    put(buf, at, &s.as_bytes()[..n]);
    buf[at + n] = 0;
}

/// Fills a `hipDeviceProp_t` image of the R0000 (ROCm 5) or R0600 (ROCm 6) layout. R0000 gets
/// its fields up to `gcnArchName` (offsets of the ROCm 5.2 header); R0600 gets `name`,
/// `totalGlobalMem` and `gcnArchName`; every other byte is zero.
pub fn properties(arch: Arch, ordinal: usize, total_mem: u64, r0600: bool, cus: Option<i32>) -> Vec<u8> {
    let f = facts(arch, cus);
    if r0600 {
        let mut b = vec![0u8; R0600_SIZE];
        put_str(&mut b, 0, name(arch));
        put(&mut b, 288, &total_mem.to_le_bytes()); // after uuid[16], luid[8], luidDeviceNodeMask
        put_str(&mut b, 1160, arch_name(arch));
        return b;
    }
    let mut b = vec![0u8; R0000_SIZE];
    put_str(&mut b, 0, name(arch));
    put(&mut b, 256, &total_mem.to_le_bytes()); // totalGlobalMem
    put(&mut b, 264, &(f.lds as u64).to_le_bytes()); // sharedMemPerBlock
    let ints: [(usize, i32); 20] = [
        (272, 65536), // regsPerBlock
        (276, 64),    // warpSize
        (280, 1024),  // maxThreadsPerBlock
        (284, 1024),  // maxThreadsDim[0..3]
        (288, 1024),
        (292, 1024),
        (296, i32::MAX), // maxGridSize[0..3]
        (300, 65536),
        (304, 65536),
        (308, f.clock_khz),                  // clockRate
        (312, f.memory_clock_khz),           // memoryClockRate
        (316, 8192),                         // memoryBusWidth
        (328, 9),                            // major
        (332, f.minor),                      // minor
        (336, f.cus),                        // multiProcessorCount
        (340, 4 << 20),                      // l2CacheSize
        (344, 2048),                         // maxThreadsPerMultiProcessor
        (352, 100_000),                      // clockInstructionRate
        (368, 0x0c + 0x10 * ordinal as i32), // pciBusID
        (392, f.gcn_arch),                   // gcnArch
    ];
    for (at, v) in ints {
        put(&mut b, at, &v.to_le_bytes());
    }
    put(&mut b, 376, &(f.lds as u64).to_le_bytes()); // maxSharedMemoryPerMultiProcessor
    put_str(&mut b, 396, arch_name(arch));
    b
}
