//! A kernel's decoded instructions, indexed by byte offset from the entry.

use gemm_isa::{decode_one, Arch, Inst};
use std::collections::HashMap;

/// Decoded code of one kernel. Decoding runs linearly from the entry until the code ends
/// or a word does not decode (padding after `s_endpgm`, data); a branch into an
/// undecodable offset is a fault at run time.
#[derive(Debug)]
pub struct Program {
    pub arch: Arch,
    pub code: Vec<u8>,
    pub insts: Vec<(u64, Inst)>,
    /// Byte offset -> index into `insts`.
    pub index: HashMap<u64, usize>,
    /// Printed instructions, for reports.
    pub text: Vec<String>,
    /// The first decode failure, if any (offset, message).
    pub decode_stop: Option<(u64, String)>,
}

impl Program {
    pub fn new(code: &[u8], arch: Arch) -> Program {
        let mut insts = Vec::new();
        let mut off = 0usize;
        let mut decode_stop = None;
        while off + 4 <= code.len() {
            match decode_one(code, off, arch) {
                Ok((inst, len)) => {
                    insts.push((off as u64, inst));
                    off += len;
                }
                Err(e) => {
                    decode_stop = Some((off as u64, e.to_string()));
                    break;
                }
            }
        }
        let index = insts.iter().enumerate().map(|(i, (o, _))| (*o, i)).collect();
        let text = insts.iter().map(|(_, i)| i.to_string()).collect();
        Program { arch, code: code.to_vec(), insts, index, text, decode_stop }
    }

    /// The printed instruction at `pc`, or `<no instruction at PC>` when none starts there.
    pub fn text_at(&self, pc: u64) -> String {
        self.index.get(&pc).map(|&i| self.text[i].clone()).unwrap_or_else(|| format!("<no instruction at {pc:#x}>"))
    }
}
