//! Code objects (`hipModuleLoadData`), kernels (`hipModuleGetFunction`) and launches
//! (`hipModuleLaunchKernel` with the `extra` form: `HIP_LAUNCH_PARAM_BUFFER_POINTER`, the
//! packed argument bytes, `HIP_LAUNCH_PARAM_BUFFER_SIZE`, a pointer to their size,
//! `HIP_LAUNCH_PARAM_END`), as in `hip_runtime_api.h`.

use std::ffi::{c_int, c_void, CString};
use std::sync::Arc;

use super::stream::Stream;
use super::sys;
use super::{Device, Hip};
use crate::error::{Error, Result};

struct ModuleInner {
    hip: Hip,
    device: c_int,
    raw: sys::hipModule_t,
    /// The code object, kept for the module's life in 8-byte aligned storage: the runtime
    /// parses the ELF in place and we do not rely on it having copied the image.
    _image: Vec<u64>,
}

// SAFETY: `hipModule_t` is a handle the thread-safe HIP runtime accepts from any thread; the
// image is immutable after load.
unsafe impl Send for ModuleInner {}
// SAFETY: as above.
unsafe impl Sync for ModuleInner {}

impl Drop for ModuleInner {
    fn drop(&mut self) {
        match self.hip.api.hipModuleUnload() {
            Ok(f) => {
                // SAFETY: unloaded once; every `Function` holds this `Arc`, so none outlives it.
                let code = unsafe { f(self.raw) };
                if let Err(e) = self.hip.check("hipModuleUnload", code) {
                    eprintln!("gemm-rocm: {e}");
                }
            }
            Err(e) => eprintln!("gemm-rocm: {e}"),
        }
    }
}

/// A loaded code object on one device.
#[derive(Clone)]
pub struct Module {
    inner: Arc<ModuleInner>,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module").field("device", &self.inner.device).field("raw", &self.inner.raw).finish()
    }
}

impl Module {
    pub(super) fn load(device: &Device, code_object: &[u8]) -> Result<Self> {
        if code_object.len() < 4 || &code_object[..4] != b"\x7fELF" {
            return Err(Error::InvalidArgument("hipModuleLoadData: the code object is not an ELF file".into()));
        }
        let mut image = vec![0u64; code_object.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut image)[..code_object.len()].copy_from_slice(code_object);
        device.set_current()?;
        let hip = device.hip.clone();
        let f = hip.api.hipModuleLoadData()?;
        let mut raw: sys::hipModule_t = std::ptr::null_mut();
        // SAFETY: `hipModuleLoadData(hipModule_t*, const void*)` reads the ELF image, which is
        // complete and stays alive (owned by the module) for as long as the module does.
        hip.check("hipModuleLoadData", unsafe { f(&mut raw, image.as_ptr().cast()) })?;
        Ok(Self { inner: Arc::new(ModuleInner { hip, device: device.ordinal, raw, _image: image }) })
    }

    /// The kernel called `name` (its symbol, e.g. `gemm_f16_128x128`).
    pub fn function(&self, name: &str) -> Result<Function> {
        let cname =
            CString::new(name).map_err(|_| Error::InvalidArgument(format!("kernel name {name:?} contains NUL")))?;
        let hip = &self.inner.hip;
        let f = hip.api.hipModuleGetFunction()?;
        let mut raw: sys::hipFunction_t = std::ptr::null_mut();
        // SAFETY: writes one handle; the module is live and the name NUL-terminated.
        hip.check("hipModuleGetFunction", unsafe { f(&mut raw, self.inner.raw, cname.as_ptr()) })?;
        Ok(Function { module: self.inner.clone(), raw, name: name.to_owned() })
    }
}

/// A kernel of a loaded [`Module`]; keeps the module loaded.
#[derive(Clone)]
pub struct Function {
    module: Arc<ModuleInner>,
    raw: sys::hipFunction_t,
    name: String,
}

