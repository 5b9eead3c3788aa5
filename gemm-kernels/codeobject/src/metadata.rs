//! The `NT_AMDGPU_METADATA` map as typed Rust (AMDGPUUsage "Code Object V3 to V6 Metadata",
//! tables "AMDHSA Code Object V3 Metadata Map Keys", "... Kernel Metadata Map Keys",
//! "... Kernel Argument Metadata Map Keys" and their V5 additions; ISA.md 5.4).
//!
//! The runtime reads this note, not the kernel descriptor, to learn each kernel's argument
//! layout (including the hidden arguments it must fill), kernarg size and alignment, and
//! the workgroup-size limit; tools print it (`llvm-readelf --notes`). The typed structures
//! cover the keys this project writes and reads; everything else stays reachable through
//! the raw [`Value`] kept beside them.

use crate::msgpack::Value;
use std::fmt;

/// Why a decoded msgpack map is not valid metadata.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// A required key is absent.
    #[error("metadata: {context} lacks required key {key}")]
    MissingKey {
        /// Where (e.g. `kernel 2`).
        context: String,
        /// The key.
        key: &'static str,
    },
    /// A key holds the wrong kind of value or one out of range.
    #[error("metadata: {context} key {key} has invalid value {found}")]
    BadValue {
        /// Where.
        context: String,
        /// The key.
        key: &'static str,
        /// What was there, rendered.
        found: String,
    },
    /// The top level is not a map.
    #[error("metadata: top level is a {0}, not a map")]
    NotAMap(&'static str),
}

/// `.value_kind` of a kernel argument.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// `by_value`: copied into the kernarg segment.
    ByValue,
    /// `global_buffer`: a pointer to global memory.
    GlobalBuffer,
    /// `dynamic_shared_pointer`.
    DynamicSharedPointer,
    /// `sampler`.
    Sampler,
    /// `image`.
    Image,
    /// `pipe`.
    Pipe,
    /// `queue`.
    Queue,
    /// Any `hidden_*` kind, e.g. `Hidden("block_count_x")` for `hidden_block_count_x`.
    /// The runtime fills these (AMDGPUUsage "Code Object V5 Metadata" hidden kinds).
    Hidden(String),
    /// A kind this crate does not name.
    Other(String),
}

impl ValueKind {
    /// The metadata spelling.
    pub fn as_string(&self) -> String {
        match self {
            ValueKind::ByValue => "by_value".into(),
            ValueKind::GlobalBuffer => "global_buffer".into(),
            ValueKind::DynamicSharedPointer => "dynamic_shared_pointer".into(),
            ValueKind::Sampler => "sampler".into(),
            ValueKind::Image => "image".into(),
            ValueKind::Pipe => "pipe".into(),
            ValueKind::Queue => "queue".into(),
            ValueKind::Hidden(s) => format!("hidden_{s}"),
            ValueKind::Other(s) => s.clone(),
        }
    }

    /// Parses the metadata spelling; never fails (unknown kinds are kept as `Other`).
    pub fn parse(s: &str) -> ValueKind {
        match s {
            "by_value" => ValueKind::ByValue,
            "global_buffer" => ValueKind::GlobalBuffer,
            "dynamic_shared_pointer" => ValueKind::DynamicSharedPointer,
            "sampler" => ValueKind::Sampler,
            "image" => ValueKind::Image,
            "pipe" => ValueKind::Pipe,
            "queue" => ValueKind::Queue,
            _ => match s.strip_prefix("hidden_") {
                Some(rest) => ValueKind::Hidden(rest.to_owned()),
                None => ValueKind::Other(s.to_owned()),
            },
        }
    }

    /// Whether the runtime, not the caller, supplies this argument.
    pub fn is_hidden(&self) -> bool {
        matches!(self, ValueKind::Hidden(_))
    }
}

impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_string())
    }
}

