//! Reads an AMDHSA code object (v5; v4 and v6 accepted too) into kernels.
//!
//! The reader follows what the ROCm loader relies on (AMDGPUUsage "ELF Code Object",
//! "Symbols", "Note Records", ISA.md 5.1-5.4): kernels are found through their `<name>.kd`
//! `STT_OBJECT` symbols in the dynamic symbol table (the static one when there is no
//! `.dynsym`), each descriptor's `kernel_code_entry_byte_offset` leads to the code, and the
//! `NT_AMDGPU_METADATA` note gives the argument layout. A kernel's code runs from its entry
//! to the end of its `STT_FUNC` symbol when that symbol has a size, else to the next
//! symbol in the same section or the section's end.
//!
//! Input is untrusted (the emulator loads code objects produced by anyone): every offset
//! and size is checked, arithmetic is checked, allocations are bounded by the input size,
//! and every failure is a [`ReadError`].

use crate::elf::{self, Bytes, ElfError, FileHeader, SectionHeader, Symbol};
use crate::kernel_descriptor::{KernelDescriptor, KERNEL_DESCRIPTOR_SIZE};
use crate::metadata::{KernelMetadata, Metadata, MetadataError};
use crate::msgpack::{self, MsgpackError, Value};
use crate::target::{Arch, Target};
use std::collections::HashMap;

/// Why a code object could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// No ELF magic.
    #[error("not an ELF file")]
    NotElf,
    /// A bounds or arithmetic failure while reading ELF structures.
    #[error(transparent)]
    Elf(#[from] ElfError),
    /// The header describes something other than a 64-bit little-endian AMDGPU HSA
    /// shared object of a supported code object version.
    #[error("unsupported ELF header: {what} = {value:#x}")]
    Unsupported {
        /// Which field.
        what: &'static str,
        /// Its value.
        value: u64,
    },
    /// A section index (link, `e_shstrndx`, `st_shndx`) that does not exist.
    #[error("{what}: section index {index} out of range ({count} sections)")]
    BadSectionIndex {
        /// Which reference.
        what: &'static str,
        /// The index.
        index: u64,
        /// How many sections there are.
        count: usize,
    },
    /// A table whose entry size is not the ELF64 one.
    #[error("section {section}: entry size {entsize}, expected {expected}")]
    BadEntrySize {
        /// Section name.
        section: String,
        /// Its `sh_entsize`.
        entsize: u64,
        /// The expected size.
        expected: u64,
    },
    /// Neither `.dynsym` nor `.symtab`.
    #[error("no symbol table")]
    NoSymbolTable,
    /// The metadata note is not MessagePack.
    #[error("metadata note: {0}")]
    Msgpack(#[from] MsgpackError),
    /// The metadata map is not valid metadata.
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// A `.kd` symbol whose size is not 64.
    #[error("kernel {kernel}: descriptor symbol has size {size}, expected 64")]
    BadDescriptorSize {
        /// Kernel name.
        kernel: String,
        /// Symbol size.
        size: u64,
    },
    /// A descriptor or code address not backed by file bytes of an allocated section.
    #[error("kernel {kernel}: {what} at address {addr:#x} is not inside a loaded section")]
    Unmapped {
        /// Kernel name.
        kernel: String,
        /// Descriptor or code.
        what: &'static str,
        /// The address.
        addr: u64,
    },
    /// The entry point is not in an executable section.
    #[error("kernel {kernel}: entry {addr:#x} is not in an executable section")]
    EntryNotExecutable {
        /// Kernel name.
        kernel: String,
        /// The address.
        addr: u64,
    },
    /// Entry address arithmetic overflowed.
    #[error("kernel {kernel}: entry offset {offset} from descriptor {kd_addr:#x} overflows")]
    EntryOverflow {
        /// Kernel name.
        kernel: String,
        /// Descriptor address.
        kd_addr: u64,
        /// The offset.
        offset: i64,
    },
}

/// A section as found in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// Name from `.shstrtab`.
    pub name: String,
    /// The header.
    pub header: SectionHeader,
}

/// A symbol as found in the symbol table the reader used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolInfo {
    /// Name.
    pub name: String,
    /// The raw entry.
    pub symbol: Symbol,
}

/// One kernel: name, descriptor, metadata and code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// The kernel's name (the descriptor symbol without `.kd`).
    pub name: String,
    /// Address of the descriptor (what goes in the AQL packet).
    pub descriptor_address: u64,
    /// The decoded descriptor.
    pub descriptor: KernelDescriptor,
    /// Entry address: descriptor address + `kernel_code_entry_byte_offset`.
    pub entry_address: u64,
    /// The machine code from the entry on (see the module docs for its extent).
    pub code: Vec<u8>,
    /// This kernel's entry in `amdhsa.kernels`, matched by `.symbol` (or `.name`).
    pub metadata: Option<KernelMetadata>,
}

