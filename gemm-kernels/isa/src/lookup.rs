//! Indexes over the table (built once): by name and by (arch, opcode space, opcode).

use crate::inst::Enc;
use crate::table::{Format, Op, TABLE};
use crate::Arch;
use std::collections::HashMap;
use std::sync::OnceLock;

/// Opcode spaces of the decoder; VOP1/VOP2/VOPC rows also appear in `Vop3` (promoted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Space {
    Sop1,
    Sop2,
    Sopk,
    Sopc,
    Sopp,
    Smem,
    Vop1,
    Vop2,
    Vopc,
    Vop3,
    Vop3p,
    Ds,
    Mubuf,
    Flat,
    Global,
    Scratch,
}

struct Index {
    names: HashMap<&'static str, Op>,
    codes: HashMap<(Arch, Space, u16), (Op, Enc)>,
}

fn index() -> &'static Index {
    static IDX: OnceLock<Index> = OnceLock::new();
    IDX.get_or_init(|| {
        let mut names = HashMap::new();
        let mut codes = HashMap::new();
        for d in TABLE {
            names.insert(d.name, d.op);
            if d.has(crate::table::flags::SCALED) {
                // Decoded through the v_mfma_ld_scale_b32 prefix and the unscaled row's opcode.
                continue;
            }
            for arch in [Arch::Gfx942, Arch::Gfx950] {
                let Some(oc) = d.opcode(arch) else { continue };
                let mut put = |sp, c, e| {
                    codes.insert((arch, sp, c), (d.op, e));
                };
                match d.format {
                    Format::Sop1 => put(Space::Sop1, oc, Enc::Native),
                    Format::Sop2 => put(Space::Sop2, oc, Enc::Native),
                    Format::Sopk => put(Space::Sopk, oc, Enc::Native),
                    Format::Sopc => put(Space::Sopc, oc, Enc::Native),
                    Format::Sopp => put(Space::Sopp, oc, Enc::Native),
                    Format::Smem => put(Space::Smem, oc, Enc::Native),
                    Format::Vop1 => {
                        put(Space::Vop1, oc, Enc::Native);
                        put(Space::Vop3, 0x140 + oc, Enc::E64);
                    }
                    Format::Vop2 => {
                        put(Space::Vop2, oc, Enc::Native);
                        put(Space::Vop3, 0x100 + oc, Enc::E64);
                    }
                    Format::Vopc => {
                        put(Space::Vopc, oc, Enc::Native);
                        put(Space::Vop3, oc, Enc::E64);
                    }
                    Format::Vop3 => put(Space::Vop3, oc, Enc::Native),
                    Format::Vop3p | Format::Mai => put(Space::Vop3p, oc, Enc::Native),
                    Format::Ds => put(Space::Ds, oc, Enc::Native),
                    Format::Mubuf => put(Space::Mubuf, oc, Enc::Native),
                    Format::Flat => put(Space::Flat, oc, Enc::Native),
                    Format::Global => put(Space::Global, oc, Enc::Native),
                    Format::Scratch => put(Space::Scratch, oc, Enc::Native),
                }
            }
        }
        Index { names, codes }
    })
}

pub(crate) fn by_name(name: &str) -> Option<Op> {
    index().names.get(name).copied()
}

pub(crate) fn by_code(arch: Arch, space: Space, code: u16) -> Option<(Op, Enc)> {
    index().codes.get(&(arch, space, code)).copied()
}