/// `.address_space` of a pointer argument.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    /// `private`.
    Private,
    /// `global`.
    Global,
    /// `constant`.
    Constant,
    /// `local` (LDS).
    Local,
    /// `generic` (flat).
    Generic,
    /// `region` (GDS).
    Region,
    /// Something else.
    Other(String),
}

impl AddressSpace {
    /// The metadata spelling.
    pub fn as_str(&self) -> &str {
        match self {
            AddressSpace::Private => "private",
            AddressSpace::Global => "global",
            AddressSpace::Constant => "constant",
            AddressSpace::Local => "local",
            AddressSpace::Generic => "generic",
            AddressSpace::Region => "region",
            AddressSpace::Other(s) => s,
        }
    }

    /// Parses the metadata spelling.
    pub fn parse(s: &str) -> AddressSpace {
        match s {
            "private" => AddressSpace::Private,
            "global" => AddressSpace::Global,
            "constant" => AddressSpace::Constant,
            "local" => AddressSpace::Local,
            "generic" => AddressSpace::Generic,
            "region" => AddressSpace::Region,
            _ => AddressSpace::Other(s.to_owned()),
        }
    }
}

/// One entry of a kernel's `.args`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelArg {
    /// `.name` (optional).
    pub name: Option<String>,
    /// `.type_name` (optional; OpenCL).
    pub type_name: Option<String>,
    /// `.offset`: byte offset in the kernarg segment.
    pub offset: u32,
    /// `.size`: bytes.
    pub size: u32,
    /// `.value_kind`.
    pub value_kind: ValueKind,
    /// `.address_space`, for pointers.
    pub address_space: Option<AddressSpace>,
    /// `.pointee_align`, for `dynamic_shared_pointer`.
    pub pointee_align: Option<u32>,
    /// `.access` (`read_only`, `write_only`, `read_write`).
    pub access: Option<String>,
    /// `.actual_access`.
    pub actual_access: Option<String>,
    /// `.is_const`.
    pub is_const: Option<bool>,
    /// `.is_restrict`.
    pub is_restrict: Option<bool>,
    /// `.is_volatile`.
    pub is_volatile: Option<bool>,
}

impl KernelArg {
    /// A `global_buffer` pointer in the global address space (8 bytes).
    pub fn global_buffer(name: &str, offset: u32) -> KernelArg {
        KernelArg {
            address_space: Some(AddressSpace::Global),
            ..KernelArg::new(Some(name), offset, 8, ValueKind::GlobalBuffer)
        }
    }

    /// A `by_value` argument.
    pub fn by_value(name: &str, offset: u32, size: u32) -> KernelArg {
        KernelArg::new(Some(name), offset, size, ValueKind::ByValue)
    }

    /// A `hidden_*` argument, e.g. `KernelArg::hidden("block_count_x", 24, 4)`.
    pub fn hidden(kind: &str, offset: u32, size: u32) -> KernelArg {
        KernelArg::new(None, offset, size, ValueKind::Hidden(kind.to_owned()))
    }

    /// An argument with only the required keys plus an optional name.
    pub fn new(name: Option<&str>, offset: u32, size: u32, value_kind: ValueKind) -> KernelArg {
        KernelArg {
            name: name.map(str::to_owned),
            type_name: None,
            offset,
            size,
            value_kind,
            address_space: None,
            pointee_align: None,
            access: None,
            actual_access: None,
            is_const: None,
            is_restrict: None,
            is_volatile: None,
        }
    }

