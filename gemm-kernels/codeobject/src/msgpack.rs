//! A small MessagePack encoder and decoder for the `NT_AMDGPU_METADATA` note.
//!
//! Why our own: the note is the only MessagePack in the code object, it uses a handful of
//! types (maps with string keys, arrays, unsigned/signed integers, booleans, strings), and
//! the reader must never panic or over-allocate on hostile input. A few hundred lines give
//! us both properties and exact control over the bytes.
//!
//! The encoder picks the same forms as LLVM's `msgpack::Writer` (used by
//! `msgpack::Document::writeToBlob`, which is how the AMDGPU backend and `llvm-mc`'s
//! `.amdgpu_metadata` directive write the note; AMDGPUUsage "Code Object V3 to V6
//! Metadata"): the smallest integer form, `fixstr`/`str8`/`str16`/`str32` for strings,
//! `fixarray`/`array16`/`array32`, `fixmap`/`map16`/`map32`. Map entries are written in
//! the order they are stored; [`Value::sorted_map`] builds maps in the order LLVM's
//! `std::map<DocNode, DocNode>` iterates (keys by byte order), so that a metadata map we
//! write is byte-identical to the one `llvm-mc-22` writes from the same YAML.
//!
//! The decoder accepts every MessagePack format (spec: <https://github.com/msgpack/msgpack/blob/master/spec.md>),
//! checks every length against the bytes that remain before allocating, and limits nesting
//! depth, so malformed notes become [`MsgpackError`] values.

use std::fmt;

/// A decoded MessagePack value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `nil` (0xc0).
    Nil,
    /// `true`/`false` (0xc3/0xc2).
    Bool(bool),
    /// A non-negative integer (positive fixint, uint8..uint64).
    UInt(u64),
    /// A negative integer (negative fixint, int8..int64 holding a negative value).
    /// Signed encodings of non-negative values decode as [`Value::UInt`].
    Int(i64),
    /// float32 or float64.
    Float(f64),
    /// A UTF-8 string (`str` family). Invalid UTF-8 is a decode error.
    Str(String),
    /// `bin` family.
    Bin(Vec<u8>),
    /// `array` family.
    Array(Vec<Value>),
    /// `map` family, entries in stream order.
    Map(Vec<(Value, Value)>),
    /// `ext` family: type tag and payload.
    Ext(i8, Vec<u8>),
}

/// Why a MessagePack buffer could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MsgpackError {
    /// The buffer ended inside a value.
    #[error("msgpack: unexpected end of data at byte {offset} (needed {needed} more bytes)")]
    UnexpectedEof {
        /// Where the value that did not fit starts.
        offset: usize,
        /// How many bytes it still needed.
        needed: u64,
    },
    /// 0xc1 is never used by the format.
    #[error("msgpack: reserved type byte 0xc1 at byte {offset}")]
    ReservedByte {
        /// Position of the byte.
        offset: usize,
    },
    /// A `str` payload is not UTF-8.
    #[error("msgpack: string at byte {offset} is not valid UTF-8")]
    InvalidUtf8 {
        /// Start of the string payload.
        offset: usize,
    },
    /// Arrays and maps nested deeper than [`MAX_DEPTH`].
    #[error("msgpack: nesting deeper than {MAX_DEPTH} at byte {offset}")]
    TooDeep {
        /// Position of the container that went too deep.
        offset: usize,
    },
    /// Bytes follow the top-level value.
    #[error("msgpack: {extra} trailing bytes after the top-level value")]
    TrailingBytes {
        /// How many bytes were left over.
        extra: usize,
    },
}

/// Deepest nesting of arrays/maps the decoder follows. Real metadata nests 4 deep
/// (root map, kernel list, kernel map, args list, arg map); 64 leaves ample room while
/// keeping recursion bounded on hostile input.
pub const MAX_DEPTH: usize = 64;

impl Value {
    /// Builds a map whose entries are sorted by key bytes, the order in which LLVM's
    /// `msgpack::Document` (a `std::map`) writes string-keyed maps.
    pub fn sorted_map<K: Into<String>>(entries: impl IntoIterator<Item = (K, Value)>) -> Value {
        let mut v: Vec<(String, Value)> = entries.into_iter().map(|(k, v)| (k.into(), v)).collect();
        v.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        Value::Map(v.into_iter().map(|(k, v)| (Value::Str(k), v)).collect())
    }

