//! HIP and RCCL/NCCL for the GEMM library, loaded at run time.
//!
//! The library must build and run where ROCm is absent, so `libamdhip64` and `librccl` are
//! opened with `dlopen` when first asked for, never linked. Following cudarc, each library
//! has three layers:
//!
//! * `sys`: the C prototypes, `#[repr(C)]` types and constants of the vendor header, in a
//!   table of symbols resolved lazily on first use ([`hip::sys`], [`nccl::sys`]);
//! * `result`: status codes to `Result`, with the runtime's own name and text
//!   ([`hip::HipError`], [`nccl::NcclError`]);
//! * safe types: [`hip::Hip`], [`hip::Device`], [`hip::DeviceBuffer`], [`hip::Stream`],
//!   [`hip::Module`], [`hip::Function`]; [`nccl::Nccl`], [`nccl::Communicator`].
//!
//! A missing library or symbol is an [`Error`] naming what was looked for (every path tried,
//! or the symbol); `Drop` never panics. `unsafe` lives only at this FFI edge, each block with
//! a `SAFETY:` comment.
//!
//! ```no_run
//! use gemm_rocm::hip::{Hip, KernelArgs, LaunchConfig};
//! # fn main() -> gemm_rocm::Result<()> {
//! let hip = Hip::load()?; // GEMM_HIP_LIBRARY overrides the search
//! for dev in hip.devices()? {
//!     println!("{} {} {} CUs", dev.name()?, dev.arch_name()?, dev.compute_units()?);
//! }
//! let dev = hip.device(0)?;
//! # let code_object: Vec<u8> = vec![];
//! let kernel = dev.load_module(&code_object)?.function("gemm_f16")?;
//! let mut c = dev.alloc(1024 * 4)?;
//! let stream = dev.create_stream()?;
//! let mut args = KernelArgs::new();
//! args.push_buffer(&c).push_u32(1024);
//! let cfg = LaunchConfig { grid: [4, 1, 1], block: [256, 1, 1], shared_mem_bytes: 0 };
//! // SAFETY: the arguments match the kernel's signature and `c` outlives the launch.
//! unsafe { kernel.launch(&cfg, &stream, args.as_bytes())? };
//! stream.synchronize()?;
//! let mut out = vec![0f32; 1024];
//! c.read(0, &mut out)?;
//! # c.fill(0)?;
//! # Ok(()) }
//! ```

#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

pub mod error;
pub mod hip;
pub mod loader;
pub mod nccl;

pub use error::{Error, Result};
pub use loader::LoadError;