/// A parsed code object.
#[derive(Clone, Debug, PartialEq)]
pub struct CodeObject {
    /// The ELF header.
    pub header: FileHeader,
    /// Processor and features from `e_flags`; `None` when the processor is not one this
    /// crate names (its `EF_AMDGPU_MACH` is in `header.flags & 0xff`).
    pub target: Option<Target>,
    /// Code object version: 4, 5 or 6 (from `EI_ABIVERSION`).
    pub version: u32,
    /// All sections, index 0 included.
    pub sections: Vec<Section>,
    /// The symbols of the table the kernels were found in (`.dynsym`, else `.symtab`).
    pub symbols: Vec<SymbolInfo>,
    /// The decoded metadata note, if there is one.
    pub metadata: Option<Metadata>,
    /// The metadata note as a MessagePack value, unknown keys included.
    pub raw_metadata: Option<Value>,
    /// Kernels in descriptor-address order.
    pub kernels: Vec<Kernel>,
}

impl CodeObject {
    /// Parses a code object.
    pub fn parse(data: &[u8]) -> Result<CodeObject, ReadError> {
        parse(data)
    }

    /// The processor, if known.
    pub fn arch(&self) -> Option<Arch> {
        self.target.map(|t| t.arch)
    }

    /// The kernel named `name`.
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The section named `name`.
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }
}

fn unsupported(what: &'static str, value: u64) -> ReadError {
    ReadError::Unsupported { what, value }
}

fn section_at<'s>(sections: &'s [Section], index: u64, what: &'static str) -> Result<&'s Section, ReadError> {
    usize::try_from(index).ok().and_then(|i| sections.get(i)).ok_or(ReadError::BadSectionIndex {
        what,
        index,
        count: sections.len(),
    })
}

/// The loaded, file-backed section holding `[addr, addr + len)`.
fn mapped(sections: &[Section], addr: u64, len: u64) -> Option<&Section> {
    sections.iter().find(|s| {
        s.header.flags & elf::SHF_ALLOC != 0 && s.header.sh_type != elf::SHT_NOBITS && s.header.contains_addr(addr, len)
    })
}

