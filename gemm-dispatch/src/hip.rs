//! AMD GPUs through HIP, loaded at run time by `gemm-rocm`.
//!
//! Discovery never fails: a missing library, a runtime with no device, or a GPU of an
//! architecture the catalogue does not cover are notes that `gemm devices` prints, and the host
//! backend serves instead (DESIGN.md rule 5).

use crate::backend::Backend;
use crate::error::{Error, Result};
use gemm_core::Arch;
use gemm_rocm::hip::Hip;
use std::sync::Arc;

/// What looking for HIP devices found.
pub struct Discovery {
    /// Devices ready to run GEMMs.
    pub devices: Vec<Arc<dyn Backend>>,
    /// One line per thing that was not found or not usable, and why.
    pub notes: Vec<String>,
}

/// Loads HIP and lists its usable devices, with a note for everything else.
pub fn discover() -> Discovery {
    let mut notes = Vec::new();
    let hip = match Hip::load() {
        Ok(h) => h,
        Err(e) => {
            notes.push(format!("hip: {e}"));
            return Discovery { devices: Vec::new(), notes };
        }
    };
    let version = hip.runtime_version().map(|v| format!(" (HIP {v})")).unwrap_or_default();
    let count = match hip.device_count() {
        Ok(0) => {
            notes.push(format!("hip: {} loaded{version}: no device (hipErrorNoDevice)", hip.library_path().display()));
            return Discovery { devices: Vec::new(), notes };
        }
        Ok(n) => n,
        Err(e) => {
            notes.push(format!("hip: {} loaded{version}: {e}", hip.library_path().display()));
            return Discovery { devices: Vec::new(), notes };
        }
    };
    let devices = Vec::new();
    for ordinal in 0..count {
        let arch = hip.device(ordinal).and_then(|d| d.arch_name());
        match arch {
            Ok(name) => match Arch::from_target_id(&name) {
                Ok(arch) => notes.push(format!(
                    "hip:{ordinal}: {name} ({arch}) found, but this build cannot launch kernels on it yet"
                )),
                Err(_) => notes.push(format!("hip:{ordinal}: {name} is not a supported architecture (gfx942, gfx950)")),
            },
            Err(e) => notes.push(format!("hip:{ordinal}: cannot read its architecture: {e}")),
        }
    }
    Discovery { devices, notes }
}

/// The devices a `hip` or `hip:N` entry of a device list names.
pub fn open(entry: &str, ordinal: Option<usize>) -> Result<Vec<Arc<dyn Backend>>> {
    let found = discover();
    let picked: Vec<Arc<dyn Backend>> = match ordinal {
        None => found.devices,
        Some(n) => found.devices.into_iter().filter(|d| d.info().name == format!("hip:{n}")).collect(),
    };
    if picked.is_empty() {
        return Err(Error::DeviceSpec {
            spec: entry.into(),
            why: if found.notes.is_empty() { "no such HIP device".into() } else { found.notes.join("; ") },
        });
    }
    Ok(picked)
}
