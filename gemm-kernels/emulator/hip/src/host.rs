//! Host memory named by a C caller's pointer: the only place the emulator reads or writes
//! through such a pointer. Every function here is `unsafe` with the contract of the HIP call
//! that handed the pointer over.

/// Copies `len` bytes from host address `ptr`.
///
/// # Safety
/// `ptr..ptr + len` must be readable host memory for the duration of the call (the contract
/// of the HIP copy that named it).
pub unsafe fn read(ptr: usize, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    // SAFETY: the caller guarantees the source range is readable; `out` is a fresh buffer of
    // `len` bytes, so the ranges cannot overlap.
    unsafe { std::ptr::copy_nonoverlapping(ptr as *const u8, out.as_mut_ptr(), len) };
    out
}

/// Copies `bytes` to host address `ptr`.
///
/// # Safety
/// `ptr..ptr + bytes.len()` must be writable host memory not otherwise borrowed by Rust code.
pub unsafe fn write(ptr: usize, bytes: &[u8]) {
    // SAFETY: the caller guarantees the destination range is writable; `bytes` is our own
    // buffer (a copy of device memory), so the ranges cannot overlap.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr as *mut u8, bytes.len()) };
}

/// `memmove` between two host ranges.
///
/// # Safety
/// Both ranges must be valid for `len` bytes (source readable, destination writable).
pub unsafe fn copy(dst: usize, src: usize, len: usize) {
    // SAFETY: the caller guarantees both ranges; `copy` allows overlap.
    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
}

/// The largest image `hipModuleLoadData` accepts.
const MAX_IMAGE: u64 = 1 << 30;

/// Why an image was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageError {
    /// Not an ELF file at all.
    NotElf,
    /// An ELF header we cannot size.
    BadHeader(String),
}

fn le(bytes: &[u8], at: usize, n: usize) -> u64 {
    bytes[at..at + n].iter().rev().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// Copies a code object out of host memory. `hipModuleLoadData` receives only a pointer, so
/// the size comes from the ELF64 header: the end of the section and program header tables
/// and of every section with file contents.
///
/// # Safety
/// `ptr` must point at a readable image: at least 4 bytes, and if those are the ELF magic,
/// the whole ELF file its headers describe (the contract of `hipModuleLoadData`).
pub unsafe fn elf_image(ptr: usize) -> Result<Vec<u8>, ImageError> {
    // SAFETY: the caller guarantees 4 readable bytes.
    let magic = unsafe { read(ptr, 4) };
    if magic != b"\x7fELF" {
        return Err(ImageError::NotElf);
    }
    // SAFETY: an ELF file starts with its header; 64 bytes for ELF64.
    let head = unsafe { read(ptr, 64) };
    if head[4] != 2 || head[5] != 1 {
        return Err(ImageError::BadHeader("not a little-endian ELF64 file".into()));
    }
    let (phoff, shoff) = (le(&head, 32, 8), le(&head, 40, 8));
    let (phentsize, phnum) = (le(&head, 54, 2), le(&head, 56, 2));
    let (shentsize, shnum) = (le(&head, 58, 2), le(&head, 60, 2));
    let bad = |what: &str| ImageError::BadHeader(what.to_string());
    let table_end = |off: u64, size: u64, n: u64| off.checked_add(size * n).filter(|&e| e <= MAX_IMAGE);
    let mut end = 64u64;
    end = end.max(table_end(phoff, phentsize, phnum).ok_or_else(|| bad("program headers out of range"))?);
    let sh_end = table_end(shoff, shentsize, shnum).ok_or_else(|| bad("section headers out of range"))?;
    end = end.max(sh_end);
    if shnum > 0 {
        if shentsize < 64 {
            return Err(bad("section header entries shorter than 64 bytes"));
        }
        // SAFETY: the section header table lies inside the ELF file the caller vouches for.
        let table = unsafe { read(ptr + shoff as usize, (shentsize * shnum) as usize) };
        for i in 0..shnum as usize {
            let sh = &table[i * shentsize as usize..][..64];
            let (ty, off, size) = (le(sh, 4, 4), le(sh, 24, 8), le(sh, 32, 8));
            if ty != 8 {
                end = end
                    .max(off.checked_add(size).filter(|&e| e <= MAX_IMAGE).ok_or_else(|| bad("section out of range"))?);
            }
        }
    }
    if phnum > 0 {
        if phentsize < 56 {
            return Err(bad("program header entries shorter than 56 bytes"));
        }
        // SAFETY: the program header table lies inside the ELF file.
        let table = unsafe { read(ptr + phoff as usize, (phentsize * phnum) as usize) };
        for i in 0..phnum as usize {
            let ph = &table[i * phentsize as usize..][..56];
            let (off, size) = (le(ph, 8, 8), le(ph, 32, 8));
            end =
                end.max(off.checked_add(size).filter(|&e| e <= MAX_IMAGE).ok_or_else(|| bad("segment out of range"))?);
        }
    }
    // SAFETY: `end` is the extent of the ELF file as its own headers describe it.
    Ok(unsafe { read(ptr, end as usize) })
}