    fn to_value(&self) -> Value {
        let mut e: Vec<(&str, Value)> = vec![
            (".offset", Value::UInt(self.offset.into())),
            (".size", Value::UInt(self.size.into())),
            (".value_kind", Value::Str(self.value_kind.as_string())),
        ];
        let opt_str = |e: &mut Vec<(&str, Value)>, k, v: &Option<String>| {
            if let Some(s) = v {
                e.push((k, Value::Str(s.clone())));
            }
        };
        opt_str(&mut e, ".name", &self.name);
        opt_str(&mut e, ".type_name", &self.type_name);
        opt_str(&mut e, ".access", &self.access);
        opt_str(&mut e, ".actual_access", &self.actual_access);
        if let Some(a) = &self.address_space {
            e.push((".address_space", Value::Str(a.as_str().to_owned())));
        }
        if let Some(a) = self.pointee_align {
            e.push((".pointee_align", Value::UInt(a.into())));
        }
        for (k, v) in
            [(".is_const", self.is_const), (".is_restrict", self.is_restrict), (".is_volatile", self.is_volatile)]
        {
            if let Some(b) = v {
                e.push((k, Value::Bool(b)));
            }
        }
        Value::sorted_map(e)
    }

    fn from_value(v: &Value, ctx: &str) -> Result<KernelArg, MetadataError> {
        let m = Fields::new(v, ctx)?;
        Ok(KernelArg {
            name: m.opt_str(".name")?,
            type_name: m.opt_str(".type_name")?,
            offset: m.req_u32(".offset")?,
            size: m.req_u32(".size")?,
            value_kind: ValueKind::parse(&m.req_str(".value_kind")?),
            address_space: m.opt_str(".address_space")?.as_deref().map(AddressSpace::parse),
            pointee_align: m.opt_u32(".pointee_align")?,
            access: m.opt_str(".access")?,
            actual_access: m.opt_str(".actual_access")?,
            is_const: m.opt_bool(".is_const")?,
            is_restrict: m.opt_bool(".is_restrict")?,
            is_volatile: m.opt_bool(".is_volatile")?,
        })
    }
}

/// One entry of `amdhsa.kernels`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelMetadata {
    /// `.name`: the source-level kernel name.
    pub name: String,
    /// `.symbol`: the kernel descriptor symbol, `<name>.kd`.
    pub symbol: String,
    /// `.kernarg_segment_size`.
    pub kernarg_segment_size: u32,
    /// `.kernarg_segment_align`.
    pub kernarg_segment_align: u32,
    /// `.group_segment_fixed_size`: static LDS bytes.
    pub group_segment_fixed_size: u32,
    /// `.private_segment_fixed_size`.
    pub private_segment_fixed_size: u32,
    /// `.wavefront_size`: 64 on GFX9.
    pub wavefront_size: u32,
    /// `.sgpr_count`: SGPRs including VCC/XNACK/flat scratch.
    pub sgpr_count: u32,
    /// `.vgpr_count`: unified VGPRs (ArchVGPRs, alignment gap, AccVGPRs).
    pub vgpr_count: u32,
    /// `.agpr_count` (gfx90a+; required there).
    pub agpr_count: Option<u32>,
    /// `.max_flat_workgroup_size`.
    pub max_flat_workgroup_size: u32,
    /// `.sgpr_spill_count`.
    pub sgpr_spill_count: Option<u32>,
    /// `.vgpr_spill_count`.
    pub vgpr_spill_count: Option<u32>,
    /// `.uses_dynamic_stack` (v5).
    pub uses_dynamic_stack: Option<bool>,
    /// `.kind` (`normal`, `init`, `fini`).
    pub kind: Option<String>,
    /// `.reqd_workgroup_size`.
    pub reqd_workgroup_size: Option<[u32; 3]>,
    /// `.workgroup_size_hint`.
    pub workgroup_size_hint: Option<[u32; 3]>,
    /// `.uniform_work_group_size` (LLVM writes the integer 1).
    pub uniform_work_group_size: Option<u32>,
    /// `.args`, in kernarg order.
    pub args: Vec<KernelArg>,
}

