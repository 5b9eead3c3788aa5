//! ELF64 little-endian structures, constants, hash functions and bounds-checked reads.
//!
//! Only what an AMDHSA code object needs (AMDGPUUsage "ELF Code Object", ISA.md 5.1-5.2):
//! the file header, section and program headers, `Elf64_Sym`, `Elf64_Dyn`, notes, and the
//! SysV and GNU symbol hash functions used by `.hash` and `.gnu.hash`. Every read goes
//! through [`Bytes`], whose offsets and lengths are checked, so that a malformed file is an
//! [`ElfError`] and never a panic or an out-of-bounds read.

/// `\x7fELF`.
pub const ELFMAG: [u8; 4] = [0x7f, b'E', b'L', b'F'];
/// `EI_CLASS` value for 64-bit objects.
pub const ELFCLASS64: u8 = 2;
/// `EI_DATA` value for little-endian.
pub const ELFDATA2LSB: u8 = 1;
/// `EV_CURRENT`.
pub const EV_CURRENT: u8 = 1;
/// `ELFOSABI_AMDGPU_HSA` (AMDGPUUsage "AMDGPU ELF Header").
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `ELFABIVERSION_AMDGPU_HSA_V4`.
pub const ELFABIVERSION_AMDGPU_HSA_V4: u8 = 2;
/// `ELFABIVERSION_AMDGPU_HSA_V5`: code object v5.
pub const ELFABIVERSION_AMDGPU_HSA_V5: u8 = 3;
/// `ELFABIVERSION_AMDGPU_HSA_V6`.
pub const ELFABIVERSION_AMDGPU_HSA_V6: u8 = 4;
/// `ET_DYN`: the ROCm loader only loads shared objects.
pub const ET_DYN: u16 = 3;
/// `ET_REL`.
pub const ET_REL: u16 = 1;
/// `EM_AMDGPU`.
pub const EM_AMDGPU: u16 = 224;

/// Size of `Elf64_Ehdr`.
pub const EHDR_SIZE: u64 = 64;
/// Size of `Elf64_Phdr`.
pub const PHDR_SIZE: u64 = 56;
/// Size of `Elf64_Shdr`.
pub const SHDR_SIZE: u64 = 64;
/// Size of `Elf64_Sym`.
pub const SYM_SIZE: u64 = 24;
/// Size of `Elf64_Dyn`.
pub const DYN_SIZE: u64 = 16;

/// `SHT_NULL`.
pub const SHT_NULL: u32 = 0;
/// `SHT_PROGBITS`.
pub const SHT_PROGBITS: u32 = 1;
/// `SHT_SYMTAB`.
pub const SHT_SYMTAB: u32 = 2;
/// `SHT_STRTAB`.
pub const SHT_STRTAB: u32 = 3;
/// `SHT_HASH`.
pub const SHT_HASH: u32 = 5;
/// `SHT_DYNAMIC`.
pub const SHT_DYNAMIC: u32 = 6;
/// `SHT_NOTE`.
pub const SHT_NOTE: u32 = 7;
/// `SHT_NOBITS`.
pub const SHT_NOBITS: u32 = 8;
/// `SHT_DYNSYM`.
pub const SHT_DYNSYM: u32 = 11;
/// `SHT_GNU_HASH`.
pub const SHT_GNU_HASH: u32 = 0x6fff_fff6;

/// `SHF_WRITE`.
pub const SHF_WRITE: u64 = 1;
/// `SHF_ALLOC`.
pub const SHF_ALLOC: u64 = 2;
/// `SHF_EXECINSTR`.
pub const SHF_EXECINSTR: u64 = 4;

/// `PT_LOAD`.
pub const PT_LOAD: u32 = 1;
/// `PT_DYNAMIC`.
pub const PT_DYNAMIC: u32 = 2;
/// `PT_NOTE`.
pub const PT_NOTE: u32 = 4;
/// `PT_PHDR`.
pub const PT_PHDR: u32 = 6;
/// `PT_GNU_STACK`.
pub const PT_GNU_STACK: u32 = 0x6474_e551;
/// `PT_GNU_RELRO`.
pub const PT_GNU_RELRO: u32 = 0x6474_e552;
/// `PF_X`.
pub const PF_X: u32 = 1;
/// `PF_W`.
pub const PF_W: u32 = 2;
/// `PF_R`.
pub const PF_R: u32 = 4;

