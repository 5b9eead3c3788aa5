//! Writes a complete AMDHSA code object v5, laid out the way `ld.lld-22 -shared` lays out
//! the link of `llvm-mc-22` output.
//!
//! Why mimic lld: the ROCm loader (ROCr) and the tools accept what lld produces, and
//! matching it byte for byte in the loaded part lets the tests compare our output against
//! LLVM's directly (`tests/llvm_oracle.rs` checks the allocated sections and program
//! headers for identity). The shape (ISA.md 5.1-5.2, AMDGPUUsage "ELF Code Object"):
//!
//! ```text
//! ELF header, 8 program headers                  PHDR
//! .note      NT_AMDGPU_METADATA (msgpack)        LOAD R (file offset 0 .. end of .rodata), NOTE
//! .dynsym    null, kernels (FUNC, PROTECTED), descriptors (OBJECT, size 64)
//! .gnu.hash  .hash  .dynstr
//! .rodata    64-byte kernel descriptors
//! .text      kernels, each 256-byte aligned       LOAD R E (next page, congruent offset)
//! .dynamic   SYMTAB SYMENT STRTAB STRSZ GNU_HASH HASH NULL
//!                                                 LOAD RW, DYNAMIC, GNU_RELRO
//! .relro_padding (NOBITS, to the page end)
//! .symtab .shstrtab .strtab, section headers     (not loaded)
//! ```
//!
//! Symbols appear in the dynamic table in lld's order: kernel code symbols, then the
//! descriptors, stably sorted by GNU-hash bucket. Gaps between kernels are `s_nop 0`, as
//! the assembler's `.p2align` fills code sections; after the last kernel, like `llc-22`,
//! we align to 64 bytes and append 256 `s_code_end` dwords so that instruction prefetch
//! past the end of the last kernel reads valid instructions (AMDGPU backend
//! `EmitCodeEnd`).

use crate::elf::{self, put_u32, put_u64, ProgramHeader, SectionHeader, Symbol};
use crate::kernel_descriptor::{
    DescriptorConfig, DescriptorError, FloatMode, KernelDescriptor, RegisterUsage, SystemSgprs, UserSgprs, WorkitemIds,
    KERNEL_CODE_ALIGN, KERNEL_DESCRIPTOR_ALIGN, KERNEL_DESCRIPTOR_SIZE,
};
use crate::metadata::{KernelArg, KernelMetadata, Metadata, VERSION_V5};
use crate::msgpack;
use crate::target::Target;

/// `s_nop 0`: what the assembler pads code sections with.
pub const S_NOP_0: u32 = 0xbf80_0000;
/// `s_code_end` on GFX9 (SOPP opcode 0x1f).
pub const S_CODE_END: u32 = 0xbf9f_0000;
/// `s_code_end` dwords `llc` appends after the last function.
pub const CODE_END_DWORDS: usize = 256;
/// Page size lld uses for AMDGPU (`defaultMaxPageSize` = `defaultCommonPageSize` = 4 KiB).
pub const PAGE_SIZE: u64 = 0x1000;

/// One kernel to put in a code object: its machine code and everything the descriptor
/// and metadata say about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSpec {
    /// Symbol name of the entry point; the descriptor is `<name>.kd`.
    pub name: String,
    /// Machine code, a whole number of dwords.
    pub code: Vec<u8>,
    /// Register use as LLVM counts it.
    pub registers: RegisterUsage,
    /// Static LDS bytes.
    pub group_segment_fixed_size: u32,
    /// Scratch bytes per work-item.
    pub private_segment_fixed_size: u32,
    /// Kernarg segment size in bytes, hidden arguments included.
    pub kernarg_size: u32,
    /// Kernarg segment alignment (a power of two, at least 1).
    pub kernarg_align: u32,
    /// Argument layout for the metadata.
    pub args: Vec<KernelArg>,
    /// Enabled user SGPRs.
    pub user_sgprs: UserSgprs,
    /// Enabled system SGPRs.
    pub system_sgprs: SystemSgprs,
    /// Enabled work-item ID components.
    pub workitem_ids: WorkitemIds,
    /// `.max_flat_workgroup_size`, 1..=1024.
    pub max_flat_workgroup_size: u32,
    /// RSRC1 float modes.
    pub float_mode: FloatMode,
    /// RSRC2 exception enables (bits 30:24 shifted down).
    pub exceptions: u8,
    /// RSRC3 `TG_SPLIT`.
    pub tg_split: bool,
    /// Uses a dynamically sized stack.
    pub uses_dynamic_stack: bool,
    /// `.sgpr_spill_count`.
    pub sgpr_spill_count: u32,
    /// `.vgpr_spill_count`.
    pub vgpr_spill_count: u32,
    /// `.reqd_workgroup_size`, if the kernel requires one.
    pub reqd_workgroup_size: Option<[u32; 3]>,
    /// `.uniform_work_group_size` (written as 1 when set).
    pub uniform_work_group_size: bool,
}