// SAFETY: `hipFunction_t` is a handle into the module, which this value keeps alive; the HIP
// runtime accepts it from any thread.
unsafe impl Send for Function {}
// SAFETY: as above.
unsafe impl Sync for Function {}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Function").field("name", &self.name).finish()
    }
}

/// Grid and workgroup shape of a launch, in HIP's terms: `grid` counts workgroups
/// (`gridDim`), `block` work-items per workgroup (`blockDim`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Workgroups in x, y, z.
    pub grid: [u32; 3],
    /// Work-items per workgroup in x, y, z.
    pub block: [u32; 3],
    /// Dynamic LDS bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// Refuses empty or oversized shapes before anything reaches the runtime.
    pub fn validate(&self) -> Result<()> {
        if self.grid.contains(&0) || self.block.contains(&0) {
            return Err(Error::InvalidArgument(format!("launch with a zero dimension: {self:?}")));
        }
        let threads: u64 = self.block.iter().map(|&b| u64::from(b)).product();
        if threads > 1024 {
            return Err(Error::InvalidArgument(format!("workgroup of {threads} work-items exceeds 1024")));
        }
        Ok(())
    }
}

/// Packs the `extra` array of `hipModuleLaunchKernel` for an argument buffer.
///
/// `size` must hold `args.len()` and, like `args`, outlive the launch call: the array points
/// at both.
pub fn pack_launch_extra(args: &[u8], size: &usize) -> [*mut c_void; 5] {
    [
        sys::HIP_LAUNCH_PARAM_BUFFER_POINTER,
        args.as_ptr().cast_mut().cast(),
        sys::HIP_LAUNCH_PARAM_BUFFER_SIZE,
        (size as *const usize).cast_mut().cast(),
        sys::HIP_LAUNCH_PARAM_END,
    ]
}

impl Function {
    /// The kernel's symbol name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The raw `hipFunction_t`, valid while this value (or a clone) lives; for measuring or
    /// calling `hipModuleLaunchKernel` directly.
    pub fn as_raw(&self) -> sys::hipFunction_t {
        self.raw
    }

    /// Queues the kernel on `stream` with the packed argument bytes `kernargs`.
    ///
    /// # Safety
    /// The kernel runs arbitrary code on the device. `kernargs` must match the kernel's
    /// argument layout (from its code-object metadata), every device address in it must lie
    /// in a live allocation large enough for what the kernel reads and writes, and those
    /// allocations must stay allocated until the kernel has finished (dropping a
    /// [`super::DeviceBuffer`] waits for the device, so holding the buffers until the stream
    /// is synchronised, or letting them drop, suffices).
    pub unsafe fn launch(&self, config: &LaunchConfig, stream: &Stream, kernargs: &[u8]) -> Result<()> {
        config.validate()?;
        if stream.device() != self.module.device {
            return Err(Error::InvalidArgument(format!(
                "kernel {} is loaded on device {} but the stream is on device {}",
                self.name,
                self.module.device,
                stream.device()
            )));
        }
        let hip = &self.module.hip;
        hip.set_device(self.module.device)?;
        let f = hip.api.hipModuleLaunchKernel()?;
        let size = kernargs.len();
        let mut extra = pack_launch_extra(kernargs, &size);
        let [gx, gy, gz] = config.grid;
        let [bx, by, bz] = config.block;
        // SAFETY: `extra` points at `kernargs` and `size`, both alive across the call (HIP
        // copies the arguments before returning); the handles are live; what the kernel does
        // with the arguments is the caller's contract above.
        let code = unsafe {
            f(
                self.raw,
                gx,
                gy,
                gz,
                bx,
                by,
                bz,
                config.shared_mem_bytes,
                stream.as_raw(),
                std::ptr::null_mut(),
                extra.as_mut_ptr(),
            )
        };
        hip.check("hipModuleLaunchKernel", code)
    }
}

/// Kernel arguments packed as the AMDHSA kernarg segment lays them out: each value at the
/// next multiple of its own alignment, little-endian.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelArgs {
    bytes: Vec<u8>,
}