/// `STB_LOCAL`.
pub const STB_LOCAL: u8 = 0;
/// `STB_GLOBAL`.
pub const STB_GLOBAL: u8 = 1;
/// `STT_NOTYPE`.
pub const STT_NOTYPE: u8 = 0;
/// `STT_OBJECT`: kernel descriptors.
pub const STT_OBJECT: u8 = 1;
/// `STT_FUNC`: kernel entry points.
pub const STT_FUNC: u8 = 2;
/// `STV_DEFAULT`.
pub const STV_DEFAULT: u8 = 0;
/// `STV_HIDDEN`.
pub const STV_HIDDEN: u8 = 2;
/// `STV_PROTECTED`: LLVM gives kernel code symbols protected visibility so the descriptor
/// can refer to them without dynamic relocations.
pub const STV_PROTECTED: u8 = 3;
/// `SHN_UNDEF`.
pub const SHN_UNDEF: u16 = 0;

/// `DT_NULL`.
pub const DT_NULL: u64 = 0;
/// `DT_HASH`.
pub const DT_HASH: u64 = 4;
/// `DT_STRTAB`.
pub const DT_STRTAB: u64 = 5;
/// `DT_SYMTAB`.
pub const DT_SYMTAB: u64 = 6;
/// `DT_STRSZ`.
pub const DT_STRSZ: u64 = 10;
/// `DT_SYMENT`.
pub const DT_SYMENT: u64 = 11;
/// `DT_GNU_HASH`.
pub const DT_GNU_HASH: u64 = 0x6fff_fef5;

/// `NT_AMDGPU_METADATA` (AMDGPUUsage "Note Records": code object v3+ metadata note).
pub const NT_AMDGPU_METADATA: u32 = 32;
/// Note owner name for AMDGPU notes.
pub const NOTE_NAME_AMDGPU: &[u8] = b"AMDGPU";

/// Why a byte range could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ElfError {
    /// A read past the end of the file (or of a section).
    #[error("{what}: {len} bytes at offset {offset:#x} run past the end ({size:#x} bytes)")]
    OutOfBounds {
        /// What was being read.
        what: &'static str,
        /// Where.
        offset: u64,
        /// How many bytes.
        len: u64,
        /// Size of the buffer.
        size: u64,
    },
    /// An offset or size computation overflowed.
    #[error("{0}: offset arithmetic overflows")]
    Overflow(&'static str),
    /// A string table entry has no terminating NUL.
    #[error("{what}: string at offset {offset:#x} is not NUL-terminated")]
    UnterminatedString {
        /// Which table.
        what: &'static str,
        /// Offset in the table.
        offset: u64,
    },
    /// A string table entry is not UTF-8.
    #[error("{what}: string at offset {offset:#x} is not valid UTF-8")]
    InvalidUtf8 {
        /// Which table.
        what: &'static str,
        /// Offset in the table.
        offset: u64,
    },
}

/// A byte buffer with checked little-endian reads.
#[derive(Clone, Copy, Debug)]
pub struct Bytes<'a> {
    data: &'a [u8],
    what: &'static str,
}

impl<'a> Bytes<'a> {
    /// Wraps `data`; `what` names it in errors.
    pub fn new(data: &'a [u8], what: &'static str) -> Self {
        Bytes { data, what }
    }

    /// The underlying slice.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The length as u64.
    pub fn len(&self) -> u64 {
        self.data.len() as u64
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// `len` bytes at `offset`, or an error.
    pub fn slice(&self, offset: u64, len: u64) -> Result<&'a [u8], ElfError> {
        let err = ElfError::OutOfBounds { what: self.what, offset, len, size: self.len() };
        let end = offset.checked_add(len).ok_or(err.clone())?;
        if end > self.len() {
            return Err(err);
        }
        // Both fit in usize because they are <= data.len().
        Ok(&self.data[offset as usize..end as usize])
    }