fn parse(data: &[u8]) -> Result<CodeObject, ReadError> {
    let file = Bytes::new(data, "file");
    if data.len() < 4 {
        return Err(ReadError::NotElf);
    }
    let header = FileHeader::parse(&file)?.ok_or(ReadError::NotElf)?;
    if header.class != elf::ELFCLASS64 {
        return Err(unsupported("EI_CLASS", header.class.into()));
    }
    if header.data != elf::ELFDATA2LSB {
        return Err(unsupported("EI_DATA", header.data.into()));
    }
    if header.machine != elf::EM_AMDGPU {
        return Err(unsupported("e_machine", header.machine.into()));
    }
    if header.os_abi != elf::ELFOSABI_AMDGPU_HSA {
        return Err(unsupported("EI_OSABI", header.os_abi.into()));
    }
    let version = match header.abi_version {
        elf::ELFABIVERSION_AMDGPU_HSA_V4 => 4,
        elf::ELFABIVERSION_AMDGPU_HSA_V5 => 5,
        elf::ELFABIVERSION_AMDGPU_HSA_V6 => 6,
        v => return Err(unsupported("EI_ABIVERSION", v.into())),
    };
    if header.e_type != elf::ET_DYN {
        return Err(unsupported("e_type", header.e_type.into()));
    }
    if header.shnum > 0 && u64::from(header.shentsize) != elf::SHDR_SIZE {
        return Err(unsupported("e_shentsize", header.shentsize.into()));
    }
    let target = Target::from_e_flags(header.flags).ok();

    // Section headers, then their names.
    let mut raw = Vec::with_capacity(usize::from(header.shnum));
    for i in 0..u64::from(header.shnum) {
        let off = i
            .checked_mul(elf::SHDR_SIZE)
            .and_then(|o| o.checked_add(header.shoff))
            .ok_or(ElfError::Overflow("section header table"))?;
        raw.push(SectionHeader::parse(&file, off)?);
    }
    let mut sections: Vec<Section> = raw.iter().map(|h| Section { name: String::new(), header: *h }).collect();
    if !sections.is_empty() {
        let shstr = section_at(&sections, header.shstrndx.into(), "e_shstrndx")?.header.data(&file)?;
        let shstr = Bytes::new(shstr.data(), "section names");
        for s in sections.iter_mut() {
            s.name = shstr.cstr(s.header.name.into())?.to_owned();
        }
    }

    // Symbol table: .dynsym, else .symtab.
    let symtab = sections
        .iter()
        .find(|s| s.header.sh_type == elf::SHT_DYNSYM)
        .or_else(|| sections.iter().find(|s| s.header.sh_type == elf::SHT_SYMTAB))
        .ok_or(ReadError::NoSymbolTable)?;
    if symtab.header.entsize != elf::SYM_SIZE {
        return Err(ReadError::BadEntrySize {
            section: symtab.name.clone(),
            entsize: symtab.header.entsize,
            expected: elf::SYM_SIZE,
        });
    }
    let sym_bytes = symtab.header.data(&file)?;
    let strtab = section_at(&sections, symtab.header.link.into(), "symbol table sh_link")?.header.data(&file)?;
    let strtab = Bytes::new(strtab.data(), "symbol names");
    let count = sym_bytes.len() / elf::SYM_SIZE;
    let mut symbols = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    for i in 0..count {
        let symbol = Symbol::parse(&sym_bytes, i * elf::SYM_SIZE)?;
        let name = strtab.cstr(symbol.name.into())?.to_owned();
        symbols.push(SymbolInfo { name, symbol });
    }

    // Metadata note(s): the first NT_AMDGPU_METADATA owned by "AMDGPU".
    let mut raw_metadata = None;
    for s in sections.iter().filter(|s| s.header.sh_type == elf::SHT_NOTE) {
        let bytes = s.header.data(&file)?;
        for note in elf::parse_notes(&bytes)? {
            if note.name == elf::NOTE_NAME_AMDGPU && note.n_type == elf::NT_AMDGPU_METADATA {
                raw_metadata = Some(msgpack::decode(note.desc)?);
                break;
            }
        }
        if raw_metadata.is_some() {
            break;
        }
    }
    let metadata = raw_metadata.as_ref().map(Metadata::from_value).transpose()?;

    // Symbol names to indices, and per-section sorted symbol addresses for code extents.
    let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(symbols.len());
    for (i, s) in symbols.iter().enumerate() {
        by_name.entry(s.name.as_str()).or_insert(i);
    }
    let mut starts: Vec<(u16, u64)> = symbols
        .iter()
        .filter(|s| s.symbol.shndx != elf::SHN_UNDEF && !s.name.is_empty())
        .map(|s| (s.symbol.shndx, s.symbol.value))
        .collect();
    starts.sort_unstable();
    starts.dedup();

    let mut kernels = Vec::new();
    for s in &symbols {
        let Some(name) = s.name.strip_suffix(".kd") else {
            continue;
        };
        if s.symbol.sym_type() != elf::STT_OBJECT || s.symbol.shndx == elf::SHN_UNDEF {
            continue;
        }
        if s.symbol.size != KERNEL_DESCRIPTOR_SIZE as u64 {
            return Err(ReadError::BadDescriptorSize { kernel: name.to_owned(), size: s.symbol.size });
        }
        let kd_addr = s.symbol.value;
        let unmapped = |what, addr| ReadError::Unmapped { kernel: name.to_owned(), what, addr };
        let kd_sec = mapped(&sections, kd_addr, s.symbol.size).ok_or(unmapped("descriptor", kd_addr))?;
        let kd_off = kd_sec
            .header
            .offset
            .checked_add(kd_addr - kd_sec.header.addr)
            .ok_or(ElfError::Overflow("descriptor offset"))?;
        let mut kd_bytes = [0u8; KERNEL_DESCRIPTOR_SIZE];
        kd_bytes.copy_from_slice(file.slice(kd_off, KERNEL_DESCRIPTOR_SIZE as u64)?);
        let descriptor = KernelDescriptor::from_bytes(&kd_bytes);

        let offset = descriptor.kernel_code_entry_byte_offset;
        let entry = kd_addr.checked_add_signed(offset).ok_or(ReadError::EntryOverflow {
            kernel: name.to_owned(),
            kd_addr,
            offset,
        })?;
        let code_sec_idx = sections
            .iter()
            .position(|sec| {
                sec.header.flags & elf::SHF_ALLOC != 0
                    && sec.header.sh_type != elf::SHT_NOBITS
                    && sec.header.contains_addr(entry, 0)
                    && entry < sec.header.addr.saturating_add(sec.header.size)
            })
            .ok_or(unmapped("code", entry))?;
        let code_sec = &sections[code_sec_idx].header;
        if code_sec.flags & elf::SHF_EXECINSTR == 0 {
            return Err(ReadError::EntryNotExecutable { kernel: name.to_owned(), addr: entry });
        }
        let sec_end = code_sec.addr.saturating_add(code_sec.size);
        let func_size = by_name
            .get(name)
            .map(|&i| &symbols[i].symbol)
            .filter(|f| f.sym_type() == elf::STT_FUNC && f.value == entry && f.size > 0)
            .map(|f| f.size);
        let end = match func_size {
            Some(size) => entry.checked_add(size).filter(|&e| e <= sec_end).ok_or(unmapped("code", entry))?,
            None => {
                let shndx = u16::try_from(code_sec_idx).unwrap_or(u16::MAX);
                let next = starts.partition_point(|&(sec, addr)| (sec, addr) <= (shndx, entry));
                match starts.get(next) {
                    Some(&(sec, addr)) if sec == shndx && addr < sec_end => addr,
                    _ => sec_end,
                }
            }
        };
        let code_off = code_sec.offset.checked_add(entry - code_sec.addr).ok_or(ElfError::Overflow("code offset"))?;
        let code = file.slice(code_off, end - entry)?.to_vec();

        let kd_name = s.name.as_str();
        let metadata = metadata.as_ref().and_then(|m| {
            m.kernels
                .iter()
                .find(|k| k.symbol == kd_name)
                .or_else(|| m.kernels.iter().find(|k| k.name == name))
                .cloned()
        });
        kernels.push(Kernel {
            name: name.to_owned(),
            descriptor_address: kd_addr,
            descriptor,
            entry_address: entry,
            code,
            metadata,
        });
    }
    kernels.sort_by(|a, b| (a.descriptor_address, &a.name).cmp(&(b.descriptor_address, &b.name)));
    kernels.dedup_by(|a, b| a.name == b.name && a.descriptor_address == b.descriptor_address);

    Ok(CodeObject { header, target, version, sections, symbols, metadata, raw_metadata, kernels })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::KernelArg;
    use crate::writer::{write_code_object, KernelSpec};

    fn sample() -> Vec<u8> {
        let mut a =
            KernelSpec::new("first", [0xbf80_0000u32, 0xbf81_0000].iter().flat_map(|w| w.to_le_bytes()).collect());
        a.kernarg_size = 8;
        a.args.push(KernelArg::global_buffer("out", 0));
        a.user_sgprs.kernarg_segment_ptr = true;
        a.registers.vgprs = 3;
        a.registers.sgprs = 4;
        let b = KernelSpec::new("second", 0xbf81_0000u32.to_le_bytes().to_vec());
        write_code_object(&Target::new(Arch::Gfx950), &[a, b]).unwrap()
    }

    #[test]
    fn reads_back_what_the_writer_wrote() {
        let co = CodeObject::parse(&sample()).unwrap();
        assert_eq!(co.arch(), Some(Arch::Gfx950));
        assert_eq!(co.version, 5);
        assert_eq!(co.kernels.len(), 2);
        let k = co.kernel("first").unwrap();
        assert_eq!(k.code.len(), 8);
        assert_eq!(k.entry_address % 256, 0);
        assert_eq!(k.descriptor.user_sgpr_count(), 2);
        let md = k.metadata.as_ref().unwrap();
        assert_eq!(md.args[0].name.as_deref(), Some("out"));
        assert_eq!(md.sgpr_count, 10);
        assert_eq!(co.kernel("second").unwrap().code, 0xbf81_0000u32.to_le_bytes());
        assert_eq!(co.metadata.as_ref().unwrap().target.as_deref(), Some("amdgcn-amd-amdhsa--gfx950"));
    }

    #[test]
    fn rejects_non_code_objects() {
        assert_eq!(CodeObject::parse(b""), Err(ReadError::NotElf));
        assert_eq!(CodeObject::parse(b"\x7fELX...."), Err(ReadError::NotElf));
        let mut b = sample();
        b[18] = 62; // EM_X86_64
        assert!(matches!(CodeObject::parse(&b), Err(ReadError::Unsupported { what: "e_machine", .. })));
        let mut b = sample();
        b[8] = 9;
        assert!(matches!(CodeObject::parse(&b), Err(ReadError::Unsupported { what: "EI_ABIVERSION", .. })));
        let b = sample();
        assert!(matches!(CodeObject::parse(&b[..100]), Err(ReadError::Elf(_))));
    }
}
