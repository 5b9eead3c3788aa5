//! Assembler: LLVM AMDGPU assembly text → `Inst` (for tests and tools; the compiler
//! builds `Inst` values directly). Accepts the syntax `print` writes and the common
//! spellings `llvm-mc-22` accepts (`hwreg(NAME)`, `swizzle(...)`, `vmcnt(..)`,
//! `-|v1|`, `neg(..)`, `abs(..)`, `sext(..)`).

use crate::inst::{Dpp, Enc, Inst, Mods, Sdwa};
use crate::operand::{fold_literal, InlineFloat, Operand, Reg, RegFile, Special, Ty};
use crate::table::{flags::*, Class, Field, Format, Op, Presence};
use crate::{Arch, AsmError};

type R<T> = Result<T, &'static str>;

/// Assemble a whole text (one instruction per line; `;`/`//` comments and blank lines
/// are skipped) into machine code.
pub fn assemble(text: &str, arch: Arch) -> Result<Vec<u8>, AsmError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if let Some(inst) = parse_line(line, n + 1, arch)? {
            let bytes = inst.encode_bytes(arch).map_err(|e| AsmError::Encode { line: n + 1, source: e })?;
            out.extend(bytes);
        }
    }
    Ok(out)
}

/// Parse one line. `Ok(None)` for blank/comment lines. The chosen encoding is the one
/// LLVM picks: an unsuffixed VOP1/VOP2/VOPC mnemonic uses e32 when its operands fit,
/// else e64. The result encodes on `arch` (otherwise the encode error is returned).
pub fn parse_line(line: &str, line_no: usize, arch: Arch) -> Result<Option<Inst>, AsmError> {
    let code = line.split("//").next().unwrap_or("");
    let code = code.split(';').next().unwrap_or("").trim();
    if code.is_empty() {
        return Ok(None);
    }
    let (mn, rest) = match code.find(char::is_whitespace) {
        Some(p) => (&code[..p], code[p..].trim()),
        None => (code, ""),
    };
    let (op, forced) = resolve(mn).ok_or_else(|| AsmError::UnknownMnemonic { line: line_no, mnemonic: mn.into() })?;
    let syn = |why| AsmError::Syntax { line: line_no, text: code.into(), why };
    let mut cands: Vec<Enc> = match forced {
        Some(e) => vec![e],
        None => vec![Enc::Native],
    };
    let d = op.def();
    if forced.is_none() && matches!(d.format, Format::Vop1 | Format::Vop2 | Format::Vopc) {
        cands.push(Enc::E64);
    }
    let mut first_err = None;
    for enc in cands {
        let inst = build(op, enc, rest).map_err(syn)?;
        match inst.encode(arch) {
            Ok(_) => return Ok(Some(inst)),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(AsmError::Encode { line: line_no, source: first_err.expect("at least one candidate") })
}

/// Mnemonic → row and forced encoding.
fn resolve(mn: &str) -> Option<(Op, Option<Enc>)> {
    if let Some(op) = Op::from_name(mn) {
        return Some((op, None));
    }
    for (suf, e) in [("_e32", Enc::Native), ("_e64", Enc::E64), ("_sdwa", Enc::Sdwa), ("_dpp", Enc::Dpp)] {
        if let Some(base) = mn.strip_suffix(suf) {
            if let Some(op) = Op::from_name(base) {
                return Some((op, Some(e)));
            }
        }
    }
    None
}

/// Split at top-level separators (not inside (), [], ||).
fn split_top(s: &str, sep: fn(char) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut bars = false;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '|' => bars = !bars,
            _ => {}
        }
        if depth == 0 && !bars && sep(ch) {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
        } else {
            cur.push(ch);
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

const FLAGS: &[&str] =
    &["offen", "idxen", "lds", "sc0", "sc1", "nt", "glc", "gds", "clamp", "row_mirror", "row_half_mirror"];

const KEYS: &[&str] = &[
    "offset",
    "offset0",
    "offset1",
    "cbsz",
    "abid",
    "bitop3",
    "blgp",
    "neg",
    "neg_lo",
    "neg_hi",
    "op_sel",
    "op_sel_hi",
    "mul",
    "div",
    "dst_sel",
    "src0_sel",
    "src1_sel",
    "dst_unused",
    "quad_perm",
    "row_shl",
    "row_shr",
    "row_ror",
    "wave_shl",
    "wave_rol",
    "wave_shr",
    "wave_ror",
    "row_bcast",
    "row_mask",
    "bank_mask",
    "bound_ctrl",
];

fn is_modifier(t: &str) -> bool {
    FLAGS.contains(&t) || t.split_once(':').is_some_and(|(k, _)| KEYS.contains(&k))
}

fn parse_int(t: &str) -> Option<i64> {
    let t = t.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if !body.is_empty() && body.chars().all(|c| c.is_ascii_digit()) {
        body.parse().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

fn bit_list(v: &str) -> R<u8> {
    let inner = v.strip_prefix('[').and_then(|x| x.strip_suffix(']')).ok_or("expected [..] list")?;
    let mut bits = 0u8;
    for (i, p) in inner.split(',').enumerate() {
        match p.trim() {
            "0" => {}
            "1" => bits |= 1 << i,
            _ => return Err("list entries must be 0 or 1"),
        }
    }
    Ok(bits)
}

fn sel(v: &str) -> R<u8> {
    ["BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"]
        .iter()
        .position(|s| *s == v)
        .map(|p| p as u8)
        .ok_or("unknown SDWA selector")
}

fn swizzle(v: &str) -> R<i32> {
    let inner = v.strip_prefix("swizzle(").and_then(|x| x.strip_suffix(')')).ok_or("bad swizzle")?;
    let parts: Vec<&str> = inner.split(',').map(|p| p.trim()).collect();
    let num = |i: usize| parts.get(i).and_then(|p| parse_int(p)).ok_or("bad swizzle argument");
    Ok(match parts[0] {
        "QUAD_PERM" => 0x8000 | (num(1)? | num(2)? << 2 | num(3)? << 4 | num(4)? << 6) as i32,
        "SWAP" => (0x1F | num(1)? << 10) as i32,
        "REVERSE" => (0x1F | (num(1)? - 1) << 10) as i32,
        "BROADCAST" => {
            let size = num(1)?;
            ((0x20 - size) | num(2)? << 5) as i32
        }
        _ => return Err("unsupported swizzle mode"),
    })
}

fn parse_modifier(t: &str, m: &mut Mods, nsrc: usize, fmt: Format) -> R<()> {
    if let Some(p) = t.find(':') {
        let (k, v) = (&t[..p], &t[p + 1..]);
        let num = || parse_int(v).ok_or("expected a number");
        match k {
            "offset" if v.starts_with("swizzle(") => m.offset = swizzle(v)?,
            "offset" | "offset0" => m.offset = num()? as i32,
            "offset1" => m.offset1 = num()? as u8,
            "cbsz" => m.cbsz = num()? as u8,
            "abid" => m.abid = num()? as u8,
            "bitop3" => m.bitop3 = u8::try_from(num()?).map_err(|_| "bitop3 is 8 bits")?,
            "blgp" => m.blgp = num()? as u8,
            "neg" | "neg_lo" => m.neg = bit_list(v)?,
            "neg_hi" => m.neg_hi = bit_list(v)?,
            "op_sel" => {
                let b = bit_list(v)?;
                let entries = v.matches(',').count() + 1;
                m.op_sel = if fmt == Format::Vop3p || entries == 4 {
                    b
                } else {
                    (b & ((1 << nsrc) - 1)) | ((b >> nsrc) & 1) << 3
                };
            }
            "op_sel_hi" => {
                let b = bit_list(v)?;
                let keep = m.op_sel_hi & !((1u8 << nsrc) - 1);
                m.op_sel_hi = keep | b;
            }
            "mul" => {
                m.omod = if v == "2" {
                    1
                } else if v == "4" {
                    2
                } else {
                    return Err("bad mul");
                }
            }
            "div" => m.omod = if v == "2" { 3 } else { return Err("bad div") },
            "dst_sel" => m.sdwa.dst_sel = sel(v)?,
            "src0_sel" => m.sdwa.src0_sel = sel(v)?,
            "src1_sel" => m.sdwa.src1_sel = sel(v)?,
            "dst_unused" => {
                m.sdwa.dst_unused = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE"]
                    .iter()
                    .position(|s| *s == v)
                    .ok_or("bad dst_unused")? as u8
            }
            "quad_perm" => {
                let inner = v.strip_prefix('[').and_then(|x| x.strip_suffix(']')).ok_or("bad quad_perm")?;
                let mut c = 0u16;
                for (i, p) in inner.split(',').enumerate() {
                    c |= (parse_int(p).ok_or("bad quad_perm")? as u16 & 3) << (2 * i);
                }
                m.dpp.ctrl = c;
            }
            "row_shl" => m.dpp.ctrl = 0x100 + num()? as u16,
            "row_shr" => m.dpp.ctrl = 0x110 + num()? as u16,
            "row_ror" => m.dpp.ctrl = 0x120 + num()? as u16,
            "wave_shl" => m.dpp.ctrl = 0x130,
            "wave_rol" => m.dpp.ctrl = 0x134,
            "wave_shr" => m.dpp.ctrl = 0x138,
            "wave_ror" => m.dpp.ctrl = 0x13C,
            "row_bcast" => m.dpp.ctrl = if num()? == 15 { 0x142 } else { 0x143 },
            "row_mask" => m.dpp.row_mask = num()? as u8,
            "bank_mask" => m.dpp.bank_mask = num()? as u8,
            "bound_ctrl" => m.dpp.bound_ctrl = true,
            _ => return Err("unknown modifier"),
        }
        return Ok(());
    }
    match t {
        "offen" => m.offen = true,
        "idxen" => m.idxen = true,
        "lds" => m.lds = true,
        "sc0" => m.sc0 = true,
        "sc1" => m.sc1 = true,
        "nt" => m.nt = true,
        "glc" => m.glc = true,
        "gds" => m.gds = true,
        "clamp" => m.clamp = true,
        "row_mirror" => m.dpp.ctrl = 0x140,
        "row_half_mirror" => m.dpp.ctrl = 0x141,
        _ => return Err("unknown modifier"),
    }
    Ok(())
}

fn parse_reg(t: &str) -> Option<Operand> {
    if t == "off" {
        return Some(Operand::Off);
    }
    if let Some(s) = Special::from_name(t) {
        return Some(Operand::Special(s));
    }
    let (file, rest) = if let Some(r) = t.strip_prefix("ttmp") {
        (RegFile::Ttmp, r)
    } else {
        let f = match t.chars().next()? {
            's' => RegFile::Sgpr,
            'v' => RegFile::Vgpr,
            'a' => RegFile::Agpr,
            _ => return None,
        };
        (f, &t[1..])
    };
    if let Some(inner) = rest.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        let (lo, hi) = match inner.split_once(':') {
            Some((l, h)) => (l.trim().parse::<u16>().ok()?, h.trim().parse::<u16>().ok()?),
            None => {
                let v = inner.trim().parse::<u16>().ok()?;
                (v, v)
            }
        };
        if hi < lo || hi - lo >= 32 {
            return None;
        }
        return Some(Operand::Reg(Reg { file, index: lo, count: (hi - lo + 1) as u8 }));
    }
    let idx = rest.parse::<u16>().ok()?;
    Some(Operand::Reg(Reg { file, index: idx, count: 1 }))
}

const HWREGS: &[(&str, i64)] = &[
    ("HW_REG_MODE", 1),
    ("HW_REG_STATUS", 2),
    ("HW_REG_TRAPSTS", 3),
    ("HW_REG_HW_ID", 4),
    ("HW_REG_GPR_ALLOC", 5),
    ("HW_REG_LDS_ALLOC", 6),
    ("HW_REG_IB_STS", 7),
    ("HW_REG_SH_MEM_BASES", 15),
    ("HW_REG_FLAT_SCR_LO", 20),
    ("HW_REG_FLAT_SCR_HI", 21),
    ("HW_REG_XNACK_MASK", 22),
    ("HW_REG_POPS_PACKER", 25),
    ("HW_REG_SHADER_CYCLES", 29),
];

fn parse_hwreg(t: &str) -> R<i64> {
    if let Some(v) = parse_int(t) {
        return Ok(v);
    }
    let inner = t.strip_prefix("hwreg(").and_then(|x| x.strip_suffix(')')).ok_or("expected hwreg(...)")?;
    let parts: Vec<&str> = inner.split(',').map(|p| p.trim()).collect();
    let id = match parse_int(parts[0]) {
        Some(v) => v,
        None => HWREGS.iter().find(|h| h.0 == parts[0]).map(|h| h.1).ok_or("unknown hwreg")?,
    };
    let (off, size) = if parts.len() == 3 {
        (parse_int(parts[1]).ok_or("bad hwreg offset")?, parse_int(parts[2]).ok_or("bad hwreg size")?)
    } else {
        (0, 32)
    };
    if !(1..=32).contains(&size) || !(0..32).contains(&off) || !(0..64).contains(&id) {
        return Err("hwreg field out of range");
    }
    Ok(id | off << 6 | (size - 1) << 11)
}

fn parse_waitcnt(t: &str) -> R<i64> {
    if let Some(v) = parse_int(t) {
        return Ok(v);
    }
    let (mut vm, mut exp, mut lgkm) = (63i64, 7i64, 15i64);
    for part in t.split(|c: char| c.is_whitespace() || c == '&' || c == ',').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('(').ok_or("bad waitcnt")?;
        let v = parse_int(v.trim_end_matches(')')).ok_or("bad waitcnt count")?;
        match k {
            "vmcnt" if (0..64).contains(&v) => vm = v,
            "expcnt" if (0..8).contains(&v) => exp = v,
            "lgkmcnt" if (0..16).contains(&v) => lgkm = v,
            _ => return Err("bad waitcnt counter"),
        }
    }
    Ok((vm & 0xF) | (vm >> 4) << 14 | exp << 4 | lgkm << 8)
}

/// Number text → operand for a slot of type `ty`.
fn parse_number(t: &str, ty: Ty) -> Option<Operand> {
    if let Some(v) = parse_int(t) {
        if (-16..=64).contains(&v) {
            return Some(Operand::Int(v as i8));
        }
        if !(i32::MIN as i64..=u32::MAX as i64).contains(&v) {
            return None;
        }
        return Some(fold_literal(v as u32, ty));
    }
    if t.contains('.') || t.contains('e') {
        let f: f64 = t.parse().ok()?;
        if let Some(x) = InlineFloat::from_text(t) {
            return Some(Operand::Float(x));
        }
        let bits = match ty {
            Ty::F64 => {
                let b = f.to_bits();
                (b >> 32) as u32
            }
            Ty::F16 | Ty::B16 => half_bits(f as f32) as u32,
            _ => (f as f32).to_bits(),
        };
        return Some(fold_literal(bits, ty));
    }
    None
}

/// f32 → IEEE half bits (round to nearest even), enough for literal parsing.
fn half_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xFF) as i32 - 127 + 15;
    let mant = b & 0x7F_FFFF;
    if exp <= 0 || exp >= 31 {
        return sign | if exp >= 31 { 0x7C00 } else { 0 };
    }
    let mut h = (exp as u32) << 10 | mant >> 13;
    let rest = mant & 0x1FFF;
    if rest > 0x1000 || (rest == 0x1000 && h & 1 == 1) {
        h += 1;
    }
    sign | h as u16
}

/// Parse one operand with its source modifiers: returns (operand, neg, abs, sext).
fn parse_src(t: &str) -> (String, bool, bool, bool) {
    let mut t = t.trim().to_string();
    let (mut neg, mut abs, mut sext) = (false, false, false);
    loop {
        if let Some(r) = t.strip_prefix('-') {
            if r.starts_with(|c: char| c.is_ascii_alphabetic() || c == '|') {
                neg = true;
                t = r.to_string();
                continue;
            }
        }
        if t.starts_with('|') && t.ends_with('|') && t.len() > 2 {
            abs = true;
            t = t[1..t.len() - 1].to_string();
            continue;
        }
        let mut unwrapped = false;
        for (p, flag) in [("neg(", &mut neg), ("abs(", &mut abs), ("sext(", &mut sext)] {
            if let Some(r) = t.strip_prefix(p).and_then(|x| x.strip_suffix(')')) {
                *flag = true;
                t = r.to_string();
                unwrapped = true;
                break;
            }
        }
        if !unwrapped {
            break;
        }
    }
    (t, neg, abs, sext)
}

fn build(op: Op, enc: Enc, rest: &str) -> R<Inst> {
    let d = op.def();
    let mut inst = Inst::new(op, &[]);
    inst.enc = enc;
    let nsrc = d.num_vop_srcs();
    let mut segs = split_top(rest, |c| c == ',');
    // Trailing modifiers are whitespace-separated after the last operand.
    let mut mods_tokens = Vec::new();
    if d.has(WAITCNT) {
        // the whole text is the operand
    } else if let Some(last) = segs.pop() {
        let toks = split_top(&last, char::is_whitespace);
        let mut it = toks.into_iter().peekable();
        if let Some(first) = it.peek() {
            if !is_modifier(first) {
                segs.push(it.next().unwrap_or_default());
            }
        }
        mods_tokens.extend(it);
    }
    for t in &mods_tokens {
        parse_modifier(t, &mut inst.mods, nsrc, d.format)?;
    }
    if d.has(WAITCNT) {
        segs = if rest.is_empty() { vec![] } else { vec![rest.to_string()] };
    }
    if d.format == Format::Smem {
        // `s6 offset:0x10` arrived as operand `s6` plus modifier; nothing else to do.
    }
    let slots: Vec<_> = d
        .operands
        .iter()
        .filter(|o| match o.presence {
            Presence::Always => true,
            Presence::UnlessLds => !inst.mods.lds,
            Presence::IfReturn => inst.mods.sc0,
        })
        .filter(|o| !(d.has(OPT_IMM) && segs.is_empty() && o.field == Field::Simm16))
        .collect();
    if slots.len() != segs.len() {
        return Err("wrong number of operands");
    }
    let mut src_i = 0;
    let mut ops = Vec::new();
    for (slot, seg) in slots.iter().zip(&segs) {
        let o = match slot.field {
            Field::Simm16 if d.has(WAITCNT) => Operand::Imm(parse_waitcnt(seg)?),
            Field::Hwreg => Operand::Imm(parse_hwreg(seg)?),
            Field::Simm16 | Field::KImm | Field::Literal => {
                let v = match parse_int(seg) {
                    Some(v) => v,
                    None => match parse_number(seg, slot.ty) {
                        Some(Operand::Lit(l)) => l as i64,
                        Some(Operand::Float(f)) => f.bits(slot.ty) as i64,
                        _ => return Err("expected an immediate"),
                    },
                };
                Operand::Imm(v)
            }
            Field::SmemOffset => match parse_int(seg) {
                Some(v) => Operand::Imm(v),
                None => parse_reg(seg).ok_or("bad SMEM offset")?,
            },
            Field::Src0 | Field::Src1 | Field::Src2 => {
                let (t, neg, abs, sext) = parse_src(seg);
                if neg {
                    inst.mods.neg |= 1 << src_i;
                }
                if abs {
                    inst.mods.abs |= 1 << src_i;
                }
                if sext {
                    if src_i == 0 {
                        inst.mods.sdwa.src0_sext = true;
                    } else {
                        inst.mods.sdwa.src1_sext = true;
                    }
                }
                src_i += 1;
                operand(&t, slot.ty, slot.class)?
            }
            _ => operand(seg, slot.ty, slot.class)?,
        };
        ops.push(o);
    }
    inst.operands = ops;
    if enc != Enc::Sdwa && inst.mods.sdwa != Sdwa::default() {
        return Err("SDWA modifiers need _sdwa");
    }
    if enc != Enc::Dpp && inst.mods.dpp != Dpp::default() {
        return Err("DPP modifiers need _dpp");
    }
    Ok(inst)
}

fn operand(t: &str, ty: Ty, class: Class) -> R<Operand> {
    if let Some(r) = parse_reg(t) {
        return Ok(r);
    }
    if class == Class::Imm {
        return parse_int(t).map(Operand::Imm).ok_or("expected an immediate");
    }
    parse_number(t, ty).ok_or("unrecognised operand")
}