impl KernelArgs {
    /// No arguments yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Pads with zeros to a multiple of `align` (a power of two).
    pub fn align_to(&mut self, align: usize) -> &mut Self {
        assert!(align.is_power_of_two(), "alignment {align} is not a power of two");
        let padded = self.bytes.len().next_multiple_of(align);
        self.bytes.resize(padded, 0);
        self
    }

    fn push_raw(&mut self, align: usize, data: &[u8]) -> &mut Self {
        self.align_to(align);
        self.bytes.extend_from_slice(data);
        self
    }

    /// A 32-bit unsigned argument.
    pub fn push_u32(&mut self, v: u32) -> &mut Self {
        self.push_raw(4, &v.to_le_bytes())
    }

    /// A 32-bit signed argument.
    pub fn push_i32(&mut self, v: i32) -> &mut Self {
        self.push_raw(4, &v.to_le_bytes())
    }

    /// A 32-bit float argument.
    pub fn push_f32(&mut self, v: f32) -> &mut Self {
        self.push_raw(4, &v.to_le_bytes())
    }

    /// A 64-bit unsigned argument.
    pub fn push_u64(&mut self, v: u64) -> &mut Self {
        self.push_raw(8, &v.to_le_bytes())
    }

    /// A 64-bit float argument.
    pub fn push_f64(&mut self, v: f64) -> &mut Self {
        self.push_raw(8, &v.to_le_bytes())
    }

    /// A global pointer (8 bytes, 8-aligned).
    pub fn push_ptr(&mut self, address: u64) -> &mut Self {
        self.push_u64(address)
    }

    /// The address of a device buffer.
    pub fn push_buffer(&mut self, buffer: &super::DeviceBuffer) -> &mut Self {
        self.push_ptr(buffer.device_address())
    }

    /// The packed bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Size of the packed bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether nothing is packed.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_aligned_like_the_kernarg_segment() {
        let mut a = KernelArgs::new();
        a.push_u32(7).push_ptr(0x1122_3344_5566_7788).push_f32(1.5).push_i32(-2).push_f64(2.0);
        let b = a.as_bytes();
        assert_eq!(&b[0..4], &7u32.to_le_bytes());
        assert_eq!(&b[4..8], &[0; 4], "padding before the pointer");
        assert_eq!(&b[8..16], &0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(&b[16..20], &1.5f32.to_le_bytes());
        assert_eq!(&b[20..24], &(-2i32).to_le_bytes());
        assert_eq!(&b[24..32], &2.0f64.to_le_bytes());
        assert_eq!(a.len(), 32);
        a.push_u32(1).align_to(16);
        assert_eq!(a.len(), 48);
    }

    #[test]
    fn extra_array_points_at_the_buffer_and_its_size() {
        let mut a = KernelArgs::new();
        a.push_u64(42).push_u32(9);
        let size = a.len();
        let extra = pack_launch_extra(a.as_bytes(), &size);
        assert_eq!(extra[0] as usize, 1, "HIP_LAUNCH_PARAM_BUFFER_POINTER");
        assert_eq!(extra[1].cast_const().cast::<u8>(), a.as_bytes().as_ptr());
        assert_eq!(extra[2] as usize, 2, "HIP_LAUNCH_PARAM_BUFFER_SIZE");
        // SAFETY: extra[3] points at `size`, alive here.
        assert_eq!(unsafe { *extra[3].cast_const().cast::<usize>() }, 12);
        assert_eq!(extra[4] as usize, 3, "HIP_LAUNCH_PARAM_END");
    }

    #[test]
    fn launch_shapes_are_validated() {
        let ok = LaunchConfig { grid: [4, 2, 1], block: [256, 1, 1], shared_mem_bytes: 0 };
        assert!(ok.validate().is_ok());
        assert!(LaunchConfig { grid: [0, 1, 1], ..ok }.validate().is_err());
        assert!(LaunchConfig { block: [1, 0, 1], ..ok }.validate().is_err());
        assert!(LaunchConfig { block: [1024, 2, 1], ..ok }.validate().is_err());
        assert!(LaunchConfig { block: [64, 16, 1], ..ok }.validate().is_ok());
    }
}
