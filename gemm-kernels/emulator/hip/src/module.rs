//! Code objects (`hipModuleLoadData`), kernels (`hipModuleGetFunction`) and launches
//! (`hipModuleLaunchKernel`).
//!
//! A module belongs to the device current at load time. A launch checks its shape at the
//! call (zero dimensions, more than 1024 work-items, LDS beyond the device's limit, both or
//! neither of `kernelParams`/`extra`: `hipErrorInvalidValue`), copies the arguments (HIP
//! copies them before returning) and queues the kernel; it runs in gemm-emu on the stream's
//! thread with the race and hazard checkers on. A fault or any checker finding fails the
//! launch *asynchronously*: the next synchronising call of that stream, of an event recorded
//! after it, or of the device returns `hipErrorLaunchFailure`, and
//! `gemm_emu_hip_last_findings` has the text.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use gemm_codeobject::{CodeObject, ValueKind};
use gemm_emu::{LaunchOptions, Schedule};

use crate::error::HipError;
use crate::host::{self, ImageError};
use crate::runtime::{fires, machine, Dev};
use crate::stream::{submit, Stream};

/// What a launch needs to know about one kernel.
#[derive(Debug, Clone)]
pub struct KernelInfo {
    /// `(offset, size)` of each explicit (non-hidden) argument, in order; `None` when the code
    /// object has no metadata.
    pub args: Option<Vec<(usize, usize)>>,
    /// Static LDS bytes.
    pub static_lds: u32,
    /// `.max_flat_workgroup_size`, when known.
    pub max_workgroup: Option<u32>,
}

impl KernelInfo {
    /// End of the last explicit argument.
    pub fn explicit_end(&self) -> usize {
        self.args.as_ref().map_or(0, |a| a.iter().map(|&(o, s)| o + s).max().unwrap_or(0))
    }
}

/// A loaded code object.
#[derive(Debug)]
pub struct Module {
    /// Device it was loaded on.
    pub device: usize,
    /// The image.
    pub image: Arc<Vec<u8>>,
    /// Its kernels by name.
    pub kernels: HashMap<String, KernelInfo>,
}

/// A kernel of a module.
#[derive(Debug)]
pub struct Function {
    /// The module (kept alive by queued launches).
    pub module: Arc<Module>,
    /// Symbol name.
    pub name: String,
    /// Launch facts.
    pub info: KernelInfo,
}

/// `hipModuleLoadData` on the calling thread's current device.
///
/// Errors: an image that is not ELF is `hipErrorInvalidImage`; an ELF file that is no
/// readable AMDHSA code object is `hipErrorInvalidKernelFile`; a code object for another
/// processor is `hipErrorNoBinaryForGpu` (what HIP answers when no code object matches the
/// device). Fat binaries (clang offload bundles) are not accepted.
///
/// # Safety
/// `image` must point at a complete ELF file (the contract of `hipModuleLoadData`).
pub unsafe fn load(image: usize) -> Result<Module, HipError> {
    let m = machine();
    let dev = m.current()?;
    dev.touch()?;
    // SAFETY: the caller's contract above.
    let bytes = unsafe { host::elf_image(image) }.map_err(|e| match e {
        ImageError::NotElf => HipError::InvalidImage("not an ELF file (fat binaries are not supported)".into()),
        ImageError::BadHeader(why) => HipError::InvalidKernelFile(why),
    })?;
    let co = CodeObject::parse(&bytes).map_err(|e| HipError::InvalidKernelFile(e.to_string()))?;
    match co.arch() {
        Some(a) if a == dev.arch => {}
        found => {
            return Err(HipError::NoBinaryForGpu(format!(
                "the code object is for {}, device {} is {}",
                found.map_or("an unknown processor", |a| a.name()),
                dev.ordinal,
                dev.arch.name()
            )))
        }
    }
    let kernels = co
        .kernels
        .iter()
        .map(|k| {
            let meta = k.metadata.as_ref();
            let args = meta.map(|m| {
                m.args
                    .iter()
                    .filter(|a| !matches!(a.value_kind, ValueKind::Hidden(_)))
                    .map(|a| (a.offset as usize, a.size as usize))
                    .collect()
            });
            let info = KernelInfo {
                args,
                static_lds: k.descriptor.group_segment_fixed_size,
                max_workgroup: meta.map(|m| m.max_flat_workgroup_size).filter(|&n| n > 0),
            };
            (k.name.clone(), info)
        })
        .collect();
    Ok(Module { device: dev.ordinal, image: Arc::new(bytes), kernels })
}