impl KernelMetadata {
    /// The map, keys in LLVM's order.
    pub fn to_value(&self) -> Value {
        let u = |x: u32| Value::UInt(x.into());
        let mut e: Vec<(&str, Value)> = vec![
            (".name", Value::Str(self.name.clone())),
            (".symbol", Value::Str(self.symbol.clone())),
            (".kernarg_segment_size", u(self.kernarg_segment_size)),
            (".kernarg_segment_align", u(self.kernarg_segment_align)),
            (".group_segment_fixed_size", u(self.group_segment_fixed_size)),
            (".private_segment_fixed_size", u(self.private_segment_fixed_size)),
            (".wavefront_size", u(self.wavefront_size)),
            (".sgpr_count", u(self.sgpr_count)),
            (".vgpr_count", u(self.vgpr_count)),
            (".max_flat_workgroup_size", u(self.max_flat_workgroup_size)),
        ];
        for (k, v) in [
            (".agpr_count", self.agpr_count),
            (".sgpr_spill_count", self.sgpr_spill_count),
            (".vgpr_spill_count", self.vgpr_spill_count),
            (".uniform_work_group_size", self.uniform_work_group_size),
        ] {
            if let Some(x) = v {
                e.push((k, u(x)));
            }
        }
        if let Some(b) = self.uses_dynamic_stack {
            e.push((".uses_dynamic_stack", Value::Bool(b)));
        }
        if let Some(k) = &self.kind {
            e.push((".kind", Value::Str(k.clone())));
        }
        for (k, v) in
            [(".reqd_workgroup_size", self.reqd_workgroup_size), (".workgroup_size_hint", self.workgroup_size_hint)]
        {
            if let Some(xyz) = v {
                e.push((k, Value::Array(xyz.iter().map(|&x| u(x)).collect())));
            }
        }
        if !self.args.is_empty() {
            e.push((".args", Value::Array(self.args.iter().map(KernelArg::to_value).collect())));
        }
        Value::sorted_map(e)
    }

    /// Parses one kernel map. Unknown keys are ignored (they stay in the raw map).
    pub fn from_value(v: &Value, ctx: &str) -> Result<KernelMetadata, MetadataError> {
        let m = Fields::new(v, ctx)?;
        let args = match m.get(".args") {
            None => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, a)| KernelArg::from_value(a, &format!("{ctx} arg {i}")))
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(m.bad(".args", other)),
        };
        Ok(KernelMetadata {
            name: m.req_str(".name")?,
            symbol: m.req_str(".symbol")?,
            kernarg_segment_size: m.req_u32(".kernarg_segment_size")?,
            kernarg_segment_align: m.req_u32(".kernarg_segment_align")?,
            group_segment_fixed_size: m.req_u32(".group_segment_fixed_size")?,
            private_segment_fixed_size: m.req_u32(".private_segment_fixed_size")?,
            wavefront_size: m.req_u32(".wavefront_size")?,
            sgpr_count: m.req_u32(".sgpr_count")?,
            vgpr_count: m.req_u32(".vgpr_count")?,
            agpr_count: m.opt_u32(".agpr_count")?,
            max_flat_workgroup_size: m.req_u32(".max_flat_workgroup_size")?,
            sgpr_spill_count: m.opt_u32(".sgpr_spill_count")?,
            vgpr_spill_count: m.opt_u32(".vgpr_spill_count")?,
            uses_dynamic_stack: m.opt_bool(".uses_dynamic_stack")?,
            kind: m.opt_str(".kind")?,
            reqd_workgroup_size: m.opt_xyz(".reqd_workgroup_size")?,
            workgroup_size_hint: m.opt_xyz(".workgroup_size_hint")?,
            uniform_work_group_size: m.opt_u32(".uniform_work_group_size")?,
            args,
        })
    }
}

/// The whole note: `amdhsa.version`, `amdhsa.target`, `amdhsa.kernels`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Metadata {
    /// `amdhsa.version`: `[1, 2]` for code object v5 and v6, `[1, 1]` for v4.
    pub version: Vec<u32>,
    /// `amdhsa.target`: the target ID (required in v4+ by the loader; optional in the
    /// schema, hence `Option`).
    pub target: Option<String>,
    /// `amdhsa.printf`, when present (printf format strings).
    pub printf: Option<Vec<String>>,
    /// `amdhsa.kernels`.
    pub kernels: Vec<KernelMetadata>,
}