impl KernelSpec {
    /// A kernel with the assembler's `.amdhsa_*` defaults (workgroup ID X only, no user
    /// SGPRs, work-item ID X, `FloatMode::default()`), kernarg alignment 8, and LLVM's
    /// default `max_flat_workgroup_size` of 1024.
    pub fn new(name: impl Into<String>, code: Vec<u8>) -> KernelSpec {
        KernelSpec {
            name: name.into(),
            code,
            registers: RegisterUsage::default(),
            group_segment_fixed_size: 0,
            private_segment_fixed_size: 0,
            kernarg_size: 0,
            kernarg_align: 8,
            args: Vec::new(),
            user_sgprs: UserSgprs::default(),
            system_sgprs: SystemSgprs::default(),
            workitem_ids: WorkitemIds::X,
            max_flat_workgroup_size: 1024,
            float_mode: FloatMode::default(),
            exceptions: 0,
            tg_split: false,
            uses_dynamic_stack: false,
            sgpr_spill_count: 0,
            vgpr_spill_count: 0,
            reqd_workgroup_size: None,
            uniform_work_group_size: false,
        }
    }

    /// The descriptor inputs.
    pub fn descriptor_config(&self) -> DescriptorConfig {
        DescriptorConfig {
            group_segment_fixed_size: self.group_segment_fixed_size,
            private_segment_fixed_size: self.private_segment_fixed_size,
            kernarg_size: self.kernarg_size,
            registers: self.registers,
            user_sgprs: self.user_sgprs,
            system_sgprs: self.system_sgprs,
            workitem_ids: self.workitem_ids,
            float_mode: self.float_mode,
            exceptions: self.exceptions,
            tg_split: self.tg_split,
            uses_dynamic_stack: self.uses_dynamic_stack,
        }
    }

    /// The metadata entry, with register counts derived as LLVM derives them:
    /// `.vgpr_count` the unified total, `.agpr_count` the AccVGPRs, `.sgpr_count`
    /// including the extra SGPRs.
    pub fn metadata(&self, target: &Target) -> KernelMetadata {
        KernelMetadata {
            name: self.name.clone(),
            symbol: format!("{}.kd", self.name),
            kernarg_segment_size: self.kernarg_size,
            kernarg_segment_align: self.kernarg_align,
            group_segment_fixed_size: self.group_segment_fixed_size,
            private_segment_fixed_size: self.private_segment_fixed_size,
            wavefront_size: 64,
            sgpr_count: self.registers.total_sgprs(target),
            vgpr_count: self.registers.total_vgprs(),
            agpr_count: Some(self.registers.agprs),
            max_flat_workgroup_size: self.max_flat_workgroup_size,
            sgpr_spill_count: Some(self.sgpr_spill_count),
            vgpr_spill_count: Some(self.vgpr_spill_count),
            uses_dynamic_stack: Some(self.uses_dynamic_stack),
            kind: None,
            reqd_workgroup_size: self.reqd_workgroup_size,
            workgroup_size_hint: None,
            uniform_work_group_size: self.uniform_work_group_size.then_some(1),
            args: self.args.clone(),
        }
    }
}