    /// A sub-buffer.
    pub fn sub(&self, offset: u64, len: u64, what: &'static str) -> Result<Bytes<'a>, ElfError> {
        Ok(Bytes::new(self.slice(offset, len)?, what))
    }

    fn array<const N: usize>(&self, offset: u64) -> Result<[u8; N], ElfError> {
        let s = self.slice(offset, N as u64)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// A byte.
    pub fn u8(&self, offset: u64) -> Result<u8, ElfError> {
        Ok(self.array::<1>(offset)?[0])
    }
    /// A little-endian u16.
    pub fn u16(&self, offset: u64) -> Result<u16, ElfError> {
        Ok(u16::from_le_bytes(self.array(offset)?))
    }
    /// A little-endian u32.
    pub fn u32(&self, offset: u64) -> Result<u32, ElfError> {
        Ok(u32::from_le_bytes(self.array(offset)?))
    }
    /// A little-endian u64.
    pub fn u64(&self, offset: u64) -> Result<u64, ElfError> {
        Ok(u64::from_le_bytes(self.array(offset)?))
    }

    /// The NUL-terminated UTF-8 string at `offset`.
    pub fn cstr(&self, offset: u64) -> Result<&'a str, ElfError> {
        let len = self.len().checked_sub(offset).ok_or(ElfError::OutOfBounds {
            what: self.what,
            offset,
            len: 1,
            size: self.len(),
        })?;
        let tail = self.slice(offset, len)?;
        let n = tail.iter().position(|&b| b == 0).ok_or(ElfError::UnterminatedString { what: self.what, offset })?;
        std::str::from_utf8(&tail[..n]).map_err(|_| ElfError::InvalidUtf8 { what: self.what, offset })
    }
}

/// `Elf64_Ehdr`, the fields a reader needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileHeader {
    /// `e_ident[EI_CLASS]`.
    pub class: u8,
    /// `e_ident[EI_DATA]`.
    pub data: u8,
    /// `e_ident[EI_OSABI]`.
    pub os_abi: u8,
    /// `e_ident[EI_ABIVERSION]`.
    pub abi_version: u8,
    /// `e_type`.
    pub e_type: u16,
    /// `e_machine`.
    pub machine: u16,
    /// `e_flags`.
    pub flags: u32,
    /// `e_phoff`.
    pub phoff: u64,
    /// `e_shoff`.
    pub shoff: u64,
    /// `e_phentsize`.
    pub phentsize: u16,
    /// `e_phnum`.
    pub phnum: u16,
    /// `e_shentsize`.
    pub shentsize: u16,
    /// `e_shnum`.
    pub shnum: u16,
    /// `e_shstrndx`.
    pub shstrndx: u16,
}

impl FileHeader {
    /// Reads the header. Only the magic is checked here; the caller judges the rest.
    pub fn parse(b: &Bytes<'_>) -> Result<Option<FileHeader>, ElfError> {
        if b.slice(0, 4)? != ELFMAG {
            return Ok(None);
        }
        b.slice(0, EHDR_SIZE)?;
        Ok(Some(FileHeader {
            class: b.u8(4)?,
            data: b.u8(5)?,
            os_abi: b.u8(7)?,
            abi_version: b.u8(8)?,
            e_type: b.u16(16)?,
            machine: b.u16(18)?,
            flags: b.u32(48)?,
            phoff: b.u64(32)?,
            shoff: b.u64(40)?,
            phentsize: b.u16(54)?,
            phnum: b.u16(56)?,
            shentsize: b.u16(58)?,
            shnum: b.u16(60)?,
            shstrndx: b.u16(62)?,
        }))
    }
}

/// `Elf64_Shdr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SectionHeader {
    /// `sh_name`.
    pub name: u32,
    /// `sh_type`.
    pub sh_type: u32,
    /// `sh_flags`.
    pub flags: u64,
    /// `sh_addr`.
    pub addr: u64,
    /// `sh_offset`.
    pub offset: u64,
    /// `sh_size`.
    pub size: u64,
    /// `sh_link`.
    pub link: u32,
    /// `sh_info`.
    pub info: u32,
    /// `sh_addralign`.
    pub addralign: u64,
    /// `sh_entsize`.
    pub entsize: u64,
}

impl SectionHeader {
    /// Reads the header at `offset`.
    pub fn parse(b: &Bytes<'_>, offset: u64) -> Result<SectionHeader, ElfError> {
        let h = b.sub(offset, SHDR_SIZE, "section header")?;
        Ok(SectionHeader {
            name: h.u32(0)?,
            sh_type: h.u32(4)?,
            flags: h.u64(8)?,
            addr: h.u64(16)?,
            offset: h.u64(24)?,
            size: h.u64(32)?,
            link: h.u32(40)?,
            info: h.u32(44)?,
            addralign: h.u64(48)?,
            entsize: h.u64(56)?,
        })
    }

