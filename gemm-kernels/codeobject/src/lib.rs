//! AMDHSA code object v5 writer and reader for gfx942 (MI300X) and gfx950 (MI355X).
//!
//! The writer turns machine code plus register/LDS/argument facts into the ELF shared
//! object the ROCm loader accepts, with kernel descriptors computed exactly as LLVM 22
//! computes them and a `NT_AMDGPU_METADATA` note; the reader turns any v5 code object
//! (ours or LLVM's; v4 and v6 too) back into kernels with decoded descriptors, metadata
//! and code. Facts and their sources: `shared/reference/ISA.md` section 5 and LLVM's
//! AMDGPUUsage ("ELF Code Object", "Kernel Descriptor", "Code Object V3 to V6 Metadata").
//!
//! ```
//! use gemm_codeobject::{write_code_object, CodeObject, KernelArg, KernelSpec, Target, Arch};
//!
//! let s_endpgm = 0xbf81_0000u32.to_le_bytes().to_vec();
//! let mut a = KernelSpec::new("copy", s_endpgm.clone());
//! a.registers.vgprs = 4;
//! a.registers.sgprs = 8;
//! a.kernarg_size = 16;
//! a.args = vec![KernelArg::global_buffer("dst", 0), KernelArg::global_buffer("src", 8)];
//! a.user_sgprs.kernarg_segment_ptr = true;
//! let mut b = KernelSpec::new("mfma", s_endpgm);
//! b.registers.vgprs = 128;
//! b.registers.agprs = 128; // AccVGPRs start at accum_offset 128
//! b.group_segment_fixed_size = 32768;
//!
//! let bytes = write_code_object(&Target::new(Arch::Gfx942), &[a, b]).unwrap();
//! let co = CodeObject::parse(&bytes).unwrap();
//! let k = co.kernel("mfma").unwrap();
//! assert_eq!(k.descriptor.vgpr_granule(), 31);     // 256 unified VGPRs
//! assert_eq!(k.descriptor.accum_offset(), 128);
//! assert_eq!(k.metadata.as_ref().unwrap().agpr_count, Some(128));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod elf;
pub mod kernel_descriptor;
pub mod metadata;
pub mod msgpack;
pub mod reader;
pub mod target;
pub mod writer;

pub use kernel_descriptor::{
    DescriptorConfig, DescriptorError, FloatMode, KernelDescriptor, RegisterUsage, SystemSgprs, UserSgprs, WorkitemIds,
};
pub use metadata::{AddressSpace, KernelArg, KernelMetadata, Metadata, MetadataError, ValueKind};
pub use reader::{CodeObject, Kernel, ReadError};
pub use target::{Arch, FeatureSetting, Target};
pub use writer::{write_code_object, write_code_object_with, KernelSpec, WriteError, WriterOptions};