/// Why a code object could not be written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// Nothing to write.
    #[error("a code object needs at least one kernel")]
    NoKernels,
    /// A name the symbol tables cannot hold.
    #[error("kernel name {name:?} is invalid: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// Two symbols would share a name.
    #[error("symbol {0:?} would be defined twice")]
    DuplicateSymbol(String),
    /// No code.
    #[error("kernel {0:?} has no code")]
    EmptyCode(String),
    /// Code length not a multiple of 4.
    #[error("kernel {name:?}: code is {len} bytes, not a whole number of dwords")]
    CodeNotDwords {
        /// Kernel.
        name: String,
        /// Length.
        len: usize,
    },
    /// The descriptor inputs are out of range.
    #[error("kernel {name:?}: {source}")]
    Descriptor {
        /// Kernel.
        name: String,
        /// What is wrong.
        #[source]
        source: DescriptorError,
    },
    /// Kernarg alignment not a power of two.
    #[error("kernel {name:?}: kernarg alignment {align} is not a power of two")]
    BadKernargAlign {
        /// Kernel.
        name: String,
        /// Alignment.
        align: u32,
    },
    /// An argument outside the kernarg segment.
    #[error(
        "kernel {name:?}: argument {index} ({offset}+{size}) lies outside the {kernarg_size}-byte kernarg segment"
    )]
    ArgOutOfRange {
        /// Kernel.
        name: String,
        /// Argument index.
        index: usize,
        /// Its offset.
        offset: u32,
        /// Its size.
        size: u32,
        /// The segment size.
        kernarg_size: u32,
    },
    /// `max_flat_workgroup_size` outside 1..=1024.
    #[error("kernel {name:?}: max_flat_workgroup_size {size} outside 1..=1024")]
    BadWorkgroupSize {
        /// Kernel.
        name: String,
        /// Size.
        size: u32,
    },
    /// The object would exceed what 32-bit ELF fields (note size, string offsets) hold.
    #[error("code object too large: {0}")]
    TooLarge(&'static str),
}

/// Writer options beyond the kernels themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterOptions {
    /// Append `llc`'s `s_code_end` tail after the last kernel (default on).
    pub code_end_padding: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions { code_end_padding: true }
    }
}

/// Writes a code object with default options. Deterministic: equal inputs give equal
/// bytes.
pub fn write_code_object(target: &Target, kernels: &[KernelSpec]) -> Result<Vec<u8>, WriteError> {
    write_code_object_with(target, kernels, &WriterOptions::default())
}

fn validate(kernels: &[KernelSpec]) -> Result<(), WriteError> {
    if kernels.is_empty() {
        return Err(WriteError::NoKernels);
    }
    let mut names = std::collections::BTreeSet::new();
    for k in kernels {
        let bad = |reason| WriteError::InvalidName { name: k.name.clone(), reason };
        if k.name.is_empty() {
            return Err(bad("empty"));
        }
        if k.name.contains('\0') {
            return Err(bad("contains NUL"));
        }
        for sym in [k.name.clone(), format!("{}.kd", k.name)] {
            if !names.insert(sym.clone()) {
                return Err(WriteError::DuplicateSymbol(sym));
            }
        }
        if k.code.is_empty() {
            return Err(WriteError::EmptyCode(k.name.clone()));
        }
        if k.code.len() % 4 != 0 {
            return Err(WriteError::CodeNotDwords { name: k.name.clone(), len: k.code.len() });
        }
        if !k.kernarg_align.is_power_of_two() {
            return Err(WriteError::BadKernargAlign { name: k.name.clone(), align: k.kernarg_align });
        }
        if !(1..=1024).contains(&k.max_flat_workgroup_size) {
            return Err(WriteError::BadWorkgroupSize { name: k.name.clone(), size: k.max_flat_workgroup_size });
        }
        for (index, a) in k.args.iter().enumerate() {
            if a.offset.checked_add(a.size).is_none_or(|end| end > k.kernarg_size) {
                return Err(WriteError::ArgOutOfRange {
                    name: k.name.clone(),
                    index,
                    offset: a.offset,
                    size: a.size,
                    kernarg_size: k.kernarg_size,
                });
            }
        }
    }
    Ok(())
}

/// A string table under construction.
struct StrTab(Vec<u8>);

impl StrTab {
    fn new() -> Self {
        StrTab(vec![0])
    }
    fn add(&mut self, s: &str) -> Result<u32, WriteError> {
        let off = u32::try_from(self.0.len()).map_err(|_| WriteError::TooLarge("string table"))?;
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
        Ok(off)
    }
}

/// A dynamic symbol before layout: name, whether it is a kernel's code (else its
/// descriptor), and the kernel index.
struct DynSym {
    name: String,
    name_off: u32,
    is_code: bool,
    kernel: usize,
    gnu_hash: u32,
}