    /// Appends the 64 bytes.
    pub fn write(&self, out: &mut Vec<u8>) {
        put_u32(out, self.name);
        put_u32(out, self.sh_type);
        put_u64(out, self.flags);
        put_u64(out, self.addr);
        put_u64(out, self.offset);
        put_u64(out, self.size);
        put_u32(out, self.link);
        put_u32(out, self.info);
        put_u64(out, self.addralign);
        put_u64(out, self.entsize);
    }

    /// The section's bytes in the file (empty for `SHT_NOBITS`).
    pub fn data<'a>(&self, file: &Bytes<'a>) -> Result<Bytes<'a>, ElfError> {
        if self.sh_type == SHT_NOBITS {
            return Ok(Bytes::new(&[], "nobits section"));
        }
        file.sub(self.offset, self.size, "section contents")
    }

    /// Whether `addr` lies in this section's address range.
    pub fn contains_addr(&self, addr: u64, len: u64) -> bool {
        match (addr.checked_add(len), self.addr.checked_add(self.size)) {
            (Some(end), Some(sec_end)) => addr >= self.addr && end <= sec_end,
            _ => false,
        }
    }
}

/// `Elf64_Phdr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ProgramHeader {
    /// `p_type`.
    pub p_type: u32,
    /// `p_flags`.
    pub flags: u32,
    /// `p_offset`.
    pub offset: u64,
    /// `p_vaddr`.
    pub vaddr: u64,
    /// `p_paddr`.
    pub paddr: u64,
    /// `p_filesz`.
    pub filesz: u64,
    /// `p_memsz`.
    pub memsz: u64,
    /// `p_align`.
    pub align: u64,
}

impl ProgramHeader {
    /// Reads the header at `offset`.
    pub fn parse(b: &Bytes<'_>, offset: u64) -> Result<ProgramHeader, ElfError> {
        let h = b.sub(offset, PHDR_SIZE, "program header")?;
        Ok(ProgramHeader {
            p_type: h.u32(0)?,
            flags: h.u32(4)?,
            offset: h.u64(8)?,
            vaddr: h.u64(16)?,
            paddr: h.u64(24)?,
            filesz: h.u64(32)?,
            memsz: h.u64(40)?,
            align: h.u64(48)?,
        })
    }

    /// Appends the 56 bytes.
    pub fn write(&self, out: &mut Vec<u8>) {
        put_u32(out, self.p_type);
        put_u32(out, self.flags);
        put_u64(out, self.offset);
        put_u64(out, self.vaddr);
        put_u64(out, self.paddr);
        put_u64(out, self.filesz);
        put_u64(out, self.memsz);
        put_u64(out, self.align);
    }
}

/// `Elf64_Sym`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Symbol {
    /// `st_name`.
    pub name: u32,
    /// `st_info`: binding << 4 | type.
    pub info: u8,
    /// `st_other`: visibility in the low 2 bits.
    pub other: u8,
    /// `st_shndx`.
    pub shndx: u16,
    /// `st_value`.
    pub value: u64,
    /// `st_size`.
    pub size: u64,
}

impl Symbol {
    /// Reads the entry at `offset`.
    pub fn parse(b: &Bytes<'_>, offset: u64) -> Result<Symbol, ElfError> {
        let s = b.sub(offset, SYM_SIZE, "symbol")?;
        Ok(Symbol {
            name: s.u32(0)?,
            info: s.u8(4)?,
            other: s.u8(5)?,
            shndx: s.u16(6)?,
            value: s.u64(8)?,
            size: s.u64(16)?,
        })
    }

    /// Appends the 24 bytes.
    pub fn write(&self, out: &mut Vec<u8>) {
        put_u32(out, self.name);
        out.push(self.info);
        out.push(self.other);
        put_u16(out, self.shndx);
        put_u64(out, self.value);
        put_u64(out, self.size);
    }

    /// `ELF64_ST_TYPE`.
    pub fn sym_type(&self) -> u8 {
        self.info & 0xf
    }

    /// `ELF64_ST_BIND`.
    pub fn binding(&self) -> u8 {
        self.info >> 4
    }

    /// `ELF64_ST_VISIBILITY`.
    pub fn visibility(&self) -> u8 {
        self.other & 3
    }
}

/// The SysV ELF hash (`.hash`, gABI "Hash Table").
pub fn sysv_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0;
    for &c in name {
        h = (h << 4).wrapping_add(u32::from(c));
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
        }
        h &= !g;
    }
    h
}

/// The GNU hash (`.gnu.hash`): Bernstein's `h * 33 + c` from 5381.
pub fn gnu_hash(name: &[u8]) -> u32 {
    name.iter().fold(5381u32, |h, &c| h.wrapping_mul(33).wrapping_add(u32::from(c)))
}