    /// Looks up a string key in a map. `None` for non-maps or a missing key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries.iter().find(|(k, _)| matches!(k, Value::Str(s) if s == key)).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value as a non-negative integer, if it is one (either signedness).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::UInt(u) => Some(u),
            Value::Int(i) => u64::try_from(i).ok(),
            _ => None,
        }
    }

    /// The value as a string slice.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value as a boolean.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The value as an array slice.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Short name of the value's kind, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Nil => "nil",
            Value::Bool(_) => "bool",
            Value::UInt(_) | Value::Int(_) => "integer",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Bin(_) => "binary",
            Value::Array(_) => "array",
            Value::Map(_) => "map",
            Value::Ext(..) => "ext",
        }
    }
}

impl fmt::Display for Value {
    /// A compact JSON-like rendering, for diagnostics.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Nil => write!(f, "nil"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::UInt(u) => write!(f, "{u}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Bin(b) => write!(f, "<{} bytes>", b.len()),
            Value::Ext(t, b) => write!(f, "<ext {t}: {} bytes>", b.len()),
            Value::Array(a) => {
                write!(f, "[")?;
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "]")
            }
            Value::Map(m) => {
                write!(f, "{{")?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                write!(f, "}}")
            }
        }
    }
}

/// Encodes `value` into a fresh buffer.
pub fn encode(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(value, &mut out);
    out
}

/// Appends the encoding of `value` to `out`, choosing the forms LLVM's writer chooses.
pub fn encode_into(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Nil => out.push(0xc0),
        Value::Bool(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::UInt(u) => encode_uint(*u, out),
        Value::Int(i) => {
            if *i >= 0 {
                encode_uint(i.unsigned_abs(), out);
            } else if *i >= -32 {
                out.push(*i as u8);
            } else if *i >= i64::from(i8::MIN) {
                out.push(0xd0);
                out.push(*i as u8);
            } else if *i >= i64::from(i16::MIN) {
                out.push(0xd1);
                out.extend_from_slice(&(*i as i16).to_be_bytes());
            } else if *i >= i64::from(i32::MIN) {
                out.push(0xd2);
                out.extend_from_slice(&(*i as i32).to_be_bytes());
            } else {
                out.push(0xd3);
                out.extend_from_slice(&i.to_be_bytes());
            }
        }
        Value::Float(x) => {
            out.push(0xcb);
            out.extend_from_slice(&x.to_bits().to_be_bytes());
        }
        Value::Str(s) => {
            let n = s.len();
            if n < 32 {
                out.push(0xa0 | n as u8);
            } else if n <= 0xff {
                out.push(0xd9);
                out.push(n as u8);
            } else if n <= 0xffff {
                out.push(0xda);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            } else {
                out.push(0xdb);
                out.extend_from_slice(&len32(n).to_be_bytes());
            }
            out.extend_from_slice(s.as_bytes());
        }
        Value::Bin(b) => {
            let n = b.len();
            if n <= 0xff {
                out.push(0xc4);
                out.push(n as u8);
            } else if n <= 0xffff {
                out.push(0xc5);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            } else {
                out.push(0xc6);
                out.extend_from_slice(&len32(n).to_be_bytes());
            }
            out.extend_from_slice(b);
        }
        Value::Array(a) => {
            container_header(a.len(), 0x90, 0xdc, out);
            for v in a {
                encode_into(v, out);
            }
        }
        Value::Map(m) => {
            container_header(m.len(), 0x80, 0xde, out);
            for (k, v) in m {
                encode_into(k, out);
                encode_into(v, out);
            }
        }
        Value::Ext(t, b) => {
            let n = b.len();
            match n {
                1 => out.push(0xd4),
                2 => out.push(0xd5),
                4 => out.push(0xd6),
                8 => out.push(0xd7),
                16 => out.push(0xd8),
                _ if n <= 0xff => {
                    out.push(0xc7);
                    out.push(n as u8);
                }
                _ if n <= 0xffff => {
                    out.push(0xc8);
                    out.extend_from_slice(&(n as u16).to_be_bytes());
                }
                _ => {
                    out.push(0xc9);
                    out.extend_from_slice(&len32(n).to_be_bytes());
                }
            }
            out.push(*t as u8);
            out.extend_from_slice(b);
        }
    }
}

/// Lengths above `u32::MAX` cannot be represented; metadata never comes near that, so we
/// saturate rather than panic (the resulting stream would fail to decode, loudly).
fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn encode_uint(u: u64, out: &mut Vec<u8>) {
    if u < 0x80 {
        out.push(u as u8);
    } else if u <= 0xff {
        out.push(0xcc);
        out.push(u as u8);
    } else if u <= 0xffff {
        out.push(0xcd);
        out.extend_from_slice(&(u as u16).to_be_bytes());
    } else if u <= 0xffff_ffff {
        out.push(0xce);
        out.extend_from_slice(&(u as u32).to_be_bytes());
    } else {
        out.push(0xcf);
        out.extend_from_slice(&u.to_be_bytes());
    }
}