/// The smallest offset >= `off` congruent to `addr` modulo the page size: how lld places
/// the first section of a `PT_LOAD` in the file.
fn congruent_offset(off: u64, addr: u64) -> u64 {
    let want = addr % PAGE_SIZE;
    let have = off % PAGE_SIZE;
    off + (want + PAGE_SIZE - have) % PAGE_SIZE
}

/// The address lld gives the first section of a new `PT_LOAD` after `dot`: the next page
/// plus `dot`'s offset within its page (so file and memory stay congruent without padding
/// the file), then the section's alignment.
fn next_segment_addr(dot: u64, align: u64) -> u64 {
    elf::align_up(elf::align_up(dot, PAGE_SIZE) + dot % PAGE_SIZE, align)
}

/// Writes a code object.
pub fn write_code_object_with(
    target: &Target,
    kernels: &[KernelSpec],
    options: &WriterOptions,
) -> Result<Vec<u8>, WriteError> {
    validate(kernels)?;
    let n_kernels = kernels.len();

    // Metadata note.
    let metadata = Metadata {
        version: VERSION_V5.to_vec(),
        target: Some(target.target_id()),
        printf: None,
        kernels: kernels.iter().map(|k| k.metadata(target)).collect(),
    };
    let desc = msgpack::encode(&metadata.to_value());
    u32::try_from(desc.len()).map_err(|_| WriteError::TooLarge("metadata note"))?;
    let mut note = Vec::new();
    elf::write_note(&mut note, elf::NOTE_NAME_AMDGPU, elf::NT_AMDGPU_METADATA, &desc);

    // Dynamic symbols in object order (code symbols, then descriptors), strings added in
    // that order, then the stable sort by GNU-hash bucket that lld applies.
    let mut dynstr = StrTab::new();
    let mut syms = Vec::with_capacity(2 * n_kernels);
    for is_code in [true, false] {
        for (i, k) in kernels.iter().enumerate() {
            let name = if is_code { k.name.clone() } else { format!("{}.kd", k.name) };
            syms.push(DynSym {
                name_off: dynstr.add(&name)?,
                gnu_hash: elf::gnu_hash(name.as_bytes()),
                name,
                is_code,
                kernel: i,
            });
        }
    }
    let n_syms = syms.len() as u64;
    let n_buckets = syms.len().div_ceil(4).max(1) as u32;
    syms.sort_by_key(|s| s.gnu_hash % n_buckets);
    // lld: maskWords = NextPowerOf2(numSymbols * 12 / 64), NextPowerOf2 being the next
    // power of two strictly greater.
    let mask_words = ((n_syms * 12 / 64) + 1).next_power_of_two();

    // Section sizes and file layout of the first (read-only) segment.
    let phnum = 8u64;
    let mut off = elf::EHDR_SIZE + phnum * elf::PHDR_SIZE;
    let note_off = elf::align_up(off, 4);
    off = note_off + note.len() as u64;
    let dynsym_off = elf::align_up(off, 8);
    let dynsym_size = (n_syms + 1) * elf::SYM_SIZE;
    off = dynsym_off + dynsym_size;
    let gnu_hash_off = elf::align_up(off, 8);
    let gnu_hash_size = 16 + 8 * mask_words + 4 * u64::from(n_buckets) + 4 * n_syms;
    off = gnu_hash_off + gnu_hash_size;
    let hash_off = elf::align_up(off, 4);
    let hash_size = 4 * (2 + 2 * (n_syms + 1));
    off = hash_off + hash_size;
    let dynstr_off = off;
    let dynstr_size = dynstr.0.len() as u64;
    off = dynstr_off + dynstr_size;
    let rodata_off = elf::align_up(off, KERNEL_DESCRIPTOR_ALIGN);
    let rodata_size = KERNEL_DESCRIPTOR_SIZE as u64 * n_kernels as u64;
    let ro_end = rodata_off + rodata_size;

    // .text contents.
    let mut text = Vec::new();
    let mut entry_offsets = Vec::with_capacity(n_kernels);
    for k in kernels {
        while text.len() as u64 % KERNEL_CODE_ALIGN != 0 {
            put_u32(&mut text, S_NOP_0);
        }
        entry_offsets.push(text.len() as u64);
        text.extend_from_slice(&k.code);
    }
    if options.code_end_padding {
        while text.len() % 64 != 0 {
            put_u32(&mut text, S_CODE_END);
        }
        for _ in 0..CODE_END_DWORDS {
            put_u32(&mut text, S_CODE_END);
        }
    }
    let text_addr = next_segment_addr(ro_end, KERNEL_CODE_ALIGN);
    let text_off = congruent_offset(ro_end, text_addr);
    let text_size = text.len() as u64;

    // .dynamic in the RW segment, then relro padding to the page end.
    let dynamic_size = 7 * elf::DYN_SIZE;
    let dynamic_addr = next_segment_addr(text_addr + text_size, 8);
    let dynamic_off = congruent_offset(text_off + text_size, dynamic_addr);
    let dyn_end_addr = dynamic_addr + dynamic_size;
    let relro_pad = elf::align_up(dyn_end_addr, PAGE_SIZE) - dyn_end_addr;

    // Addresses equal file offsets in the first segment.
    let (note_addr, dynsym_addr, gnu_hash_addr, hash_addr, dynstr_addr, rodata_addr) =
        (note_off, dynsym_off, gnu_hash_off, hash_off, dynstr_off, rodata_off);

    // Kernel descriptors.
    let mut rodata = Vec::with_capacity(rodata_size as usize);
    for (i, k) in kernels.iter().enumerate() {
        let kd_addr = rodata_addr + (i * KERNEL_DESCRIPTOR_SIZE) as u64;
        let entry_addr = text_addr + entry_offsets[i];
        let rel = entry_addr as i64 - kd_addr as i64;
        let kd = KernelDescriptor::build(target, &k.descriptor_config(), rel)
            .map_err(|source| WriteError::Descriptor { name: k.name.clone(), source })?;
        rodata.extend_from_slice(&kd.to_bytes());
    }

    // Section indices.
    const NOTE: u16 = 1;
    const DYNSYM: u16 = 2;
    const GNU_HASH: u16 = 3;
    const HASH: u16 = 4;
    const DYNSTR: u16 = 5;
    const RODATA: u16 = 6;
    const TEXT: u16 = 7;
    const DYNAMIC: u16 = 8;
    const RELRO_PADDING: u16 = 9;
    const SYMTAB: u16 = 10;
    const SHSTRTAB: u16 = 11;
    const STRTAB: u16 = 12;
    const SHNUM: u16 = 13;
    let _ = (NOTE, GNU_HASH, HASH, RELRO_PADDING);

    let symbol_for = |s: &DynSym, name: u32| -> Symbol {
        let k = &kernels[s.kernel];
        if s.is_code {
            Symbol {
                name,
                info: (elf::STB_GLOBAL << 4) | elf::STT_FUNC,
                other: elf::STV_PROTECTED,
                shndx: TEXT,
                value: text_addr + entry_offsets[s.kernel],
                size: k.code.len() as u64,
            }
        } else {
            Symbol {
                name,
                info: (elf::STB_GLOBAL << 4) | elf::STT_OBJECT,
                other: elf::STV_DEFAULT,
                shndx: RODATA,
                value: rodata_addr + (s.kernel * KERNEL_DESCRIPTOR_SIZE) as u64,
                size: KERNEL_DESCRIPTOR_SIZE as u64,
            }
        }
    };

    // .dynsym
    let mut dynsym = Vec::new();
    Symbol::default().write(&mut dynsym);
    for s in &syms {
        symbol_for(s, s.name_off).write(&mut dynsym);
    }

    // .gnu.hash (symndx 1: every dynamic symbol is defined and hashed).
    let mut gnu = Vec::new();
    put_u32(&mut gnu, n_buckets);
    put_u32(&mut gnu, 1);
    put_u32(&mut gnu, mask_words as u32);
    put_u32(&mut gnu, 26);
    let mut bloom = vec![0u64; mask_words as usize];
    for s in &syms {
        let h = u64::from(s.gnu_hash);
        let w = ((h / 64) & (mask_words - 1)) as usize;
        bloom[w] |= (1u64 << (h % 64)) | (1u64 << ((h >> 26) % 64));
    }
    for w in bloom {
        put_u64(&mut gnu, w);
    }
    let mut buckets = vec![0u32; n_buckets as usize];
    let mut values = Vec::with_capacity(syms.len());
    for (i, s) in syms.iter().enumerate() {
        let b = s.gnu_hash % n_buckets;
        let last = syms.get(i + 1).is_none_or(|n| n.gnu_hash % n_buckets != b);
        values.push(if last { s.gnu_hash | 1 } else { s.gnu_hash & !1 });
        if buckets[b as usize] == 0 {
            buckets[b as usize] = i as u32 + 1;
        }
    }
    for v in buckets.into_iter().chain(values) {
        put_u32(&mut gnu, v);
    }

    // .hash: nbucket = nchain = number of dynamic symbols, null included.
    let nsym_all = n_syms as u32 + 1;
    let mut sysv_buckets = vec![0u32; nsym_all as usize];
    let mut chains = vec![0u32; nsym_all as usize];
    for (i, s) in syms.iter().enumerate() {
        let idx = i as u32 + 1;
        let b = (elf::sysv_hash(s.name.as_bytes()) % nsym_all) as usize;
        chains[idx as usize] = sysv_buckets[b];
        sysv_buckets[b] = idx;
    }
    let mut hash = Vec::new();
    put_u32(&mut hash, nsym_all);
    put_u32(&mut hash, nsym_all);
    for v in sysv_buckets.into_iter().chain(chains) {
        put_u32(&mut hash, v);
    }

    // .dynamic
    let mut dynamic = Vec::new();
    for (tag, val) in [
        (elf::DT_SYMTAB, dynsym_addr),
        (elf::DT_SYMENT, elf::SYM_SIZE),
        (elf::DT_STRTAB, dynstr_addr),
        (elf::DT_STRSZ, dynstr_size),
        (elf::DT_GNU_HASH, gnu_hash_addr),
        (elf::DT_HASH, hash_addr),
        (elf::DT_NULL, 0),
    ] {
        put_u64(&mut dynamic, tag);
        put_u64(&mut dynamic, val);
    }

    // .symtab / .strtab: `_DYNAMIC` (local, hidden), then the globals in object order.
    let mut strtab = StrTab::new();
    let mut symtab = Vec::new();
    Symbol::default().write(&mut symtab);
    Symbol {
        name: strtab.add("_DYNAMIC")?,
        info: (elf::STB_LOCAL << 4) | elf::STT_NOTYPE,
        other: elf::STV_HIDDEN,
        shndx: DYNAMIC,
        value: dynamic_addr,
        size: 0,
    }
    .write(&mut symtab);
    let mut object_order: Vec<&DynSym> = syms.iter().collect();
    object_order.sort_by_key(|s| (!s.is_code, s.kernel));
    for s in object_order {
        let name = strtab.add(&s.name)?;
        symbol_for(s, name).write(&mut symtab);
    }

    // .shstrtab
    let mut shstrtab = StrTab::new();
    let names = [
        ".note",
        ".dynsym",
        ".gnu.hash",
        ".hash",
        ".dynstr",
        ".rodata",
        ".text",
        ".dynamic",
        ".relro_padding",
        ".symtab",
        ".shstrtab",
        ".strtab",
    ];
    let mut name_offs = [0u32; 13];
    for (i, n) in names.iter().enumerate() {
        name_offs[i + 1] = shstrtab.add(n)?;
    }

    // Non-allocated sections after the RW segment's file bytes.
    let symtab_off = elf::align_up(dynamic_off + dynamic_size, 8);
    let shstrtab_off = symtab_off + symtab.len() as u64;
    let strtab_off = shstrtab_off + shstrtab.0.len() as u64;
    let shoff = elf::align_up(strtab_off + strtab.0.len() as u64, 8);

    let mk = |i: u16, sh_type, flags, addr, offset, size, link, info, addralign, entsize| SectionHeader {
        name: name_offs[i as usize],
        sh_type,
        flags,
        addr,
        offset,
        size,
        link,
        info,
        addralign,
        entsize,
    };
    let a = elf::SHF_ALLOC;
    let shdrs = [
        SectionHeader::default(),
        mk(NOTE, elf::SHT_NOTE, a, note_addr, note_off, note.len() as u64, 0, 0, 4, 0),
        mk(DYNSYM, elf::SHT_DYNSYM, a, dynsym_addr, dynsym_off, dynsym_size, DYNSTR.into(), 1, 8, elf::SYM_SIZE),
        mk(GNU_HASH, elf::SHT_GNU_HASH, a, gnu_hash_addr, gnu_hash_off, gnu_hash_size, DYNSYM.into(), 0, 8, 0),
        mk(HASH, elf::SHT_HASH, a, hash_addr, hash_off, hash_size, DYNSYM.into(), 0, 4, 4),
        mk(DYNSTR, elf::SHT_STRTAB, a, dynstr_addr, dynstr_off, dynstr_size, 0, 0, 1, 0),
        mk(RODATA, elf::SHT_PROGBITS, a, rodata_addr, rodata_off, rodata_size, 0, 0, KERNEL_DESCRIPTOR_ALIGN, 0),
        mk(TEXT, elf::SHT_PROGBITS, a | elf::SHF_EXECINSTR, text_addr, text_off, text_size, 0, 0, KERNEL_CODE_ALIGN, 0),
        mk(
            DYNAMIC,
            elf::SHT_DYNAMIC,
            a | elf::SHF_WRITE,
            dynamic_addr,
            dynamic_off,
            dynamic_size,
            DYNSTR.into(),
            0,
            8,
            elf::DYN_SIZE,
        ),
        mk(
            RELRO_PADDING,
            elf::SHT_NOBITS,
            a | elf::SHF_WRITE,
            dyn_end_addr,
            dynamic_off + dynamic_size,
            relro_pad,
            0,
            0,
            1,
            0,
        ),
        mk(SYMTAB, elf::SHT_SYMTAB, 0, 0, symtab_off, symtab.len() as u64, STRTAB.into(), 2, 8, elf::SYM_SIZE),
        mk(SHSTRTAB, elf::SHT_STRTAB, 0, 0, shstrtab_off, shstrtab.0.len() as u64, 0, 0, 1, 0),
        mk(STRTAB, elf::SHT_STRTAB, 0, 0, strtab_off, strtab.0.len() as u64, 0, 0, 1, 0),
    ];

    let ph = |p_type, flags, offset, vaddr, filesz, memsz, align| ProgramHeader {
        p_type,
        flags,
        offset,
        vaddr,
        paddr: vaddr,
        filesz,
        memsz,
        align,
    };
    let phdr_size = phnum * elf::PHDR_SIZE;
    let rw_memsz = dynamic_size + relro_pad;
    let phdrs = [
        ph(elf::PT_PHDR, elf::PF_R, elf::EHDR_SIZE, elf::EHDR_SIZE, phdr_size, phdr_size, 8),
        ph(elf::PT_LOAD, elf::PF_R, 0, 0, ro_end, ro_end, PAGE_SIZE),
        ph(elf::PT_LOAD, elf::PF_R | elf::PF_X, text_off, text_addr, text_size, text_size, PAGE_SIZE),
        ph(elf::PT_LOAD, elf::PF_R | elf::PF_W, dynamic_off, dynamic_addr, dynamic_size, rw_memsz, PAGE_SIZE),
        ph(elf::PT_DYNAMIC, elf::PF_R | elf::PF_W, dynamic_off, dynamic_addr, dynamic_size, dynamic_size, 8),
        ph(elf::PT_GNU_RELRO, elf::PF_R, dynamic_off, dynamic_addr, dynamic_size, rw_memsz, 1),
        ph(elf::PT_GNU_STACK, elf::PF_R | elf::PF_W, 0, 0, 0, 0, 0),
        ph(elf::PT_NOTE, elf::PF_R, note_off, note_addr, note.len() as u64, note.len() as u64, 4),
    ];

    // Assemble the file.
    let mut out = Vec::with_capacity((shoff + u64::from(SHNUM) * elf::SHDR_SIZE) as usize);
    out.extend_from_slice(&elf::ELFMAG);
    out.extend_from_slice(&[
        elf::ELFCLASS64,
        elf::ELFDATA2LSB,
        elf::EV_CURRENT,
        elf::ELFOSABI_AMDGPU_HSA,
        elf::ELFABIVERSION_AMDGPU_HSA_V5,
    ]);
    out.resize(16, 0);
    elf::put_u16(&mut out, elf::ET_DYN);
    elf::put_u16(&mut out, elf::EM_AMDGPU);
    put_u32(&mut out, 1); // e_version
    put_u64(&mut out, 0); // e_entry
    put_u64(&mut out, elf::EHDR_SIZE); // e_phoff
    put_u64(&mut out, shoff);
    put_u32(&mut out, target.e_flags());
    elf::put_u16(&mut out, elf::EHDR_SIZE as u16);
    elf::put_u16(&mut out, elf::PHDR_SIZE as u16);
    elf::put_u16(&mut out, phnum as u16);
    elf::put_u16(&mut out, elf::SHDR_SIZE as u16);
    elf::put_u16(&mut out, SHNUM);
    elf::put_u16(&mut out, SHSTRTAB);
    for p in &phdrs {
        p.write(&mut out);
    }
    let place = |out: &mut Vec<u8>, off: u64, bytes: &[u8]| {
        debug_assert!(out.len() as u64 <= off);
        out.resize(off as usize, 0);
        out.extend_from_slice(bytes);
    };
    place(&mut out, note_off, &note);
    place(&mut out, dynsym_off, &dynsym);
    place(&mut out, gnu_hash_off, &gnu);
    place(&mut out, hash_off, &hash);
    place(&mut out, dynstr_off, &dynstr.0);
    place(&mut out, rodata_off, &rodata);
    place(&mut out, text_off, &text);
    place(&mut out, dynamic_off, &dynamic);
    place(&mut out, symtab_off, &symtab);
    place(&mut out, shstrtab_off, &shstrtab.0);
    place(&mut out, strtab_off, &strtab.0);
    out.resize(shoff as usize, 0);
    for s in &shdrs {
        s.write(&mut out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Arch;

    fn endpgm() -> Vec<u8> {
        0xbf81_0000u32.to_le_bytes().to_vec()
    }

    #[test]
    fn layout_follows_lld() {
        // Reference: the ld.lld-22 link of two kernels of 16 and 12 bytes (see
        // tests/llvm_oracle.rs): .text at 0x1600 / file 0x600, .dynamic at 0x2710.
        let t = Target::new(Arch::Gfx942);
        let mut a = KernelSpec::new("k1", [endpgm(), endpgm(), endpgm(), endpgm()].concat());
        a.kernarg_size = 16;
        let b = KernelSpec::new("k2", [endpgm(), endpgm(), endpgm()].concat());
        let bytes = write_code_object_with(&t, &[a, b], &WriterOptions { code_end_padding: false }).unwrap();
        let f = elf::Bytes::new(&bytes, "t");
        let text = SectionHeader::parse(&f, u64::from_le_bytes(bytes[40..48].try_into().unwrap()) + 7 * 64).unwrap();
        assert_eq!(text.sh_type, elf::SHT_PROGBITS);
        assert_eq!(text.addr % 256, 0);
        assert_eq!(text.addr % PAGE_SIZE, text.offset % PAGE_SIZE);
        assert_eq!(text.size, 0x10c);
    }

    #[test]
    fn deterministic_and_validated() {
        let t = Target::new(Arch::Gfx950);
        let k = KernelSpec::new("a", endpgm());
        assert_eq!(write_code_object(&t, std::slice::from_ref(&k)), write_code_object(&t, std::slice::from_ref(&k)));
        assert_eq!(write_code_object(&t, &[]), Err(WriteError::NoKernels));
        assert_eq!(write_code_object(&t, &[k.clone(), k.clone()]), Err(WriteError::DuplicateSymbol("a".into())));
        let bad = KernelSpec::new("b", vec![0; 6]);
        assert!(matches!(write_code_object(&t, &[bad]), Err(WriteError::CodeNotDwords { .. })));
        let mut bad = KernelSpec::new("c", endpgm());
        bad.args.push(KernelArg::by_value("x", 0, 4));
        assert!(matches!(write_code_object(&t, &[bad]), Err(WriteError::ArgOutOfRange { .. })));
        let mut bad = KernelSpec::new("d", endpgm());
        bad.registers.sgprs = 200;
        assert!(matches!(write_code_object(&t, &[bad]), Err(WriteError::Descriptor { .. })));
        let clash = KernelSpec::new("a.kd", endpgm());
        assert_eq!(write_code_object(&t, &[k, clash]), Err(WriteError::DuplicateSymbol("a.kd".into())));
    }

    #[test]
    fn segment_placement_matches_lld_formula() {
        assert_eq!(next_segment_addr(0x5c0, 256), 0x1600);
        assert_eq!(congruent_offset(0x5c0, 0x1600), 0x600);
        assert_eq!(next_segment_addr(0x900, 256), 0x1900);
        assert_eq!(next_segment_addr(0x170c, 8), 0x2710);
        assert_eq!(congruent_offset(0x70c, 0x2710), 0x710);
        assert_eq!(next_segment_addr(0xff8, 256), 0x2000);
        assert_eq!(congruent_offset(0xff8, 0x2000), 0x1000);
    }
}