/// Arguments of a launch, in one of HIP's two forms.
pub enum Args {
    /// `kernelParams`: one pointer per explicit argument, in order.
    Params(usize),
    /// `extra`: `HIP_LAUNCH_PARAM_BUFFER_POINTER`, buffer, `HIP_LAUNCH_PARAM_BUFFER_SIZE`,
    /// `&size`, `HIP_LAUNCH_PARAM_END`.
    Extra(usize),
}

/// Packs the kernarg bytes from the caller's arguments.
///
/// # Safety
/// The pointers must follow `hipModuleLaunchKernel`'s contract: `kernelParams` holds one
/// valid pointer per kernel argument, each to a value of the argument's size; `extra` is an
/// array ending in `HIP_LAUNCH_PARAM_END` whose buffer and size pointers are valid.
pub unsafe fn pack_args(f: &Function, args: Args) -> Result<Vec<u8>, HipError> {
    match args {
        Args::Params(params) => {
            let list = f.info.args.as_ref().ok_or_else(|| {
                HipError::invalid(format!("kernel {} has no argument metadata: pass `extra`, not kernelParams", f.name))
            })?;
            let mut out = vec![0u8; f.info.explicit_end()];
            for (i, &(off, size)) in list.iter().enumerate() {
                // SAFETY: kernelParams holds one pointer per argument (caller's contract).
                let p = unsafe { host::read(params + i * std::mem::size_of::<usize>(), 8) };
                let p = usize::from_le_bytes(p.try_into().unwrap_or_default());
                if p == 0 {
                    return Err(HipError::invalid(format!("kernelParams[{i}] is null")));
                }
                // SAFETY: each pointer points at a value of the argument's size.
                let v = unsafe { host::read(p, size) };
                out[off..off + size].copy_from_slice(&v);
            }
            Ok(out)
        }
        Args::Extra(extra) => {
            let word = |i: usize| {
                // SAFETY: `extra` is an array of pointers terminated by HIP_LAUNCH_PARAM_END; we
                // stop at the terminator (or refuse an unknown key) before reading past it.
                let b = unsafe { host::read(extra + i * std::mem::size_of::<usize>(), 8) };
                usize::from_le_bytes(b.try_into().unwrap_or_default())
            };
            let (mut buffer, mut size) = (None, None);
            let mut i = 0;
            loop {
                match word(i) {
                    3 => break,
                    1 => buffer = Some(word(i + 1)),
                    2 => {
                        let p = word(i + 1);
                        if p == 0 {
                            return Err(HipError::invalid("HIP_LAUNCH_PARAM_BUFFER_SIZE points at null"));
                        }
                        // SAFETY: the size entry points at a size_t (caller's contract).
                        let b = unsafe { host::read(p, 8) };
                        size = Some(usize::from_le_bytes(b.try_into().unwrap_or_default()));
                    }
                    other => {
                        return Err(HipError::invalid(format!("extra[{i}] = {other:#x} is not a launch-parameter key")))
                    }
                }
                i += 2;
                if i > 64 {
                    return Err(HipError::invalid("extra has no HIP_LAUNCH_PARAM_END"));
                }
            }
            let (Some(buffer), Some(size)) = (buffer, size) else {
                return Err(HipError::invalid("extra needs both HIP_LAUNCH_PARAM_BUFFER_POINTER and _SIZE"));
            };
            if size < f.info.explicit_end() {
                return Err(HipError::invalid(format!(
                    "argument buffer of {size} bytes; kernel {} takes {} bytes of arguments",
                    f.name,
                    f.info.explicit_end()
                )));
            }
            if size > 0 && buffer == 0 {
                return Err(HipError::invalid("HIP_LAUNCH_PARAM_BUFFER_POINTER is null"));
            }
            // SAFETY: the buffer holds `size` bytes (caller's contract).
            Ok(if size == 0 { Vec::new() } else { unsafe { host::read(buffer, size) } })
        }
    }
}