/// `amdhsa.version` for code object v5.
pub const VERSION_V5: [u32; 2] = [1, 2];

impl Metadata {
    /// The map, keys in LLVM's order.
    pub fn to_value(&self) -> Value {
        let mut e: Vec<(&str, Value)> = vec![
            ("amdhsa.version", Value::Array(self.version.iter().map(|&x| Value::UInt(x.into())).collect())),
            ("amdhsa.kernels", Value::Array(self.kernels.iter().map(KernelMetadata::to_value).collect())),
        ];
        if let Some(t) = &self.target {
            e.push(("amdhsa.target", Value::Str(t.clone())));
        }
        if let Some(p) = &self.printf {
            e.push(("amdhsa.printf", Value::Array(p.iter().map(|s| Value::Str(s.clone())).collect())));
        }
        Value::sorted_map(e)
    }

    /// Parses the note's top-level map.
    pub fn from_value(v: &Value) -> Result<Metadata, MetadataError> {
        if !matches!(v, Value::Map(_)) {
            return Err(MetadataError::NotAMap(v.kind_name()));
        }
        let m = Fields::new(v, "amdhsa")?;
        let version = match m.get("amdhsa.version") {
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| x.as_u64().and_then(|x| u32::try_from(x).ok()).ok_or_else(|| m.bad("amdhsa.version", x)))
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(m.bad("amdhsa.version", other)),
            None => return Err(m.missing("amdhsa.version")),
        };
        let kernels = match m.get("amdhsa.kernels") {
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, k)| KernelMetadata::from_value(k, &format!("kernel {i}")))
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(m.bad("amdhsa.kernels", other)),
            None => Vec::new(),
        };
        let printf = match m.get("amdhsa.printf") {
            None => None,
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|s| s.as_str().map(str::to_owned).ok_or_else(|| m.bad("amdhsa.printf", s)))
                    .collect::<Result<_, _>>()?,
            ),
            Some(other) => return Err(m.bad("amdhsa.printf", other)),
        };
        Ok(Metadata { version, target: m.opt_str("amdhsa.target")?, printf, kernels })
    }

    /// The kernel whose `.symbol` or `.name` matches.
    pub fn kernel(&self, name: &str) -> Option<&KernelMetadata> {
        self.kernels.iter().find(|k| k.name == name).or_else(|| self.kernels.iter().find(|k| k.symbol == name))
    }
}

/// Typed look-ups in one map, with errors that say where.
struct Fields<'a> {
    map: &'a Value,
    ctx: &'a str,
}