/// Appends a little-endian u16.
pub fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}
/// Appends a little-endian u32.
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}
/// Appends a little-endian u64.
pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// `value` rounded up to a multiple of `align` (a power of two, or 0/1 for none).
pub fn align_up(value: u64, align: u64) -> u64 {
    if align <= 1 {
        value
    } else {
        value.div_ceil(align) * align
    }
}

/// One note record as found in a `SHT_NOTE` section or `PT_NOTE` segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note<'a> {
    /// The owner name without its NUL.
    pub name: &'a [u8],
    /// `n_type`.
    pub n_type: u32,
    /// The descriptor bytes.
    pub desc: &'a [u8],
}

/// Parses the note records in `b` (4-byte aligned name and descriptor, as AMDGPU notes
/// are; AMDGPUUsage "Note Records").
pub fn parse_notes<'a>(b: &Bytes<'a>) -> Result<Vec<Note<'a>>, ElfError> {
    let mut notes = Vec::new();
    let mut off = 0u64;
    while off < b.len() {
        let namesz = u64::from(b.u32(off)?);
        let descsz = u64::from(b.u32(off + 4)?);
        let n_type = b.u32(off + 8)?;
        let name_off = off.checked_add(12).ok_or(ElfError::Overflow("note"))?;
        let name_raw = b.slice(name_off, namesz)?;
        let name = name_raw.strip_suffix(&[0]).unwrap_or(name_raw);
        let desc_off = name_off.checked_add(align_up(namesz, 4)).ok_or(ElfError::Overflow("note"))?;
        let desc = b.slice(desc_off, descsz)?;
        notes.push(Note { name, n_type, desc });
        off = desc_off.checked_add(align_up(descsz, 4)).ok_or(ElfError::Overflow("note"))?;
    }
    Ok(notes)
}

/// Appends one note record with 4-byte padding.
pub fn write_note(out: &mut Vec<u8>, name: &[u8], n_type: u32, desc: &[u8]) {
    let namesz = name.len() + 1;
    put_u32(out, namesz as u32);
    put_u32(out, desc.len() as u32);
    put_u32(out, n_type);
    out.extend_from_slice(name);
    out.push(0);
    out.resize(out.len() + (align_up(namesz as u64, 4) as usize - namesz), 0);
    out.extend_from_slice(desc);
    out.resize(align_up(out.len() as u64, 4) as usize, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_lld_output() {
        // From an ld.lld-22 link of kernels k1, k2 (see tests): .gnu.hash values with
        // the low bit cleared are 0x00597840 / 0x00597842 for "k1"/"k2".
        assert_eq!(gnu_hash(b"k1") & !1, 0x0059_7840);
        assert_eq!(gnu_hash(b"k2") & !1, 0x0059_7842);
        assert_eq!(gnu_hash(b""), 5381);
        assert_eq!(sysv_hash(b""), 0);
        assert_eq!(sysv_hash(b"printf"), 0x077905a6);
    }

    #[test]
    fn bounds_are_checked() {
        let data = [1u8, 2, 3, 4, 5];
        let b = Bytes::new(&data, "t");
        assert_eq!(b.u32(1).unwrap(), 0x0504_0302);
        assert!(b.u32(2).is_err());
        assert!(b.u64(u64::MAX).is_err());
        assert!(b.slice(u64::MAX, 2).is_err());
        assert!(b.cstr(0).is_err());
        assert!(b.cstr(9).is_err());
        let s = Bytes::new(b"\0ab\0", "s");
        assert_eq!(s.cstr(1).unwrap(), "ab");
        assert_eq!(s.cstr(3).unwrap(), "");
    }

    #[test]
    fn notes_round_trip() {
        let mut out = Vec::new();
        write_note(&mut out, b"AMDGPU", NT_AMDGPU_METADATA, &[1, 2, 3]);
        assert_eq!(&out[..12], &[7, 0, 0, 0, 3, 0, 0, 0, 32, 0, 0, 0]);
        assert_eq!(out.len(), 12 + 8 + 4);
        let notes = parse_notes(&Bytes::new(&out, "n")).unwrap();
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].name, b"AMDGPU");
        assert_eq!(notes[0].desc, &[1, 2, 3]);
        assert!(parse_notes(&Bytes::new(&out[..20], "n")).is_err());
    }
}