/// Shape of a launch.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Workgroups (HIP's `gridDim`: blocks, not work-items).
    pub grid: [u32; 3],
    /// Work-items per workgroup.
    pub block: [u32; 3],
    /// Dynamic LDS bytes.
    pub shared: u32,
}

/// Validates and queues a launch.
pub fn launch(
    f: &Arc<Function>,
    shape: Shape,
    dev: &Arc<Dev>,
    stream: &Arc<Stream>,
    args: Vec<u8>,
) -> Result<(), HipError> {
    if f.module.device != dev.ordinal {
        return Err(HipError::InvalidDevice(format!(
            "kernel {} is loaded on device {}, the stream is on device {}",
            f.name, f.module.device, dev.ordinal
        )));
    }
    let Shape { grid, block, shared } = shape;
    if grid.contains(&0) || block.contains(&0) {
        return Err(HipError::invalid(format!("grid {grid:?} block {block:?} has a zero dimension")));
    }
    let threads: u64 = block.iter().map(|&b| u64::from(b)).product();
    let limit = f.info.max_workgroup.unwrap_or(1024).min(1024);
    if threads > u64::from(limit) {
        return Err(HipError::invalid(format!("block {block:?} has {threads} work-items; {} allows {limit}", f.name)));
    }
    for d in 0..3 {
        if u64::from(grid[d]) * u64::from(block[d]) > u64::from(u32::MAX) {
            return Err(HipError::invalid(format!("grid dimension {d} exceeds 2^32 work-items")));
        }
    }
    let lds_limit = gemm_emu::launch::lds_limit(dev.arch);
    if u64::from(f.info.static_lds) + u64::from(shared) > u64::from(lds_limit) {
        return Err(HipError::invalid(format!(
            "{} static + {shared} dynamic LDS bytes exceed {lds_limit}",
            f.info.static_lds
        )));
    }
    dev.touch()?;
    let injected = fires(&mut dev.faults.lock().launch);
    dev.counters.launches.fetch_add(1, Ordering::Relaxed);
    let config = &machine().config;
    let opts = LaunchOptions {
        schedule: Schedule { mode: config.mode, seed: config.seed },
        threads: config.launch_threads,
        race_detector: config.checkers,
        dynamic_lds: shared,
        ..LaunchOptions::default()
    };
    let checkers = config.checkers;
    let (dev2, image, name) = (dev.clone(), f.module.image.clone(), f.name.clone());
    submit(
        dev,
        stream,
        Box::new(move || {
            let dev = dev2;
            if dev.is_lost() {
                return Err(dev.lost_error());
            }
            if injected {
                *dev.last_findings.lock() = format!("{name}: injected launch failure");
                return Err(HipError::LaunchFailure(format!("{name}: injected launch failure")));
            }
            match dev.emu.launch_with(&image, &name, grid, block, &args, &opts) {
                Ok(report) if checkers && !report.reports.is_empty() => {
                    let n = report.reports.len();
                    dev.counters.findings.fetch_add(n as u64, Ordering::Relaxed);
                    let text: Vec<String> = report.reports.iter().map(ToString::to_string).collect();
                    *dev.last_findings.lock() = format!("{name}: {n} checker findings\n{}", text.join("\n"));
                    Err(HipError::LaunchFailure(format!("{name}: {n} checker findings; first: {}", text[0])))
                }
                Ok(_) => Ok(()),
                Err(e) => {
                    *dev.last_findings.lock() = format!("{name}: {e}");
                    Err(HipError::LaunchFailure(format!("{name}: {e}")))
                }
            }
        }),
    );
    Ok(())
}