fn container_header(n: usize, fix: u8, base16: u8, out: &mut Vec<u8>) {
    if n < 16 {
        out.push(fix | n as u8);
    } else if n <= 0xffff {
        out.push(base16);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(base16 + 1);
        out.extend_from_slice(&len32(n).to_be_bytes());
    }
}

/// Decodes exactly one value spanning the whole of `data`.
pub fn decode(data: &[u8]) -> Result<Value, MsgpackError> {
    let mut d = Decoder { data, pos: 0 };
    let v = d.value(0)?;
    let extra = data.len() - d.pos;
    if extra != 0 {
        return Err(MsgpackError::TrailingBytes { extra });
    }
    Ok(v)
}

/// Decodes one value from the front of `data`, returning it and the bytes it used.
pub fn decode_prefix(data: &[u8]) -> Result<(Value, usize), MsgpackError> {
    let mut d = Decoder { data, pos: 0 };
    let v = d.value(0)?;
    Ok((v, d.pos))
}

struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], MsgpackError> {
        let avail = self.remaining();
        match usize::try_from(n) {
            Ok(n) if n <= avail => {
                let s = &self.data[self.pos..self.pos + n];
                self.pos += n;
                Ok(s)
            }
            _ => Err(MsgpackError::UnexpectedEof { offset: self.pos, needed: n - avail as u64 }),
        }
    }

    fn be(&mut self, n: usize) -> Result<u64, MsgpackError> {
        let b = self.take(n as u64)?;
        Ok(b.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    }

    fn value(&mut self, depth: usize) -> Result<Value, MsgpackError> {
        let start = self.pos;
        let tag = self.take(1)?[0];
        Ok(match tag {
            0x00..=0x7f => Value::UInt(u64::from(tag)),
            0x80..=0x8f => self.map(u64::from(tag & 0x0f), depth, start)?,
            0x90..=0x9f => self.array(u64::from(tag & 0x0f), depth, start)?,
            0xa0..=0xbf => self.string(u64::from(tag & 0x1f))?,
            0xc0 => Value::Nil,
            0xc1 => return Err(MsgpackError::ReservedByte { offset: start }),
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.be(1 << (tag - 0xc4))?;
                Value::Bin(self.take(n)?.to_vec())
            }
            0xc7..=0xc9 => {
                let n = self.be(1 << (tag - 0xc7))?;
                let t = self.take(1)?[0] as i8;
                Value::Ext(t, self.take(n)?.to_vec())
            }
            0xca => Value::Float(f64::from(f32::from_bits(self.be(4)? as u32))),
            0xcb => Value::Float(f64::from_bits(self.be(8)?)),
            0xcc..=0xcf => Value::UInt(self.be(1 << (tag - 0xcc))?),
            0xd0..=0xd3 => {
                let bytes = 1usize << (tag - 0xd0);
                let raw = self.be(bytes)?;
                // Sign-extend from `bytes` bytes.
                let shift = 64 - 8 * bytes as u32;
                let v = ((raw << shift) as i64) >> shift;
                if v >= 0 {
                    Value::UInt(v as u64)
                } else {
                    Value::Int(v)
                }
            }
            0xd4..=0xd8 => {
                let n = 1u64 << (tag - 0xd4);
                let t = self.take(1)?[0] as i8;
                Value::Ext(t, self.take(n)?.to_vec())
            }
            0xd9..=0xdb => {
                let n = self.be(1 << (tag - 0xd9))?;
                self.string(n)?
            }
            0xdc | 0xdd => {
                let n = self.be(if tag == 0xdc { 2 } else { 4 })?;
                self.array(n, depth, start)?
            }
            0xde | 0xdf => {
                let n = self.be(if tag == 0xde { 2 } else { 4 })?;
                self.map(n, depth, start)?
            }
            0xe0..=0xff => Value::Int(i64::from(tag as i8)),
        })
    }

    fn string(&mut self, n: u64) -> Result<Value, MsgpackError> {
        let offset = self.pos;
        let b = self.take(n)?;
        std::str::from_utf8(b).map(|s| Value::Str(s.to_owned())).map_err(|_| MsgpackError::InvalidUtf8 { offset })
    }

    /// Every element takes at least one byte, so a count above the remaining bytes is
    /// already known to be truncated; capping the reservation this way keeps a forged
    /// 2^32 count from allocating gigabytes.
    fn capacity(&self, n: u64, per: usize) -> usize {
        usize::try_from(n).unwrap_or(usize::MAX).min(self.remaining() / per)
    }

    fn array(&mut self, n: u64, depth: usize, start: usize) -> Result<Value, MsgpackError> {
        if depth >= MAX_DEPTH {
            return Err(MsgpackError::TooDeep { offset: start });
        }
        let mut v = Vec::with_capacity(self.capacity(n, 1));
        for _ in 0..n {
            v.push(self.value(depth + 1)?);
        }
        Ok(Value::Array(v))
    }

    fn map(&mut self, n: u64, depth: usize, start: usize) -> Result<Value, MsgpackError> {
        if depth >= MAX_DEPTH {
            return Err(MsgpackError::TooDeep { offset: start });
        }
        let mut v = Vec::with_capacity(self.capacity(n, 2));
        for _ in 0..n {
            let k = self.value(depth + 1)?;
            let val = self.value(depth + 1)?;
            v.push((k, val));
        }
        Ok(Value::Map(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(v: Value) {
        let bytes = encode(&v);
        assert_eq!(decode(&bytes).unwrap(), v, "bytes {bytes:02x?}");
    }

    #[test]
    fn integer_forms_are_the_smallest() {
        assert_eq!(encode(&Value::UInt(0)), [0x00]);
        assert_eq!(encode(&Value::UInt(127)), [0x7f]);
        assert_eq!(encode(&Value::UInt(128)), [0xcc, 0x80]);
        assert_eq!(encode(&Value::UInt(256)), [0xcd, 0x01, 0x00]);
        assert_eq!(encode(&Value::UInt(65536)), [0xce, 0, 1, 0, 0]);
        assert_eq!(encode(&Value::UInt(1 << 32)), [0xcf, 0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(encode(&Value::Int(-1)), [0xff]);
        assert_eq!(encode(&Value::Int(-33)), [0xd0, 0xdf]);
        assert_eq!(encode(&Value::Int(-129)), [0xd1, 0xff, 0x7f]);
        for v in [0, 1, 127, 128, 255, 256, 65535, 65536, u64::MAX] {
            roundtrip(Value::UInt(v));
        }
        for v in [-1, -32, -33, -128, -129, -32768, -32769, i64::MIN] {
            roundtrip(Value::Int(v));
        }
    }

    #[test]
    fn strings_and_containers() {
        assert_eq!(encode(&Value::Str("AMDGPU".into()))[0], 0xa6);
        let long = "x".repeat(40);
        assert_eq!(&encode(&Value::Str(long.clone()))[..2], &[0xd9, 40]);
        roundtrip(Value::Str(long));
        roundtrip(Value::Str("y".repeat(300)));
        roundtrip(Value::Array((0..20).map(Value::UInt).collect()));
        roundtrip(Value::sorted_map([("b", Value::Bool(true)), ("a", Value::Nil), ("c", Value::Float(1.5))]));
        roundtrip(Value::Bin(vec![1, 2, 3]));
        roundtrip(Value::Ext(5, vec![1, 2, 3, 4]));
        roundtrip(Value::Ext(-2, vec![9; 3]));
    }

    #[test]
    fn sorted_map_orders_keys_by_bytes() {
        let m = Value::sorted_map([(".vgpr_count", Value::UInt(1)), (".agpr_count", Value::UInt(0))]);
        let Value::Map(e) = &m else { panic!() };
        assert_eq!(e[0].0, Value::Str(".agpr_count".into()));
        assert_eq!(m.get(".vgpr_count"), Some(&Value::UInt(1)));
    }

    #[test]
    fn hostile_inputs_are_errors() {
        // array32 claiming 4 billion elements, nothing behind it.
        assert!(matches!(decode(&[0xdd, 0xff, 0xff, 0xff, 0xff]), Err(MsgpackError::UnexpectedEof { .. })));
        // str32 claiming 4 GiB.
        assert!(matches!(decode(&[0xdb, 0xff, 0xff, 0xff, 0xff, b'a']), Err(MsgpackError::UnexpectedEof { .. })));
        assert!(matches!(decode(&[0xc1]), Err(MsgpackError::ReservedByte { .. })));
        assert!(matches!(decode(&[0xa1, 0xff]), Err(MsgpackError::InvalidUtf8 { .. })));
        assert!(matches!(decode(&[0x01, 0x02]), Err(MsgpackError::TrailingBytes { extra: 1 })));
        let deep = vec![0x91u8; 1000];
        assert!(matches!(decode(&deep), Err(MsgpackError::TooDeep { .. })));
        assert!(matches!(decode(&[]), Err(MsgpackError::UnexpectedEof { .. })));
    }

    #[test]
    fn signed_forms_of_positive_values_decode_as_uint() {
        assert_eq!(decode(&[0xd0, 0x05]).unwrap(), Value::UInt(5));
        assert_eq!(decode(&[0xd1, 0xff, 0xfe]).unwrap(), Value::Int(-2));
        assert_eq!(decode(&[0xca, 0x3f, 0x80, 0, 0]).unwrap(), Value::Float(1.0));
    }
}