impl<'a> Fields<'a> {
    fn new(map: &'a Value, ctx: &'a str) -> Result<Self, MetadataError> {
        match map {
            Value::Map(_) => Ok(Fields { map, ctx }),
            other => Err(MetadataError::BadValue {
                context: ctx.to_owned(),
                key: "(self)",
                found: format!("a {}", other.kind_name()),
            }),
        }
    }
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }
    fn bad(&self, key: &'static str, v: &Value) -> MetadataError {
        let mut found = v.to_string();
        if found.len() > 80 {
            let mut cut = 80;
            while !found.is_char_boundary(cut) {
                cut -= 1;
            }
            found.truncate(cut);
            found.push('…');
        }
        MetadataError::BadValue { context: self.ctx.to_owned(), key, found }
    }
    fn missing(&self, key: &'static str) -> MetadataError {
        MetadataError::MissingKey { context: self.ctx.to_owned(), key }
    }
    fn opt_u32(&self, key: &'static str) -> Result<Option<u32>, MetadataError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_u64().and_then(|x| u32::try_from(x).ok()).map(Some).ok_or_else(|| self.bad(key, v)),
        }
    }
    fn req_u32(&self, key: &'static str) -> Result<u32, MetadataError> {
        self.opt_u32(key)?.ok_or_else(|| self.missing(key))
    }
    fn opt_str(&self, key: &'static str) -> Result<Option<String>, MetadataError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Str(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.bad(key, v)),
        }
    }
    fn req_str(&self, key: &'static str) -> Result<String, MetadataError> {
        self.opt_str(key)?.ok_or_else(|| self.missing(key))
    }
    fn opt_bool(&self, key: &'static str) -> Result<Option<bool>, MetadataError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.bad(key, v)),
        }
    }
    fn opt_xyz(&self, key: &'static str) -> Result<Option<[u32; 3]>, MetadataError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => {
                let a = v.as_array().filter(|a| a.len() == 3).ok_or_else(|| self.bad(key, v))?;
                let mut out = [0u32; 3];
                for (o, x) in out.iter_mut().zip(a) {
                    *o = x.as_u64().and_then(|x| u32::try_from(x).ok()).ok_or_else(|| self.bad(key, v))?;
                }
                Ok(Some(out))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgpack;

    fn sample() -> Metadata {
        Metadata {
            version: VERSION_V5.to_vec(),
            target: Some("amdgcn-amd-amdhsa--gfx942".into()),
            printf: None,
            kernels: vec![KernelMetadata {
                name: "axpy".into(),
                symbol: "axpy.kd".into(),
                kernarg_segment_size: 280,
                kernarg_segment_align: 8,
                group_segment_fixed_size: 4096,
                private_segment_fixed_size: 0,
                wavefront_size: 64,
                sgpr_count: 15,
                vgpr_count: 6,
                agpr_count: Some(0),
                max_flat_workgroup_size: 256,
                sgpr_spill_count: Some(0),
                vgpr_spill_count: Some(0),
                uses_dynamic_stack: Some(false),
                kind: None,
                reqd_workgroup_size: Some([256, 1, 1]),
                workgroup_size_hint: None,
                uniform_work_group_size: Some(1),
                args: vec![
                    KernelArg::global_buffer("y", 0),
                    KernelArg::by_value("a", 16, 4),
                    KernelArg::hidden("block_count_x", 24, 4),
                ],
            }],
        }
    }

    #[test]
    fn round_trips_through_msgpack() {
        let m = sample();
        let bytes = msgpack::encode(&m.to_value());
        let back = Metadata::from_value(&msgpack::decode(&bytes).unwrap()).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.kernel("axpy.kd").unwrap().name, "axpy");
        assert!(back.kernels[0].args[2].value_kind.is_hidden());
    }

    #[test]
    fn keys_are_sorted_like_llvm() {
        let v = sample().to_value();
        let Value::Map(top) = &v else { panic!() };
        let keys: Vec<_> = top.iter().map(|(k, _)| k.as_str().unwrap()).collect();
        assert_eq!(keys, ["amdhsa.kernels", "amdhsa.target", "amdhsa.version"]);
        let k = &v.get("amdhsa.kernels").unwrap().as_array().unwrap()[0];
        let Value::Map(km) = k else { panic!() };
        let keys: Vec<_> = km.iter().map(|(k, _)| k.as_str().unwrap()).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert_eq!(keys[0], ".agpr_count");
    }

    #[test]
    fn errors_name_the_key() {
        let mut v = sample().to_value();
        let Value::Map(top) = &mut v else { panic!() };
        let Value::Array(ks) = &mut top[0].1 else { panic!() };
        let Value::Map(k) = &mut ks[0] else { panic!() };
        k.retain(|(key, _)| key.as_str() != Some(".sgpr_count"));
        let err = Metadata::from_value(&v).unwrap_err();
        assert_eq!(err, MetadataError::MissingKey { context: "kernel 0".into(), key: ".sgpr_count" });
        assert_eq!(Metadata::from_value(&Value::UInt(3)), Err(MetadataError::NotAMap("integer")));
        let bad = Value::sorted_map([("amdhsa.version", Value::Str("x".into()))]);
        assert!(matches!(Metadata::from_value(&bad), Err(MetadataError::BadValue { .. })));
    }
}
